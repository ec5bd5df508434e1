//! Remarks: what the lowering decided for a statement, in words, for people
//! asking why a kernel is fast or slow (`warpjit dump --remarks`). Each is
//! recorded where the decision is made, so it says what the code does, not
//! what an analysis of its own would guess.

use std::fmt;
use warpjit_ir::Span;

/// One decision of the lowering about one statement. (Not `PartialEq`:
/// spans compare equal whatever they hold.)
#[derive(Clone, Debug)]
pub struct Remark {
    /// The function the statement is in, without `@`.
    pub function: String,
    /// The statement in the program text (empty for built modules).
    pub span: Span,
    pub kind: RemarkKind,
    /// Whether the statement runs lane by lane or under a divergent mask:
    /// where a kernel loses its SIMD width.
    pub lane_by_lane: bool,
    pub message: String,
}

/// What a [`Remark`] is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum RemarkKind {
    /// The code the kernel is compiled as: its workgroup size, its phases.
    Kernel,
    /// A load or store: how its lanes' addresses are accessed.
    Memory,
    /// An atomic: how its updates reach memory.
    Atomic,
    /// An `if`: whether the warp branches as a whole.
    Branch,
    /// A loop: which variables it carries as scalars.
    Loop,
    /// A call: inlined or kept.
    Call,
}

impl RemarkKind {
    /// The word the command line prints.
    pub fn name(self) -> &'static str {
        match self {
            RemarkKind::Kernel => "kernel",
            RemarkKind::Memory => "memory",
            RemarkKind::Atomic => "atomic",
            RemarkKind::Branch => "branch",
            RemarkKind::Loop => "loop",
            RemarkKind::Call => "call",
        }
    }
}

impl fmt::Display for Remark {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "@{}: {}: {}",
            self.function,
            self.kind.name(),
            self.message
        )
    }
}

/// Remarks in program order (by where their statement starts), each once:
/// a statement lowered in several places (a value recomputed in a later
/// phase) says the same thing of each.
pub(crate) fn in_order(mut remarks: Vec<Remark>) -> Vec<Remark> {
    fn key(r: &Remark) -> (u32, u32, RemarkKind, &str, &str) {
        (r.span.start, r.span.end, r.kind, &r.function, &r.message)
    }
    remarks.sort_by(|a, b| key(a).cmp(&key(b)));
    remarks.dedup_by(|a, b| key(a) == key(b));
    remarks
}
