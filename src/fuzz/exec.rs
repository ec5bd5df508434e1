//! Running one program on one engine and machine configuration, with every
//! failure (error, fuel, watchdog, panic) turned into a value.

use std::collections::hash_map::{Entry, HashMap};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;
use std::time::Duration;
use warpjit_ir::interp::{self, FaultReport, LaunchConfig};
use warpjit_ir::{FuncId, VerifiedModule};
use warpjit_jit::JitBackend;
use warpjit_jit::{CompiledModule, JitError, JitOptions};
use warpjit_runtime::{
    Backend, Buffer, ExecError, InterpreterBackend, Kernel, LaunchError, Runtime, RuntimeConfig,
};

/// Statements (interpreter) or loop tests (JIT) a warp may run.
pub const FUEL: u64 = 5_000_000;
/// Wall-clock budget of one launch on the runtime.
pub const WATCHDOG: Duration = Duration::from_secs(20);

/// Where a program runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Engine {
    /// `interp::launch`: the oracle, one workgroup after another.
    Reference,
    /// The interpreter on the multithreaded runtime.
    RuntimeInterp,
    /// `warpjit_jit::compile` + `warpjit_jit::launch`, one workgroup after
    /// another on this thread.
    Jit,
    /// The JIT as the runtime's backend (`JitBackend`) on the SM threads.
    RuntimeJit,
}

impl Engine {
    pub const ALL: [Engine; 4] = [
        Engine::Reference,
        Engine::RuntimeInterp,
        Engine::Jit,
        Engine::RuntimeJit,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Engine::Reference => "reference",
            Engine::RuntimeInterp => "runtime-interp",
            Engine::Jit => "jit",
            Engine::RuntimeJit => "runtime-jit",
        }
    }

    /// Whether results may depend on which SM ran a workgroup.
    fn schedules_freely(self) -> bool {
        matches!(self, Engine::RuntimeInterp | Engine::RuntimeJit)
    }
}

/// The simulated machine.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Machine {
    pub sm_count: u32,
    pub warps_per_sm: u32,
}

/// A launch: geometry, parameters and initial buffer contents.
#[derive(Clone, Debug, PartialEq)]
pub struct Launch {
    pub grid: [u32; 3],
    pub workgroup: [u32; 3],
    pub params: Vec<u64>,
    pub buffers: Vec<Vec<u8>>,
}

/// What a run ended with.
#[derive(Clone, Debug, PartialEq)]
pub enum RunResult {
    Finished {
        buffers: Vec<Vec<u8>>,
        faults: FaultReport,
    },
    /// The engine cannot run this program (a construct it does not lower).
    Unsupported(String),
    /// Compilation failed.
    CompileError(String),
    /// Ran out of fuel or was stopped by the watchdog.
    Hang(String),
    /// The launch failed with an error.
    Failed(String),
    /// A panic, caught.
    Crashed(String),
}

impl RunResult {
    pub fn summary(&self) -> String {
        match self {
            RunResult::Finished { faults, .. } => format!(
                "finished ({} load, {} store, {} atomic faults)",
                faults.loads, faults.stores, faults.atomics
            ),
            RunResult::Unsupported(m) => format!("unsupported: {m}"),
            RunResult::CompileError(m) => format!("compile error: {m}"),
            RunResult::Hang(m) => format!("hang: {m}"),
            RunResult::Failed(m) => format!("failed: {m}"),
            RunResult::Crashed(m) => format!("crashed: {m}"),
        }
    }
}

/// Per-thread state: compiled code is tied to its thread, runtimes keep SM
/// threads alive between cases.
#[derive(Default)]
pub struct Workspace {
    /// How the JIT engines compile (target and level; any workgroup).
    jit: JitOptions,
    /// Keyed by machine and whether the backend is the JIT.
    runtimes: HashMap<(Machine, bool), Runtime>,
    compiled: Option<(Arc<VerifiedModule>, Result<CompiledModule, JitError>)>,
    /// The module's kernel prepared by a JIT runtime; any JIT runtime
    /// launches it, so each module is compiled for the runtime once.
    jit_kernel: Option<(Arc<VerifiedModule>, Result<Kernel, String>)>,
}

