//! The warp scheduler of compiled workgroups: runs a workgroup's warps on
//! the calling thread, switching between them at barriers.
//!
//! A kernel that can reach `barrier` (itself or through a call) with more
//! than one warp runs each warp on a stackful coroutine (`corosensei`):
//! `barrier` calls [`warpjit_barrier`], which suspends the warp's
//! coroutine, and the scheduler resumes warps 0, 1, 2, ... each until it
//! waits or finishes, then again, as the interpreter does. Every other
//! kernel calls its warps (each phase of them, for a kernel split into
//! phases) one after another on the thread's own stack, in one loop over a
//! whole run of workgroups ([`run_loop`]), so barrier-free kernels pay
//! nothing for the mechanism.
//!
//! Compiled frames have no unwind information, so a coroutine is never
//! unwound: one that must stop while it waits (cancellation, another warp
//! out of fuel) is reset, which abandons its stack without running
//! anything. Nothing on a warp's stack needs dropping (compiled frames,
//! [`warpjit_barrier`]'s and the coroutine's start frame hold only plain
//! values), so this is sound.
//!
//! The coroutines are kept per thread ([`WarpCrew`]), each running one warp
//! after another, so a barrier workgroup creates none; one whose warp was
//! abandoned is made anew on the same stack.

use crate::abi::{self, KernelFn, MemSpan, WarpContext};
use crate::lower::phases;
use corosensei::stack::DefaultStack;
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
    /// Phases of a kernel split at its barriers (`lower/phases.rs`), 0 for
    /// one that is not, and the bytes of phase state each warp needs.
    pub phases: u32,
    pub phase_bytes: u32,
    /// The warp fields compiled code of the module can change, which a
    /// warp's context must have reset before it runs another workgroup.
    pub rewrites: WarpRewrites,
    /// The entry runs consecutive workgroups in one call (`KernelFn`), all
    /// phases of each: nothing has to happen between two workgroups but a
    /// new id and zeroed shared memory (which the entry does), as no
    /// rewritten warp field or coroutine is involved, and the kernel has no
    /// loop and few instructions, so a call per workgroup would be a large
    /// part of its time.
    pub many_workgroups: bool,
}

/// Which of a warp's own fields compiled code writes: the live mask
/// (`kill`, or a loop that runs out of fuel or is cancelled), the helper
/// mask (`demote`) and the fuel (loops). Any function of the module counts,
/// whether the kernel calls it or not. The lowering refuses to store a
/// field this leaves out (`Emit::store_field`), so the two cannot drift
/// apart unnoticed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct WarpRewrites {
    pub live_mask: bool,
    pub helper_mask: bool,
    pub fuel: bool,
}

impl WarpRewrites {
    pub const ALL: WarpRewrites = WarpRewrites {
        live_mask: true,
        helper_mask: true,
        fuel: true,
    };

    pub fn of(module: &VerifiedModule) -> WarpRewrites {
        let mut w = WarpRewrites::default();
        for func in &module.functions {
            warpjit_ir::walk_block(&func.body, &mut |s| match s {
                Stmt::Loop { .. } => {
                    w.fuel = true;
                    w.live_mask = true;
                }
                Stmt::Kill { .. } => w.live_mask = true,
                Stmt::Inst(i) if matches!(i.op, Op::Demote) => w.helper_mask = true,
                _ => {}
            });
        }
        w
    }

    fn any(self) -> bool {
        self.live_mask || self.helper_mask || self.fuel
    }
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
        KernelPlan::with_phases(module, kernel).0
    }

    /// [`KernelPlan::of`], and the phase layout when the plan splits the
    /// kernel into phases.
    pub fn with_phases(
        module: &VerifiedModule,
        kernel: FuncId,
    ) -> (KernelPlan, Option<phases::PhaseLayout>) {
        let memo = all_needs(module);
        let needs = memo[kernel.0 as usize].unwrap_or(Needs::UNKNOWN);
        let uses_barrier = needs.barrier;
        let bytes = BASE_STACK
            .saturating_add(needs.stack.saturating_mul(2))
            .next_multiple_of(64 << 10);
        let mut plan = KernelPlan {
            uses_barrier,
            stack_bytes: usize::try_from(bytes).unwrap_or(usize::MAX),
            phases: 0,
            phase_bytes: 0,
            rewrites: WarpRewrites::of(module),
            many_workgroups: false,
        };
        // Phases run on the thread's own stack.
        let layout = if uses_barrier && bytes <= THREAD_STACK_BUDGET {
            split(module, kernel, &memo)
        } else {
            None
        };
        if let Some(layout) = &layout {
            plan.phases = layout.phases.len() as u32;
            plan.phase_bytes = layout.bytes;
        }
        // No rewritten field also means no loop (loops spend fuel).
        plan.many_workgroups = (!uses_barrier || plan.phases > 0)
            && !plan.rewrites.any()
            && needs.insts <= SHORT_KERNEL
            && bytes <= THREAD_STACK_BUDGET;
        (plan, layout)
    }

    /// Whether the warps run as coroutines: they can meet at a barrier, or
    /// their stack may not fit the calling thread's.
    pub fn needs_coroutines(&self, warps: usize) -> bool {
        (self.uses_barrier && self.phases == 0 && warps > 1)
            || self.stack_bytes as u64 > THREAD_STACK_BUDGET
    }
}

