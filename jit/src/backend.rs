//! The JIT as a backend of the multithreaded runtime: kernels compiled once
//! by [`Backend::prepare`], workgroups run on the SM threads over the
//! runtime's atomic global memory.

use crate::abi::{KernelFn, MemSpan, PostedUpdate, WarpContext};
use crate::posted_copy;
use crate::run::workgroup_faults;
use crate::sched::{self, KernelPlan, Stop, WorkgroupFrame};
use crate::{compile, CompiledModule, JitOptions};
use std::cell::RefCell;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};
use warpjit_ir::interp::{ExecError, FuelUnit, GlobalMemory};
use warpjit_ir::{AtomOp, FuncId, NumFormat, VerifiedModule};
use warpjit_runtime::{
    Backend, PreparedCode, RunProgress, SmMemory, Workgroup, WorkgroupReport, WorkgroupRun,
};

/// Runs kernels as machine code: `prepare` compiles the module with the
/// backend's options on the calling thread; each SM thread then runs its
/// workgroups' warps itself, switching at barriers (see `sched.rs`).
#[derive(Clone, Copy, Debug, Default)]
pub struct JitBackend {
    options: JitOptions,
}

impl JitBackend {
    /// A backend that compiles every kernel it prepares with `options`.
    pub fn new(options: JitOptions) -> JitBackend {
        JitBackend { options }
    }

    pub fn options(&self) -> JitOptions {
        self.options
    }
}

/// One kernel as the SM threads share it: how to schedule its warps, and
/// its machine code in up to three kinds: for its declared workgroup size
/// (`JitOptions::workgroup`), and for other sizes of whole warps or of any
/// size (`JitOptions::whole_warps`). `prepare` compiles the first (or, for
/// a kernel that declares no size, the second); the others are compiled
/// when a launch first needs them, by the first SM thread that does.
pub struct JitKernel {
    module: Arc<VerifiedModule>,
    kernel: FuncId,
    options: JitOptions,
    plan: KernelPlan,
    /// Per buffer: the op and format of its posted updates, if the code
    /// posts them (`lower/posted.rs`).
    posted: Vec<Option<(AtomOp, NumFormat)>>,
    /// The declared workgroup size, if any.
    declared: Option<[u32; 3]>,
    /// For the declared size, for whole warps, and for any workgroup.
    exact: OnceLock<Result<KernelCode, String>>,
    whole: OnceLock<Result<KernelCode, String>>,
    any: OnceLock<Result<KernelCode, String>>,
}

/// What compiling one kind of a kernel took.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KernelCompile {
    /// Wall time of the compile, or of the cache lookup on a hit.
    pub time: Duration,
    /// The machine code came from the compile cache (the same module was
    /// compiled with the same options before in this process).
    pub cache_hit: bool,
}

/// One compiled kind of a kernel: its entry point and the compiled module
/// that owns the machine code.
struct KernelCode {
    entry: KernelFn,
    compile_time: Duration,
    /// The machine code came from the compile cache.
    cache_hit: bool,
    // Kept alive (never used) so `entry` stays valid.
    _code: CompiledModule,
}

// SAFETY: `CompiledModule` is not Send/Sync only because it owns an LLVM
// context. A `KernelCode` never touches that context after `compile`
// returned: SM threads only call `entry`, whose machine code is immutable
// and reentrant (all per-warp state lives in the caller's `WarpContext`),
// and the context is disposed by whichever thread drops the last
// reference (the count is atomic: the compiling thread's compile cache may
// hold another), when no other thread can use it.
unsafe impl Send for KernelCode {}
unsafe impl Sync for KernelCode {}

impl KernelCode {
    fn compile(
        module: &VerifiedModule,
        kernel: FuncId,
        options: &JitOptions,
    ) -> Result<KernelCode, String> {
        let started = Instant::now();
        let code = compile(module, options).map_err(|e| e.to_string())?;
        let compile_time = started.elapsed();
        let entry = code
            .entry_point(kernel)
            .ok_or_else(|| format!("function {} is not a compiled kernel", kernel.0))?;
        Ok(KernelCode {
            entry,
            compile_time,
            cache_hit: code.compile_times().cache_hit,
            _code: code,
        })
    }
}

