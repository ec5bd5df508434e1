//! A kernel run: options -> plan (checked against the module) -> launch on
//! the runtime -> buffers printed and written. The CLI and the filetest
//! runner both go through here.

pub mod compare;
pub mod options;
pub mod output;
pub mod plan;

pub use options::{Backend, RunOptions};
pub use plan::{plan, RunPlan};

use crate::buffers::BufferSpec;
use crate::directives::{self, DirectiveKind};
use std::sync::Arc;
use std::time::{Duration, Instant};
use warpjit_ir::interp::ExecError;
use warpjit_ir::VerifiedModule;
use warpjit_jit::{JitBackend, JitKernel, KernelCompile};
use warpjit_runtime::{
    Buffer, InterpreterBackend, Kernel, LaunchError, LaunchReport, Runtime, RuntimeConfig,
};

/// What a launch did and how long it took.
#[derive(Clone, Debug)]
pub struct RunOutcome {
    pub report: LaunchReport,
    /// The SMs the runtime had.
    pub sm_count: u32,
    pub wall: Duration,
    /// How long the JIT took to compile the module (None: interpreted).
    pub compile_time: Option<KernelCompile>,
}

/// The options of a file's `//! run:` lines, later lines on top of earlier
/// ones. `file` is the file's path: it names the file in errors, and the
/// relative paths of `file:` buffer contents are taken from its directory
/// (outputs stay relative to the working directory).
pub fn options_from_source(file: &str, source: &str) -> Result<RunOptions, String> {
    let mut options = RunOptions::default();
    let dir = std::path::Path::new(file).parent();
    for directive in directives::scan(source).map_err(|e| format!("{file}: {e}"))? {
        if let DirectiveKind::Run(words) = directive.kind {
            let origin = format!("{file}:{}", directive.line);
            let mut line = RunOptions::from_words(&words, &origin)?;
            for arg in &mut line.buffers {
                if let (BufferSpec::File { path, .. }, Some(dir)) = (&mut arg.spec, dir) {
                    if path.is_relative() {
                        *path = dir.join(&*path);
                    }
                }
            }
            options = options.then(line);
        }
    }
    Ok(options)
}

/// Launches the planned kernel on a runtime of its own; the buffers in
/// `plan` are updated in place.
pub fn execute(module: &VerifiedModule, plan: &mut RunPlan) -> Result<RunOutcome, String> {
    let prepared = prepare(module, plan)?;
    let launched = launch(&prepared, plan)?;
    plan.buffers = launched.buffers;
    Ok(RunOutcome {
        report: launched.report,
        sm_count: prepared.sm_count,
        wall: launched.wall,
        compile_time: prepared.compile_time,
    })
}

/// A runtime with the planned kernel compiled for the planned launch,
/// ready to launch it any number of times.
pub struct PreparedRun {
    runtime: Runtime,
    kernel: Kernel,
    /// The SMs the runtime has.
    pub sm_count: u32,
    /// How long the JIT took to compile the module (None: interpreted).
    pub compile_time: Option<KernelCompile>,
}

/// One launch of a prepared run.
pub struct Launched {
    pub report: LaunchReport,
    /// Wall time of the launch alone (the inputs are copied in before).
    pub wall: Duration,
    /// The buffers' bytes after the launch, in the module's buffer order
    /// (empty from [`launch_reading`] without `read_back`).
    pub buffers: Vec<Vec<u8>>,
}

