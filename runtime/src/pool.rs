//! The SM worker threads and what each does during a launch.
//!
//! Every SM is one OS thread that lives as long as its runtime and waits
//! for launches on its own channel. In a launch each SM claims runs of
//! consecutive workgroups from one shared counter (lowest linear index
//! first) until none are left or the launch is cancelled, hands each run
//! to the backend in one call ([`Backend::run_workgroups`]), which runs its
//! workgroups to completion one after another, and sends one [`SmOutcome`]
//! back. A panic in the backend is caught per run and charged to the
//! workgroup it happened in, so the thread survives it.
//!
//! A failing workgroup stops only the work above it: runs are claimed in
//! order and never overlap, so every workgroup below it is in a run that
//! started below it, and those runs go on. The launch therefore reports the
//! lowest failing workgroup of the grid, as the interpreter's sequential
//! launch does, whatever the schedule.

use crate::affinity;
use crate::backend::{Backend, CancelToken, RunProgress, WorkgroupRun};
use crate::error::ConfigError;
use crate::kernel::Kernel;
use crate::memory::{SmMemory, Storage};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::Arc;
use std::thread::JoinHandle;
use warpjit_ir::interp::{ExecError, Fault, FaultReport, LaunchConfig};

/// Everything the SMs of one launch share.
pub(crate) struct LaunchJob {
    pub backend: Arc<dyn Backend>,
    pub kernel: Kernel,
    pub config: LaunchConfig,
    pub params: Vec<u64>,
    pub buffers: Vec<Arc<Storage>>,
    /// Number of workgroups in the grid.
    pub workgroups: u64,
    /// The next workgroup (linear index) nobody has claimed.
    next: AtomicU64,
    /// Workgroups that completed.
    pub finished: AtomicU64,
    /// One per SM: the flag that SM's backend polls.
    cancels: Vec<CancelToken>,
    /// Raised when the whole launch must stop now (watchdog, a failed
    /// dispatch, a fault in the runtime itself).
    halted: AtomicBool,
    /// Linear index of the lowest workgroup known to have failed
    /// (`u64::MAX`: none).
    lowest_failure: AtomicU64,
    /// Per SM, a lower bound of the first workgroup of the run it is on or
    /// about to claim (`u64::MAX`: it has claimed nothing).
    running_from: Vec<AtomicU64>,
}

impl LaunchJob {
    pub fn new(
        backend: Arc<dyn Backend>,
        kernel: Kernel,
        config: LaunchConfig,
        params: Vec<u64>,
        buffers: Vec<Arc<Storage>>,
        workgroups: u64,
    ) -> LaunchJob {
        let sms = config.sm_count as usize;
        LaunchJob {
            backend,
            kernel,
            config,
            params,
            buffers,
            workgroups,
            next: AtomicU64::new(0),
            finished: AtomicU64::new(0),
            cancels: (0..sms).map(|_| CancelToken::new()).collect(),
            halted: AtomicBool::new(false),
            lowest_failure: AtomicU64::new(u64::MAX),
            running_from: (0..sms).map(|_| AtomicU64::new(u64::MAX)).collect(),
        }
    }

    /// Stops every SM as soon as it next looks.
    pub fn halt(&self) {
        self.halted.store(true, Ordering::SeqCst);
        for cancel in &self.cancels {
            cancel.cancel();
        }
    }

    /// Whether [`LaunchJob::halt`] was called.
    pub fn is_halted(&self) -> bool {
        self.halted.load(Ordering::SeqCst)
    }

    /// Workgroup `index` failed: cancels the SMs whose runs lie above it.
    /// The SeqCst pair with [`LaunchJob::start_run`] makes sure an SM
    /// starting a run above `index` either is cancelled here or sees the
    /// failure; an SM's bound never exceeds its run's start, so none below
    /// is cancelled.
    fn fail(&self, index: u64) {
        self.lowest_failure.fetch_min(index, Ordering::SeqCst);
        for (from, cancel) in self.running_from.iter().zip(&self.cancels) {
            if from.load(Ordering::SeqCst) > index {
                cancel.cancel();
            }
        }
    }

    /// SM `sm` is about to claim: every claim from now on starts at or
    /// after the counter's value, so that is a bound [`LaunchJob::fail`]
    /// may compare while the claim is under way.
    fn will_claim(&self, sm: u32) {
        let bound = self.next.load(Ordering::SeqCst);
        self.running_from[sm as usize].store(bound, Ordering::SeqCst);
    }

