//! The reference interpreter: the oracle every backend must match bit for bit.
//!
//! It runs a verified module one workgroup at a time, each warp as 32 lanes
//! in lock-step under an explicit execution mask, lane by lane, with every
//! undefined case pinned to one answer (docs/semantics.md).
//!
//! - `warp`: the warp machine (frames, `if`/`loop`/`ordered` constructs,
//!   the execution mask), run on an explicit stack so a warp can wait at a
//!   barrier and resume.
//! - `exec`: instructions, lane by lane over the active lanes;
//!   `collective`: the warp intrinsics that read other lanes;
//!   `access`: loads, stores and atomics.
//! - `memory`: the global-memory interface, the alignment and bounds rule,
//!   out-of-bounds fault records.
//! - [`launch`]: launch validation, workgroup and warp scheduling, barriers.
//!
//! The interpreter never panics on a verified module, whatever the inputs:
//! runaway kernels are stopped by fuel, memory errors are counted as faults.
//!
//! [`launch`] runs a whole grid on the calling thread. A multithreaded
//! runtime instead calls [`run_workgroup_placed`] from its SM threads,
//! choosing each workgroup's SM and warp slots and passing a cancellation
//! flag that every warp checks before each statement, as it spends fuel.

mod access;
mod collective;
mod exec;
mod launch;
mod memory;
mod warp;

pub use launch::{launch, run_workgroup, run_workgroup_placed, validate_launch, Placement};
pub use memory::{atomic_on_bytes, AccessKind, Fault, FaultReport, GlobalMemory};
pub use warp::MAX_WARP_PRIVATE_BYTES;

use crate::module::{FuncId, FuncKind, Module};
use std::fmt;

/// How a kernel is launched.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LaunchConfig {
    /// Number of workgroups in each dimension.
    pub grid: [u32; 3],
    /// Threads per workgroup in each dimension (product 1..=1024).
    pub workgroup: [u32; 3],
    /// Simulated SM count (`sm_count` in kernels). [`launch`] runs workgroup
    /// `n` (linear, x fastest) as SM `n % sm_count`; a runtime places
    /// workgroups itself ([`run_workgroup_placed`]).
    pub sm_count: u32,
    /// Warp slots per SM: a workgroup may not have more warps than this.
    pub warps_per_sm: u32,
    /// Statements each warp may execute before the launch stops (None: no limit).
    pub fuel: Option<u64>,
}

impl LaunchConfig {
    /// A launch of `grid` workgroups of `workgroup` threads, one SM per
    /// available core, 64 warps per SM, no fuel limit.
    pub fn new(grid: [u32; 3], workgroup: [u32; 3]) -> LaunchConfig {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        LaunchConfig {
            grid,
            workgroup,
            sm_count: u32::try_from(cores).unwrap_or(u32::MAX),
            warps_per_sm: 64,
            fuel: None,
        }
    }

    /// A launch of `grid` workgroups of the size the kernel declares
    /// (1, 1, 1 if it declares none).
    pub fn for_kernel(module: &Module, kernel: FuncId, grid: [u32; 3]) -> LaunchConfig {
        let workgroup = match module.functions.get(kernel.0 as usize).map(|f| &f.kind) {
            Some(FuncKind::Kernel {
                workgroup: Some(size),
            }) => *size,
            _ => [1, 1, 1],
        };
        LaunchConfig::new(grid, workgroup)
    }

    pub fn with_fuel(mut self, fuel: u64) -> LaunchConfig {
        self.fuel = Some(fuel);
        self
    }

    /// Threads per workgroup (saturating).
    pub fn threads_per_workgroup(&self) -> u64 {
        self.workgroup
            .iter()
            .fold(1u64, |n, d| n.saturating_mul(u64::from(*d)))
    }

    /// The lanes of warp `warp` that hold an invocation of the workgroup:
    /// all of them but in a last, partial warp (and none past the last).
    pub fn lanes_present(&self, warp: u32) -> u32 {
        let size = u64::from(crate::WARP_SIZE);
        let first = u64::from(warp) * size;
        let present = self.threads_per_workgroup().saturating_sub(first).min(size);
        if present == size {
            u32::MAX
        } else {
            (1u32 << present) - 1
        }
    }

    /// Warps per workgroup (saturating).
    pub fn warps_per_workgroup(&self) -> u64 {
        self.threads_per_workgroup()
            .div_ceil(u64::from(crate::WARP_SIZE))
    }
}

impl Default for LaunchConfig {
    fn default() -> LaunchConfig {
        LaunchConfig::new([1, 1, 1], [1, 1, 1])
    }
}

/// What a launch did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LaunchReport {
    pub faults: FaultReport,
    /// Statements executed, summed over all warps (each loop iteration counts as one).
    pub statements: u64,
    /// Workgroups run.
    pub workgroups: u64,
}

impl LaunchReport {
    /// Adds the counts of a report of later workgroups.
    pub fn merge(&mut self, later: &LaunchReport) {
        self.faults.merge(&later.faults);
        self.statements = self.statements.saturating_add(later.statements);
        self.workgroups = self.workgroups.saturating_add(later.workgroups);
    }
}

/// Why a launch did not complete.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ExecError {
    /// The launch was rejected before anything ran.
    InvalidLaunch(String),
    /// A warp used up its fuel: `fuel` units of `unit`.
    FuelExhausted {
        kernel: String,
        workgroup: [u32; 3],
        warp: u32,
        fuel: u64,
        unit: FuelUnit,
    },
    /// Shared or private memory could not be allocated.
    OutOfMemory { what: String, bytes: u64 },
    /// The caller's cancellation flag was raised (a watchdog, or another
    /// SM's error); the workgroup stopped before its next statement.
    Cancelled,
}

/// What a backend's fuel counts: the interpreter charges every statement,
/// compiled code every loop test (one per iteration, and one more for the
/// test that finds no lane left in the loop).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FuelUnit {
    Statements,
    LoopTests,
}

impl fmt::Display for FuelUnit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            FuelUnit::Statements => "statements",
            FuelUnit::LoopTests => "loop tests",
        })
    }
}

impl ExecError {
    /// Fills in where a warp-level error happened.
    fn at(mut self, kernel_name: &str, workgroup_id: [u32; 3], warp_index: u32) -> ExecError {
        match &mut self {
            ExecError::FuelExhausted {
                kernel,
                workgroup,
                warp,
                ..
            } => {
                *kernel = kernel_name.to_string();
                *workgroup = workgroup_id;
                *warp = warp_index;
            }
            ExecError::InvalidLaunch(_) | ExecError::OutOfMemory { .. } | ExecError::Cancelled => {}
        }
        self
    }
}

impl fmt::Display for ExecError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ExecError::InvalidLaunch(reason) => write!(f, "invalid launch: {reason}"),
            ExecError::FuelExhausted {
                kernel,
                workgroup: [x, y, z],
                warp,
                fuel,
                unit,
            } => write!(
                f,
                "kernel @{kernel}: fuel exhausted in workgroup ({x}, {y}, {z}), warp {warp} \
                 after {fuel} {unit} (runaway kernel?)"
            ),
            ExecError::OutOfMemory { what, bytes } => {
                write!(f, "out of memory: cannot allocate {bytes} bytes for {what}")
            }
            ExecError::Cancelled => write!(f, "the launch was cancelled"),
        }
    }
}

impl std::error::Error for ExecError {}
