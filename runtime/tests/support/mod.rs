//! What the runtime's tests share: modules from text, runtimes of a given
//! shape, launches that must succeed, and checks that the JIT's tests on
//! the runtime run too (`jit/tests/support` includes this file).

#![allow(dead_code)]

pub mod contention;

use std::sync::Arc;
use warpjit_ir::generate::{Features, GenConfig, GeneratedCase};
use warpjit_ir::interp::{self, LaunchConfig};
use warpjit_ir::{text, FuncId, VerifiedModule};
use warpjit_runtime::{Buffer, Kernel, LaunchReport, Runtime, RuntimeConfig};

/// Parses and verifies `source`; a test program that does not check is a
/// bug in the test.
pub fn module(source: &str) -> Arc<VerifiedModule> {
    let parsed = text::parse(source).unwrap_or_else(|d| panic!("{}", d.render("test", source)));
    let verified =
        VerifiedModule::new(parsed).unwrap_or_else(|d| panic!("{}", d.render("test", source)));
    Arc::new(verified)
}

pub fn config(sm_count: u32, warps_per_sm: u32) -> RuntimeConfig {
    RuntimeConfig {
        sm_count,
        warps_per_sm,
        ..RuntimeConfig::default()
    }
}

/// A runtime on the interpreter with `sm_count` SMs of 64 warp slots.
pub fn runtime(sm_count: u32) -> Runtime {
    Runtime::new(config(sm_count, 64)).expect("a valid runtime configuration")
}

/// `@main` of `source`, prepared on `runtime`.
pub fn kernel(runtime: &Runtime, source: &str) -> Kernel {
    runtime
        .prepare(module(source), "main")
        .expect("the test kernel prepares")
}

/// Launches and insists on success.
pub fn run(
    runtime: &Runtime,
    kernel: &Kernel,
    grid: [u32; 3],
    workgroup: [u32; 3],
    params: &[u64],
    buffers: &mut [Buffer],
) -> LaunchReport {
    runtime
        .launch(kernel, grid, workgroup, params, buffers)
        .unwrap_or_else(|e| {
            panic!(
                "launch of @{} on {} failed: {e}",
                kernel.name(),
                kernel.backend()
            )
        })
}

pub fn u32s(values: &[u32]) -> Buffer {
    Buffer::from_slice(values).expect("small buffer")
}

pub fn zeros_u32(count: u64) -> Buffer {
    Buffer::zeros(warpjit_ir::NumFormat::U32, count).expect("small buffer")
}

/// Sums each workgroup's slice of `@values` into `@sums[workgroup]` with a
/// tree reduction in shared memory, a barrier after every fold.
pub const TREE_SUM: &str = include_str!("../kernels/tree_sum.warp");

/// Runs [`TREE_SUM`] on 3 workgroups of every size from 1 to 1024 and checks
/// each sum; `runtime` needs 32 warp slots per SM for 1024 invocations.
pub fn check_tree_sum_for_every_workgroup_size(runtime: &Runtime) {
    const GROUPS: u32 = 3;
    let kernel = kernel(runtime, TREE_SUM);
    let value = |gid: u32| gid.wrapping_mul(2_654_435_761).rotate_left(7);
    let values: Vec<u32> = (0..GROUPS * 1024).map(value).collect();
    for size in 1..=1024u32 {
        let mut buffers = vec![
            u32s(&values[..(GROUPS * size) as usize]),
            zeros_u32(GROUPS as u64),
        ];
        let report = run(
            runtime,
            &kernel,
            [GROUPS, 1, 1],
            [size, 1, 1],
            &[],
            &mut buffers,
        );
        assert!(report.faults.is_empty(), "size {size}: {}", report.faults);
        let expected: Vec<u32> = (0..GROUPS)
            .map(|g| {
                (g * size..(g + 1) * size)
                    .map(value)
                    .fold(0u32, u32::wrapping_add)
            })
            .collect();
        assert_eq!(
            buffers[1].to_vec::<u32>(),
            expected,
            "workgroup size {size}"
        );
    }
}

/// Generated programs whose results do not depend on the machine: without
/// `sm_id` (which SM took a workgroup), `sm_count` and `warps_per_sm`.
pub fn machine_independent_programs() -> GenConfig {
    GenConfig {
        max_workgroups: 6,
        features: Features {
            machine_ids: false,
            ..Features::all()
        },
        ..GenConfig::default()
    }
}

/// A generated case as the single-threaded interpreter runs it: the
/// module, its kernel (the last function), the result and the memory after.
pub struct Expected {
    pub module: Arc<VerifiedModule>,
    pub kernel: FuncId,
    pub result: interp::LaunchReport,
    pub memory: Vec<Vec<u8>>,
}

pub fn interpret_case(case: &GeneratedCase, seed: u64) -> Expected {
    let module =
        Arc::new(VerifiedModule::new(case.module.clone()).expect("generated modules verify"));
    let kernel = FuncId(module.functions.len() as u32 - 1);
    let mut memory = case.buffer_data.clone();
    let result = interp::launch(
        &module,
        kernel,
        &LaunchConfig::new(case.grid, case.workgroup),
        &case.params,
        &mut memory,
    )
    .unwrap_or_else(|e| panic!("seed {seed}: the interpreter failed: {e}"));
    Expected {
        module,
        kernel,
        result,
        memory,
    }
}

/// Runs `case` on `runtime` and checks the memory, faults and workgroup
/// count against `expected`; returns the report for further checks. `shape`
/// names the case and machine in messages.
pub fn launch_matches(
    runtime: &Runtime,
    case: &GeneratedCase,
    expected: &Expected,
    shape: &str,
) -> LaunchReport {
    let kernel = runtime
        .prepare_function(Arc::clone(&expected.module), expected.kernel)
        .unwrap_or_else(|e| panic!("{shape}: {e}"));
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
    for (i, (buffer, want)) in buffers.iter().zip(&expected.memory).enumerate() {
        assert!(
            buffer.to_bytes() == *want,
            "{shape}: buffer {i} differs; the program:\n{}",
            text::print(&case.module)
        );
    }
    assert_eq!(report.faults, expected.result.faults, "{shape}");
    assert_eq!(report.workgroups, expected.result.workgroups, "{shape}");
    report
}

/// Names the case and the machine shape of `runtime` in messages.
pub fn case_on(seed: u64, runtime: &Runtime) -> String {
    format!(
        "seed {seed} on {} SMs x {} slots",
        runtime.config().sm_count,
        runtime.config().warps_per_sm
    )
}