/// The phases of `kernel` (see [`phases::layout`]); `memo` holds
/// [`function_needs`] of every function the kernel can call.
fn split(
    module: &VerifiedModule,
    kernel: FuncId,
    memo: &[Option<Needs>],
) -> Option<phases::PhaseLayout> {
    let calls_barrier = |c: u32| {
        memo.get(c as usize)
            .copied()
            .flatten()
            .is_none_or(|n| n.barrier)
    };
    phases::layout(module.function(kernel), &calls_barrier)
}

/// What running a function takes, its callees included.
#[derive(Clone, Copy, Debug)]
struct Needs {
    /// It can reach a barrier.
    barrier: bool,
    /// Stack bytes of its deepest call chain.
    stack: u64,
    /// Its instructions with every call counted as the callee's (as if
    /// inlined), loop bodies once.
    insts: u64,
}

impl Needs {
    /// The worst case, for a function whose needs are not known.
    const UNKNOWN: Needs = Needs {
        barrier: true,
        stack: u64::MAX,
        insts: u64::MAX,
    };
}

/// Instructions (see [`Needs::insts`]) a kernel without loops may have for
/// its entry to run several workgroups per call. The loop over workgroups
/// costs a kernel 1.3-2.5 ms more to compile; W3's warp sum (17) won
/// 10-15% with it, W4's scan (45) only 3-4% on one SM and nothing on two
/// (`docs/performance-log.md`), W8 (58) about 2%.
const SHORT_KERNEL: u64 = 32;

/// [`Needs`] of every function, computed callees first in the verifier's
/// call order, without recursion: call chains can be as long as a module
/// has functions.
fn all_needs(module: &VerifiedModule) -> Vec<Option<Needs>> {
    let mut memo: Vec<Option<Needs>> = vec![None; module.functions.len()];
    for id in module.call_order() {
        let f = id.0 as usize;
        memo[f] = Some(function_needs(module, f, &memo));
    }
    memo
}

/// [`Needs`] of function `f`, given those of its callees in `memo` (a
/// callee without them, which the call order rules out, counts as the
/// worst case).
fn function_needs(module: &VerifiedModule, f: usize, memo: &[Option<Needs>]) -> Needs {
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
    let mut inlined = insts;
    for c in callees {
        let callee = memo.get(c).copied().flatten().unwrap_or(Needs::UNKNOWN);
        barrier |= callee.barrier;
        deepest = deepest.max(callee.stack);
        inlined = inlined.saturating_add(callee.insts);
    }
    Needs {
        barrier,
        stack: own.saturating_add(deepest),
        insts: inlined,
    }
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
    next_workgroup(contexts, frame.workgroup_id, frame.config.fuel);
}

/// Makes `contexts`, which ran the previous workgroup of the same launch
/// on this SM, the contexts of workgroup `workgroup_id`: only the id and
/// the fields a run changes (masks, fuel, fault records of warps that
/// faulted) are written.
pub(crate) fn next_workgroup(
    contexts: &mut [WarpContext],
    workgroup_id: [u32; 3],
    fuel: Option<u64>,
) {
    let fuel = fuel.unwrap_or(u64::MAX);
    for ctx in contexts.iter_mut() {
        set_workgroup_id(ctx, workgroup_id);
        restart_rewritten(ctx, WarpRewrites::ALL, fuel);
        ctx.out_of_fuel = 0;
        ctx.scheduler = std::ptr::null();
        if faulted(ctx) {
            clear_faults(ctx);
        }
    }
}

fn set_workgroup_id(ctx: &mut WarpContext, workgroup_id: [u32; 3]) {
    // Word by word: a copy of the array may be one 8-byte load of what
    // were two 4-byte stores, which stalls store-to-load forwarding.
    let [x, y, z] = workgroup_id;
    ctx.workgroup_id[0] = x;
    ctx.workgroup_id[1] = y;
    ctx.workgroup_id[2] = z;
}

