//! Generated cases run in the reference interpreter: every kernel finishes
//! well within a fuel limit derived from `GenConfig::max_work`, and results
//! do not depend on the order in which workgroups run (the property that
//! makes generated cases usable for differential testing of a parallel
//! backend).

use warpjit_ir::generate::{generate_case, GenConfig, GeneratedCase, SplitMix64};
use warpjit_ir::interp::{launch, run_workgroup, ExecError, LaunchConfig, LaunchReport};
use warpjit_ir::{FuncId, VerifiedModule};

const SM_COUNT: u32 = 3;

fn launch_config(case: &GeneratedCase, cfg: &GenConfig) -> LaunchConfig {
    let mut launch = LaunchConfig::new(case.grid, case.workgroup);
    launch.sm_count = SM_COUNT;
    // Generous for the prologue, address arithmetic and loop headers that
    // `max_work` does not count; a runaway loop would still exhaust it.
    launch.with_fuel(cfg.max_work * 50)
}

fn prepare(seed: u64, cfg: &GenConfig) -> (GeneratedCase, VerifiedModule, FuncId) {
    let case = generate_case(&mut SplitMix64::new(seed), cfg);
    let vm = VerifiedModule::new(case.module.clone()).expect("generated modules verify");
    let kernel = FuncId(vm.functions.len() as u32 - 1);
    (case, vm, kernel)
}

#[test]
fn generated_kernels_finish_within_fuel() {
    let cfg = GenConfig::default();
    for seed in 0..150 {
        let (case, vm, kernel) = prepare(seed, &cfg);
        let mut memory = case.buffer_data.clone();
        let result = launch(
            &vm,
            kernel,
            &launch_config(&case, &cfg),
            &case.params,
            &mut memory,
        );
        match result {
            Ok(report) => assert!(report.workgroups > 0),
            Err(e @ ExecError::FuelExhausted { .. }) => panic!("seed {seed}: {e:?}"),
            Err(e) => panic!("seed {seed}: launch failed: {e:?}"),
        }
        for (data, size) in memory.iter().zip(&case.buffer_sizes) {
            assert_eq!(data.len(), *size, "buffers keep their size");
        }
    }
}

#[test]
fn large_and_deep_kernels_finish_within_fuel() {
    let larger = GenConfig {
        max_stmts: 400,
        max_depth: 8,
        max_functions: 6,
        max_loop_trips: 6,
        ..GenConfig::default()
    };
    // The fuzzer's deep programs, and larger ones still.
    for cfg in [GenConfig::deep(), larger] {
        for seed in 0..30 {
            let (case, vm, kernel) = prepare(seed, &cfg);
            let mut memory = case.buffer_data.clone();
            let launch_cfg = launch_config(&case, &cfg);
            if let Err(e) = launch(&vm, kernel, &launch_cfg, &case.params, &mut memory) {
                panic!("{cfg:?} seed {seed}: {e:?}");
            }
        }
    }
}

#[test]
fn results_do_not_depend_on_the_order_of_workgroups() {
    let cfg = GenConfig {
        max_workgroups: 6,
        ..GenConfig::default()
    };
    let mut compared = 0;
    for seed in 0..120 {
        let (case, vm, kernel) = prepare(seed, &cfg);
        let launch_cfg = launch_config(&case, &cfg);
        let mut forward = case.buffer_data.clone();
        launch(&vm, kernel, &launch_cfg, &case.params, &mut forward).expect("runs");
        // The same workgroups on the same SMs, last one first.
        let mut ids = Vec::new();
        for z in 0..case.grid[2] {
            for y in 0..case.grid[1] {
                for x in 0..case.grid[0] {
                    ids.push([x, y, z]);
                }
            }
        }
        let mut backward = case.buffer_data.clone();
        let mut report = LaunchReport::default();
        for (linear, id) in ids.iter().enumerate().rev() {
            let sm = linear as u32 % SM_COUNT;
            run_workgroup(
                &vm,
                kernel,
                &launch_cfg,
                *id,
                sm,
                &case.params,
                &mut backward,
                &mut report,
            )
            .expect("runs");
        }
        if ids.len() > 1 {
            compared += 1;
        }
        assert!(
            forward == backward,
            "seed {seed}: memory depends on the workgroup order"
        );
    }
    assert!(
        compared > 40,
        "only {compared} cases had several workgroups"
    );
}

#[test]
fn kernels_write_their_results() {
    // The output buffer starts with random bytes; every kernel's records
    // change some of them (unless every lane was killed or demoted early,
    // which a few seeds do).
    let cfg = GenConfig::default();
    let mut changed = 0;
    for seed in 0..100 {
        let (case, vm, kernel) = prepare(seed, &cfg);
        let mut memory = case.buffer_data.clone();
        launch(
            &vm,
            kernel,
            &launch_config(&case, &cfg),
            &case.params,
            &mut memory,
        )
        .expect("runs");
        if memory[0] != case.buffer_data[0] {
            changed += 1;
        }
    }
    assert!(changed > 80, "only {changed} of 100 kernels wrote @out");
}
