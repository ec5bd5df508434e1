//! Generated programs, barriers included, give the interpreter's results on
//! the JIT backend of the runtime on several machine shapes: the same
//! memory, fault counts, first fault and workgroup count. Generated
//! programs are race-free by construction (see `warpjit_ir::generate`), so
//! the schedule does not matter.
//!
//! Compiling dominates the time, so each program is compiled once (at -O0,
//! every tenth at -O2) and that code shared by the runtimes through the
//! compile cache.

mod support;
use std::sync::Arc;
use support::*;
use warpjit_ir::generate::{generate_case, SplitMix64};
use warpjit_ir::{Op, Stmt, VerifiedModule};
use warpjit_jit::{JitBackend, JitOptions};
use warpjit_runtime::Runtime;

/// Programs per run; `WARPJIT_PROPTEST_CASES` overrides it.
const CASES: u64 = 50;

fn has_barrier(module: &VerifiedModule) -> bool {
    let mut found = false;
    for f in &module.functions {
        warpjit_ir::walk_block(&f.body, &mut |s| {
            if let Stmt::Inst(i) = s {
                found |= i.op == Op::Barrier;
            }
        });
    }
    found
}

#[test]
fn generated_programs_match_the_interpreter_on_the_jit_backend() {
    let cfg = machine_independent_programs();
    let cases = std::env::var("WARPJIT_PROPTEST_CASES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(CASES);
    // Generated workgroups have at most 128 invocations: 4 warps. The
    // runtimes of one optimisation level share the compiled code through
    // the compile cache: `prepare` compiles on this thread.
    let runtimes_at = |opt_level: u8| -> Vec<Runtime> {
        let backend = Arc::new(JitBackend::new(JitOptions {
            opt_level,
            ..JitOptions::default()
        }));
        [(1, 4), (3, 64)]
            .iter()
            .map(|&(sms, slots)| runtime_on(backend.clone(), sms, slots))
            .collect()
    };
    let (at_o0, at_o2) = (runtimes_at(0), runtimes_at(2));
    let (mut faulting, mut with_barriers, mut multi_warp) = (0, 0, 0);
    for seed in 0..cases {
        let case = generate_case(&mut SplitMix64::new(seed), &cfg);
        let expected = interpret_case(&case, seed);
        if has_barrier(&expected.module) {
            with_barriers += 1;
            if case.workgroup.iter().product::<u32>() > 32 {
                multi_warp += 1;
            }
        }
        if !expected.result.faults.is_empty() {
            faulting += 1;
        }
        let runtimes = if seed % 10 == 9 { &at_o2 } else { &at_o0 };
        for runtime in runtimes {
            launch_matches(runtime, &case, &expected, &case_on(seed, runtime));
        }
    }
    if cases >= CASES {
        // The cases exercise what they are meant to.
        assert!(faulting > 2, "only {faulting} cases faulted");
        assert!(
            multi_warp > 5,
            "only {multi_warp} multi-warp cases with barriers ({with_barriers} with barriers)"
        );
    }
}

/// Short generated programs with nothing between workgroups but a new id
/// and zeroed shared memory (no loop, `kill`, `demote` or function; barriers
/// only as statements of the kernel, split into phases), on grids of up to
/// 32 workgroups: about a third of them are short enough
/// for the JIT's entry to run many workgroups per call
/// (`KernelPlan::many_workgroups`), and all must give the interpreter's
/// results, faults included.
#[test]
fn short_generated_programs_run_many_workgroups_per_call_as_the_interpreter_does() {
    let cfg =
        warpjit_ir::generate::GenConfig::short_kernels(machine_independent_programs().features);
    let cases = std::env::var("WARPJIT_PROPTEST_CASES")
        .ok()
        .and_then(|n| n.parse::<u64>().ok())
        .unwrap_or(CASES)
        * 4;
    let runtimes: Vec<Runtime> = [0, 2]
        .iter()
        .flat_map(|&opt_level| {
            let backend = Arc::new(JitBackend::new(JitOptions {
                opt_level,
                ..JitOptions::default()
            }));
            [(1, 4), (2, 64)].map(|(sms, slots)| runtime_on(backend.clone(), sms, slots))
        })
        .collect();
    let (mut runs, mut faulting) = (0, 0);
    for seed in 0..cases {
        let case = generate_case(&mut SplitMix64::new(seed), &cfg);
        let expected = interpret_case(&case, seed);
        if case.grid.iter().product::<u32>() >= 8 {
            runs += 1;
        }
        if !expected.result.faults.is_empty() {
            faulting += 1;
        }
        for runtime in &runtimes {
            launch_matches(runtime, &case, &expected, &case_on(seed, runtime));
        }
    }
    if cases >= 4 * CASES {
        assert!(runs > 50, "only {runs} cases with 8 workgroups or more");
        assert!(faulting > 5, "only {faulting} cases faulted");
    }
}