impl JitKernel {
    /// How long compiling took the code `prepare` compiled, or the code
    /// for workgroups of `workgroup` once [`JitKernel::compile_for`] ran.
    pub fn compile_time(&self) -> Duration {
        let slot = match self.declared {
            Some(size) => self.slot(&self.options.for_workgroup(size)),
            None => &self.whole,
        };
        match slot.get() {
            Some(Ok(code)) => code.compile_time,
            _ => Duration::ZERO,
        }
    }

    /// Compiles the code launches with workgroups of `workgroup` run, unless
    /// it is compiled already, and says how long compiling it took.
    /// (A launch compiles it too; this keeps the compile out of its time.)
    pub fn compile_for(&self, workgroup: [u32; 3]) -> Result<KernelCompile, String> {
        let code = self.code_for(workgroup)?;
        Ok(KernelCompile {
            time: code.compile_time,
            cache_hit: code.cache_hit,
        })
    }

    /// The cell of the code compiled with `options`.
    fn slot(&self, options: &JitOptions) -> &OnceLock<Result<KernelCode, String>> {
        if options.workgroup.is_some() {
            &self.exact
        } else if options.whole_warps {
            &self.whole
        } else {
            &self.any
        }
    }

    /// The options of the code launches with workgroups of `workgroup` run.
    fn options_for(&self, workgroup: [u32; 3]) -> JitOptions {
        if self.declared == Some(workgroup) {
            self.options.for_workgroup(workgroup)
        } else {
            self.options.for_sizes_like(workgroup)
        }
    }

    fn code_for(&self, workgroup: [u32; 3]) -> Result<&KernelCode, String> {
        let options = self.options_for(workgroup);
        self.slot(&options)
            .get_or_init(|| KernelCode::compile(&self.module, self.kernel, &options))
            .as_ref()
            .map_err(Clone::clone)
    }
}

impl std::fmt::Debug for JitKernel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JitKernel")
            .field("plan", &self.plan)
            .field("compile_time", &self.compile_time())
            .finish()
    }
}

/// What an SM thread reuses from workgroup to workgroup, so a workgroup
/// allocates nothing: the span tables, the warp contexts, and shared memory
/// (each declaration's size rounded up to 8 bytes, in `u64` words so every
/// span is 8-byte aligned).
#[derive(Default)]
struct SmScratch {
    buffers: Vec<MemSpan>,
    shared: Vec<MemSpan>,
    arena: Vec<u64>,
    contexts: Vec<WarpContext>,
    /// The slots of the buffers' posted updates.
    posted: Vec<PostedUpdate>,
    /// The private copies of small posted buffers (`posted_copy.rs`).
    copies: Vec<Vec<u64>>,
    /// What `contexts` were last filled from.
    frame: Option<sched::FrameKey>,
}

thread_local! {
    static SCRATCH: RefCell<SmScratch> = RefCell::new(SmScratch::default());
}

impl Backend for JitBackend {
    fn name(&self) -> &str {
        "jit"
    }

    fn prepare(
        &self,
        module: &Arc<VerifiedModule>,
        kernel: FuncId,
    ) -> Result<PreparedCode, String> {
        if !module.function(kernel).is_kernel() {
            return Err(format!("function {} is not a kernel", kernel.0));
        }
        let plan = KernelPlan::of(module, kernel);
        if plan.stack_bytes as u64 > sched::MAX_STACK {
            return Err(format!(
                "kernel @{} may need {} MiB of stack per warp; the JIT allows {} MiB",
                module.function(kernel).name,
                plan.stack_bytes >> 20,
                sched::MAX_STACK >> 20
            ));
        }
        let declared = crate::declared_workgroup(module, kernel);
        let options = match declared {
            Some(size) => self.options.for_workgroup(size),
            None => JitOptions {
                whole_warps: true,
                workgroup: None,
                ..self.options
            },
        };
        let code = KernelCode::compile(module, kernel, &options)?;
        let prepared = JitKernel {
            module: module.clone(),
            kernel,
            options: self.options,
            plan,
            posted: crate::lower::posted::posted_buffers(module),
            declared,
            exact: OnceLock::new(),
            whole: OnceLock::new(),
            any: OnceLock::new(),
        };
        // Only this thread knows the new cells.
        let _ = prepared.slot(&options).set(Ok(code));
        Ok(Arc::new(prepared))
    }