/// Resets the warp's own fields `rewrites` names to what a workgroup
/// starts with; between the workgroups of a run the others still hold what
/// [`next_workgroup`] wrote.
fn restart_rewritten(ctx: &mut WarpContext, rewrites: WarpRewrites, fuel: u64) {
    if rewrites.live_mask {
        ctx.live_mask = ctx.entry_mask;
    }
    if rewrites.helper_mask {
        ctx.helper_mask = 0;
    }
    if rewrites.fuel {
        ctx.fuel = fuel;
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
/// workgroup's setup. The fields a run changes are set by
/// [`next_workgroup`], as between workgroups.
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
        ctx.num_workgroups = cfg.grid;
        ctx.workgroup_size = cfg.workgroup;
        ctx.warp_index = index;
        ctx.first_local = local_id_of(32 * index, cfg.workgroup);
        ctx.warp_slot = frame.first_warp_slot + index;
        ctx.sm_id = frame.sm_id;
        ctx.sm_count = cfg.sm_count;
        ctx.warps_per_sm = cfg.warps_per_sm;
        ctx.entry_mask = existing;
        clear_faults(ctx);
        ctx.cancel = frame.cancel;
    }
    next_workgroup(contexts, frame.workgroup_id, cfg.fuel);
}

/// The `local_id` of local index `index` in a workgroup of `size` (x
/// fastest).
fn local_id_of(index: u32, size: [u32; 3]) -> [u32; 3] {
    let [sx, sy, _] = size.map(|s| s.max(1));
    [index % sx, index / sx % sy, index / (sx * sy)]
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
        first_local: [0; 3],
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
        posted: std::ptr::null_mut(),
        phase: 0,
        phase_state: std::ptr::null_mut(),
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
    let fuel = contexts.first().map_or(u64::MAX, |c| c.fuel);
    // SAFETY: as promised by the caller; one workgroup never zeroes the arena.
    let outcome = unsafe { run_loop(entry, plan, contexts, 1, &mut [], fuel, cancel, |id| id) };
    *first_faulting = outcome.first_faulting;
    outcome.stop.map_or(Ok(()), Err)
}

/// What [`run_loop`] did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct LoopOutcome {
    /// Workgroups that finished without a fault.
    pub done: u64,
    /// Why the workgroup after them stopped early, if it did.
    pub stop: Option<Stop>,
    /// The warp of that workgroup whose fault came first in the schedule.
    pub first_faulting: Option<usize>,
}

