//! The warp scheduler of compiled workgroups: runs a workgroup's warps on
//! the calling thread, switching between them at barriers.
//!
//! A kernel that can reach `barrier` (itself or through a call) with more
//! than one warp runs each warp on a stackful coroutine (`corosensei`):
//! `barrier` calls [`warpjit_barrier`], which suspends the warp's
//! coroutine, and the scheduler resumes warps 0, 1, 2, ... each until it
//! waits or finishes, then again, as the interpreter does. Every other
//! kernel calls its warps one after another on the thread's own stack, so
//! barrier-free kernels pay nothing for the mechanism.
//!
//! Compiled frames have no unwind information, so a coroutine is never
//! unwound: one that must stop while it waits (cancellation, another warp
//! out of fuel) is reset, which abandons its stack without running
//! anything. Nothing on a warp's stack needs dropping (compiled frames,
//! [`warpjit_barrier`]'s and the coroutine's start frame hold only plain
//! values), so this is sound. Stacks are kept per thread and reused.

use crate::abi::{self, KernelFn, MemSpan, WarpContext};
use corosensei::stack::{DefaultStack, Stack};
use corosensei::{Coroutine, CoroutineResult, Yielder};
use std::cell::RefCell;
use std::ffi::c_void;
use std::sync::atomic::{AtomicBool, Ordering};
use warpjit_ir::interp::LaunchConfig;
use warpjit_ir::{FuncId, Op, Stmt, VerifiedModule, WARP_SIZE};

/// How a kernel's warps must be run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct KernelPlan {
    /// The kernel can reach `barrier`.
    pub uses_barrier: bool,
    /// Stack each warp's coroutine gets.
    pub stack_bytes: usize,
}

/// Bytes one 32-lane value takes at most (`<32 x i64>`).
const VECTOR_BYTES: u64 = 32 * 8;
/// Stack for the scheduler's own frames on a coroutine stack and the
/// smallest stack a warp gets.
const BASE_STACK: u64 = 256 << 10;
/// Compiled code runs on the calling thread's stack when its estimate is
/// below this (threads have at least 2 MiB; the caller needs some too).
const THREAD_STACK_BUDGET: u64 = 1 << 20;
/// The largest stack a warp may get; kernels estimated above it are
/// refused rather than risking an overflow.
pub(crate) const MAX_STACK: u64 = 256 << 20;

impl KernelPlan {
    /// Whether `kernel` reaches a barrier, and a generous bound of the
    /// stack its warps use: per function, one vector slot for every value,
    /// variable and call result and four per instruction (LLVM's
    /// temporaries, spilled at -O0), 32 lane copies of each private array,
    /// and 4 KiB, summed along the deepest call chain (the verifier rejects
    /// recursion, so the chain is finite), doubled.
    pub fn of(module: &VerifiedModule, kernel: FuncId) -> KernelPlan {
        let mut memo: Vec<Option<(bool, u64)>> = vec![None; module.functions.len()];
        let (uses_barrier, frames) = function_needs(module, kernel.0 as usize, &mut memo, 0);
        let bytes = BASE_STACK
            .saturating_add(frames.saturating_mul(2))
            .next_multiple_of(64 << 10);
        KernelPlan {
            uses_barrier,
            stack_bytes: usize::try_from(bytes).unwrap_or(usize::MAX),
        }
    }

    /// Whether the warps run as coroutines: they can meet at a barrier, or
    /// their stack may not fit the calling thread's.
    fn needs_coroutines(&self, warps: usize) -> bool {
        (self.uses_barrier && warps > 1) || self.stack_bytes as u64 > THREAD_STACK_BUDGET
    }
}