    fn run_workgroup(
        &self,
        work: &Workgroup<'_>,
        memory: &mut SmMemory<'_>,
    ) -> Result<WorkgroupReport, ExecError> {
        let run = WorkgroupRun {
            kernel: work.kernel,
            config: work.config,
            sm_id: work.placement.sm_id,
            first_index: work.index,
            first_workgroup_id: work.placement.workgroup_id,
            count: 1,
            params: work.params,
            cancel: work.cancel,
        };
        let mut progress = RunProgress::new(work.index);
        run_consecutive(&run, work.placement.first_warp_slot, memory, &mut progress)?;
        Ok(WorkgroupReport {
            faults: progress.faults().clone(),
            statements: 0,
        })
    }

    fn run_workgroups(
        &self,
        run: &WorkgroupRun<'_>,
        memory: &mut SmMemory<'_>,
        progress: &mut RunProgress,
    ) -> Result<(), ExecError> {
        run_consecutive(run, 0, memory, progress)
    }
}

/// Runs the workgroups of `run` one after another, their warps from slot
/// `first_warp_slot`. What all of them share is set up once: the kernel's
/// code, the span tables, the contexts (afterwards only the workgroup id
/// and the fields a run changes are rewritten) and shared memory (zeroed
/// per workgroup); a report is built only for a workgroup that faulted.
/// Posted atomic updates are collected for the whole run and applied at
/// its end, also when it stops early.
fn run_consecutive(
    run: &WorkgroupRun<'_>,
    first_warp_slot: u32,
    memory: &mut SmMemory<'_>,
    progress: &mut RunProgress,
) -> Result<(), ExecError> {
    let code = run
        .kernel
        .code()
        .downcast_ref::<JitKernel>()
        .ok_or_else(|| {
            ExecError::InvalidLaunch(format!(
                "kernel @{} was prepared by the {} backend, not by the JIT",
                run.kernel.name(),
                run.kernel.backend()
            ))
        })?;
    let module = run.kernel.module();
    let cfg = run.config;
    let warps = cfg.warps_per_workgroup();
    if u64::from(first_warp_slot) + warps > u64::from(cfg.warps_per_sm) {
        return Err(ExecError::InvalidLaunch(format!(
            "{warps} warps from slot {first_warp_slot} do not fit in {} warp slots",
            cfg.warps_per_sm
        )));
    }
    let kernel_name = run.kernel.name();
    let entry = code
        .code_for(cfg.workgroup)
        .map_err(|e| ExecError::InvalidLaunch(format!("kernel @{kernel_name}: {e}")))?
        .entry;
    SCRATCH.with(|scratch| {
        let scratch = &mut *scratch.borrow_mut();
        global_spans(module, memory, &mut scratch.buffers)?;
        shared_spans(module, &mut scratch.arena, &mut scratch.shared)?;
        let mut frame = WorkgroupFrame {
            params: run.params,
            buffers: &scratch.buffers,
            shared: &scratch.shared,
            config: cfg,
            workgroup_id: run.first_workgroup_id,
            sm_id: run.sm_id,
            first_warp_slot,
            cancel: run.cancel.flag(),
        };
        sched::refill_warp_contexts(&frame, &mut scratch.contexts, &mut scratch.frame);
        let posting = code.posted.iter().any(Option::is_some) && !any_aliased(&scratch.buffers);
        scratch.posted.clear();
        let table = if posting {
            scratch.posted.resize(code.posted.len(), PostedUpdate::NONE);
            posted_copy::prepare(
                &code.posted,
                &scratch.buffers,
                &mut scratch.posted,
                &mut scratch.copies,
            );
            scratch.posted.as_mut_ptr()
        } else {
            std::ptr::null_mut()
        };
        for ctx in scratch.contexts.iter_mut() {
            ctx.posted = table;
        }
        let stopped = |stop: Stop, workgroup: [u32; 3]| match stop {
            Stop::OutOfFuel { warp } => ExecError::FuelExhausted {
                kernel: kernel_name.to_string(),
                workgroup,
                warp,
                fuel: cfg.fuel.unwrap_or(u64::MAX),
                unit: FuelUnit::LoopTests,
            },
            Stop::Cancelled => ExecError::Cancelled,
            Stop::NoStack(why) => ExecError::OutOfMemory {
                what: format!("warp stacks ({why})"),
                bytes: code.plan.stack_bytes as u64 * warps,
            },
        };
        let report = |contexts: &[WarpContext], first, workgroup| WorkgroupReport {
            faults: workgroup_faults(contexts, first, module, kernel_name, workgroup),
            statements: 0,
        };
        let mut run_all = || -> Result<(), ExecError> {
            let mut offset = 0;
            while offset < run.count {
                if offset > 0 {
                    if run.cancel.is_cancelled() {
                        return Err(ExecError::Cancelled);
                    }
                    frame.workgroup_id = run.next_workgroup_id(frame.workgroup_id);
                    if !scratch.arena.is_empty() {
                        scratch.arena.fill(0);
                    }
                    sched::next_workgroup(&mut scratch.contexts, frame.workgroup_id, cfg.fuel);
                }
                if !code.plan.needs_coroutines(scratch.contexts.len()) {
                    // SAFETY: as for `run_warps` below.
                    let out = unsafe {
                        sched::run_loop(
                            entry,
                            &code.plan,
                            &mut scratch.contexts,
                            run.count - offset,
                            &mut scratch.arena,
                            cfg.fuel.unwrap_or(u64::MAX),
                            run.cancel.flag(),
                            |id| run.next_workgroup_id(id),
                        )
                    };
                    for _ in 0..out.done {
                        progress.complete_without_faults(0);
                    }
                    offset += out.done;
                    // The workgroup that stopped, or the run's last one.
                    if let Some(ctx) = scratch.contexts.first() {
                        frame.workgroup_id = ctx.workgroup_id;
                    }
                    if offset == run.count {
                        break;
                    }
                    if let Some(stop) = out.stop {
                        return Err(stopped(stop, frame.workgroup_id));
                    }
                    let first = out.first_faulting;
                    progress.complete(&report(&scratch.contexts, first, frame.workgroup_id));
                    offset += 1;
                    continue;
                }
                // SAFETY: `code` keeps the machine code alive; the spans point
                // at the launch's buffers (kept alive by the runtime for the
                // whole launch) and at this thread's arena, which is not
                // touched until the call returns.
                let mut first = None;
                let outcome = unsafe {
                    sched::run_warps(
                        entry,
                        &code.plan,
                        &mut scratch.contexts,
                        run.cancel.flag(),
                        &mut first,
                    )
                };
                if let Err(stop) = outcome {
                    return Err(stopped(stop, frame.workgroup_id));
                }
                offset += 1;
                if first.is_none() && !scratch.contexts.iter().any(sched::faulted) {
                    progress.complete_without_faults(0);
                    continue;
                }
                progress.complete(&report(&scratch.contexts, first, frame.workgroup_id));
            }
            Ok(())
        };
        let outcome = run_all();
        // Non-temporal stores (`lower/memory/known.rs`) are seen by other
        // threads, the one that reports the run done included, after this.
        #[cfg(target_arch = "x86_64")]
        // SAFETY: `sfence` is part of SSE, which every x86-64 CPU has.
        unsafe {
            std::arch::x86_64::_mm_sfence();
        }
        posted_copy::merge(
            &code.posted,
            &scratch.buffers,
            &mut scratch.posted,
            &scratch.copies,
            memory,
        );
        apply_posted(&code.posted, &scratch.buffers, &mut scratch.posted, memory);
        outcome
    })
}

