//! The calling convention between compiled kernels and the code that runs them.
//!
//! Each kernel becomes one `extern "C" fn(*mut WarpContext, u64) -> u64`
//! ([`KernelFn`]) that runs warps to completion, one context each.
//! Everything a warp reads from its surroundings and everything it reports
//! back is in [`WarpContext`]; the compiled code reads and writes its
//! fields at the byte offsets below, so the layout is `#[repr(C)]` and
//! must not change without the lowering.
//!
//! Masks are `u32` bit sets, bit `l` for lane `l`.

use std::ffi::c_void;
use std::mem::offset_of;
use std::sync::atomic::AtomicBool;

/// One memory the warp can address: `len` bytes at `ptr`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct MemSpan {
    pub ptr: *mut u8,
    pub len: u64,
}

/// Kinds of out-of-bounds access, as stored in [`WarpContext::first_fault_kind`].
pub const FAULT_NONE: u32 = 0;
pub const FAULT_LOAD: u32 = 1;
pub const FAULT_STORE: u32 = 2;
pub const FAULT_ATOMIC: u32 = 3;

/// Memory spaces, as stored in [`WarpContext::first_fault_space`].
pub const SPACE_BUFFER: u32 = 0;
pub const SPACE_SHARED: u32 = 1;
pub const SPACE_PRIVATE: u32 = 2;

/// What one warp of a compiled kernel sees.
#[repr(C)]
#[derive(Debug)]
pub struct WarpContext {
    /// Module parameters as zero-extended bit patterns, in declaration order.
    pub params: *const u64,
    /// The module's buffers, by index.
    pub buffers: *const MemSpan,
    /// The workgroup's shared memories, by index.
    pub shared: *const MemSpan,
    pub workgroup_id: [u32; 3],
    pub num_workgroups: [u32; 3],
    pub workgroup_size: [u32; 3],
    /// Index of this warp in its workgroup (`local_index / 32`).
    pub warp_index: u32,
    /// `local_id` of the warp's lane 0 (x, y, z), so compiled code needs
    /// no division to find its lanes' ids.
    pub first_local: [u32; 3],
    /// `warp_id`: the warp's slot on its SM.
    pub warp_slot: u32,
    pub sm_id: u32,
    pub sm_count: u32,
    pub warps_per_sm: u32,
    /// Lanes that exist (a partial last warp has fewer than 32).
    pub entry_mask: u32,
    /// Lanes not killed; `kill` clears bits.
    pub live_mask: u32,
    /// Helper lanes; `demote` sets bits.
    pub helper_mask: u32,
    /// Out-of-bounds accesses counted by kind.
    pub load_faults: u64,
    pub store_faults: u64,
    pub atomic_faults: u64,
    /// The first out-of-bounds access: `FAULT_*` kind (`FAULT_NONE`: none yet),
    /// its lane, memory space and index, and the address before rounding.
    pub first_fault_kind: u32,
    pub first_fault_lane: u32,
    pub first_fault_space: u32,
    pub first_fault_index: u32,
    pub first_fault_address: u64,
    /// For private arrays: the index of the function that owns the array.
    pub first_fault_function: u32,
    /// Loop iterations the warp may still start (`u64::MAX`: no limit).
    /// When it runs out, the warp's lanes are all cleared from the live mask
    /// (so every loop exits and nothing more is written) and `out_of_fuel`
    /// is set.
    pub fuel: u64,
    pub out_of_fuel: u32,
    /// Raised by another thread to stop the launch (the runtime's
    /// `CancelToken`); read wherever fuel is spent and treated like running
    /// out of it, except that `out_of_fuel` stays 0. Never null: a launch
    /// that cannot be cancelled points it at a flag that stays false.
    pub cancel: *const AtomicBool,
    /// What `barrier` calls to suspend the warp until the barrier opens (set
    /// by the warp scheduler; see `sched.rs`). Compiled code only passes the
    /// context on to [`BARRIER_SYMBOL`].
    pub scheduler: *const c_void,
    /// Where this SM thread collects posted atomic updates
    /// (`lower/posted.rs`): one [`PostedUpdate`] per buffer binding, or null
    /// when every update goes straight to memory.
    pub posted: *mut PostedUpdate,
    /// For a kernel split into phases at its barriers (`lower/phases.rs`):
    /// the phase to run, and this warp's phase state. Every context of one
    /// call of an entry has the same phase: an entry running several warps
    /// reads the first's.
    pub phase: u32,
    pub phase_state: *mut u8,
}

