//! The backend interface: what runs workgroups of a kernel on the calling
//! thread (one at a time, or a run of consecutive ones), and the
//! interpreter's implementation of it.

use crate::kernel::Kernel;
use crate::memory::SmMemory;
use std::any::Any;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use warpjit_ir::interp::{self, ExecError, FaultReport, LaunchConfig, Placement};
use warpjit_ir::{FuncId, VerifiedModule};

/// What a backend made of a kernel when it was prepared (machine code and
/// whatever keeps it alive); handed back with every workgroup.
pub type PreparedCode = Arc<dyn Any + Send + Sync>;

/// An execution engine. The runtime calls it from its SM threads, each call
/// a run of whole workgroups ([`Backend::run_workgroups`]), so it must be
/// shareable between threads.
///
/// A backend runs all warps of the workgroup on the calling thread,
/// switching between them at barriers as it likes (the interpreter keeps
/// each warp's state in an explicit stack and runs the warps in turn), and
/// must:
/// - give warp `i` of the workgroup the `warp_id`
///   `placement.first_warp_slot + i` and the `sm_id` `placement.sm_id`;
/// - read and write global memory only through `memory`;
/// - stop soon after `work.cancel` is raised, returning
///   [`ExecError::Cancelled`] (the interpreter checks before every
///   statement);
/// - stop a warp that has executed `work.config.fuel` statements with
///   [`ExecError::FuelExhausted`].
///
/// A panic is caught by the runtime and fails the launch; the thread stays
/// in service.
pub trait Backend: Send + Sync {
    /// The name reports use (`interp`).
    fn name(&self) -> &str;

    /// Prepares `kernel` of `module` for launches; a compiler compiles it
    /// here. Called once per [`crate::Runtime::prepare`].
    fn prepare(
        &self,
        module: &Arc<VerifiedModule>,
        kernel: FuncId,
    ) -> Result<PreparedCode, String> {
        let _ = (module, kernel);
        Ok(Arc::new(()))
    }

    /// Runs one workgroup to completion on the calling thread.
    fn run_workgroup(
        &self,
        work: &Workgroup<'_>,
        memory: &mut SmMemory<'_>,
    ) -> Result<WorkgroupReport, ExecError>;

    /// Runs the workgroups of `run` in order, adding each one that
    /// completes to `progress` as it completes (the runtime calls this
    /// once per claim of its counter). Returns `Ok` once all of them
    /// completed; an error (or a panic) belongs to the workgroup after the
    /// completed ones, and [`ExecError::Cancelled`] means the launch was
    /// cancelled. `run.cancel` must be checked at least before every
    /// workgroup after the first.
    ///
    /// The default runs them one by one through [`Backend::run_workgroup`];
    /// a backend overrides it to share set-up between the workgroups.
    fn run_workgroups(
        &self,
        run: &WorkgroupRun<'_>,
        memory: &mut SmMemory<'_>,
        progress: &mut RunProgress,
    ) -> Result<(), ExecError> {
        let mut workgroup_id = run.first_workgroup_id;
        for offset in 0..run.count {
            if offset > 0 {
                if run.cancel.is_cancelled() {
                    return Err(ExecError::Cancelled);
                }
                workgroup_id = run.next_workgroup_id(workgroup_id);
            }
            let report = self.run_workgroup(&run.workgroup(offset, workgroup_id), memory)?;
            progress.complete(&report);
        }
        Ok(())
    }
}

/// One workgroup to run.
pub struct Workgroup<'a> {
    pub kernel: &'a Kernel,
    /// Grid, workgroup size, SM count, warps per SM and fuel of the launch.
    pub config: &'a LaunchConfig,
    /// Workgroup id, SM and first warp slot.
    pub placement: Placement,
    /// Linear index in the grid (x fastest).
    pub index: u64,
    /// Parameter bit patterns in the module's order.
    pub params: &'a [u64],
    pub cancel: &'a CancelToken,
}

/// A run of consecutive workgroups (linear indices
/// `first_index..first_index + count`, x fastest) for one SM, which runs
/// them one after another, each with warp slots from 0.
pub struct WorkgroupRun<'a> {
    pub kernel: &'a Kernel,
    /// Grid, workgroup size, SM count, warps per SM and fuel of the launch.
    pub config: &'a LaunchConfig,
    pub sm_id: u32,
    /// Linear index of the first workgroup.
    pub first_index: u64,
    /// Workgroup id of the first workgroup.
    pub first_workgroup_id: [u32; 3],
    /// Number of workgroups, at least 1.
    pub count: u64,
    /// Parameter bit patterns in the module's order.
    pub params: &'a [u64],
    pub cancel: &'a CancelToken,
}

