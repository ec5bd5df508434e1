//! warpjit's JIT: lowers verified warp IR to 32-wide LLVM vector code.
//!
//! Every IR value is one LLVM vector of 32 lanes and every instruction runs
//! on all 32 lanes; an explicit execution mask (`src/mask.rs`) decides which
//! lanes' results count. Each kernel becomes one `extern "C"` function run
//! once per warp with a [`abi::WarpContext`]. Results are bit-identical to
//! the reference interpreter (`warpjit_ir::interp`), which
//! `tests/differential.rs` checks on generated programs.
//!
//! ```text
//! VerifiedModule --lower--> LLVM IR --verify, optimise--> machine code (MCJIT)
//! ```
//!
//! [`JitBackend`] makes it a backend of the multithreaded runtime. The warps
//! of a workgroup take turns on one thread; a kernel that can reach
//! `barrier` runs each warp on a stackful coroutine that the barrier
//! suspends (`sched.rs`).
//!
//! ```
//! use std::sync::Arc;
//! use warpjit_jit::ir::interp::LaunchConfig;
//! use warpjit_jit::ir::{text, NumFormat, VerifiedModule};
//! use warpjit_jit::runtime::{param, Buffer, Runtime, RuntimeConfig};
//! use warpjit_jit::{compile, launch, JitBackend, JitKernel, JitOptions};
//!
//! let source = "
//! param %n: i32
//! buffer @out[0]: u32
//! kernel @main workgroup(256) {
//!   %i = global_id.x
//!   %inside = cmp.lt.u %i, %n
//!   if %inside {
//!     %addr = shl %i, 2
//!     %twice = add %i, %i
//!     store.u32 @out, %addr, %twice
//!   }
//! }";
//! // `Diagnostics::render` shows parse and verify errors with file:line:col.
//! let module = VerifiedModule::new(text::parse(source)?)?;
//!
//! // As a backend of the multithreaded runtime (what `warpjit run` uses):
//! let backend = Arc::new(JitBackend::new(JitOptions::default()));
//! let runtime = Runtime::with_backend(RuntimeConfig::default(), backend)?;
//! let kernel = runtime.prepare(module.clone(), "main")?; // compiles here
//! // Buffers and parameters go in the module's declaration order.
//! let mut buffers = vec![Buffer::zeros(NumFormat::U32, 1000)?];
//! runtime.launch(&kernel, [4, 1, 1], [256, 1, 1], &[param(1000u32)], &mut buffers)?;
//! assert_eq!(buffers[0].to_vec::<u32>()[999], 1998);
//! let jit: &JitKernel = kernel.code().downcast_ref().expect("prepared by the JIT");
//! assert!(jit.compile_for([256, 1, 1])?.time.as_nanos() > 0);
//!
//! // Or on the calling thread over byte buffers (the differential tests):
//! let compiled = compile(&module, &JitOptions::default().for_workgroup([256, 1, 1]))?;
//! let main = compiled.module().find_function("main").expect("a kernel @main");
//! let config = LaunchConfig::new([4, 1, 1], [256, 1, 1]);
//! let mut bytes = vec![vec![0u8; 4000]];
//! let report = launch(&compiled, main, &config, &[1000], &mut bytes)?;
//! assert!(report.faults.is_empty());
//! assert_eq!(&bytes[0][4 * 999..], 1998u32.to_le_bytes());
//! let asm = compiled.assembly()?; // also llvm_ir(), remarks(), compile_times()
//! assert!(asm.contains("main"));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub mod abi;
mod backend;
mod emit;
mod engine;
mod lower;
mod mask;
mod masked_compare;
mod posted_copy;
mod run;
mod sched;

pub use backend::{JitBackend, JitKernel, KernelCompile};
pub use engine::{
    clear_compile_cache, compile, remarks, CompileTimes, CompiledModule, COMPILE_CACHE_ENTRIES,
};
/// The lane-shape analysis the lowering uses for memory accesses.
pub use lower::shape;
pub use lower::{Remark, RemarkKind};
pub use run::launch;
/// The IR and runtime crates, so one dependency is enough to parse, verify,
/// compile and launch.
pub use warpjit_ir as ir;
pub use warpjit_runtime as runtime;

use std::fmt;