impl Workspace {
    /// A workspace whose JIT engines compile with `jit`'s target and level.
    pub fn new(jit: JitOptions) -> Workspace {
        Workspace {
            jit: JitOptions {
                whole_warps: false,
                ..jit
            },
            ..Workspace::default()
        }
    }

    fn runtime(&mut self, machine: Machine, jit: bool) -> Result<&Runtime, String> {
        // Each runtime keeps its SM threads; a few configurations suffice.
        let jit_options = self.jit;
        if self.runtimes.len() >= MAX_RUNTIMES && !self.runtimes.contains_key(&(machine, jit)) {
            self.runtimes.clear();
        }
        match self.runtimes.entry((machine, jit)) {
            Entry::Occupied(e) => Ok(e.into_mut()),
            Entry::Vacant(e) => {
                let config = RuntimeConfig {
                    sm_count: machine.sm_count,
                    warps_per_sm: machine.warps_per_sm,
                    fuel: Some(FUEL),
                    watchdog: Some(WATCHDOG),
                };
                let backend: Arc<dyn Backend> = if jit {
                    Arc::new(JitBackend::new(jit_options))
                } else {
                    Arc::new(InterpreterBackend)
                };
                let runtime = Runtime::with_backend(config, backend).map_err(|e| e.to_string())?;
                Ok(e.insert(runtime))
            }
        }
    }

    /// The JIT's code for `module`, compiled once per module (the cache
    /// holds the `Arc`, so its address names it).
    fn compiled(&mut self, module: &Arc<VerifiedModule>) -> &Result<CompiledModule, JitError> {
        let cached = matches!(&self.compiled, Some((m, _)) if Arc::ptr_eq(m, module));
        if !cached {
            // Drop the old code before compiling the next.
            self.compiled = None;
            // The code for any workgroup: the runtime engine runs the code
            // for the kernel's declared size (the launch's), so a campaign
            // that runs both engines compares both kinds.
            let options = self.jit;
            let result = catch_unwind(AssertUnwindSafe(|| warpjit_jit::compile(module, &options)))
                .unwrap_or_else(|p| Err(JitError::Internal(format!("panic: {}", panic_text(&*p)))));
            self.compiled = Some((Arc::clone(module), result));
        }
        &self.compiled.as_ref().expect("just set").1
    }
}

/// Runtimes a workspace keeps at once.
const MAX_RUNTIMES: usize = 4;

/// The machine an engine must use to give results comparable with the
/// reference: a program that reads `sm_id` runs on one SM when the engine
/// places workgroups itself.
pub fn effective_machine(engine: Engine, machine: Machine, reads_sm_id: bool) -> Machine {
    if reads_sm_id && engine.schedules_freely() {
        Machine {
            sm_count: 1,
            ..machine
        }
    } else {
        machine
    }
}

/// Runs `kernel` of `module` on `engine`. Never panics.
pub fn run_on(
    engine: Engine,
    ws: &mut Workspace,
    module: &Arc<VerifiedModule>,
    kernel: FuncId,
    launch: &Launch,
    machine: Machine,
) -> RunResult {
    if engine == Engine::Jit {
        match ws.compiled(module) {
            Ok(_) => {}
            Err(JitError::Unsupported(m)) => return RunResult::Unsupported(m.clone()),
            Err(JitError::Internal(m)) if m.starts_with("panic: ") => {
                return RunResult::Crashed(format!("while compiling: {m}"))
            }
            Err(e) => return RunResult::CompileError(e.to_string()),
        }
    }
    catch_unwind(AssertUnwindSafe(|| {
        run_unguarded(engine, ws, module, kernel, launch, machine)
    }))
    .unwrap_or_else(|p| RunResult::Crashed(panic_text(&*p)))
}