    /// SM `sm` is about to run workgroups from `first` on. False when a
    /// workgroup below `first` has failed. (A run that starts below the
    /// failure lies wholly below it: runs never overlap, and the failing
    /// one starts at or below the failure.)
    fn start_run(&self, sm: u32, first: u64) -> bool {
        self.running_from[sm as usize].store(first, Ordering::SeqCst);
        first < self.lowest_failure.load(Ordering::SeqCst)
    }

    /// Whether SM `sm` should claim more work: not after a failure, as
    /// every workgroup below it has been claimed already.
    fn goes_on(&self, sm: u32) -> bool {
        !self.cancels[sm as usize].is_cancelled()
            && self.lowest_failure.load(Ordering::SeqCst) == u64::MAX
    }

    /// Claims the next run of consecutive workgroups: a quarter of an SM's
    /// share of those left, and at least `chunk` (guided self-scheduling).
    /// Large first runs give each SM long streams of memory to itself (W3
    /// 2 SMs about 9% faster than runs of 64); the runs shrink towards the
    /// end, so the SMs still finish together. Never counts past the end,
    /// so the counter cannot wrap whatever the grid size.
    fn claim(&self, chunk: u64) -> Option<std::ops::Range<u64>> {
        let sms = u64::from(self.config.sm_count.max(1));
        let take = |n: u64| run_length(self.workgroups - n, sms, chunk);
        let first = self
            .next
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| {
                (n < self.workgroups).then(|| n + take(n))
            })
            .ok()?;
        Some(first..first + take(first))
    }

    /// The fewest workgroups an SM claims at once: one shared counter
    /// touched per workgroup costs more than a small workgroup's work when
    /// SMs contend for it, so large grids are handed out in runs, small
    /// enough at the end (at most 1/16 of an SM's share) that the SMs
    /// still finish together.
    fn chunk(&self) -> u64 {
        fewest_run(self.workgroups, u64::from(self.config.sm_count.max(1)))
    }

    /// The workgroup id of linear index `n` (x fastest).
    fn workgroup_id(&self, n: u64) -> [u32; 3] {
        let [gx, gy, _] = self.config.grid.map(u64::from);
        [
            (n % gx) as u32,
            ((n / gx) % gy) as u32,
            (n / (gx * gy)) as u32,
        ]
    }
}

/// The fewest workgroups one claim takes in a grid of `workgroups` run by
/// `sms` SMs: 1/16 of an SM's share, between 1 and [`MAX_CHUNK`].
fn fewest_run(workgroups: u64, sms: u64) -> u64 {
    (workgroups / (sms * 16)).clamp(1, MAX_CHUNK)
}

/// How many of the `left` unclaimed workgroups one claim of `sms` SMs
/// takes: a quarter of an SM's share, at least `fewest`, at most `left`.
fn run_length(left: u64, sms: u64, fewest: u64) -> u64 {
    (left / (sms * 4)).max(fewest).min(left)
}

/// The largest of the smallest runs an SM claims.
const MAX_CHUNK: u64 = 64;

/// Why an SM stopped early.
pub(crate) enum Failure {
    Exec(ExecError),
    Panic(String),
}

/// The failed workgroup of an SM.
pub(crate) struct SmFailure {
    pub index: u64,
    pub workgroup: [u32; 3],
    pub failure: Failure,
}

/// What one SM did in a launch.
pub(crate) struct SmOutcome {
    pub sm: u32,
    pub workgroups: u64,
    pub statements: u64,
    pub faults: FaultReport,
    /// Linear index of the first workgroup that faulted on this SM (its
    /// fault is `faults.first`).
    pub first_fault_at: Option<u64>,
    pub failure: Option<SmFailure>,
}

/// One launch for one SM.
struct Task {
    job: Arc<LaunchJob>,
    done: Sender<SmOutcome>,
}

struct Worker {
    jobs: Sender<Task>,
    thread: JoinHandle<()>,
}

/// The SM threads of a runtime.
pub(crate) struct Pool {
    workers: Vec<Worker>,
    /// The CPU each SM thread is pinned to (empty: none are; see
    /// `affinity.rs`).
    cpus: Vec<usize>,
}

impl Pool {
    pub fn new(sm_count: u32) -> Result<Pool, ConfigError> {
        let cpus = affinity::placement(sm_count);
        let mut workers = Vec::with_capacity(sm_count as usize);
        for sm in 0..sm_count {
            workers.push(spawn(sm, cpus.get(sm as usize).copied())?);
        }
        Ok(Pool { workers, cpus })
    }

