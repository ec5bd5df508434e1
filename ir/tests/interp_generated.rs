//! The interpreter on generated programs (`warpjit_ir::generate`): every
//! generated module verifies and terminates, so every launch must finish
//! without error or panic, and running it twice must give identical memory
//! and reports.

use warpjit_ir::generate::{generate_case, GenConfig, GeneratedCase, SplitMix64};
use warpjit_ir::interp::{self, LaunchConfig, LaunchReport};
use warpjit_ir::{FuncId, VerifiedModule};

fn config(case: &GeneratedCase) -> LaunchConfig {
    let mut cfg = LaunchConfig::new(case.grid, case.workgroup);
    cfg.sm_count = 3;
    // Far above what a generated program can execute; a hang would stop here.
    cfg.fuel = Some(50_000_000);
    cfg
}

fn launch(
    case: &GeneratedCase,
    module: &VerifiedModule,
    kernel: FuncId,
) -> (Vec<Vec<u8>>, LaunchReport) {
    let cfg = config(case);
    let mut memory = case.buffer_data.clone();
    match interp::launch(module, kernel, &cfg, &case.params, &mut memory) {
        Ok(report) => (memory, report),
        Err(e) => panic!("launch failed: {e}\n{}", warpjit_ir::text::print(module)),
    }
}

/// The generator promises results independent of the workgroup schedule:
/// `run_workgroup` in reverse order, on the SMs `launch` would use, must
/// leave the same memory.
fn run_workgroups_in_reverse(
    case: &GeneratedCase,
    module: &VerifiedModule,
    kernel: FuncId,
) -> (Vec<Vec<u8>>, LaunchReport) {
    let cfg = config(case);
    let mut memory = case.buffer_data.clone();
    let mut report = LaunchReport::default();
    let [gx, gy, gz] = case.grid;
    let mut ids = Vec::new();
    for z in 0..gz {
        for y in 0..gy {
            for x in 0..gx {
                ids.push([x, y, z]);
            }
        }
    }
    for (n, id) in ids.iter().enumerate().rev() {
        let sm = n as u32 % cfg.sm_count;
        interp::run_workgroup(
            module,
            kernel,
            &cfg,
            *id,
            sm,
            &case.params,
            &mut memory,
            &mut report,
        )
        .unwrap_or_else(|e| panic!("workgroup {id:?}: {e}"));
    }
    (memory, report)
}

fn check_seeds(cfg: &GenConfig, seeds: std::ops::Range<u64>) {
    for seed in seeds {
        let case = generate_case(&mut SplitMix64::new(seed), cfg);
        let module = VerifiedModule::new(case.module.clone())
            .unwrap_or_else(|d| panic!("seed {seed}: generated module does not verify: {d}"));
        let kernel = module.find_function("main").expect("@main");
        let first = launch(&case, &module, kernel);
        let second = launch(&case, &module, kernel);
        assert!(first == second, "seed {seed}: two runs differ");
        assert!(first.1.statements > 0, "seed {seed}: nothing ran");
        let reversed = run_workgroups_in_reverse(&case, &module, kernel);
        assert!(
            first.0 == reversed.0,
            "seed {seed}: memory depends on the workgroup order"
        );
        assert_eq!(first.1.statements, reversed.1.statements, "seed {seed}");
        assert_eq!(
            first.1.faults.total(),
            reversed.1.faults.total(),
            "seed {seed}"
        );
    }
}

#[test]
fn generated_programs_run_to_completion_deterministically() {
    check_seeds(&GenConfig::default(), 0..200);
}

#[test]
fn generated_programs_with_deep_nesting_and_many_functions() {
    let cfg = GenConfig {
        max_stmts: 120,
        max_depth: 7,
        max_functions: 6,
        max_loop_trips: 6,
        ..GenConfig::default()
    };
    check_seeds(&cfg, 1000..1060);
}
