//! The engines a kernel is measured on: a runtime with the interpreter or
//! the JIT as its backend. Prepare (for the JIT: compile, timed cold
//! [`COLD_COMPILES`] times), then run on fresh copies of the inputs, timing
//! the launch alone.

use crate::bench::Launch;
use crate::stats::median;
use std::sync::Arc;
use std::time::{Duration, Instant};
use warpjit_jit::{clear_compile_cache, JitBackend, JitOptions};
use warpjit_runtime::{Backend, Buffer, InterpreterBackend, Kernel, Runtime, RuntimeConfig};

/// How many times the JIT compiles each kernel cold (the compile cache
/// cleared before each); the reported compile time is their median.
pub const COLD_COMPILES: usize = 5;

/// Where a kernel runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Engine {
    /// The reference interpreter on the runtime, one SM per core.
    Interpreter,
    /// Compiled code on `sms` SMs.
    Jit { sms: u32 },
}

impl Engine {
    /// The cores of this machine (the runtime's default SM count).
    pub fn all_cores() -> u32 {
        RuntimeConfig::default().sm_count
    }

    /// How the table names it.
    pub fn label(self) -> String {
        match self {
            Engine::Interpreter => format!("interp {} SM", Engine::all_cores()),
            Engine::Jit { sms: 1 } => "jit 1 SM".into(),
            Engine::Jit { sms } => format!("jit {sms} SMs"),
        }
    }

    /// Prepares `launch`'s kernel on a runtime of its own (the JIT's
    /// compiled with `jit`); the duration is
    /// what preparing took, not counting the start of the SM threads. For
    /// the JIT it is the median of [`COLD_COMPILES`] full compiles, each
    /// after clearing this thread's compile cache (`prepare` compiles on the
    /// calling thread), so neither a cache hit nor the process's one-time
    /// LLVM start-up (which falls on one sample) decides the figure.
    pub fn prepare(
        self,
        launch: &Launch,
        jit: &JitOptions,
    ) -> Result<(ReadyKernel, Duration), String> {
        let (sms, backend): (u32, Arc<dyn Backend>) = match self {
            Engine::Interpreter => (Engine::all_cores(), Arc::new(InterpreterBackend)),
            Engine::Jit { sms } => (sms, Arc::new(JitBackend::new(*jit))),
        };
        let config = RuntimeConfig {
            sm_count: sms,
            ..RuntimeConfig::default()
        };
        let runtime = Runtime::with_backend(config, backend).map_err(|e| e.to_string())?;
        let samples = match self {
            Engine::Interpreter => 1,
            Engine::Jit { .. } => COLD_COMPILES,
        };
        let mut times = Vec::with_capacity(samples);
        let mut kernel = None;
        for _ in 0..samples {
            // Drop the previous sample's kernel first: it keeps its code.
            drop(kernel.take());
            clear_compile_cache();
            let start = Instant::now();
            let prepared = runtime
                .prepare(Arc::clone(&launch.module), "main")
                .map_err(|e| e.to_string())?;
            times.push(start.elapsed());
            kernel = Some(prepared);
        }
        let kernel = kernel.ok_or("no kernel was prepared")?;
        let compile = median(&times).ok_or("no kernel was prepared")?;
        Ok((ReadyKernel { runtime, kernel }, compile))
    }
}

/// A kernel ready to run, with the runtime that runs it.
pub struct ReadyKernel {
    runtime: Runtime,
    kernel: Kernel,
}

impl ReadyKernel {
    /// Runs `launch` on a fresh copy of its input buffers; returns the time
    /// the launch took and the final buffers. Out-of-bounds accesses are an
    /// error: no case makes any.
    pub fn run(&self, launch: &Launch) -> Result<(Duration, Vec<Vec<u8>>), String> {
        let mut buffers = launch
            .buffers
            .iter()
            .map(|b| Buffer::from_bytes(b))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| e.to_string())?;
        let start = Instant::now();
        let report = self
            .runtime
            .launch(
                &self.kernel,
                launch.grid,
                launch.workgroup,
                &launch.params,
                &mut buffers,
            )
            .map_err(|e| e.to_string())?;
        let elapsed = start.elapsed();
        if report.faults.total() != 0 {
            return Err(format!("out-of-bounds accesses: {:?}", report.faults));
        }
        Ok((elapsed, buffers.iter().map(Buffer::to_bytes).collect()))
    }
}
