//! warpjit's runtime: launches a kernel's grid on a pool of SM worker
//! threads.
//!
//! - [`Runtime`]: the pool (one OS thread per SM, reused across launches),
//!   [`Runtime::prepare`] and [`Runtime::launch`].
//! - [`Backend`]: what executes one workgroup (or a run of consecutive
//!   ones, [`Backend::run_workgroups`]) on the calling thread;
//!   [`InterpreterBackend`] runs the reference interpreter, a compiler
//!   implements the same trait.
//! - [`Buffer`]: global memory shared by all SM threads, every access an
//!   atomic operation, so racing kernels are never undefined behaviour of
//!   the host program; [`SmMemory`] is one SM's accessor.
//! - [`LaunchError`], [`LaunchReport`]: what a launch did or why it failed.
//!
//! Data flow: a [`VerifiedModule`] -> [`Runtime::prepare`] (the backend
//! prepares the kernel once) -> [`Runtime::launch`] any number of times
//! with different buffers, parameters and sizes.
//!
//! This crate knows nothing of the text format, of LLVM or of the command
//! line.
//!
//! ```
//! use warpjit_ir::{text, NumFormat, VerifiedModule};
//! use warpjit_runtime::{param, Buffer, Runtime, RuntimeConfig};
//!
//! let source = "
//! param %n: i32
//! buffer @out[0]: u32
//! kernel @main workgroup(64) {
//!   %i = global_id.x
//!   %inside = cmp.lt.u %i, %n
//!   if %inside {
//!     %addr = shl %i, 2
//!     %square = mul %i, %i
//!     store.u32 @out, %addr, %square
//!   }
//! }";
//! let module = VerifiedModule::new(text::parse(source).expect("parses")).expect("verifies");
//! let runtime = Runtime::new(RuntimeConfig::default())?;
//! let squares = runtime.prepare(module, "main")?;
//! for n in [10u32, 1000] {
//!     let mut buffers = vec![Buffer::zeros(NumFormat::U32, n.into())?];
//!     let grid = [n.div_ceil(64), 1, 1];
//!     let report = runtime.launch(&squares, grid, [64, 1, 1], &[param(n)], &mut buffers)?;
//!     assert!(report.faults.is_empty());
//!     assert_eq!(buffers[0].to_vec::<u32>()[9], 81);
//! }
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! [`VerifiedModule`]: warpjit_ir::VerifiedModule

pub mod affinity;
mod backend;
mod config;
mod error;
mod kernel;
mod memory;
pub mod pages;
mod pool;
mod runtime;
mod validate;

pub use backend::{
    Backend, CancelToken, InterpreterBackend, PreparedCode, RunProgress, Workgroup,
    WorkgroupReport, WorkgroupRun,
};
pub use config::{RuntimeConfig, MAX_SM_COUNT, MAX_WORKGROUP_THREADS};
pub use error::{AllocError, ConfigError, LaunchError};
pub use kernel::Kernel;
pub use memory::{param, Buffer, Element, SmMemory};
pub use runtime::{LaunchReport, Runtime};

/// The IR crate (`text`, `VerifiedModule`, `NumFormat`, `FuncId`, ...), so
/// one dependency is enough to parse, verify and launch.
pub use warpjit_ir as ir;
pub use warpjit_ir::interp::{ExecError, Fault, FaultReport, LaunchConfig, Placement};