/// Which instruction set the generated code may use.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Target {
    /// Everything the host CPU has.
    #[default]
    Native,
    /// The host CPU with AVX-512 disabled (AVX2 code paths).
    Avx2,
    /// The host CPU with AVX and everything above it disabled (SSE4.2 paths).
    Sse42,
}

impl Target {
    /// The name the command line takes: `native`, `avx2` or `sse4.2`.
    pub fn name(self) -> &'static str {
        match self {
            Target::Native => "native",
            Target::Avx2 => "avx2",
            Target::Sse42 => "sse4.2",
        }
    }
}

/// How to compile.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct JitOptions {
    /// LLVM optimisation level, 0..=3.
    pub opt_level: u8,
    /// Which instruction set the code may use (default: the host's).
    pub target: Target,
    /// Compile for launches whose workgroups are whole warps (a multiple of
    /// 32 invocations): every warp then starts with all 32 lanes, so the
    /// kernels' masks start as constants and LLVM drops what partial warps
    /// need (a shuffle's test of its source lane, a load's search for its
    /// first lane). Such code refuses launches with a partial warp.
    /// [`JitBackend`] compiles both kinds, each when a launch first needs it.
    pub whole_warps: bool,
    /// Compile for launches whose workgroups have exactly this size: the
    /// sizes are constants, so the IDs take no tests of the workgroup's
    /// shape and accesses whose shape depends on it need no run-time
    /// choice. Such code refuses launches of another size. [`JitBackend`]
    /// compiles it for a kernel's declared size (`workgroup(...)`).
    pub workgroup: Option<[u32; 3]>,
    /// Which buffer accesses outside loops prefetch their lines a page
    /// ahead (`lower/memory/known.rs`). The default is what suits the
    /// host ([`PrefetchAhead::for_cpu`]).
    pub prefetch_ahead: PrefetchAhead,
}

/// Which modules' buffer accesses outside loops prefetch a page ahead
/// (`JitOptions::prefetch_ahead`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PrefetchAhead {
    /// None.
    Off,
    /// Those of modules that store to no buffer (reductions and the like,
    /// whose buffers are only read, or written by atomics).
    WithoutStores,
    /// All.
    On,
}

impl PrefetchAhead {
    /// What suits the CPU LLVM calls `cpu`. Prefetching helps where the
    /// hardware prefetchers keep too few lines in flight between a warp's
    /// accesses: W3 and W4 on one SM ran 25% and 35% faster on the host it
    /// was written on. On an AMD Zen 4 (`znver4`) it costs kernels that
    /// store to buffers more than it saves with all SMs running (2 SMs,
    /// prefetching against not: W2 and W4 12-28% slower while the memory
    /// was quiet), while W3, which only reads its input, ran 6-14% faster
    /// with it, so there only such kernels prefetch
    /// (`docs/performance-log.md`, "Measured again on an AMD Zen 4").
    pub fn for_cpu(cpu: &str) -> PrefetchAhead {
        if cpu == "znver4" {
            PrefetchAhead::WithoutStores
        } else {
            PrefetchAhead::On
        }
    }

    /// Whether the accesses of a module prefetch, given whether it
    /// `stores_to_buffers`.
    pub fn applies(self, stores_to_buffers: bool) -> bool {
        match self {
            PrefetchAhead::Off => false,
            PrefetchAhead::On => true,
            PrefetchAhead::WithoutStores => !stores_to_buffers,
        }
    }

    /// The name `--prefetch-ahead` takes.
    pub fn name(self) -> &'static str {
        match self {
            PrefetchAhead::Off => "off",
            PrefetchAhead::WithoutStores => "without-stores",
            PrefetchAhead::On => "on",
        }
    }

    /// The choice [`PrefetchAhead::name`] gives.
    pub fn parse(name: &str) -> Option<PrefetchAhead> {
        [
            PrefetchAhead::Off,
            PrefetchAhead::WithoutStores,
            PrefetchAhead::On,
        ]
        .into_iter()
        .find(|p| p.name() == name)
    }
}

impl JitOptions {
    /// The fastest code for launches with workgroups of exactly
    /// `workgroup` invocations per dimension.
    pub fn for_workgroup(self, workgroup: [u32; 3]) -> JitOptions {
        JitOptions {
            whole_warps: whole_warps(workgroup),
            workgroup: Some(workgroup),
            ..self
        }
    }

