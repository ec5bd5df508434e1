//! The runtime: a pool of SM threads, kernel preparation and launches.

use crate::backend::{Backend, InterpreterBackend};
use crate::config::RuntimeConfig;
use crate::error::{ConfigError, LaunchError};
use crate::kernel::Kernel;
use crate::memory::Buffer;
use crate::pool::{self, Failure, LaunchJob, Pool, SmOutcome};
use crate::validate::check_launch;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::Ordering;
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};
use warpjit_ir::interp::FaultReport;
use warpjit_ir::{FuncId, VerifiedModule};

/// How long a launch waits for its SMs after asking them to stop before it
/// gives up on them and replaces their threads. The interpreter stops within
/// a statement; this is for backends that do not check the token.
const STOP_GRACE: Duration = Duration::from_secs(2);

/// What a launch did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LaunchReport {
    /// Out-of-bounds accesses: counts, and the first access of the lowest
    /// workgroup (linear index) that made one.
    pub faults: FaultReport,
    /// Statements executed, summed over all warps.
    pub statements: u64,
    /// Workgroups run.
    pub workgroups: u64,
    /// Workgroups each SM ran (index: SM id; length: the SM count).
    pub workgroups_per_sm: Vec<u64>,
    /// Wall time from the first SM being handed the launch to the last one
    /// reporting back.
    pub elapsed: Duration,
}

impl LaunchReport {
    /// SMs that ran at least one workgroup.
    pub fn sms_used(&self) -> u32 {
        self.workgroups_per_sm.iter().filter(|&&n| n > 0).count() as u32
    }
}

/// A simulated GPU: `sm_count` SM threads that run launches, each workgroup
/// wholly on one SM, the workgroups balanced over the SMs as they become
/// free. Launches from several host threads take turns.
pub struct Runtime {
    config: RuntimeConfig,
    backend: Arc<dyn Backend>,
    pool: Mutex<Pool>,
}

impl Runtime {
    /// A runtime on the reference interpreter.
    pub fn new(config: RuntimeConfig) -> Result<Runtime, ConfigError> {
        Runtime::with_backend(config, Arc::new(InterpreterBackend))
    }

    /// A runtime on `backend`; starts the SM threads.
    pub fn with_backend(
        config: RuntimeConfig,
        backend: Arc<dyn Backend>,
    ) -> Result<Runtime, ConfigError> {
        config.check()?;
        let pool = Pool::new(config.sm_count)?;
        Ok(Runtime {
            config,
            backend,
            pool: Mutex::new(pool),
        })
    }

    /// The configuration the runtime was made with.
    pub fn config(&self) -> &RuntimeConfig {
        &self.config
    }

    /// The backend that prepares and runs this runtime's kernels.
    pub fn backend(&self) -> &dyn Backend {
        &*self.backend
    }

    /// Prepares the kernel named `name` (with or without `@`).
    pub fn prepare(
        &self,
        module: impl Into<Arc<VerifiedModule>>,
        name: &str,
    ) -> Result<Kernel, LaunchError> {
        let module = module.into();
        let bare = name.strip_prefix('@').unwrap_or(name);
        let function = module
            .kernels()
            .find(|(_, f)| f.name == bare)
            .map(|(id, _)| id)
            .ok_or_else(|| {
                let names: Vec<String> = module
                    .kernels()
                    .map(|(_, f)| format!("@{}", f.name))
                    .collect();
                LaunchError::Prepare {
                    kernel: bare.to_string(),
                    reason: format!(
                        "the module has no such kernel (kernels: {})",
                        if names.is_empty() {
                            "none".to_string()
                        } else {
                            names.join(", ")
                        }
                    ),
                }
            })?;
        self.prepare_function(module, function)
    }

    /// Prepares kernel `function` of `module`.
    pub fn prepare_function(
        &self,
        module: impl Into<Arc<VerifiedModule>>,
        function: FuncId,
    ) -> Result<Kernel, LaunchError> {
        let module = module.into();
        match module.functions.get(function.0 as usize) {
            Some(f) if f.is_kernel() => {}
            Some(f) => {
                return Err(LaunchError::Prepare {
                    kernel: f.name.clone(),
                    reason: "it is a function, not a kernel".into(),
                });
            }
            None => {
                return Err(LaunchError::Invalid(format!(
                    "the module has no function {}",
                    function.0
                )));
            }
        }
        let name = module.function(function).name.clone();
        let prepared = catch_unwind(AssertUnwindSafe(|| self.backend.prepare(&module, function)))
            .unwrap_or_else(|_| Err("the backend panicked".to_string()))
            .map_err(|reason| LaunchError::Prepare {
                kernel: name,
                reason,
            })?;
        Ok(Kernel::new(module, function, self.backend.name(), prepared))
    }