fn run_unguarded(
    engine: Engine,
    ws: &mut Workspace,
    module: &Arc<VerifiedModule>,
    kernel: FuncId,
    launch: &Launch,
    machine: Machine,
) -> RunResult {
    let mut cfg = LaunchConfig::new(launch.grid, launch.workgroup);
    cfg.sm_count = machine.sm_count;
    cfg.warps_per_sm = machine.warps_per_sm;
    cfg.fuel = Some(FUEL);
    match engine {
        Engine::Reference => {
            let mut memory = launch.buffers.clone();
            match interp::launch(module, kernel, &cfg, &launch.params, &mut memory) {
                Ok(report) => RunResult::Finished {
                    buffers: memory,
                    faults: report.faults,
                },
                Err(e) => exec_error(e),
            }
        }
        Engine::Jit => {
            let Ok(code) = ws.compiled(module) else {
                return RunResult::Failed("not compiled".into());
            };
            let mut memory = launch.buffers.clone();
            match warpjit_jit::launch(code, kernel, &cfg, &launch.params, &mut memory) {
                Ok(report) => RunResult::Finished {
                    buffers: memory,
                    faults: report.faults,
                },
                Err(JitError::FuelExhausted(m)) => RunResult::Hang(m),
                Err(e) => RunResult::Failed(e.to_string()),
            }
        }
        Engine::RuntimeInterp | Engine::RuntimeJit => {
            let jit = engine == Engine::RuntimeJit;
            let prepared = match prepare(ws, module, kernel, machine, jit) {
                Ok(k) => k,
                Err(e) => return preparation_failure(e),
            };
            let runtime = match ws.runtime(machine, jit) {
                Ok(rt) => rt,
                Err(e) => return RunResult::Failed(e),
            };
            let mut buffers = Vec::with_capacity(launch.buffers.len());
            for b in &launch.buffers {
                match Buffer::from_bytes(b) {
                    Ok(b) => buffers.push(b),
                    Err(e) => return RunResult::Failed(e.to_string()),
                }
            }
            match runtime.launch(
                &prepared,
                launch.grid,
                launch.workgroup,
                &launch.params,
                &mut buffers,
            ) {
                Ok(report) => RunResult::Finished {
                    buffers: buffers.iter().map(Buffer::to_bytes).collect(),
                    faults: report.faults,
                },
                Err(LaunchError::Exec(e)) => exec_error(e),
                Err(e @ (LaunchError::Watchdog { .. } | LaunchError::Unresponsive { .. })) => {
                    RunResult::Hang(e.to_string())
                }
                Err(e @ LaunchError::Panicked { .. }) => RunResult::Crashed(e.to_string()),
                Err(e) => RunResult::Failed(e.to_string()),
            }
        }
    }
}

/// The kernel prepared for a runtime: the interpreter prepares nothing; the
/// JIT's compilation is kept for the module's other machines.
fn prepare(
    ws: &mut Workspace,
    module: &Arc<VerifiedModule>,
    kernel: FuncId,
    machine: Machine,
    jit: bool,
) -> Result<Kernel, String> {
    let prepare_on = |ws: &mut Workspace| -> Result<Kernel, String> {
        let runtime = ws.runtime(machine, jit)?;
        runtime
            .prepare_function(Arc::clone(module), kernel)
            .map_err(|e| e.to_string())
    };
    let result = if jit {
        let cached = matches!(&ws.jit_kernel, Some((m, _)) if Arc::ptr_eq(m, module));
        if !cached {
            ws.jit_kernel = None;
            let prepared = prepare_on(ws);
            ws.jit_kernel = Some((Arc::clone(module), prepared));
        }
        ws.jit_kernel.as_ref().expect("just set").1.clone()
    } else {
        prepare_on(ws)
    };
    result
}

/// What a failed preparation means for the comparison.
fn preparation_failure(e: String) -> RunResult {
    if e.contains("not supported by the JIT") {
        RunResult::Unsupported(e)
    } else if e.contains("panicked") {
        RunResult::Crashed(e)
    } else {
        RunResult::CompileError(e)
    }
}

fn exec_error(e: ExecError) -> RunResult {
    match e {
        ExecError::FuelExhausted { .. } | ExecError::Cancelled => RunResult::Hang(e.to_string()),
        other => RunResult::Failed(other.to_string()),
    }
}

/// The message of a caught panic.
pub fn panic_text(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "panic with a non-text payload".to_string()
    }
}