/// Runs up to `count` consecutive workgroups of a kernel whose warps run on
/// the thread's own stack (no barrier, or barriers split into phases):
/// for each workgroup, each phase of every warp in the interpreter's order.
/// `contexts` hold the first workgroup; between workgroups this does what
/// [`next_workgroup`] does, with the id `next_id` gives and `fuel`, and
/// zeroes `arena`, the workgroup's shared memory. It stops
/// after a warp that ran out of fuel or saw the launch cancelled, and after
/// a workgroup in which a warp faulted; the contexts then hold that
/// workgroup. This is the loop every warp of most launches goes through,
/// so it touches only what changes. The entry of a kernel whose plan has
/// `many_workgroups` is given the rest of the run in one call.
///
/// # Safety
/// As [`run_warps`].
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn run_loop(
    entry: KernelFn,
    plan: &KernelPlan,
    contexts: &mut [WarpContext],
    count: u64,
    arena: &mut [u64],
    fuel: u64,
    cancel: &AtomicBool,
    next_id: impl Fn([u32; 3]) -> [u32; 3],
) -> LoopOutcome {
    let Some(mut id) = contexts.first().map(|c| c.workgroup_id) else {
        return LoopOutcome {
            done: count,
            stop: None,
            first_faulting: None,
        };
    };
    let phased = plan.phases > 0;
    let phases = plan.phases.max(1);
    with_phase_state(plan, contexts, |contexts| {
        let warps = contexts.len() as u64;
        let mut done = 0;
        while done < count {
            if done > 0 {
                id = next_id(id);
                // Compiled code reads the workgroup id from the first
                // context of a call (see `start` below), and most kernels
                // change none of a warp's own fields. Before the call of
                // `memset` below: after it, `id` (which the closure holds
                // by reference) was read back from memory as one 8-byte
                // load of the three 4-byte stores just made, which stalls
                // store-to-load forwarding (about 5% of W4's time on 1 SM).
                set_workgroup_id(&mut contexts[0], id);
                // Not even a call when there is no shared memory.
                if !arena.is_empty() {
                    arena.fill(0);
                }
                if plan.rewrites.any() {
                    for ctx in contexts.iter_mut() {
                        restart_rewritten(ctx, plan.rewrites, fuel);
                    }
                }
            }
            let mut first = None;
            // Where this workgroup's warps go on: the phase and the warp.
            let (mut phase, mut start) = (0, 0);
            if plan.many_workgroups {
                let workgroups = count - done;
                // SAFETY: as below.
                let ran = unsafe { entry(contexts.as_mut_ptr(), warps, workgroups) }.max(1);
                // The workgroups before the one the call ended in are
                // done; the first context holds that one's id and the
                // phase it ended in, `ran` the warps run in all.
                let before = ((ran - 1) / warps).min(workgroups - 1);
                done += before;
                id = contexts[0].workgroup_id;
                let index = (ran - before * warps).clamp(1, warps) as usize - 1;
                if let Err(stop) = after_warp(&contexts[index], index, cancel, &mut first) {
                    return LoopOutcome::stopped(done, stop, first);
                }
                // The rest of that workgroup (nothing when the call ran all
                // of it).
                let ended_in = if phased { contexts[0].phase } else { 0 };
                (phase, start) = (ended_in, index + 1);
            }
            while phase < phases {
                if phased {
                    for ctx in contexts.iter_mut() {
                        ctx.phase = phase;
                    }
                }
                while start < contexts.len() {
                    if start > 0 {
                        // After a faulting warp: the call's first context.
                        set_workgroup_id(&mut contexts[start], id);
                    }
                    let rest = &mut contexts[start..];
                    // SAFETY: as promised by the caller; `scheduler` is
                    // null, so a barrier (reachable only in a one-warp
                    // workgroup here) returns at once, which is its meaning
                    // when the warp is the only one. The entry returns
                    // after a warp that faulted or ran out of fuel.
                    // No workgroups: the phase of the first context only.
                    let ran = unsafe { entry(rest.as_mut_ptr(), rest.len() as u64, 0) };
                    let index = start + (ran as usize).clamp(1, rest.len()) - 1;
                    if let Err(stop) = after_warp(&contexts[index], index, cancel, &mut first) {
                        return LoopOutcome::stopped(done, stop, first);
                    }
                    start = index + 1;
                }
                (phase, start) = (phase + 1, 0);
            }
            if first.is_some() {
                return LoopOutcome {
                    done,
                    stop: None,
                    first_faulting: first,
                };
            }
            done += 1;
        }
        LoopOutcome {
            done: count,
            stop: None,
            first_faulting: None,
        }
    })
}

impl LoopOutcome {
    /// `done` workgroups, then `stop` in the next.
    fn stopped(done: u64, stop: Stop, first_faulting: Option<usize>) -> LoopOutcome {
        LoopOutcome {
            done,
            stop: Some(stop),
            first_faulting,
        }
    }
}

/// What the runtime does after the warp an entry's call ended with (warp
/// `index` of its workgroup): notes its fault, and stops when it ran out
/// of fuel or the launch was cancelled.
fn after_warp(
    ctx: &WarpContext,
    index: usize,
    cancel: &AtomicBool,
    first: &mut Option<usize>,
) -> Result<(), Stop> {
    note_fault(ctx, index, first);
    check(ctx, index, cancel)
}

/// A 64-byte aligned piece of phase state.
#[derive(Clone, Copy)]
#[repr(C, align(64))]
struct StateLine([u8; 64]);

thread_local! {
    /// The phase state of the running workgroup's warps, kept per thread.
    static PHASE_STATE: RefCell<Vec<StateLine>> = const { RefCell::new(Vec::new()) };
}

/// Calls `run` with each context pointing at its warp's phase state, when
/// the kernel is split into phases (`lower/phases.rs`): what a warp keeps
/// from one phase for later ones.
fn with_phase_state<R>(
    plan: &KernelPlan,
    contexts: &mut [WarpContext],
    run: impl FnOnce(&mut [WarpContext]) -> R,
) -> R {
    if plan.phases == 0 {
        return run(contexts);
    }
    let lines_per_warp = (plan.phase_bytes as usize).div_ceil(64);
    PHASE_STATE.with(|state| {
        let mut state = state.borrow_mut();
        let lines = lines_per_warp * contexts.len();
        if state.len() < lines {
            state.resize(lines, StateLine([0; 64]));
        }
        let base = state.as_mut_ptr();
        for (index, ctx) in contexts.iter_mut().enumerate() {
            // SAFETY: `index * lines_per_warp` lines fit in `state`.
            ctx.phase_state = unsafe { base.add(index * lines_per_warp) }.cast::<u8>();
        }
        run(contexts)
    })
}