/// (reaches a barrier, stack bytes of the deepest chain) of function `f`.
fn function_needs(
    module: &VerifiedModule,
    f: usize,
    memo: &mut Vec<Option<(bool, u64)>>,
    depth: usize,
) -> (bool, u64) {
    if let Some(known) = memo[f] {
        return known;
    }
    let func = &module.functions[f];
    let mut barrier = false;
    let mut insts = 0u64;
    let mut loops = 0u64;
    let mut callees = Vec::new();
    warpjit_ir::walk_block(&func.body, &mut |s| match s {
        Stmt::Inst(i) => {
            insts += 1;
            match i.op {
                Op::Barrier => barrier = true,
                Op::Call(c) => callees.push(c as usize),
                _ => {}
            }
        }
        Stmt::Loop { .. } | Stmt::Ordered { .. } => loops += 1,
        _ => {}
    });
    let slots = func.values.len() as u64 + func.vars.len() as u64 + 4 * insts + 2 * loops;
    let privates: u64 = func
        .privates
        .iter()
        .map(|p| u64::from(p.size).div_ceil(8) * 8 * u64::from(WARP_SIZE))
        .sum();
    let own = slots
        .saturating_mul(VECTOR_BYTES)
        .saturating_add(privates)
        .saturating_add(4096);
    let mut deepest = 0u64;
    // The verifier forbids recursion; the depth test only guards against a
    // module that slipped past it.
    if depth < module.functions.len() {
        for c in callees {
            if c < module.functions.len() {
                let (b, bytes) = function_needs(module, c, memo, depth + 1);
                barrier |= b;
                deepest = deepest.max(bytes);
            }
        }
    }
    let needs = (barrier, own.saturating_add(deepest));
    memo[f] = Some(needs);
    needs
}

/// Why a workgroup's warps stopped before all finished.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Stop {
    /// Warp `warp` (its index in the workgroup) ran out of fuel.
    OutOfFuel { warp: u32 },
    /// The cancel flag was raised.
    Cancelled,
    /// No stack could be made for a warp.
    NoStack(String),
}

/// Where and how one workgroup runs: everything its warps' contexts share.
pub(crate) struct WorkgroupFrame<'a> {
    pub params: &'a [u64],
    pub buffers: &'a [MemSpan],
    pub shared: &'a [MemSpan],
    pub config: &'a LaunchConfig,
    pub workgroup_id: [u32; 3],
    pub sm_id: u32,
    pub first_warp_slot: u32,
    pub cancel: &'a AtomicBool,
}

/// The contexts of the workgroup's warps, ready to run. The pointers in
/// them borrow from `frame`.
pub(crate) fn warp_contexts(frame: &WorkgroupFrame<'_>) -> Vec<WarpContext> {
    let mut contexts = Vec::new();
    fill_warp_contexts(frame, &mut contexts);
    contexts
}

/// What a workgroup's contexts copy from its frame besides the workgroup
/// id. While it stays the same from one workgroup to the next, only the id
/// and the fields compiled code changes need rewriting.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct FrameKey {
    params: *const u64,
    buffers: *const MemSpan,
    shared: *const MemSpan,
    grid: [u32; 3],
    workgroup: [u32; 3],
    sm_count: u32,
    warps_per_sm: u32,
    fuel: Option<u64>,
    sm_id: u32,
    first_warp_slot: u32,
    cancel: *const AtomicBool,
}

impl FrameKey {
    fn of(frame: &WorkgroupFrame<'_>) -> FrameKey {
        let cfg = frame.config;
        FrameKey {
            params: frame.params.as_ptr(),
            buffers: frame.buffers.as_ptr(),
            shared: frame.shared.as_ptr(),
            grid: cfg.grid,
            workgroup: cfg.workgroup,
            sm_count: cfg.sm_count,
            warps_per_sm: cfg.warps_per_sm,
            fuel: cfg.fuel,
            sm_id: frame.sm_id,
            first_warp_slot: frame.first_warp_slot,
            cancel: frame.cancel,
        }
    }
}