    /// Runs `kernel` on a grid of `grid` workgroups of `workgroup` threads.
    /// `params` are the parameters' bit patterns in the order the module
    /// declares them (`Module::params`, `Module::find_param`; [`crate::param`]
    /// makes the bits of a value); `buffers` are bound in the order the
    /// module declares its buffers (`Module::buffers`, `Module::find_buffer`),
    /// not by binding number, and hold the results afterwards. Everything is
    /// checked before anything runs.
    ///
    /// Launches of one runtime take turns (from any number of threads); a
    /// kernel carries the code its backend prepared, so a kernel prepared
    /// by another runtime with the same backend runs that code, with that
    /// runtime's options.
    pub fn launch(
        &self,
        kernel: &Kernel,
        grid: [u32; 3],
        workgroup: [u32; 3],
        params: &[u64],
        buffers: &mut [Buffer],
    ) -> Result<LaunchReport, LaunchError> {
        if kernel.backend() != self.backend.name() {
            return Err(LaunchError::Invalid(format!(
                "kernel @{} was prepared by the {} backend; this runtime runs {}",
                kernel.name(),
                kernel.backend(),
                self.backend.name()
            )));
        }
        let storages: Vec<_> = buffers.iter().map(|b| Arc::clone(b.storage())).collect();
        let (config, workgroups) =
            check_launch(kernel, &self.config, grid, workgroup, params, &storages)?;
        let sm_count = self.config.sm_count;
        let mut report = LaunchReport {
            workgroups_per_sm: vec![0; sm_count as usize],
            ..LaunchReport::default()
        };
        if workgroups == 0 {
            return Ok(report);
        }
        // More SMs than workgroups: the extra ones would find nothing to do.
        let sms = workgroups.min(u64::from(sm_count)) as u32;
        let job = Arc::new(LaunchJob::new(
            Arc::clone(&self.backend),
            kernel.clone(),
            config,
            params.to_vec(),
            storages,
            workgroups,
        ));

        let mut pool = self.pool.lock().unwrap_or_else(PoisonError::into_inner);
        let start = Instant::now();
        let (done, reports) = mpsc::channel();
        let mut dispatched = 0;
        let mut dispatch_error = None;
        for sm in 0..sms {
            match pool.dispatch(sm, &job, &done) {
                Ok(()) => dispatched += 1,
                Err(e) => {
                    job.halt();
                    dispatch_error = Some(e);
                    break;
                }
            }
        }
        drop(done);
        let collected = collect(&reports, dispatched, &job, self.config.watchdog);
        report.elapsed = start.elapsed();
        for &sm in &collected.silent {
            // Keep the pool whole; if even that fails, the next launch
            // tries again when it dispatches.
            let _ = pool.replace(sm);
        }
        drop(pool);

        if let Some(e) = dispatch_error {
            return Err(LaunchError::Threads(e.0));
        }
        let outcomes = collected.outcomes;
        if let Some(error) = first_failure(kernel, &outcomes) {
            return Err(error);
        }
        if !collected.silent.is_empty() {
            return Err(LaunchError::Unresponsive {
                kernel: kernel.name().to_string(),
                sms: collected.silent,
            });
        }
        // A budget that ran out after the last workgroup finished (the SMs
        // were slow to report, on a busy machine) stopped nothing: the
        // launch's results are complete.
        let finished = job.finished.load(Ordering::Relaxed);
        if collected.watchdog_fired && finished < workgroups {
            return Err(LaunchError::Watchdog {
                kernel: kernel.name().to_string(),
                budget: self.config.watchdog.unwrap_or_default(),
                finished,
                workgroups,
            });
        }
        report.faults = pool::merge_faults(&outcomes);
        for outcome in &outcomes {
            report.statements = report.statements.saturating_add(outcome.statements);
            report.workgroups += outcome.workgroups;
            report.workgroups_per_sm[outcome.sm as usize] = outcome.workgroups;
        }
        Ok(report)
    }
}

impl std::fmt::Debug for Runtime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Runtime")
            .field("config", &self.config)
            .field("backend", &self.backend.name())
            .finish()
    }
}

/// The SMs' outcomes as they came back.
struct Collected {
    outcomes: Vec<SmOutcome>,
    watchdog_fired: bool,
    /// SMs that never reported.
    silent: Vec<u32>,
}

/// Waits for `expected` outcomes. When the watchdog's budget runs out the
/// launch is cancelled and the SMs get [`STOP_GRACE`] to report.
fn collect(
    reports: &mpsc::Receiver<SmOutcome>,
    expected: u32,
    job: &LaunchJob,
    watchdog: Option<Duration>,
) -> Collected {
    let mut deadline = watchdog.and_then(|budget| Instant::now().checked_add(budget));
    let mut watchdog_fired = false;
    let mut stopping_since: Option<Instant> = None;
    let mut outcomes = Vec::with_capacity(expected as usize);
    while outcomes.len() < expected as usize {
        // Once the launch is halted, the SMs have a grace period. A failing
        // workgroup does not halt it: the SMs below it go on.
        if stopping_since.is_none() && job.is_halted() {
            stopping_since = Some(Instant::now());
        }
        let wait_until = match (stopping_since, deadline) {
            (Some(since), _) => Some(since + STOP_GRACE),
            (None, deadline) => deadline,
        };
        let received = match wait_until {
            Some(at) => reports.recv_timeout(at.saturating_duration_since(Instant::now())),
            None => reports.recv().map_err(|_| RecvTimeoutError::Disconnected),
        };
        match received {
            Ok(outcome) => outcomes.push(outcome),
            Err(RecvTimeoutError::Timeout) if stopping_since.is_none() => {
                watchdog_fired = true;
                deadline = None;
                job.halt();
            }
            Err(RecvTimeoutError::Timeout) | Err(RecvTimeoutError::Disconnected) => break,
        }
    }
    let silent = (0..expected)
        .filter(|sm| !outcomes.iter().any(|o| o.sm == *sm))
        .collect();
    Collected {
        outcomes,
        watchdog_fired,
        silent,
    }
}

/// The failure of the lowest failed workgroup, if any.
fn first_failure(kernel: &Kernel, outcomes: &[SmOutcome]) -> Option<LaunchError> {
    let (sm, failure) = outcomes
        .iter()
        .filter_map(|o| o.failure.as_ref().map(|f| (o.sm, f)))
        .min_by_key(|(_, f)| f.index)?;
    Some(match &failure.failure {
        Failure::Exec(e) => LaunchError::Exec(e.clone()),
        Failure::Panic(message) => LaunchError::Panicked {
            kernel: kernel.name().to_string(),
            workgroup: failure.workgroup,
            sm,
            message: message.clone(),
        },
    })
}
