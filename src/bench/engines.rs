//! The engines a kernel is measured on, behind one interface: prepare once
//! (for the JIT: compile, timed cold), then run on fresh copies of the
//! inputs, timing the launch alone.

use crate::bench::Launch;
use std::sync::Arc;
use std::time::{Duration, Instant};
use warpjit_ir::interp::LaunchConfig;
use warpjit_jit::{CompiledModule, JitOptions};
use warpjit_runtime::{Buffer, Kernel, Runtime, RuntimeConfig};

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

    /// Compiles or prepares `launch`'s kernel; the duration is what that
    /// took (the JIT's cold compile time).
    pub fn prepare(self, launch: &Launch) -> Result<(ReadyKernel, Duration), String> {
        let start = Instant::now();
        let ready = match self {
            Engine::Interpreter => {
                let config = RuntimeConfig::default();
                let runtime = Runtime::new(config).map_err(|e| e.to_string())?;
                let kernel = runtime
                    .prepare(Arc::clone(&launch.module), "main")
                    .map_err(|e| e.to_string())?;
                ReadyKernel::Runtime { runtime, kernel }
            }
            Engine::Jit { sms } => jit_prepare(launch, sms)?,
        };
        Ok((ready, start.elapsed()))
    }
}

/// The JIT's options in every measurement.
fn jit_options() -> JitOptions {
    JitOptions::default()
}

/// The JIT kernel. Compiled code runs its workgroups one after another on
/// the calling thread until the JIT becomes a runtime backend, so it
/// offers one SM only.
fn jit_prepare(launch: &Launch, sms: u32) -> Result<ReadyKernel, String> {
    if sms != 1 {
        return Err("the JIT runs on one SM until it is a runtime backend".into());
    }
    let compiled =
        warpjit_jit::compile(&launch.module, &jit_options()).map_err(|e| e.to_string())?;
    Ok(ReadyKernel::SequentialJit { compiled })
}

/// A kernel ready to run.
pub enum ReadyKernel {
    Runtime { runtime: Runtime, kernel: Kernel },
    SequentialJit { compiled: CompiledModule },
}

impl ReadyKernel {
    /// Runs `launch` on a fresh copy of its input buffers; returns the time
    /// the launch took and the final buffers. Out-of-bounds accesses are an
    /// error: no workload makes any.
    pub fn run(&self, launch: &Launch) -> Result<(Duration, Vec<Vec<u8>>), String> {
        match self {
            ReadyKernel::Runtime { runtime, kernel } => {
                let mut buffers = launch
                    .buffers
                    .iter()
                    .map(|b| Buffer::from_bytes(b))
                    .collect::<Result<Vec<_>, _>>()
                    .map_err(|e| e.to_string())?;
                let start = Instant::now();
                let report = runtime
                    .launch(
                        kernel,
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
            ReadyKernel::SequentialJit { compiled } => {
                let mut buffers = launch.buffers.clone();
                let mut config = LaunchConfig::new(launch.grid, launch.workgroup);
                config.sm_count = 1;
                let kernel = launch
                    .module
                    .kernels()
                    .find(|(_, f)| f.name == "main")
                    .map(|(id, _)| id)
                    .ok_or("the program has no kernel @main")?;
                let start = Instant::now();
                let report = warpjit_jit::launch(
                    compiled,
                    &launch.module,
                    kernel,
                    &config,
                    &launch.params,
                    &mut buffers,
                )
                .map_err(|e| e.to_string())?;
                let elapsed = start.elapsed();
                if report.faults.total() != 0 {
                    return Err(format!("out-of-bounds accesses: {:?}", report.faults));
                }
                Ok((elapsed, buffers))
            }
        }
    }
}