/// Makes `contexts` the contexts of the workgroup's warps, reusing its
/// allocation (an SM thread keeps one vector for all its workgroups).
/// `last` is the key of what `contexts` holds: when the frame has the same
/// key, only the workgroup id and the fields a run changes (masks, fuel,
/// fault records of warps that faulted) are written, since a workgroup's
/// setup is a large part of a small workgroup's time.
pub(crate) fn refill_warp_contexts(
    frame: &WorkgroupFrame<'_>,
    contexts: &mut Vec<WarpContext>,
    last: &mut Option<FrameKey>,
) {
    let key = FrameKey::of(frame);
    let warps = frame.config.warps_per_workgroup() as usize;
    if contexts.len() != warps || last.as_ref() != Some(&key) {
        fill_warp_contexts(frame, contexts);
        *last = Some(key);
        return;
    }
    let fuel = frame.config.fuel.unwrap_or(u64::MAX);
    for ctx in contexts.iter_mut() {
        ctx.workgroup_id = frame.workgroup_id;
        ctx.live_mask = ctx.entry_mask;
        ctx.helper_mask = 0;
        ctx.fuel = fuel;
        ctx.out_of_fuel = 0;
        ctx.scheduler = std::ptr::null();
        if faulted(ctx) {
            clear_faults(ctx);
        }
    }
}

fn clear_faults(ctx: &mut WarpContext) {
    ctx.load_faults = 0;
    ctx.store_faults = 0;
    ctx.atomic_faults = 0;
    ctx.first_fault_kind = abi::FAULT_NONE;
    ctx.first_fault_lane = 0;
    ctx.first_fault_space = 0;
    ctx.first_fault_index = 0;
    ctx.first_fault_address = 0;
    ctx.first_fault_function = 0;
}

/// Replaces `contexts` with the contexts of the workgroup's warps, reusing
/// its allocation. Fields are written in place: building each context as
/// a value and moving it in costs more than the rest of a small
/// workgroup's setup.
pub(crate) fn fill_warp_contexts(frame: &WorkgroupFrame<'_>, contexts: &mut Vec<WarpContext>) {
    let cfg = frame.config;
    let warps = cfg.warps_per_workgroup() as usize;
    contexts.truncate(warps);
    while contexts.len() < warps {
        contexts.push(blank_context());
    }
    for (index, ctx) in contexts.iter_mut().enumerate() {
        let index = index as u32;
        let existing = cfg.lanes_present(index);
        ctx.params = frame.params.as_ptr();
        ctx.buffers = frame.buffers.as_ptr();
        ctx.shared = frame.shared.as_ptr();
        ctx.workgroup_id = frame.workgroup_id;
        ctx.num_workgroups = cfg.grid;
        ctx.workgroup_size = cfg.workgroup;
        ctx.warp_index = index;
        ctx.warp_slot = frame.first_warp_slot + index;
        ctx.sm_id = frame.sm_id;
        ctx.sm_count = cfg.sm_count;
        ctx.warps_per_sm = cfg.warps_per_sm;
        ctx.entry_mask = existing;
        ctx.live_mask = existing;
        ctx.helper_mask = 0;
        clear_faults(ctx);
        ctx.fuel = cfg.fuel.unwrap_or(u64::MAX);
        ctx.out_of_fuel = 0;
        ctx.cancel = frame.cancel;
        ctx.scheduler = std::ptr::null();
    }
}

/// A context to overwrite: no lanes, null pointers.
fn blank_context() -> WarpContext {
    WarpContext {
        params: std::ptr::null(),
        buffers: std::ptr::null(),
        shared: std::ptr::null(),
        workgroup_id: [0; 3],
        num_workgroups: [0; 3],
        workgroup_size: [0; 3],
        warp_index: 0,
        warp_slot: 0,
        sm_id: 0,
        sm_count: 0,
        warps_per_sm: 0,
        entry_mask: 0,
        live_mask: 0,
        helper_mask: 0,
        load_faults: 0,
        store_faults: 0,
        atomic_faults: 0,
        first_fault_kind: abi::FAULT_NONE,
        first_fault_lane: 0,
        first_fault_space: 0,
        first_fault_index: 0,
        first_fault_address: 0,
        first_fault_function: 0,
        fuel: 0,
        out_of_fuel: 0,
        cancel: std::ptr::null(),
        scheduler: std::ptr::null(),
    }
}