    fn respawn(&mut self, sm: u32) -> Result<(), ConfigError> {
        self.workers[sm as usize] = spawn(sm, self.cpus.get(sm as usize).copied())?;
        Ok(())
    }

    /// Hands `job` to SM `sm`. A thread that has ended (it should never)
    /// is replaced first.
    pub fn dispatch(
        &mut self,
        sm: u32,
        job: &Arc<LaunchJob>,
        done: &Sender<SmOutcome>,
    ) -> Result<(), ConfigError> {
        let index = sm as usize;
        if self.workers[index].thread.is_finished() {
            self.respawn(sm)?;
        }
        let task = Task {
            job: Arc::clone(job),
            done: done.clone(),
        };
        if let Err(mpsc::SendError(task)) = self.workers[index].jobs.send(task) {
            self.respawn(sm)?;
            self.workers[index]
                .jobs
                .send(task)
                .map_err(|_| ConfigError(format!("SM {sm}'s thread stopped at once")))?;
        }
        Ok(())
    }

    /// Leaves SM `sm`'s thread to finish whatever it is stuck in (it exits
    /// afterwards, its channel closed) and starts a fresh one.
    /// The fresh thread is not pinned: the old one may still be busy on
    /// that CPU.
    pub fn replace(&mut self, sm: u32) -> Result<(), ConfigError> {
        self.workers[sm as usize] = spawn(sm, None)?;
        Ok(())
    }
}

impl Drop for Pool {
    fn drop(&mut self) {
        let threads: Vec<JoinHandle<()>> = self
            .workers
            .drain(..)
            .map(|w| {
                drop(w.jobs);
                w.thread
            })
            .collect();
        for thread in threads {
            // An idle thread sees its channel closed and exits.
            let _ = thread.join();
        }
    }
}

/// Starts SM `sm`'s thread, pinned to `cpu` if given.
fn spawn(sm: u32, cpu: Option<usize>) -> Result<Worker, ConfigError> {
    let (jobs, inbox) = mpsc::channel();
    let thread = std::thread::Builder::new()
        .name(format!("warpjit-sm-{sm}"))
        .spawn(move || {
            if let Some(cpu) = cpu {
                // Unpinned, the thread still works, only maybe later.
                let _ = affinity::pin_current_thread(cpu);
            }
            serve(sm, inbox)
        })
        .map_err(|e| ConfigError(format!("cannot start the thread of SM {sm}: {e}")))?;
    Ok(Worker { jobs, thread })
}

/// The life of an SM thread: one launch after another until the runtime
/// goes away.
fn serve(sm: u32, inbox: Receiver<Task>) {
    while let Ok(Task { job, done }) = inbox.recv() {
        let outcome =
            catch_unwind(AssertUnwindSafe(|| run_sm(sm, &job))).unwrap_or_else(|payload| {
                // Not the backend: the runtime's own code. Report it like one.
                job.halt();
                SmOutcome {
                    sm,
                    workgroups: 0,
                    statements: 0,
                    faults: FaultReport::default(),
                    first_fault_at: None,
                    failure: Some(SmFailure {
                        index: u64::MAX,
                        workgroup: [0; 3],
                        failure: Failure::Panic(panic_message(payload.as_ref())),
                    }),
                }
            });
        // The launch's buffers go back to the caller before it hears that
        // this SM is done, so that they are the caller's alone when
        // `launch` returns (`Buffer::refill` needs that).
        drop(job);
        // The launcher may have given up waiting; nothing else to do then.
        let _ = done.send(outcome);
    }
}

/// SM `sm`'s part of a launch.
fn run_sm(sm: u32, job: &LaunchJob) -> SmOutcome {
    let mut outcome = SmOutcome {
        sm,
        workgroups: 0,
        statements: 0,
        faults: FaultReport::default(),
        first_fault_at: None,
        failure: None,
    };
    let mut memory = SmMemory::new(&job.buffers);
    let chunk = job.chunk();
    while job.goes_on(sm) {
        job.will_claim(sm);
        let Some(claimed) = job.claim(chunk) else {
            break;
        };
        if !job.start_run(sm, claimed.start) {
            break;
        }
        let run = WorkgroupRun {
            kernel: &job.kernel,
            config: &job.config,
            sm_id: sm,
            first_index: claimed.start,
            first_workgroup_id: job.workgroup_id(claimed.start),
            count: claimed.end - claimed.start,
            params: &job.params,
            cancel: &job.cancels[sm as usize],
        };
        if let Err(stopped) = run_claimed(job, &run, &mut memory, &mut outcome) {
            if let Some(failure) = stopped {
                job.fail(failure.index);
                outcome.failure = Some(failure);
            }
            break;
        }
    }
    outcome
}