    /// The code a runtime compiles first for `module`'s kernels: for their
    /// declared workgroup size when they all declare the same one, else
    /// the kind their declared sizes need (see [`declared_whole_warps`]).
    pub fn for_declared(self, module: &warpjit_ir::VerifiedModule) -> JitOptions {
        let mut sizes = module
            .kernels()
            .map(|(id, _)| declared_workgroup(module, id));
        match sizes.next() {
            Some(Some(size)) if sizes.all(|other| other == Some(size)) => self.for_workgroup(size),
            _ => JitOptions {
                whole_warps: module
                    .kernels()
                    .all(|(id, _)| declared_whole_warps(module, id)),
                workgroup: None,
                ..self
            },
        }
    }

    /// Code that runs launches of any workgroup size like `workgroup`'s
    /// (of whole warps or not, see [`whole_warps`]).
    pub fn for_sizes_like(self, workgroup: [u32; 3]) -> JitOptions {
        JitOptions {
            whole_warps: whole_warps(workgroup),
            workgroup: None,
            ..self
        }
    }
}

/// The number of invocations in a workgroup of size `workgroup`.
pub fn invocations(workgroup: [u32; 3]) -> u64 {
    workgroup.iter().map(|&d| u64::from(d)).product()
}

/// Whether a workgroup of size `workgroup` is whole warps: a multiple of
/// 32 invocations, so every warp starts with all 32 lanes.
pub fn whole_warps(workgroup: [u32; 3]) -> bool {
    invocations(workgroup).is_multiple_of(32)
}

/// Kernel `kernel`'s declared workgroup size (`workgroup(...)`), if any.
pub fn declared_workgroup(
    module: &warpjit_ir::VerifiedModule,
    kernel: warpjit_ir::FuncId,
) -> Option<[u32; 3]> {
    match module.function(kernel).kind {
        warpjit_ir::FuncKind::Kernel { workgroup } => workgroup,
        _ => None,
    }
}

/// Whether kernel `kernel`'s declared workgroup size (`workgroup(...)`) is
/// whole warps; a kernel that declares none is taken to be.
pub fn declared_whole_warps(
    module: &warpjit_ir::VerifiedModule,
    kernel: warpjit_ir::FuncId,
) -> bool {
    declared_workgroup(module, kernel).is_none_or(whole_warps)
}

impl Default for JitOptions {
    fn default() -> JitOptions {
        JitOptions {
            opt_level: 2,
            target: Target::Native,
            whole_warps: false,
            workgroup: None,
            prefetch_ahead: PrefetchAhead::for_cpu(host_cpu()),
        }
    }
}

/// The host CPU's name as LLVM gives it, asked once: the code is built
/// for it and tuned by it.
pub(crate) fn host_cpu() -> &'static str {
    static CPU: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    CPU.get_or_init(|| inkwell::targets::TargetMachine::get_host_cpu_name().to_string())
}

/// Why compiling or running failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum JitError {
    /// The module uses a construct this JIT does not lower.
    Unsupported(String),
    /// Bad options (e.g. an optimisation level above 3).
    InvalidOptions(String),
    /// LLVM reported an error (builder, verifier, target, engine).
    Llvm(String),
    /// A launch was rejected or could not run.
    Launch(String),
    /// A warp used up its fuel. Compiled code spends one unit per loop
    /// iteration (the interpreter counts statements), so the same limit
    /// stops a runaway kernel on both, at different points.
    FuelExhausted(String),
    /// The lowering broke one of its own invariants.
    Internal(String),
}

impl fmt::Display for JitError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            JitError::Unsupported(what) => write!(f, "not supported by the JIT: {what}"),
            JitError::InvalidOptions(why) => write!(f, "invalid JIT options: {why}"),
            JitError::Llvm(msg) => write!(f, "LLVM error: {msg}"),
            JitError::Launch(msg) => write!(f, "launch failed: {msg}"),
            JitError::FuelExhausted(msg) => f.write_str(msg),
            JitError::Internal(msg) => write!(f, "internal JIT error: {msg}"),
        }
    }
}

impl std::error::Error for JitError {}

impl From<inkwell::builder::BuilderError> for JitError {
    fn from(e: inkwell::builder::BuilderError) -> JitError {
        JitError::Llvm(e.to_string())
    }
}
