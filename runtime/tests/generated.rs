//! Race-free kernels give the same results on any number of SMs and warp
//! slots: generated programs (order-independent by construction, see
//! `warpjit_ir::generate`) on 1, 2, 3 and 7 SMs against the single-threaded
//! `interp::launch`: the same memory, fault counts, first fault and
//! statement count.

mod support;
use support::*;
use warpjit_ir::generate::{generate_case, SplitMix64};
use warpjit_runtime::Runtime;

#[test]
fn generated_programs_match_the_interpreter_on_any_machine_shape() {
    let cfg = machine_independent_programs();
    // Generated workgroups have at most 128 invocations: 4 warps.
    let runtimes: Vec<Runtime> = [(1, 4), (2, 64), (3, 4), (7, 64), (7, 5)]
        .iter()
        .map(|&(sms, slots)| Runtime::new(config(sms, slots)).expect("valid configuration"))
        .collect();
    let mut faulting = 0;
    for seed in 0..200 {
        let case = generate_case(&mut SplitMix64::new(seed), &cfg);
        let expected = interpret_case(&case, seed);
        if !expected.result.faults.is_empty() {
            faulting += 1;
        }
        for runtime in &runtimes {
            let shape = case_on(seed, runtime);
            let report = launch_matches(runtime, &case, &expected, &shape);
            assert_eq!(report.statements, expected.result.statements, "{shape}");
        }
    }
    // The generator goes out of bounds often enough that first faults are
    // compared too.
    assert!(faulting > 5, "only {faulting} cases faulted");
}
