//! Race-free kernels give the same results on any number of SMs and warp
//! slots: generated programs (order-independent by construction, see
//! `warpjit_ir::generate`) on 1, 2, 3 and 7 SMs against the single-threaded
//! `interp::launch`: the same memory, fault counts, first fault and
//! statement count.

mod support;
use std::sync::Arc;
use support::*;
use warpjit_ir::generate::{generate_case, Features, GenConfig, SplitMix64};
use warpjit_ir::interp::{self, LaunchConfig};
use warpjit_ir::{FuncId, VerifiedModule};
use warpjit_runtime::{Buffer, Runtime};

#[test]
fn generated_programs_match_the_interpreter_on_any_machine_shape() {
    let cfg = GenConfig {
        max_workgroups: 6,
        features: Features {
            // sm_id depends on which SM took a workgroup, and sm_count /
            // warps_per_sm on the machine: leave them out.
            machine_ids: false,
            ..Features::all()
        },
        ..GenConfig::default()
    };
    // Generated workgroups have at most 128 invocations: 4 warps.
    let runtimes: Vec<Runtime> = [(1, 4), (2, 64), (3, 4), (7, 64), (7, 5)]
        .iter()
        .map(|&(sms, slots)| Runtime::new(config(sms, slots)).expect("valid configuration"))
        .collect();
    let mut faulting = 0;
    for seed in 0..200 {
        let case = generate_case(&mut SplitMix64::new(seed), &cfg);
        let module =
            Arc::new(VerifiedModule::new(case.module.clone()).expect("generated modules verify"));
        let kernel_id = FuncId(module.functions.len() as u32 - 1);

        let mut expected_memory = case.buffer_data.clone();
        let expected = interp::launch(
            &module,
            kernel_id,
            &LaunchConfig::new(case.grid, case.workgroup),
            &case.params,
            &mut expected_memory,
        )
        .unwrap_or_else(|e| panic!("seed {seed}: the interpreter failed: {e}"));
        if !expected.faults.is_empty() {
            faulting += 1;
        }

        for runtime in &runtimes {
            let shape = format!(
                "seed {seed} on {} SMs x {} slots",
                runtime.config().sm_count,
                runtime.config().warps_per_sm
            );
            let kernel = runtime
                .prepare_function(Arc::clone(&module), kernel_id)
                .expect("prepares");
            let mut buffers: Vec<Buffer> = case
                .buffer_data
                .iter()
                .map(|bytes| Buffer::from_bytes(bytes).expect("small"))
                .collect();
            let report = runtime
                .launch(
                    &kernel,
                    case.grid,
                    case.workgroup,
                    &case.params,
                    &mut buffers,
                )
                .unwrap_or_else(|e| panic!("{shape}: {e}"));
            for (i, (buffer, want)) in buffers.iter().zip(&expected_memory).enumerate() {
                assert!(buffer.to_bytes() == *want, "{shape}: buffer {i} differs");
            }
            assert_eq!(report.faults, expected.faults, "{shape}");
            assert_eq!(report.statements, expected.statements, "{shape}");
            assert_eq!(report.workgroups, expected.workgroups, "{shape}");
        }
    }
    // The generator goes out of bounds often enough that first faults are
    // compared too.
    assert!(faulting > 5, "only {faulting} cases faulted");
}