/// Whether two bindings of the launch are one buffer: then a kernel may
/// read a buffer through one binding that it updates through the other.
fn any_aliased(spans: &[MemSpan]) -> bool {
    spans
        .iter()
        .enumerate()
        .any(|(i, a)| a.len > 0 && spans[..i].iter().any(|b| b.len > 0 && b.ptr == a.ptr))
}

/// Applies the posted updates left in `slots` (one per buffer) to memory
/// with the runtime's atomics, and empties the slots.
fn apply_posted(
    kinds: &[Option<(AtomOp, NumFormat)>],
    spans: &[MemSpan],
    slots: &mut [PostedUpdate],
    memory: &mut SmMemory<'_>,
) {
    for (index, (slot, (kind, span))) in slots.iter_mut().zip(kinds.iter().zip(spans)).enumerate() {
        if let (Some((op, format)), false) = (kind, slot.target.is_null()) {
            let offset = slot.target.addr().wrapping_sub(span.ptr.addr()) as u64;
            memory.atomic(index as u32, offset, *op, *format, slot.value, 0);
        }
        *slot = PostedUpdate::NONE;
    }
}

/// The launch's buffers as byte spans over the runtime's atomic words.
///
/// Byte `i` of a buffer is byte `i % 8` of word `i / 8` in little-endian
/// order, which on a little-endian host is plain byte addressing of the
/// words' memory. Compiled code accesses it with LLVM loads, stores and
/// atomic instructions; Rust only ever accesses it as `AtomicU64`, so a
/// kernel's racing stores are never undefined behaviour of the Rust
/// program (see the runtime's README).
fn global_spans(
    module: &VerifiedModule,
    memory: &SmMemory<'_>,
    spans: &mut Vec<MemSpan>,
) -> Result<(), ExecError> {
    if cfg!(target_endian = "big") {
        return Err(ExecError::InvalidLaunch(
            "the JIT backend needs a little-endian host".into(),
        ));
    }
    spans.clear();
    for index in 0..module.buffers.len() as u32 {
        let (words, len) = memory.words(index).ok_or_else(|| {
            ExecError::InvalidLaunch(format!(
                "the module declares {} buffers but buffer {index} is not bound",
                module.buffers.len()
            ))
        })?;
        spans.push(MemSpan {
            // Atomics allow mutation through a shared reference, so the
            // compiled code may write through this pointer.
            ptr: words.as_ptr().cast::<u8>().cast_mut(),
            len,
        });
    }
    Ok(())
}

