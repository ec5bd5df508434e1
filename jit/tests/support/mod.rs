//! What the tests of the JIT on the runtime share: everything the runtime's
//! own tests share (modules from text, launches that must succeed, the
//! tree sum and generated-program checks), plus runtimes on either backend.

#![allow(dead_code)]

#[path = "../../../runtime/tests/support/mod.rs"]
mod runtime_support;
pub use runtime_support::*;

use std::sync::Arc;
use warpjit_jit::{JitBackend, JitOptions};
use warpjit_runtime::{Backend, InterpreterBackend, Runtime};

/// Both backends, the JIT at -O2 for the host.
pub fn backends() -> [Arc<dyn Backend>; 2] {
    [jit(), Arc::new(InterpreterBackend)]
}

pub fn jit() -> Arc<dyn Backend> {
    Arc::new(JitBackend::new(JitOptions::default()))
}

pub fn runtime_on(backend: Arc<dyn Backend>, sm_count: u32, warps_per_sm: u32) -> Runtime {
    Runtime::with_backend(config(sm_count, warps_per_sm), backend)
        .expect("a valid runtime configuration")
}