/// Whether the warp made an out-of-bounds access (most workgroups make
/// none, and then there is no report to build).
pub(crate) fn faulted(ctx: &WarpContext) -> bool {
    ctx.first_fault_kind != abi::FAULT_NONE
        || (ctx.load_faults | ctx.store_faults | ctx.atomic_faults) != 0
}

/// Runs the warps of `contexts` (one workgroup) to completion in the
/// interpreter's schedule. `first_faulting` is set to the warp whose
/// out-of-bounds access came first in that schedule (with barriers, a later
/// warp can fault before an earlier one does), which the fault report names.
///
/// # Safety
/// `entry` must be a compiled kernel entry whose machine code outlives the
/// call, the contexts' pointers must be valid for the whole call (spans of
/// their stated lengths), and `plan` must be the kernel's.
pub(crate) unsafe fn run_warps(
    entry: KernelFn,
    plan: &KernelPlan,
    contexts: &mut [WarpContext],
    cancel: &AtomicBool,
    first_faulting: &mut Option<usize>,
) -> Result<(), Stop> {
    if plan.needs_coroutines(contexts.len()) {
        return run_as_coroutines(entry, plan, contexts, cancel, first_faulting);
    }
    for (index, ctx) in contexts.iter_mut().enumerate() {
        // SAFETY: as promised by the caller; `scheduler` is null, so a
        // barrier (reachable only in a one-warp workgroup here) returns at
        // once, which is its meaning when the warp is the only one.
        unsafe { entry(ctx) };
        note_fault(ctx, index, first_faulting);
        check(ctx, index, cancel)?;
    }
    Ok(())
}

/// Records warp `index` as the first to fault if it faulted and none did before.
fn note_fault(ctx: &WarpContext, index: usize, first_faulting: &mut Option<usize>) {
    if first_faulting.is_none() && ctx.first_fault_kind != crate::abi::FAULT_NONE {
        *first_faulting = Some(index);
    }
}

/// Whether to stop after warp `index` ran (finished or now waiting).
fn check(ctx: &WarpContext, index: usize, cancel: &AtomicBool) -> Result<(), Stop> {
    if ctx.out_of_fuel != 0 {
        return Err(Stop::OutOfFuel { warp: index as u32 });
    }
    if cancel.load(Ordering::Relaxed) {
        return Err(Stop::Cancelled);
    }
    Ok(())
}

type Warp = Coroutine<(), (), (), DefaultStack>;

/// The coroutines of one workgroup. Dropping it (finished, stopped or
/// panicking) resets the warps still waiting, without unwinding, and
/// gives every stack back to the thread's pool.
struct Warps(Vec<Option<Warp>>);

impl Drop for Warps {
    fn drop(&mut self) {
        for warp in self.0.iter_mut() {
            if let Some(mut co) = warp.take() {
                if !co.done() {
                    // SAFETY: nothing on a warp's stack has drop code (see
                    // the module notes), so abandoning it is sound.
                    unsafe { co.force_reset() };
                }
                give_back(co.into_stack());
            }
        }
    }
}