/// Runs the claimed workgroups of `run`, adding what completed to
/// `outcome`. `Err(None)`: the launch was cancelled; `Err(Some(_))`: a
/// workgroup failed.
fn run_claimed(
    job: &LaunchJob,
    run: &WorkgroupRun<'_>,
    memory: &mut SmMemory<'_>,
    outcome: &mut SmOutcome,
) -> Result<(), Option<SmFailure>> {
    let mut progress = RunProgress::new(run.first_index);
    let result = catch_unwind(AssertUnwindSafe(|| {
        job.backend.run_workgroups(run, memory, &mut progress)
    }));
    // Whatever stopped the run, the workgroups before it completed.
    let completed = progress.completed().min(run.count);
    job.finished.fetch_add(completed, Ordering::Relaxed);
    outcome.workgroups += completed;
    outcome.statements = outcome.statements.saturating_add(progress.statements());
    if progress.faults().first.is_some() || !progress.faults().is_empty() {
        // Claims come in increasing order, so this SM's first fault is its
        // lowest faulting workgroup's.
        if outcome.first_fault_at.is_none() {
            outcome.first_fault_at = progress.first_fault_at();
        }
        outcome.faults.merge(progress.faults());
    }
    let failure = match result {
        Ok(Ok(())) if completed == run.count => return Ok(()),
        Ok(Ok(())) => Failure::Panic(format!(
            "the {} backend returned after {completed} of {} workgroups",
            job.backend.name(),
            run.count
        )),
        // Stopped by the watchdog or by a failure below this run.
        Ok(Err(ExecError::Cancelled)) => return Err(None),
        Ok(Err(e)) => Failure::Exec(e),
        Err(payload) => Failure::Panic(panic_message(payload.as_ref())),
    };
    let index = run.first_index + completed;
    Err(Some(SmFailure {
        index,
        workgroup: job.workgroup_id(index),
        failure,
    }))
}

fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        s.to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "(a panic without a message)".to_string()
    }
}

/// The report of the SMs' outcomes: counts summed, and the first fault of
/// the lowest workgroup that faulted, so it does not depend on which SM ran
/// what.
pub(crate) fn merge_faults(outcomes: &[SmOutcome]) -> FaultReport {
    let mut faults = FaultReport::default();
    for outcome in outcomes {
        faults.loads = faults.loads.saturating_add(outcome.faults.loads);
        faults.stores = faults.stores.saturating_add(outcome.faults.stores);
        faults.atomics = faults.atomics.saturating_add(outcome.faults.atomics);
    }
    faults.first = outcomes
        .iter()
        .filter_map(|o| Some((o.first_fault_at?, o.faults.first.as_ref()?)))
        .min_by_key(|(index, _)| *index)
        .map(|(_, fault): (u64, &Fault)| fault.clone());
    faults
}

#[cfg(test)]
mod tests {
    use super::{fewest_run, run_length};

    #[test]
    fn runs_cover_the_grid_in_shrinking_runs() {
        for sms in 1..=4u64 {
            for grid in [1u64, 7, 16, 1000, 1024, 65536, 1 << 22] {
                let fewest = fewest_run(grid, sms);
                let mut claimed = 0;
                let mut runs = Vec::new();
                while claimed < grid {
                    let run = run_length(grid - claimed, sms, fewest);
                    assert!(run >= 1, "grid {grid}, {sms} SMs: an empty run");
                    runs.push(run);
                    claimed += run;
                }
                assert_eq!(claimed, grid, "grid {grid}, {sms} SMs");
                assert!(
                    runs.windows(2).all(|w| w[0] >= w[1]),
                    "grid {grid}, {sms} SMs: runs grow: {runs:?}"
                );
                // The first run is a quarter of an SM's share; the last
                // ones are the fewest, so the SMs finish together.
                assert_eq!(runs[0], (grid / (sms * 4)).max(fewest).min(grid));
                assert!(*runs.last().unwrap() <= fewest);
            }
        }
        // 2^16 workgroups on 2 SMs: runs of 8192, 7168, ..., then 64s.
        let mut left = 65536;
        let first: Vec<u64> = (0..3)
            .map(|_| {
                let run = run_length(left, 2, 64);
                left -= run;
                run
            })
            .collect();
        assert_eq!(first, vec![8192, 7168, 6272]);
    }
}