/// Posted atomic updates of one buffer not yet applied: the op's
/// combination of them, `value` (zero-extended to 64 bits), for the element
/// at `target` (null: none); and for a small buffer, `copy`: this SM's
/// private copy of it, which takes the updates of lanes on several
/// addresses (`posted_copy.rs`; null: none).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct PostedUpdate {
    pub target: *mut u8,
    pub value: u64,
    pub copy: *mut u8,
}

impl PostedUpdate {
    pub const NONE: PostedUpdate = PostedUpdate {
        target: std::ptr::null_mut(),
        value: 0,
        copy: std::ptr::null_mut(),
    };
}

/// Byte offsets of the fields the compiled code touches.
pub mod offsets {
    use super::*;
    pub const PARAMS: u64 = offset_of!(WarpContext, params) as u64;
    pub const BUFFERS: u64 = offset_of!(WarpContext, buffers) as u64;
    pub const SHARED: u64 = offset_of!(WarpContext, shared) as u64;
    pub const WORKGROUP_ID: u64 = offset_of!(WarpContext, workgroup_id) as u64;
    pub const NUM_WORKGROUPS: u64 = offset_of!(WarpContext, num_workgroups) as u64;
    pub const WORKGROUP_SIZE: u64 = offset_of!(WarpContext, workgroup_size) as u64;
    pub const WARP_INDEX: u64 = offset_of!(WarpContext, warp_index) as u64;
    pub const FIRST_LOCAL: u64 = offset_of!(WarpContext, first_local) as u64;
    pub const WARP_SLOT: u64 = offset_of!(WarpContext, warp_slot) as u64;
    pub const SM_ID: u64 = offset_of!(WarpContext, sm_id) as u64;
    pub const SM_COUNT: u64 = offset_of!(WarpContext, sm_count) as u64;
    pub const WARPS_PER_SM: u64 = offset_of!(WarpContext, warps_per_sm) as u64;
    pub const ENTRY_MASK: u64 = offset_of!(WarpContext, entry_mask) as u64;
    pub const LIVE_MASK: u64 = offset_of!(WarpContext, live_mask) as u64;
    pub const HELPER_MASK: u64 = offset_of!(WarpContext, helper_mask) as u64;
    pub const LOAD_FAULTS: u64 = offset_of!(WarpContext, load_faults) as u64;
    pub const STORE_FAULTS: u64 = offset_of!(WarpContext, store_faults) as u64;
    pub const ATOMIC_FAULTS: u64 = offset_of!(WarpContext, atomic_faults) as u64;
    pub const FIRST_FAULT_KIND: u64 = offset_of!(WarpContext, first_fault_kind) as u64;
    pub const FIRST_FAULT_LANE: u64 = offset_of!(WarpContext, first_fault_lane) as u64;
    pub const FIRST_FAULT_SPACE: u64 = offset_of!(WarpContext, first_fault_space) as u64;
    pub const FIRST_FAULT_INDEX: u64 = offset_of!(WarpContext, first_fault_index) as u64;
    pub const FIRST_FAULT_ADDRESS: u64 = offset_of!(WarpContext, first_fault_address) as u64;
    pub const FIRST_FAULT_FUNCTION: u64 = offset_of!(WarpContext, first_fault_function) as u64;
    pub const FUEL: u64 = offset_of!(WarpContext, fuel) as u64;
    pub const OUT_OF_FUEL: u64 = offset_of!(WarpContext, out_of_fuel) as u64;
    pub const CANCEL: u64 = offset_of!(WarpContext, cancel) as u64;
    pub const POSTED: u64 = offset_of!(WarpContext, posted) as u64;
    pub const PHASE: u64 = offset_of!(WarpContext, phase) as u64;
    pub const PHASE_STATE: u64 = offset_of!(WarpContext, phase_state) as u64;
    /// Size of a [`PostedUpdate`] and the offsets of its value and copy.
    pub const POSTED_SIZE: u64 = std::mem::size_of::<PostedUpdate>() as u64;
    pub const POSTED_VALUE: u64 = offset_of!(PostedUpdate, value) as u64;
    pub const POSTED_COPY: u64 = offset_of!(PostedUpdate, copy) as u64;
    /// Size of a [`MemSpan`] and the offset of its length.
    pub const SPAN_SIZE: u64 = std::mem::size_of::<MemSpan>() as u64;
    pub const SPAN_LEN: u64 = offset_of!(MemSpan, len) as u64;
}

