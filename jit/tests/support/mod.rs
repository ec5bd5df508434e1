//! What the tests of the JIT on the runtime share: modules from text,
//! runtimes on either backend, and launches that must succeed.

#![allow(dead_code)]

use std::sync::Arc;
use warpjit_ir::{text, VerifiedModule};
use warpjit_jit::{JitBackend, JitOptions};
use warpjit_runtime::{
    Backend, Buffer, InterpreterBackend, Kernel, LaunchReport, Runtime, RuntimeConfig,
};

/// Parses and verifies `source`; a test program that does not check is a
/// bug in the test.
pub fn module(source: &str) -> Arc<VerifiedModule> {
    let parsed = text::parse(source).unwrap_or_else(|d| panic!("{}", d.render("test", source)));
    let verified =
        VerifiedModule::new(parsed).unwrap_or_else(|d| panic!("{}", d.render("test", source)));
    Arc::new(verified)
}

/// Both backends, the JIT at -O2 for the host.
pub fn backends() -> [Arc<dyn Backend>; 2] {
    [
        Arc::new(JitBackend::new(JitOptions::default())),
        Arc::new(InterpreterBackend),
    ]
}

pub fn jit() -> Arc<dyn Backend> {
    Arc::new(JitBackend::new(JitOptions::default()))
}

pub fn runtime_on(backend: Arc<dyn Backend>, sm_count: u32, warps_per_sm: u32) -> Runtime {
    let config = RuntimeConfig {
        sm_count,
        warps_per_sm,
        ..RuntimeConfig::default()
    };
    Runtime::with_backend(config, backend).expect("a valid runtime configuration")
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