/// Records warp `index` as the first to fault if it faulted and none did
/// before. Branches, not a select: `first_faulting` then stays off the
/// critical path of the warp loop (most warps never fault).
#[inline(always)]
fn note_fault(ctx: &WarpContext, index: usize, first_faulting: &mut Option<usize>) {
    if ctx.first_fault_kind != abi::FAULT_NONE {
        note_first_fault(index, first_faulting);
    }
}

#[cold]
fn note_first_fault(index: usize, first_faulting: &mut Option<usize>) {
    if first_faulting.is_none() {
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

/// What a warp coroutine is resumed with: the warp to start (ignored when
/// it continues from a barrier).
#[derive(Clone, Copy)]
struct WarpJob {
    entry: KernelFn,
    ctx: *mut WarpContext,
}

/// Why a warp coroutine gave the thread back.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum WarpEvent {
    /// The warp waits at a barrier.
    AtBarrier,
    /// The warp finished; the coroutine is idle, ready for another warp.
    Finished,
}

type Warp = Coroutine<WarpJob, WarpEvent, (), DefaultStack>;
type WarpYielder = Yielder<WarpJob, WarpEvent>;

/// A coroutine that runs one warp after another: it runs the warp it is
/// resumed with, yields [`WarpEvent::Finished`] and waits for the next.
/// While idle its stack holds only this loop's plain values.
fn warp_coroutine(stack: DefaultStack) -> Warp {
    Coroutine::with_stack(stack, |yielder: &WarpYielder, first: WarpJob| {
        let mut job = first;
        loop {
            // SAFETY: the scheduler resumes a coroutine only with a live
            // context that nothing else touches until the warp yields.
            unsafe {
                (*job.ctx).scheduler = (yielder as *const WarpYielder).cast::<c_void>();
                (job.entry)(job.ctx, 1, 0);
            }
            job = yielder.suspend(WarpEvent::Finished);
        }
    })
}

/// Where a warp of the running workgroup is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum WarpState {
    NotStarted,
    AtBarrier,
    Finished,
}

/// The warp coroutines of an SM thread, kept from workgroup to workgroup
/// (and launch to launch), so a barrier workgroup creates none. Between
/// workgroups every coroutine is idle (not started, or suspended after its
/// warp finished); a coroutine whose warp is abandoned at a barrier is
/// reset without unwinding and made anew on the same stack.
#[derive(Default)]
struct WarpCrew {
    warps: Vec<Option<Warp>>,
    /// The size every coroutine's stack has at least.
    stack_bytes: usize,
    /// Per warp of the running workgroup.
    states: Vec<WarpState>,
}

impl WarpCrew {
    /// At least `count` idle coroutines with stacks of `stack_bytes` or more.
    fn ensure(&mut self, count: usize, stack_bytes: usize) -> Result<(), String> {
        if stack_bytes > self.stack_bytes {
            // Every coroutine is idle here, so dropping them is sound.
            self.warps.clear();
            self.stack_bytes = stack_bytes;
        }
        while self.warps.len() < count {
            let stack = DefaultStack::new(self.stack_bytes).map_err(|e| {
                format!(
                    "cannot map a {} KiB warp stack: {e}",
                    self.stack_bytes >> 10
                )
            })?;
            self.warps.push(Some(warp_coroutine(stack)));
        }
        Ok(())
    }

    /// Makes every coroutine of the workgroup's `count` warps idle again:
    /// the ones abandoned at a barrier (or, which never happens, that
    /// returned) are reset and made anew on their stacks.
    fn settle(&mut self, count: usize) {
        for (slot, state) in self.warps.iter_mut().zip(&self.states).take(count) {
            let abandoned = *state == WarpState::AtBarrier;
            let Some(mut co) = slot.take() else {
                continue;
            };
            if abandoned || co.done() {
                if !co.done() {
                    // SAFETY: nothing on a warp's stack has drop code (see
                    // the module notes), so abandoning it is sound.
                    unsafe { co.force_reset() };
                }
                *slot = Some(warp_coroutine(co.into_stack()));
            } else {
                *slot = Some(co);
            }
        }
    }

    /// Runs the warps of `contexts` on this crew's coroutines, in the
    /// interpreter's schedule; see [`run_warps`].
    unsafe fn run(
        &mut self,
        entry: KernelFn,
        plan: &KernelPlan,
        contexts: &mut [WarpContext],
        cancel: &AtomicBool,
        first_faulting: &mut Option<usize>,
    ) -> Result<(), Stop> {
        let count = contexts.len();
        self.ensure(count, plan.stack_bytes)
            .map_err(Stop::NoStack)?;
        self.states.clear();
        self.states.resize(count, WarpState::NotStarted);
        // SAFETY: the contexts outlive this call and the coroutines touch a
        // context only between a resume and the next yield.
        let outcome = unsafe { self.schedule(entry, contexts, cancel, first_faulting) };
        self.settle(count);
        outcome
    }

