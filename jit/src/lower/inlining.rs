//! Which functions level 2 inlines, decided by the lowering.
//!
//! LLVM's cost-driven inliner (`cgscc(inline)`) builds a call graph and
//! per-function analyses to learn what the call graph of a warp program
//! already says: every call is direct and nothing recurses (the verifier
//! rejects recursion). That made level 2's IR passes 5-20% slower. So the
//! lowering marks the functions to inline `alwaysinline` and level 2 runs
//! LLVM's `always-inline`:
//! - a function with one call site (a kernel's body, called once from its
//!   entry, or a helper used once) when it is at most [`MOVE_LIMIT`] LLVM
//!   instructions: its code moves, nothing is copied;
//! - a function with more call sites when it is at most [`COPY_LIMIT`]
//!   instructions, so only small code is copied and nested calls cannot
//!   multiply it.
//!
//! Sizes count the callees inlined into a function. The limits give the
//! same decisions as LLVM's inliner on every example, workload and test
//! program, and so the same machine code.

use inkwell::attributes::{Attribute, AttributeLoc};
use inkwell::context::Context;
use inkwell::values::FunctionValue;
use warpjit_ir::{Op, Stmt, VerifiedModule};

/// The largest function, in LLVM instructions after lowering and with its
/// inlined callees, that is copied into each of several call sites: a
/// short helper such as W8's cumulative normal (71).
const COPY_LIMIT: usize = 128;

/// The largest function with one call site that is inlined. Larger ones
/// stay calls, as LLVM's inliner left them (its bonus for the last call of
/// a local function covers about this much): a call per warp costs little
/// against such a body, and merging it into the loop over the warps makes
/// one larger function for the code generator.
const MOVE_LIMIT: usize = 3000;

/// Counted for a call that stays a call: the argument and result moves.
const CALL_SIZE: usize = 16;

/// Marks the functions of `module` (lowered as `funcs`) that the optimiser
/// is to inline, each after the functions it calls (the verifier's call
/// order). Kernels are called once from their entries, or once per phase
/// (`warp_entry`), each copy keeping only its phase's code; they are
/// counted as one call site. Returns which functions are inlined.
pub(super) fn mark_inlined(
    cx: &Context,
    module: &VerifiedModule,
    funcs: &[FunctionValue<'_>],
) -> Vec<bool> {
    let calls: Vec<Vec<usize>> = module.functions.iter().map(callees).collect();
    let mut sites = vec![0usize; funcs.len()];
    for &callee in calls.iter().flatten() {
        sites[callee] += 1;
    }
    for (id, _) in module.kernels() {
        sites[id.0 as usize] += 1;
    }
    let always = cx.create_enum_attribute(Attribute::get_named_enum_kind_id("alwaysinline"), 0);
    // The size each call of a function adds where it is inlined; None for
    // a function that stays a call.
    let mut inlined_size: Vec<Option<usize>> = vec![None; funcs.len()];
    for id in module.call_order() {
        let f = id.0 as usize;
        let size = instructions(funcs[f])
            + calls[f]
                .iter()
                .map(|&g| inlined_size[g].unwrap_or(CALL_SIZE))
                .sum::<usize>();
        let limit = match sites[f] {
            0 => continue,
            1 => MOVE_LIMIT,
            _ => COPY_LIMIT,
        };
        if size <= limit {
            inlined_size[f] = Some(size);
            funcs[f].add_attribute(AttributeLoc::Function, always);
        }
    }
    inlined_size.iter().map(Option::is_some).collect()
}

/// The functions `f` calls, once per call site.
fn callees(f: &warpjit_ir::Function) -> Vec<usize> {
    let mut out = Vec::new();
    warpjit_ir::walk_block(&f.body, &mut |s| {
        if let Stmt::Inst(i) = s {
            if let Op::Call(callee) = i.op {
                out.push(callee as usize);
            }
        }
    });
    out
}

/// The number of LLVM instructions in `func`.
fn instructions(func: FunctionValue<'_>) -> usize {
    func.get_basic_block_iter()
        .map(|bb| bb.get_instructions().count())
        .sum()
}