impl<'a> WorkgroupRun<'a> {
    /// The workgroup id after `id` in linear order (x fastest), counted up
    /// without divisions.
    pub fn next_workgroup_id(&self, [x, y, z]: [u32; 3]) -> [u32; 3] {
        let [gx, gy, _] = self.config.grid;
        if x + 1 < gx {
            [x + 1, y, z]
        } else if y + 1 < gy {
            [0, y + 1, z]
        } else {
            [0, 0, z.wrapping_add(1)]
        }
    }

    /// Workgroup `offset` of the run, whose id is `workgroup_id`.
    pub fn workgroup(&self, offset: u64, workgroup_id: [u32; 3]) -> Workgroup<'a> {
        Workgroup {
            kernel: self.kernel,
            config: self.config,
            placement: Placement {
                workgroup_id,
                sm_id: self.sm_id,
                first_warp_slot: 0,
            },
            index: self.first_index + offset,
            params: self.params,
            cancel: self.cancel,
        }
    }
}

/// What the completed workgroups of a run did, added to by the backend in
/// order as each one completes.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RunProgress {
    first_index: u64,
    completed: u64,
    statements: u64,
    faults: FaultReport,
    first_fault_at: Option<u64>,
}

impl RunProgress {
    /// Nothing done yet of a run starting at linear index `first_index`.
    pub fn new(first_index: u64) -> RunProgress {
        RunProgress {
            first_index,
            ..RunProgress::default()
        }
    }

    /// Workgroups completed.
    pub fn completed(&self) -> u64 {
        self.completed
    }

    /// Statements executed by the completed workgroups.
    pub fn statements(&self) -> u64 {
        self.statements
    }

    /// Out-of-bounds counts of the completed workgroups and the first
    /// fault of the first of them that faulted.
    pub fn faults(&self) -> &FaultReport {
        &self.faults
    }

    /// Linear index of the first completed workgroup whose report had a
    /// first fault.
    pub fn first_fault_at(&self) -> Option<u64> {
        self.first_fault_at
    }

    /// The next workgroup of the run completed with `report`.
    pub fn complete(&mut self, report: &WorkgroupReport) {
        if !report.faults.is_empty() || report.faults.first.is_some() {
            if self.first_fault_at.is_none() && report.faults.first.is_some() {
                self.first_fault_at = Some(self.first_index + self.completed);
            }
            self.faults.merge(&report.faults);
        }
        self.statements = self.statements.saturating_add(report.statements);
        self.completed += 1;
    }

    /// The next workgroup of the run completed without out-of-bounds
    /// accesses, having executed `statements` statements.
    pub fn complete_without_faults(&mut self, statements: u64) {
        self.statements = self.statements.saturating_add(statements);
        self.completed += 1;
    }
}

/// What one workgroup did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct WorkgroupReport {
    pub faults: FaultReport,
    /// Statements executed by all its warps.
    pub statements: u64,
}

/// Raised to stop an SM's part of a launch: by the watchdog, or by a
/// workgroup failing below the run the SM is on.
#[derive(Clone, Debug, Default)]
pub struct CancelToken(Arc<AtomicBool>);

impl CancelToken {
    pub fn new() -> CancelToken {
        CancelToken::default()
    }

    pub fn cancel(&self) {
        self.0.store(true, Ordering::Relaxed);
    }

    pub fn is_cancelled(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }

    /// The flag itself, for code that polls it directly.
    pub fn flag(&self) -> &AtomicBool {
        &self.0
    }
}

/// The reference interpreter as a backend: nothing to prepare, each
/// workgroup run by [`interp::run_workgroup_placed`].
#[derive(Clone, Copy, Debug, Default)]
pub struct InterpreterBackend;

impl Backend for InterpreterBackend {
    fn name(&self) -> &str {
        "interp"
    }

    fn run_workgroup(
        &self,
        work: &Workgroup<'_>,
        memory: &mut SmMemory<'_>,
    ) -> Result<WorkgroupReport, ExecError> {
        let mut report = interp::LaunchReport::default();
        interp::run_workgroup_placed(
            work.kernel.module(),
            work.kernel.function(),
            work.config,
            work.placement,
            work.params,
            memory,
            &mut report,
            Some(work.cancel.flag()),
        )?;
        Ok(WorkgroupReport {
            faults: report.faults,
            statements: report.statements,
        })
    }
}