    unsafe fn schedule(
        &mut self,
        entry: KernelFn,
        contexts: &mut [WarpContext],
        cancel: &AtomicBool,
        first_faulting: &mut Option<usize>,
    ) -> Result<(), Stop> {
        let base = contexts.as_mut_ptr();
        let count = contexts.len();
        loop {
            let mut waiting = false;
            for index in 0..count {
                if self.states[index] == WarpState::Finished {
                    continue;
                }
                let Some(co) = self.warps[index].as_mut() else {
                    continue;
                };
                // SAFETY: `index < count`.
                let ctx = unsafe { base.add(index) };
                self.states[index] = match co.resume(WarpJob { entry, ctx }) {
                    CoroutineResult::Yield(WarpEvent::AtBarrier) => {
                        waiting = true;
                        WarpState::AtBarrier
                    }
                    CoroutineResult::Yield(WarpEvent::Finished) | CoroutineResult::Return(()) => {
                        WarpState::Finished
                    }
                };
                // SAFETY: the warp is suspended or finished; nothing else
                // touches its context now.
                let ctx = unsafe { &*ctx };
                note_fault(ctx, index, first_faulting);
                check(ctx, index, cancel)?;
            }
            // Every unfinished warp now waits at a barrier: it opens.
            if !waiting {
                return Ok(());
            }
        }
    }
}

