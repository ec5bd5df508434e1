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
/// is to inline. Kernels are called once, from their entries.
pub(super) fn mark_inlined(cx: &Context, module: &VerifiedModule, funcs: &[FunctionValue<'_>]) {
    let n = module.functions.len();
    let calls: Vec<Vec<u32>> = module.functions.iter().map(callees).collect();
    let mut sites = vec![0usize; n];
    for callee in calls.iter().flatten() {
        sites[*callee as usize] += 1;
    }
    for (id, _) in module.kernels() {
        sites[id.0 as usize] += 1;
    }
    let mut sizes: Vec<Option<usize>> = vec![None; n];
    let mut inlined = vec![false; n];
    for f in 0..n {
        size_with_callees(f, &calls, funcs, &sites, &mut sizes, &mut inlined);
    }
    let id = Attribute::get_named_enum_kind_id("alwaysinline");
    for (f, func) in funcs.iter().enumerate() {
        if inlined[f] {
            func.add_attribute(AttributeLoc::Function, cx.create_enum_attribute(id, 0));
        }
    }
}

/// The functions `f` calls, once per call site.
fn callees(f: &warpjit_ir::Function) -> Vec<u32> {
    let mut out = Vec::new();
    warpjit_ir::walk_block(&f.body, &mut |s| {
        if let Stmt::Inst(i) = s {
            if let Op::Call(callee) = i.op {
                out.push(callee);
            }
        }
    });
    out
}

/// The size of `f` with the callees it inlines, deciding for `f` on the way
/// (callees first; the verifier rejects recursion, so this ends).
fn size_with_callees(
    f: usize,
    calls: &[Vec<u32>],
    funcs: &[FunctionValue<'_>],
    sites: &[usize],
    sizes: &mut [Option<usize>],
    inlined: &mut [bool],
) -> usize {
    if let Some(size) = sizes[f] {
        return size;
    }
    let mut size = instructions(funcs[f]);
    for &callee in &calls[f] {
        let callee = callee as usize;
        let callee_size = size_with_callees(callee, calls, funcs, sites, sizes, inlined);
        size += if inlined[callee] {
            callee_size
        } else {
            CALL_SIZE
        };
    }
    sizes[f] = Some(size);
    inlined[f] = match sites[f] {
        0 => false,
        1 => size <= MOVE_LIMIT,
        _ => size <= COPY_LIMIT,
    };
    size
}

/// The number of LLVM instructions in `func`.
fn instructions(func: FunctionValue<'_>) -> usize {
    func.get_basic_block_iter()
        .map(|bb| bb.get_instructions().count())
        .sum()
}
