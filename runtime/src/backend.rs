//! The backend interface: what runs one workgroup of a kernel on the
//! calling thread, and the interpreter's implementation of it.

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
/// one whole workgroup, so it must be shareable between threads.
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

/// What one workgroup did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct WorkgroupReport {
    pub faults: FaultReport,
    /// Statements executed by all its warps.
    pub statements: u64,
}

/// Raised to stop a launch: by the watchdog, or by an SM whose workgroup
/// failed.
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
