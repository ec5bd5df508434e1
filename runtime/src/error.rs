//! Why a runtime could not be made, a buffer allocated, or a launch run.

use std::fmt;
use std::time::Duration;
use warpjit_ir::interp::ExecError;

/// A buffer could not be allocated.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AllocError {
    /// The size asked for (`u64::MAX` when the size itself overflowed).
    pub bytes: u64,
}

impl fmt::Display for AllocError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.bytes == u64::MAX {
            write!(f, "out of memory: a buffer of 2^64 bytes or more")
        } else {
            write!(
                f,
                "out of memory: cannot allocate a buffer of {} bytes",
                self.bytes
            )
        }
    }
}

impl std::error::Error for AllocError {}

/// A [`crate::RuntimeConfig`] that cannot be used, or SM threads that could
/// not be started.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConfigError(pub String);

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ConfigError {}

/// Why a kernel could not be prepared or a launch did not complete.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LaunchError {
    /// Rejected before anything ran: sizes, parameters, buffers, a
    /// kernel prepared by another backend, a function id the module does
    /// not have.
    Invalid(String),
    /// Memory for the launch could not be allocated.
    OutOfMemory(AllocError),
    /// The kernel could not be prepared: the module has no such kernel, or
    /// the backend could not prepare it (`reason` says which).
    Prepare { kernel: String, reason: String },
    /// A workgroup failed (fuel exhausted, out of memory); the work above
    /// it was stopped. When several would fail, the lowest workgroup's
    /// error, whatever the schedule (when the workgroups below it end).
    Exec(ExecError),
    /// The backend panicked in a workgroup; the work above it was stopped
    /// and the SM threads stay usable.
    Panicked {
        kernel: String,
        workgroup: [u32; 3],
        sm: u32,
        message: String,
    },
    /// The launch ran longer than the watchdog allows; every SM was stopped.
    Watchdog {
        kernel: String,
        budget: Duration,
        /// Workgroups that had completed when the SMs stopped.
        finished: u64,
        workgroups: u64,
    },
    /// SM threads did not report back (a backend that ignored the
    /// cancellation, or a thread that ended); they were replaced by new
    /// threads.
    Unresponsive { kernel: String, sms: Vec<u32> },
    /// SM threads could not be started.
    Threads(String),
}

impl fmt::Display for LaunchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LaunchError::Invalid(reason) => write!(f, "invalid launch: {reason}"),
            LaunchError::OutOfMemory(e) => write!(f, "{e}"),
            LaunchError::Prepare { kernel, reason } => {
                write!(f, "kernel @{kernel} could not be prepared: {reason}")
            }
            LaunchError::Exec(e) => write!(f, "{e}"),
            LaunchError::Panicked {
                kernel,
                workgroup: [x, y, z],
                sm,
                message,
            } => write!(
                f,
                "kernel @{kernel}: the backend panicked in workgroup ({x}, {y}, {z}) on SM {sm}: {message}"
            ),
            LaunchError::Watchdog {
                kernel,
                budget,
                finished,
                workgroups,
            } => write!(
                f,
                "kernel @{kernel}: stopped by the watchdog after {} s with {finished} of {workgroups} workgroups finished (runaway kernel?)",
                budget.as_secs_f64()
            ),
            LaunchError::Unresponsive { kernel, sms } => write!(
                f,
                "kernel @{kernel}: SMs {sms:?} did not report back; their threads were replaced"
            ),
            LaunchError::Threads(reason) => write!(f, "{reason}"),
        }
    }
}

impl std::error::Error for LaunchError {}

impl From<AllocError> for LaunchError {
    fn from(e: AllocError) -> LaunchError {
        LaunchError::OutOfMemory(e)
    }
}