unsafe fn run_as_coroutines(
    entry: KernelFn,
    plan: &KernelPlan,
    contexts: &mut [WarpContext],
    cancel: &AtomicBool,
    first_faulting: &mut Option<usize>,
) -> Result<(), Stop> {
    if plan.stack_bytes as u64 > MAX_STACK {
        return Err(Stop::NoStack(format!(
            "the kernel may need {} MiB of stack per warp; the limit is {} MiB",
            plan.stack_bytes >> 20,
            MAX_STACK >> 20
        )));
    }
    let base = contexts.as_mut_ptr();
    let count = contexts.len();
    let mut warps = Warps(Vec::with_capacity(count));
    for index in 0..count {
        let stack = take_stack(plan.stack_bytes).map_err(Stop::NoStack)?;
        // SAFETY: `index < count`; the context outlives the coroutine,
        // which `warps` finishes or resets before this function returns.
        let ctx = unsafe { base.add(index) };
        let co = Coroutine::with_stack(stack, move |yielder: &Yielder<(), ()>, ()| {
            // SAFETY: only this coroutine touches its context while it
            // runs; the scheduler reads it between resumes.
            unsafe {
                (*ctx).scheduler = (yielder as *const Yielder<(), ()>).cast::<c_void>();
                entry(ctx);
            }
        });
        warps.0.push(Some(co));
    }
    loop {
        let mut waiting = false;
        for index in 0..count {
            let Some(co) = warps.0[index].as_mut() else {
                continue;
            };
            match co.resume(()) {
                CoroutineResult::Yield(()) => waiting = true,
                CoroutineResult::Return(()) => {
                    if let Some(done) = warps.0[index].take() {
                        give_back(done.into_stack());
                    }
                }
            }
            // SAFETY: the warp is suspended or finished; nothing else
            // touches its context now.
            let ctx = unsafe { &*base.add(index) };
            note_fault(ctx, index, first_faulting);
            check(ctx, index, cancel)?;
        }
        // Every unfinished warp now waits at a barrier: it opens.
        if !waiting {
            return Ok(());
        }
    }
}

/// What `barrier` calls: suspends the calling warp's coroutine until the
/// scheduler resumes it, i.e. until the barrier opens. Without a
/// coroutine (a one-warp workgroup run directly) the barrier is open.
unsafe extern "C" fn warpjit_barrier(ctx: *mut WarpContext) {
    // SAFETY: compiled code passes its own live context; `scheduler` is
    // null or the yielder of the coroutine this code runs on.
    unsafe {
        let yielder = (*ctx).scheduler.cast::<Yielder<(), ()>>();
        if let Some(yielder) = yielder.as_ref() {
            yielder.suspend(());
        }
    }
}

/// The address compiled code calls for [`abi::BARRIER_SYMBOL`].
pub(crate) fn barrier_address() -> usize {
    warpjit_barrier as unsafe extern "C" fn(*mut WarpContext) as usize
}

thread_local! {
    /// Warp stacks of this thread, reused from workgroup to workgroup.
    static STACKS: RefCell<Vec<DefaultStack>> = const { RefCell::new(Vec::new()) };
}

/// A stack of at least `bytes` from the thread's pool, or a new one.
fn take_stack(bytes: usize) -> Result<DefaultStack, String> {
    let reused = STACKS.with(|pool| {
        let mut pool = pool.borrow_mut();
        while let Some(stack) = pool.pop() {
            if stack.base().get() - stack.limit().get() >= bytes {
                return Some(stack);
            }
            // Too small for this kernel: unmapped here.
        }
        None
    });
    match reused {
        Some(stack) => Ok(stack),
        None => DefaultStack::new(bytes)
            .map_err(|e| format!("cannot map a {} KiB warp stack: {e}", bytes >> 10)),
    }
}

fn give_back(stack: DefaultStack) {
    // During thread exit the pool may be gone; the stack is unmapped then.
    let _ = STACKS.try_with(|pool| pool.borrow_mut().push(stack));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stacks_are_reused() {
        let stack = take_stack(300 << 10).expect("a small stack maps");
        let base = stack.base().get();
        give_back(stack);
        let again = take_stack(256 << 10).expect("reused");
        assert_eq!(again.base().get(), base);
        give_back(again);
        let bigger = take_stack(2 << 20).expect("a new stack maps");
        assert!(bigger.base().get() - bigger.limit().get() >= 2 << 20);
    }
}
