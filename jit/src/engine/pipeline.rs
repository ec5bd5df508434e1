//! Which LLVM passes run at each optimisation level.
//!
//! The lowering emits 32-lane vector code in which variables live in
//! allocas, masks are re-read from memory at every use and small helper
//! functions are called; what pays off is promoting the allocas, inlining
//! the helpers, removing the redundant mask arithmetic and hoisting
//! invariant work out of loops. LLVM's `default<O2>` also runs its loop
//! and SLP vectorisers, loop unrolling and several rounds of `instcombine`,
//! which cost most of its time on this code and find little in it: on the
//! generated programs of the differential tests it took about 60% of
//! compile time. Level 3 keeps LLVM's full pipeline for comparison.
//! Level 2 inlines what the lowering marked `alwaysinline`
//! (`lower/inlining.rs`) rather than running LLVM's cost-driven inliner,
//! which took 5-20% more IR-pass time for the same decisions.
//! Level 2 ends with `licm`: it moves what every warp of a workgroup shares
//! (the fields read from the call's first context and the memory spans,
//! loaded where the kernel starts) out of the loop over the warps, for
//! about 0.3-0.5 ms of compile time.

use inkwell::OptimizationLevel;

/// The pass pipeline (new pass manager syntax) for `level` (0..=3).
pub fn passes(level: u8) -> &'static str {
    match level {
        0 => "default<O0>",
        1 => "function(sroa,early-cse,simplifycfg)",
        2 => "always-inline,function(sroa,early-cse,instcombine<no-verify-fixpoint>,simplifycfg,loop-mssa(licm))",
        _ => "default<O3>",
    }
}

/// The code generator's level for `level`.
pub fn codegen_level(level: u8) -> OptimizationLevel {
    match level {
        0 => OptimizationLevel::None,
        1 => OptimizationLevel::Less,
        _ => OptimizationLevel::Default,
    }
}