/// The compiled entry point of a kernel: runs the warps of `count`
/// consecutive contexts in order and returns how many it ran. It returns
/// early, after the warp, when a warp faulted (`first_fault_kind` set) or
/// ran out of fuel, so the caller sees each such warp before the next runs.
/// The contexts of one call are warps of one workgroup: the compiled code
/// reads what they share (params, buffers, shared memories, workgroup id,
/// size and count, SM fields) from the first.
///
/// The entry of a kernel whose plan has `many_workgroups` runs up to
/// `workgroups` consecutive workgroups on the same contexts (x fastest, as
/// the runtime counts them), every phase of each, the first with the id
/// the first context holds. It returns the number of warps it ran in all
/// (for the last workgroup, those of the phase it ended in), stops early as
/// above and also between two workgroups when the launch is cancelled, and
/// leaves the id of the workgroup and the phase it ended in in the first
/// context. With `workgroups` 0 it runs the phase of the first context
/// only, as every other entry does whatever `workgroups` says.
pub type KernelFn =
    unsafe extern "C" fn(contexts: *mut WarpContext, count: u64, workgroups: u64) -> u64;

/// The runtime function a `barrier` with active lanes calls:
/// `void warpjit_barrier(ptr ctx)`. It returns once the barrier has opened;
/// a warp whose launch stops while it waits is abandoned there (its stack
/// is reset without unwinding), so it never continues.
pub const BARRIER_SYMBOL: &str = "warpjit_barrier";

/// The runtime function compiled code calls when an access has
/// out-of-bounds lanes: `void warpjit_fault(ptr ctx, i32 lanes, i64
/// address, i32 site, i32 index, i32 function)`. `lanes` is the bit set of
/// the faulting lanes, `address` the lowest one's address before rounding,
/// `site` the kind (`FAULT_*`, bits 0-7) and memory space (`SPACE_*`, bits
/// 8-15), `index` the memory's index in its space and `function` the IR
/// function's. It adds the lanes to the kind's count and, when the warp has
/// no fault yet, records this one as its first. One routine for every
/// access keeps the rare fault path out of the compiled code.
pub const FAULT_SYMBOL: &str = "warpjit_fault";

/// What [`FAULT_SYMBOL`] does.
///
/// # Safety
/// `ctx` points to a live [`WarpContext`] no one else touches meanwhile.
pub(crate) unsafe extern "C" fn warpjit_fault(
    ctx: *mut WarpContext,
    lanes: u32,
    address: u64,
    site: u32,
    index: u32,
    function: u32,
) {
    // SAFETY: the caller passes its own warp's context.
    let ctx = unsafe { &mut *ctx };
    let kind = site & 0xff;
    let count = u64::from(lanes.count_ones());
    match kind {
        FAULT_LOAD => ctx.load_faults = ctx.load_faults.wrapping_add(count),
        FAULT_STORE => ctx.store_faults = ctx.store_faults.wrapping_add(count),
        _ => ctx.atomic_faults = ctx.atomic_faults.wrapping_add(count),
    }
    if lanes != 0 && ctx.first_fault_kind == FAULT_NONE {
        ctx.first_fault_function = function;
        ctx.first_fault_kind = kind;
        ctx.first_fault_lane = lanes.trailing_zeros();
        ctx.first_fault_space = (site >> 8) & 0xff;
        ctx.first_fault_index = index;
        ctx.first_fault_address = address;
    }
}