/// Zeroed shared memory for one workgroup in `arena`, one span per
/// declaration in `spans`, as the interpreter gives every workgroup fresh
/// zeros. Only the declared bytes (rounded up to words) are zeroed.
fn shared_spans(
    module: &VerifiedModule,
    arena: &mut Vec<u64>,
    spans: &mut Vec<MemSpan>,
) -> Result<(), ExecError> {
    spans.clear();
    // Cleared even without shared memory: the arena is zeroed again before
    // every workgroup of a run.
    arena.clear();
    if module.shared.is_empty() {
        return Ok(());
    }
    let words = |size: u32| (size as usize).div_ceil(8);
    let total: usize = module.shared.iter().map(|decl| words(decl.size)).sum();
    arena
        .try_reserve_exact(total)
        .map_err(|_| ExecError::OutOfMemory {
            what: "shared memory".into(),
            bytes: total as u64 * 8,
        })?;
    arena.resize(total, 0);
    let base = arena.as_mut_ptr();
    let mut at = 0usize;
    for decl in &module.shared {
        // SAFETY: `at + words(decl.size) <= total`, the arena's length.
        let ptr = unsafe { base.add(at) }.cast::<u8>();
        at += words(decl.size);
        spans.push(MemSpan {
            ptr,
            len: u64::from(decl.size),
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aliasing_is_two_bindings_of_one_nonempty_buffer() {
        let mut words = [0u64; 4];
        let (a, b) = words.split_at_mut(2);
        let span = |w: &mut [u64], len| MemSpan {
            ptr: w.as_mut_ptr().cast(),
            len,
        };
        let (first, second) = (span(a, 16), span(b, 16));
        assert!(!any_aliased(&[first, second]));
        assert!(any_aliased(&[first, second, first]));
        // Empty buffers are never accessed, whatever their pointers.
        let empty = MemSpan { len: 0, ..second };
        assert!(!any_aliased(&[first, empty, second]));
    }
}