/// Builds the runtime `plan` asks for and compiles its kernel.
pub fn prepare(module: &VerifiedModule, plan: &RunPlan) -> Result<PreparedRun, String> {
    let mut config = RuntimeConfig::default();
    if let Some(sms) = plan.sm_count {
        config.sm_count = sms;
    }
    if let Some(warps) = plan.warps_per_sm {
        config.warps_per_sm = warps;
    }
    config.fuel = plan.fuel;
    config.watchdog = plan.watchdog;
    tracing::info!(
        kernel = %plan.kernel_name,
        grid = %plan.grid,
        workgroup = %plan.workgroup,
        sm_count = config.sm_count,
        warps_per_sm = config.warps_per_sm,
        fuel = ?config.fuel,
        watchdog = ?config.watchdog,
        backend = plan.backend.name(),
        "launch"
    );
    let sm_count = config.sm_count;
    let backend: Arc<dyn warpjit_runtime::Backend> = match plan.backend {
        Backend::Jit => Arc::new(JitBackend::new(plan.jit)),
        Backend::Interp => Arc::new(InterpreterBackend),
    };
    let runtime = Runtime::with_backend(config, backend).map_err(|e| e.to_string())?;
    let kernel = runtime
        .prepare_function(module.clone(), plan.kernel)
        .map_err(|e| e.to_string())?;
    // The launch's workgroup size may need the other kind of code than
    // the declared one (`prepare` compiled that): compile it before the
    // clock starts.
    let compile_time = kernel
        .code()
        .downcast_ref::<JitKernel>()
        .map(|code| code.compile_for(plan.workgroup.0))
        .transpose()
        .map_err(|e| format!("@{}: cannot compile: {e}", plan.kernel_name))?;
    if let Some(compiled) = compile_time {
        tracing::info!(
            kernel = %plan.kernel_name,
            opt_level = plan.jit.opt_level,
            target = ?plan.jit.target,
            elapsed = ?compiled.time,
            cache_hit = compiled.cache_hit,
            "compiled"
        );
    }
    Ok(PreparedRun {
        runtime,
        kernel,
        sm_count,
        compile_time,
    })
}

/// Launches a prepared run on fresh copies of `plan`'s buffers and reads
/// them back.
pub fn launch(prepared: &PreparedRun, plan: &RunPlan) -> Result<Launched, String> {
    launch_reading(prepared, plan, &mut LaunchBuffers::default(), true)
}

/// The buffers of repeated launches of one run: copies of the plan's,
/// made once and refilled in place before each later launch.
#[derive(Default)]
pub struct LaunchBuffers(Vec<Buffer>);

impl LaunchBuffers {
    /// The plan's bytes in every buffer: refilled in place when there are
    /// buffers already (the same run's lengths), else fresh copies.
    fn fill(&mut self, module: &VerifiedModule, plan: &RunPlan) -> Result<(), String> {
        let refilled = !self.0.is_empty()
            && self
                .0
                .iter_mut()
                .zip(&plan.buffers)
                .all(|(buffer, bytes)| buffer.refill(bytes));
        if !refilled {
            self.0 = plan
                .buffers
                .iter()
                .zip(&module.buffers)
                .map(|(bytes, decl)| {
                    Buffer::from_bytes(bytes).map_err(|e| format!("buffer @{}: {e}", decl.name))
                })
                .collect::<Result<_, _>>()?;
        }
        Ok(())
    }
}

/// [`launch`] on `launch_buffers`, refilled from `plan` in place when it
/// has buffers already, reading them back only when `read_back` (else
/// `buffers` of the result is empty): for repeated launches of one run.
/// With large buffers, copying them out and the page faults of fresh
/// copies took more time than the kernels.
pub fn launch_reading(
    prepared: &PreparedRun,
    plan: &RunPlan,
    launch_buffers: &mut LaunchBuffers,
    read_back: bool,
) -> Result<Launched, String> {
    launch_buffers.fill(prepared.kernel.module(), plan)?;
    let buffers = &mut launch_buffers.0;

    let start = Instant::now();
    let result = prepared.runtime.launch(
        &prepared.kernel,
        plan.grid.0,
        plan.workgroup.0,
        &plan.params,
        buffers,
    );
    let wall = start.elapsed();
    let report = result.map_err(|e| match e {
        LaunchError::Exec(ExecError::FuelExhausted { fuel, unit, .. }) => {
            format!("{e}; --fuel {fuel} {unit} per warp")
        }
        LaunchError::Watchdog { .. } => {
            format!("{e}; --watchdog SECONDS sets the budget (0: none)")
        }
        LaunchError::Invalid(_) => {
            format!("{e} (grid {}, workgroup {})", plan.grid, plan.workgroup)
        }
        other => other.to_string(),
    })?;
    if plan.backend.counts_statements() {
        tracing::info!(
            statements = report.statements,
            sms_used = report.sms_used(),
            ?wall,
            "launch finished"
        );
    } else {
        tracing::info!(sms_used = report.sms_used(), ?wall, "launch finished");
    }
    Ok(Launched {
        report,
        wall,
        buffers: if read_back {
            buffers.iter().map(Buffer::to_bytes).collect()
        } else {
            Vec::new()
        },
    })
}
