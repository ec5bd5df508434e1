//! What the runtime's tests share: modules from text, runtimes of a given
//! shape, and launches that must succeed.

#![allow(dead_code)]

use std::sync::Arc;
use warpjit_ir::{text, VerifiedModule};
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
        .unwrap_or_else(|e| panic!("launch of @{} failed: {e}", kernel.name()))
}

pub fn u32s(values: &[u32]) -> Buffer {
    Buffer::from_slice(values).expect("small buffer")
}

pub fn zeros_u32(count: u64) -> Buffer {
    Buffer::zeros(warpjit_ir::NumFormat::U32, count).expect("small buffer")
}