impl Drop for WarpCrew {
    fn drop(&mut self) {
        for co in self.warps.iter_mut().flatten() {
            if !co.done() {
                // SAFETY: idle, or abandoned by a panic while waiting at a
                // barrier: either way nothing on the stack has drop code.
                unsafe { co.force_reset() };
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
    // Taken out of the thread's slot while it runs (and put back after),
    // so a panic drops it, resetting whatever waits.
    let mut crew = CREW
        .try_with(|crew| std::mem::take(&mut *crew.borrow_mut()))
        .unwrap_or_default();
    // SAFETY: as promised by the caller.
    let outcome = unsafe { crew.run(entry, plan, contexts, cancel, first_faulting) };
    let _ = CREW.try_with(|slot| *slot.borrow_mut() = crew);
    outcome
}

/// What `barrier` calls: suspends the calling warp's coroutine until the
/// scheduler resumes it, i.e. until the barrier opens. Without a
/// coroutine (a one-warp workgroup run directly) the barrier is open.
unsafe extern "C" fn warpjit_barrier(ctx: *mut WarpContext) {
    // SAFETY: compiled code passes its own live context; `scheduler` is
    // null or the yielder of the coroutine this code runs on.
    unsafe {
        let yielder = (*ctx).scheduler.cast::<WarpYielder>();
        if let Some(yielder) = yielder.as_ref() {
            yielder.suspend(WarpEvent::AtBarrier);
        }
    }
}

/// The address compiled code calls for [`abi::BARRIER_SYMBOL`].
pub(crate) fn barrier_address() -> usize {
    warpjit_barrier as unsafe extern "C" fn(*mut WarpContext) as usize
}

thread_local! {
    /// This thread's warp coroutines.
    static CREW: RefCell<WarpCrew> = RefCell::new(WarpCrew::default());
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;

    /// The verified module of `src` and its `@main`.
    fn parsed(src: &str) -> (VerifiedModule, FuncId) {
        let module = warpjit_ir::text::parse(src).expect("parses");
        let module = VerifiedModule::new(module).expect("verifies");
        let main = module.find_function("main").expect("@main");
        (module, main)
    }

    /// The plan of a module of `buffer @out` and a kernel of `body`.
    fn plan_of(body: &str) -> KernelPlan {
        let (module, main) = parsed(&format!(
            "buffer @out[0]: u32\nkernel @main {{\n{body}\n}}\n"
        ));
        KernelPlan::of(&module, main)
    }

    #[test]
    fn only_short_kernels_with_nothing_else_between_workgroups_run_many_per_call() {
        let short = "%a = global_id.x\n%b = shl %a, 2\nstore.u32 @out, %b, %a";
        assert!(plan_of(short).many_workgroups);
        // Phases are run in turn by the entry.
        assert!(plan_of(&format!("{short}\nbarrier\n%d = lane_id")).many_workgroups);
        let coroutines = "%c = lane_id\n%t = cmp.eq %c, 0\nif %t {\n  barrier\n}";
        for between in [coroutines, "kill", "demote", "loop {\n  break\n}"] {
            assert!(
                !plan_of(&format!("{short}\n{between}")).many_workgroups,
                "{between}"
            );
        }
        let long: String = (0..SHORT_KERNEL)
            .map(|i| format!("%v{i} = lane_id\n"))
            .collect();
        assert!(!plan_of(&format!("{short}\n{long}")).many_workgroups);
        // The entry zeroes shared memory between workgroups.
        let (module, main) = parsed(&format!(
            "buffer @out[0]: u32\nshared @s[64]\nkernel @main {{\n{short}\n}}\n"
        ));
        assert!(KernelPlan::of(&module, main).many_workgroups);
        // A callee's instructions count as if inlined, at each call.
        let callee: String = (0..SHORT_KERNEL / 2)
            .map(|i| format!("  %v{i} = lane_id\n"))
            .collect();
        let (module, main) = parsed(&format!(
            "buffer @out[0]: u32\nfunc @f() {{\n{callee}}}\nkernel @main {{\n  call @f()\n  call @f()\n}}\n"
        ));
        assert!(!KernelPlan::of(&module, main).many_workgroups);
    }

    #[test]
    fn an_entry_given_many_workgroups_counts_their_ids_and_stops_when_cancelled() {
        let (module, main) =
            parsed("buffer @out[0]: u32\nkernel @main workgroup(64) {\n  %a = global_id.x\n}\n");
        assert!(KernelPlan::of(&module, main).many_workgroups);
        let options = crate::JitOptions::default().for_workgroup([64, 1, 1]);
        let compiled = crate::compile(&module, &options).expect("compiles");
        let entry = compiled.entry_point(main).expect("an entry");
        for raised in [false, true] {
            let cancel = AtomicBool::new(raised);
            let mut contexts = contexts(2);
            for (i, ctx) in contexts.iter_mut().enumerate() {
                ctx.num_workgroups = [3, 2, 3];
                ctx.workgroup_size = [64, 1, 1];
                ctx.first_local = [32 * i as u32, 0, 0];
                ctx.entry_mask = u32::MAX;
                ctx.live_mask = u32::MAX;
                ctx.fuel = u64::MAX;
                ctx.cancel = &cancel;
                ctx.workgroup_id = [2, 0, 1];
            }
            // SAFETY: the kernel touches no memory; the contexts are live.
            let ran = unsafe { entry(contexts.as_mut_ptr(), 2, 5) };
            if raised {
                // The first workgroup runs, then the call stops.
                assert_eq!((ran, contexts[0].workgroup_id), (2, [2, 0, 1]));
            } else {
                // [2, 0, 1], [0, 1, 1], [1, 1, 1], [2, 1, 1], then row and
                // plane wrap: [0, 0, 2].
                assert_eq!((ran, contexts[0].workgroup_id), (10, [0, 0, 2]));
            }
        }
    }

    #[test]
    fn plans_name_the_warp_fields_compiled_code_can_change() {
        let none = plan_of("%a = lane_id\nstore.u32 @out, 0, %a");
        assert_eq!(none.rewrites, WarpRewrites::default());
        let looping = plan_of("loop {\n  break\n}");
        let kill = plan_of("kill");
        let demote = plan_of("demote");
        let w = |live_mask, helper_mask, fuel| WarpRewrites {
            live_mask,
            helper_mask,
            fuel,
        };
        assert_eq!(looping.rewrites, w(true, false, true));
        assert_eq!(kill.rewrites, w(true, false, false));
        assert_eq!(demote.rewrites, w(false, true, false));
        // In a function the kernel calls.
        let (module, main) =
            parsed("buffer @out[0]: u32\nfunc @f() {\n  kill\n}\nkernel @main {\n  call @f()\n}\n");
        assert_eq!(
            KernelPlan::of(&module, main).rewrites,
            w(true, false, false)
        );
    }

    #[test]
    fn kernels_with_barriers_only_in_their_body_run_in_phases() {
        let plan = plan_of("%a = lane_id\nbarrier\n%b = add %a, 1\nbarrier\nstore.u32 @out, 0, %b");
        assert_eq!((plan.phases, plan.needs_coroutines(8)), (3, false));
        // A nested barrier, or a stack too large for the thread: coroutines.
        let nested = plan_of("loop {\n  barrier\n  break\n}");
        assert_eq!((nested.phases, nested.needs_coroutines(8)), (0, true));
        let big = plan_of("private @p[16384]\nstore.u32 @p, 0, 1\nbarrier");
        assert_eq!((big.phases, big.needs_coroutines(8)), (0, true));
    }

    thread_local! {
        /// What the fake kernels below did: (warp, phase, a stack address).
        static TRACE: RefCell<Vec<(u32, u32, usize)>> = const { RefCell::new(Vec::new()) };
        /// The warp that runs out of fuel after its first phase.
        static STARVED: Cell<Option<u32>> = const { Cell::new(None) };
    }

    /// A kernel with two barriers, as compiled code calls them; it runs
    /// one warp, as the scheduler asks of a kernel with barriers.
    unsafe extern "C" fn two_barriers(ctx: *mut WarpContext, count: u64, _workgroups: u64) -> u64 {
        // A panic cannot unwind out of an `extern "C"` function.
        if count != 1 {
            std::process::abort();
        }
        let marker = 0u8;
        let at = std::ptr::addr_of!(marker) as usize;
        // SAFETY: the scheduler passes a live context.
        let warp = unsafe { (*ctx).warp_index };
        for phase in 0..3 {
            TRACE.with(|t| t.borrow_mut().push((warp, phase, at)));
            if phase == 0 && STARVED.get() == Some(warp) {
                // SAFETY: as above.
                unsafe { (*ctx).out_of_fuel = 1 };
                return 1;
            }
            if phase < 2 {
                // SAFETY: as above.
                unsafe { warpjit_barrier(ctx) };
            }
        }
        1
    }

    fn contexts(warps: u32) -> Vec<WarpContext> {
        (0..warps)
            .map(|index| WarpContext {
                warp_index: index,
                ..blank_context()
            })
            .collect()
    }

    type Trace = Vec<(u32, u32, usize)>;

    fn run(crew: &mut WarpCrew, warps: u32) -> (Result<(), Stop>, Trace) {
        let plan = KernelPlan {
            uses_barrier: true,
            stack_bytes: 256 << 10,
            phases: 0,
            phase_bytes: 0,
            rewrites: WarpRewrites::default(),
            many_workgroups: false,
        };
        let cancel = AtomicBool::new(false);
        let mut first = None;
        TRACE.with(|t| t.borrow_mut().clear());
        let mut contexts = contexts(warps);
        // SAFETY: the fake kernel only touches its own context.
        let outcome = unsafe { crew.run(two_barriers, &plan, &mut contexts, &cancel, &mut first) };
        (outcome, TRACE.with(|t| t.take()))
    }

    /// The interpreter's schedule: each phase of every warp, warps in order.
    fn in_order(warps: u32) -> Vec<(u32, u32)> {
        (0..3)
            .flat_map(|p| (0..warps).map(move |w| (w, p)))
            .collect()
    }

    fn order(trace: &[(u32, u32, usize)]) -> Vec<(u32, u32)> {
        trace.iter().map(|&(w, p, _)| (w, p)).collect()
    }

    #[test]
    fn coroutines_are_kept_across_workgroups_of_any_size() {
        let mut crew = WarpCrew::default();
        let (outcome, first) = run(&mut crew, 3);
        assert_eq!(outcome, Ok(()));
        assert_eq!(order(&first), in_order(3));
        for warps in [5, 1, 2, 5] {
            let (outcome, trace) = run(&mut crew, warps);
            assert_eq!(outcome, Ok(()));
            assert_eq!(order(&trace), in_order(warps));
            // The same coroutine, on the same stack, runs warp 0 each time.
            assert_eq!(trace[0].2, first[0].2);
        }
        assert_eq!(crew.warps.len(), 5);
        assert!(crew.warps.iter().flatten().all(|co| !co.done()));
    }

    #[test]
    fn warps_abandoned_at_a_barrier_are_reset_and_their_coroutines_reused() {
        let mut crew = WarpCrew::default();
        STARVED.set(Some(1));
        let (outcome, trace) = run(&mut crew, 3);
        STARVED.set(None);
        assert_eq!(outcome, Err(Stop::OutOfFuel { warp: 1 }));
        // Warp 0 waits at the first barrier; warp 2 never starts.
        assert_eq!(order(&trace), vec![(0, 0), (1, 0)]);
        let (outcome, again) = run(&mut crew, 3);
        assert_eq!(outcome, Ok(()));
        assert_eq!(order(&again), in_order(3));
        assert_eq!(
            again[0].2, trace[0].2,
            "warp 0's coroutine was made anew on its stack"
        );
    }

    #[test]
    fn a_larger_stack_replaces_the_coroutines() {
        let mut crew = WarpCrew::default();
        crew.ensure(2, 256 << 10).expect("stacks map");
        crew.ensure(3, 2 << 20).expect("stacks map");
        assert_eq!(crew.warps.len(), 3);
        assert_eq!(crew.stack_bytes, 2 << 20);
        crew.ensure(1, 256 << 10).expect("smaller stacks are there");
        assert_eq!(crew.stack_bytes, 2 << 20);
    }
}
