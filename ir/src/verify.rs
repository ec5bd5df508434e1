//! The verifier: every invariant the interpreter and the backends rely on.
//!
//! [`verify`] reports all violations it finds, not only the first, each with
//! the span of the offending declaration or statement and a message that
//! names things as the text format spells them (`%x`, `$i`, `@f`, `add`).
//! [`VerifiedModule`] is the proof that a module passed; backends take only
//! that type.
//!
//! # Invariants checked
//!
//! Names
//! - every name is non-empty, at most 1024 characters, and made of letters,
//!   digits, `_` and `.`;
//! - module parameters (`%`) are unique; buffers, shared arrays and
//!   functions share one `@` scope and are unique in it;
//! - in a function, values (`%`), variables (`$`) and private arrays (`@`)
//!   are unique; a value may not reuse a module parameter's name and a
//!   private array may not reuse a module-level `@` name.
//!
//! Module items
//! - buffer bindings are unique;
//! - each shared array has 1 to 65536 bytes and all of them together at most
//!   65536 (64 KiB per workgroup);
//! - each private array has 1 to 16384 bytes and a function's private arrays
//!   together at most 16384 (16 KiB per lane);
//! - a kernel's `workgroup` sizes are each at least 1 with a product of at
//!   most 1024; kernels have no parameters and no results;
//! - a module without kernels is accepted (a library).
//!
//! Values and references
//! - every `ValueId`, `VarId`, `ParamId`, callee index and memory reference
//!   is in range;
//! - every value is defined exactly once, by a function parameter or a
//!   result place; an instruction assigns a variable at most once;
//! - structured dominance: a value is used only after its definition, in
//!   the block that defines it or a block nested inside that one (never
//!   after the `if`, `loop` or `ordered` that contains its definition, and
//!   never by the instruction that defines it);
//! - a literal's bits fit its type;
//! - blocks nest at most 256 deep, the function body being level 1.
//!
//! Typing
//! - every instruction matches [`Op::signature`](crate::Op::signature): operand and result counts
//!   (optional trailing ones included), the type variable `T` in its
//!   [`TypeClass`](crate::TypeClass) and equal in every `T` slot, fixed slots, addresses `i32`
//!   or `i64`, stored values of the format's register type or its exact
//!   narrow type; results are checked through the declared type of the value
//!   or variable they write;
//! - `bitcast` converts only between types of the same width, never `bool`;
//! - memory formats are valid ([`MemFormat::is_valid`](crate::MemFormat::is_valid)); atomics use a
//!   format NV_gpu_program5's ATOM table allows for the op
//!   ([`AtomOp::allows`](crate::AtomOp::allows)) and work on buffers and shared memory only;
//! - every `cvt` format pair and rounding mode is accepted (the semantics
//!   define them all);
//! - an `if` condition is `bool`; `return` gives exactly the function's
//!   result types; a function with results ends with a top-level `return`;
//!   only `func`s are called, never kernels.
//!
//! Control flow
//! - `break` and `continue` appear only inside a loop;
//! - inside an `ordered` section: no `break`/`continue` that would leave it,
//!   no `return`, `kill`, `barrier` or nested `ordered`, and no call of a
//!   function that contains any of `kill`, `barrier` or `ordered`, directly
//!   or through its own calls;
//! - no recursion: every cycle of the call graph is reported once, at a call
//!   site on the cycle, naming the cycle (`@f -> @g -> @f`).

mod calls;
mod function;
mod items;

use crate::module::{FuncId, Module};
use crate::ops::FuncSig;
use crate::span::{Diagnostic, Diagnostics};

/// Bytes of shared memory a workgroup may declare in total.
pub const MAX_SHARED_BYTES: u32 = 64 * 1024;
/// Bytes of private memory one lane may declare in a function.
pub const MAX_PRIVATE_BYTES: u32 = 16 * 1024;
/// Largest number of invocations in a workgroup.
pub const MAX_WORKGROUP_INVOCATIONS: u64 = 1024;
/// Deepest nesting of blocks, the function body being level 1.
pub const MAX_NESTING: usize = 256;
/// Longest name, in characters.
pub const MAX_NAME_CHARS: usize = 1024;

/// A module the verifier accepted. Backends take only this type.
#[derive(Clone, Debug)]
pub struct VerifiedModule {
    module: Module,
    call_order: Vec<FuncId>,
}

impl VerifiedModule {
    /// Verifies `module`; on failure returns every error found.
    pub fn new(module: Module) -> Result<VerifiedModule, Diagnostics> {
        let mut result = check(&module);
        if !result.diagnostics.is_empty() {
            return Err(Diagnostics(result.diagnostics));
        }
        let call_order = std::mem::take(&mut result.call_order);
        Ok(VerifiedModule { module, call_order })
    }

    pub fn module(&self) -> &Module {
        &self.module
    }

    pub fn into_inner(self) -> Module {
        self.module
    }

    /// Every function once, each after all the functions it calls.
    pub fn call_order(&self) -> &[FuncId] {
        &self.call_order
    }
}

impl std::ops::Deref for VerifiedModule {
    type Target = Module;
    fn deref(&self) -> &Module {
        &self.module
    }
}

/// Checks every invariant listed in the module documentation and returns
/// all violations, in source order (by span start).
pub fn verify(module: &Module) -> Vec<Diagnostic> {
    check(module).diagnostics
}

struct CheckResult {
    diagnostics: Vec<Diagnostic>,
    call_order: Vec<FuncId>,
}

fn check(module: &Module) -> CheckResult {
    let mut out = Vec::new();
    items::check_items(module, &mut out);
    let sigs: Vec<Option<FuncSig>> = module.functions.iter().map(safe_sig).collect();
    let facts: Vec<function::BodyFacts> = (0..module.functions.len())
        .map(|i| function::check_function(module, i, &sigs, &mut out))
        .collect();
    let call_order = calls::check_calls(module, &facts, &mut out);
    out.sort_by_key(|d| d.span.start);
    CheckResult {
        diagnostics: out,
        call_order,
    }
}

/// The function's signature, or `None` when a parameter id is out of range
/// (that error is reported with the function; calls of it are not typed).
fn safe_sig(f: &crate::module::Function) -> Option<FuncSig> {
    let params = f
        .params
        .iter()
        .map(|p| f.values.get(p.0 as usize).map(|d| d.ty))
        .collect::<Option<Vec<_>>>()?;
    Some(FuncSig {
        params,
        results: f.results.clone(),
    })
}

/// Names are letters, digits, `_` and `.` (docs/text-format.md).
pub(crate) fn name_problem(name: &str) -> Option<&'static str> {
    if name.is_empty() {
        return Some("is empty");
    }
    if name.chars().count() > MAX_NAME_CHARS {
        return Some("is longer than 1024 characters");
    }
    if !name
        .chars()
        .all(|c| c.is_alphanumeric() || c == '_' || c == '.')
    {
        return Some("may contain only letters, digits, `_` and `.`");
    }
    None
}
