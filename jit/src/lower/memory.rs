//! Loads and stores. Every access goes through [`Access`], which rounds the
//! address down to the access size, folds the bounds check (and, for
//! stores, helper-lane suppression) into the mask, counts faults, and gives
//! masked-off lanes offset 0 so no inactive or out-of-bounds lane touches
//! memory. Lanes move through masked gathers and scatters; a scatter stores
//! in ascending lane order, so the highest lane wins on equal addresses.
//! Loads and stores whose address shape the lane-shape analysis knows (one
//! address, consecutive accesses) take the paths of [`known`] first; the
//! others test the shape at run time: in the module's routine for the
//! access kind ([`lanes`]) for `i32` addresses into buffers and shared
//! memory, inline ([`address_shape`]) for the rest.
//!
//! What a load leaves in its inactive lanes is never read: a value is used
//! only inside the construct that defines it, where no lane inactive at the
//! load is active again, and the warp operations take what an inactive
//! lane gives from the mask. So a load that reads its element(s) without a
//! mask (one address, a tile) fills every lane rather than zeroing the
//! inactive ones, a masked move per half (8 of the 45 vector instructions
//! of W7's inner loop).

use super::convert::{f16_to_f32, to_f16};
use super::ops::{canonical_nan, to_bits};
use super::FnLowering;
use crate::abi::{self, offsets};
use crate::emit::{Emit, LANES};
use crate::JitError;
use inkwell::basic_block::BasicBlock;
use inkwell::types::VectorType;
use inkwell::values::{FunctionValue, IntValue, PointerValue, VectorValue};
use inkwell::IntPredicate;
use warpjit_ir::{MemFormat, MemRef, NumFormat, Round, Type};

mod known;
mod lane_loop;
mod lanes;
pub(crate) use known::memory_name;
pub use known::{buffer_uses, fence_streams, AddressFacts, KnownAddress};
pub(super) use lanes::{define_lanes_routine, reads_rows};

type V<'ctx> = VectorValue<'ctx>;

/// One access of `format.bytes()` bytes per lane, checked.
pub(super) struct Access<'ctx> {
    pub base: inkwell::values::PointerValue<'ctx>,
    /// Byte offsets, 0 in lanes that must not touch memory.
    pub offsets: V<'ctx>,
    /// Lanes that access memory.
    pub mask: V<'ctx>,
    /// Private arrays: lane `l`'s array starts `l * lane_stride` bytes in.
    lane_stride: u64,
}

/// Where a memory is and how faults in it are reported.
pub(super) struct Span<'ctx> {
    pub base: PointerValue<'ctx>,
    /// Byte length (per lane for private arrays).
    pub len: IntValue<'ctx>,
    /// Fault space (`abi::SPACE_*`) and the memory's index in it.
    space: u32,
    index: u32,
    /// Private arrays: lane `l`'s array starts `l * lane_stride` bytes in.
    lane_stride: u64,
}

/// The base and byte length of memory `index` in the span table at offset
/// `table` (`offsets::BUFFERS` or `offsets::SHARED`) of the context at
/// `group`.
pub(super) fn span_fields<'ctx>(
    e: &Emit<'ctx, '_>,
    group: PointerValue<'ctx>,
    table: u64,
    index: u32,
) -> Result<(PointerValue<'ctx>, IntValue<'ctx>), JitError> {
    let ptr_t = e.cx.ptr_type(Default::default());
    let at = u64::from(index) * offsets::SPAN_SIZE;
    let spans = e
        .load_invariant(group, table, ptr_t.into(), 8)?
        .into_pointer_value();
    let base = e
        .load_invariant(spans, at, ptr_t.into(), 8)?
        .into_pointer_value();
    let len = e
        .load_invariant(spans, at + offsets::SPAN_LEN, e.i64().into(), 8)?
        .into_int_value();
    Ok((base, len))
}

pub(super) fn span<'ctx>(fl: &FnLowering<'ctx, '_>, mem: MemRef) -> Result<Span<'ctx>, JitError> {
    let e = fl.e;
    let (table, index, space) = match mem {
        MemRef::Buffer(b) => (offsets::BUFFERS, b, abi::SPACE_BUFFER),
        MemRef::Shared(s) => (offsets::SHARED, s, abi::SPACE_SHARED),
        MemRef::Private(p) => {
            let (base, size, stride) = *fl
                .privates
                .get(p as usize)
                .ok_or_else(|| JitError::Internal(format!("no private array {p}")))?;
            return Ok(Span {
                base,
                len: e.i64().const_int(size, false),
                space: abi::SPACE_PRIVATE,
                index: p,
                lane_stride: stride,
            });
        }
    };
    // Loaded where the function starts, so they run unconditionally and
    // LLVM can hoist them out of a loop over a workgroup's warps.
    let (base, len) = e.at_entry(|| span_fields(e, fl.group, table, index))?;
    let len = match mem {
        // Every workgroup's shared array has its declared size: as a
        // constant, it lets LLVM drop bounds tests that the address's range
        // already passes (a byte times 4 into 256 counters).
        MemRef::Shared(s) => {
            let decl = fl
                .module
                .shared
                .get(s as usize)
                .ok_or_else(|| JitError::Internal(format!("no shared array {s}")))?;
            e.i64().const_int(u64::from(decl.size), false)
        }
        _ => len,
    };
    Ok(Span {
        base,
        len,
        space,
        index,
        lane_stride: 0,
    })
}

/// Builds the checked access and records out-of-bounds lanes of `mask`.
pub(super) fn access<'ctx>(
    fl: &FnLowering<'ctx, '_>,
    mem: MemRef,
    size: u32,
    addr: V<'ctx>,
    addr_ty: Type,
    mask: V<'ctx>,
    kind: u32,
) -> Result<Access<'ctx>, JitError> {
    let e = fl.e;
    let span = span(fl, mem)?;
    let len = span.len;
    let addr64 = if addr_ty == Type::I64 {
        addr
    } else {
        e.b.build_int_z_extend(addr, e.int_vec(64), "")?
    };
    let aligned =
        e.b.build_and(addr64, e.splat_int(64, !(u64::from(size) - 1)), "")?;
    // In bounds: size <= len and aligned <= len - size.
    let size64 = e.i64().const_int(u64::from(size), false);
    let fits = e.b.build_int_compare(IntPredicate::UGE, len, size64, "")?;
    let last = e.b.build_int_sub(len, size64, "")?;
    let last = e.splat(last.into())?;
    let below =
        e.b.build_int_compare(IntPredicate::ULE, aligned, last, "")?;
    let fits = e.splat(fits.into())?;
    let inside = e.b.build_and(below, fits, "")?;
    let ok = e.b.build_and(mask, inside, "")?;
    let outside = e.b.build_and(mask, e.b.build_not(inside, "")?, "")?;
    count_faults(fl, outside, addr64, kind, &span)?;
    let offsets =
        e.b.build_select(ok, aligned, e.int_vec(64).const_zero(), "")?
            .into_vector_value();
    Ok(Access {
        base: span.base,
        offsets,
        mask: ok,
        lane_stride: span.lane_stride,
    })
}

/// Records the lanes of `outside` as faults (`addrs`: their addresses,
/// `i32` or `i64`) in a block entered only when there are some.
pub(super) fn count_faults<'ctx>(
    fl: &FnLowering<'ctx, '_>,
    outside: V<'ctx>,
    addrs: V<'ctx>,
    kind: u32,
    span: &Span<'ctx>,
) -> Result<(), JitError> {
    let e = fl.e;
    let bits = e.mask_to_bits(outside)?;
    // Faults are rare: record them off the straight path, so an access in
    // bounds costs one test of the bit set.
    let any = any_lane(fl, bits)?;
    let record_bb = e.cx.append_basic_block(fl.func, "fault.record");
    let done_bb = e.cx.append_basic_block(fl.func, "fault.done");
    e.b.build_conditional_branch(any, record_bb, done_bb)?;
    e.b.position_at_end(record_bb);
    record_faults(fl, bits, addrs, kind, span)?;
    e.b.build_unconditional_branch(done_bb)?;
    e.b.position_at_end(done_bb);
    Ok(())
}

/// Adds the lanes of `bits` to the fault count and records the first fault
/// of the warp if none is recorded yet: a call of [`abi::FAULT_SYMBOL`],
/// one routine for all accesses, so each access's rare path is a call.
/// `addrs` are the lanes' addresses before rounding, `i32` or `i64`.
fn record_faults<'ctx>(
    fl: &FnLowering<'ctx, '_>,
    bits: IntValue<'ctx>,
    addrs: V<'ctx>,
    kind: u32,
    span: &Span<'ctx>,
) -> Result<(), JitError> {
    let e = fl.e;
    let lane = fl.e.lowest_lane(bits)?;
    let address = e.b.build_extract_element(addrs, lane, "")?.into_int_value();
    let address = e.b.build_int_z_extend_or_bit_cast(address, e.i64(), "")?;
    let i32c = |v: u32| e.i32().const_int(u64::from(v), false);
    let site = i32c(kind | span.space << 8);
    let args = [
        fl.ctxp.into(),
        bits.into(),
        address.into(),
        site.into(),
        i32c(span.index).into(),
        i32c(fl.func_index).into(),
    ];
    e.b.build_call(fault_routine(e), &args, "")?;
    Ok(())
}

/// The declaration of [`abi::FAULT_SYMBOL`]: cold, and touching nothing but
/// the context, so LLVM keeps memory values across the call.
fn fault_routine<'ctx>(e: &Emit<'ctx, '_>) -> inkwell::values::FunctionValue<'ctx> {
    use inkwell::attributes::{Attribute, AttributeLoc};
    if let Some(f) = e.module.get_function(abi::FAULT_SYMBOL) {
        return f;
    }
    let ptr = e.cx.ptr_type(Default::default());
    let i32t = e.i32();
    let fty = e.cx.void_type().fn_type(
        &[
            ptr.into(),
            i32t.into(),
            e.i64().into(),
            i32t.into(),
            i32t.into(),
            i32t.into(),
        ],
        false,
    );
    let f = e.module.add_function(
        abi::FAULT_SYMBOL,
        fty,
        Some(inkwell::module::Linkage::External),
    );
    for name in ["cold", "nounwind", "willreturn", "nofree", "nosync"] {
        let id = Attribute::get_named_enum_kind_id(name);
        f.add_attribute(AttributeLoc::Function, e.cx.create_enum_attribute(id, 0));
    }
    // memory(argmem: readwrite): the context is its only memory.
    let memory = Attribute::get_named_enum_kind_id("memory");
    f.add_attribute(
        AttributeLoc::Function,
        e.cx.create_enum_attribute(memory, 3),
    );
    f
}

/// Each lane's byte offset from `a.base` (a private array's lane-major
/// copies included).
fn lane_offsets<'ctx>(fl: &FnLowering<'ctx, '_>, a: &Access<'ctx>) -> Result<V<'ctx>, JitError> {
    if a.lane_stride == 0 {
        return Ok(a.offsets);
    }
    let e = fl.e;
    let lane_base = e.lanes_const(64, |l| u64::from(l) * a.lane_stride);
    Ok(e.b.build_int_add(a.offsets, lane_base, "")?)
}

/// Pointers to each lane's element `byte_offset` bytes into its access.
fn pointers<'ctx>(
    fl: &FnLowering<'ctx, '_>,
    a: &Access<'ctx>,
    byte_offset: u64,
) -> Result<V<'ctx>, JitError> {
    let e = fl.e;
    let base = e.b.build_ptr_to_int(a.base, e.i64(), "")?;
    let base = e.splat(base.into())?;
    let at = e.b.build_int_add(base, lane_offsets(fl, a)?, "")?;
    let at = e.b.build_int_add(at, e.splat_int(64, byte_offset), "")?;
    let ptrs = e.cx.ptr_type(Default::default()).vec_type(LANES);
    Ok(e.b
        .build_cast(inkwell::values::InstructionOpcode::IntToPtr, at, ptrs, "")?
        .into_vector_value())
}

fn elem_vec<'ctx>(fl: &FnLowering<'ctx, '_>, elem: NumFormat) -> inkwell::types::VectorType<'ctx> {
    fl.e.int_vec(elem.bits())
}

/// The alignment operand of the masked intrinsics for elements of `elem`.
fn elem_align<'ctx>(fl: &FnLowering<'ctx, '_>, elem: NumFormat) -> IntValue<'ctx> {
    fl.e.i32().const_int(u64::from(elem.bytes()), false)
}

/// Whether the lane bit set `bits` has a lane in it.
pub(super) fn any_lane<'ctx>(
    fl: &FnLowering<'ctx, '_>,
    bits: IntValue<'ctx>,
) -> Result<IntValue<'ctx>, JitError> {
    let e = fl.e;
    Ok(e.b.build_int_compare(IntPredicate::NE, bits, e.i32().const_zero(), "")?)
}

/// Whether every active lane of `m` has `actual` equal to `expected`.
pub(super) fn active_lanes_equal<'ctx>(
    e: &Emit<'ctx, '_>,
    m: V<'ctx>,
    expected: V<'ctx>,
    actual: V<'ctx>,
) -> Result<IntValue<'ctx>, JitError> {
    let b = &e.b;
    let same = b.build_int_compare(IntPredicate::EQ, expected, actual, "")?;
    let differ = b.build_and(m, b.build_not(same, "")?, "")?;
    Ok(b.build_int_compare(
        IntPredicate::EQ,
        e.mask_to_bits(differ)?,
        e.i32().const_zero(),
        "",
    )?)
}

/// Where lane 0's element of a run of `size`-byte elements is when lane
/// `first`'s is `at` bytes into the memory at `base`: that offset (it may
/// wrap below the memory) and the pointer.
fn run_start<'ctx>(
    fl: &FnLowering<'ctx, '_>,
    base: PointerValue<'ctx>,
    first: IntValue<'ctx>,
    at: IntValue<'ctx>,
    size: u32,
) -> Result<(IntValue<'ctx>, PointerValue<'ctx>), JitError> {
    let e = fl.e;
    let b = &e.b;
    let first64 = b.build_int_z_extend(first, e.i64(), "")?;
    let size64 = e.i64().const_int(u64::from(size), false);
    let lane0 = b.build_int_sub(at, b.build_int_mul(first64, size64, "")?, "")?;
    let base_int = b.build_ptr_to_int(base, e.i64(), "")?;
    let start = b.build_int_add(base_int, lane0, "")?;
    let ptr = b.build_int_to_ptr(start, e.cx.ptr_type(Default::default()), "")?;
    Ok((lane0, ptr))
}

/// Whether `size` bytes at offset `at` lie inside a memory of `len` bytes:
/// `size <= len` and `at <= len - size`, so nothing can overflow.
pub(super) fn inside_memory<'ctx>(
    e: &Emit<'ctx, '_>,
    len: IntValue<'ctx>,
    size: u64,
    at: IntValue<'ctx>,
) -> Result<IntValue<'ctx>, JitError> {
    let b = &e.b;
    let size64 = e.i64().const_int(size, false);
    let fits = b.build_int_compare(IntPredicate::UGE, len, size64, "")?;
    let last = b.build_int_sub(len, size64, "")?;
    let below = b.build_int_compare(IntPredicate::ULE, at, last, "")?;
    Ok(b.build_and(fits, below, "")?)
}

/// Each lane's `i32` address rounded down to `size` bytes, and whether
/// that element lies inside memory of `len` bytes: the per-lane bounds
/// test on 32-bit lanes. The offsets are below 2^32, so the last start is
/// compared clamped to 2^32 - 1 (the memory may be larger); with
/// `len < size` the subtraction wraps and no lane is inside.
pub(super) fn narrow_inside<'ctx>(
    e: &Emit<'ctx, '_>,
    len: IntValue<'ctx>,
    size: u32,
    addr: V<'ctx>,
) -> Result<(V<'ctx>, V<'ctx>), JitError> {
    let b = &e.b;
    let aligned = b.build_and(addr, e.splat_int(32, u64::from(!(size - 1))), "")?;
    let size64 = e.i64().const_int(u64::from(size), false);
    let fits = b.build_int_compare(IntPredicate::UGE, len, size64, "")?;
    let last = b.build_int_sub(len, size64, "")?;
    let last: IntValue = e
        .call_intrinsic(
            "llvm.umin",
            &[e.i64().into()],
            &[
                last.into(),
                e.i64().const_int(u64::from(u32::MAX), false).into(),
            ],
        )?
        .into_int_value();
    let last = e.splat(b.build_int_truncate(last, e.i32(), "")?.into())?;
    let below = b.build_int_compare(IntPredicate::ULE, aligned, last, "")?;
    let inside = b.build_and(below, e.splat(fits.into())?, "")?;
    Ok((aligned, inside))
}

/// The element holding `at` (rounded down to its `size`-byte alignment)
/// and whether it lies inside memory of `len` bytes: the one bounds test
/// of a single-address access.
pub(super) fn aligned_inside<'ctx>(
    e: &Emit<'ctx, '_>,
    len: IntValue<'ctx>,
    size: u64,
    at: IntValue<'ctx>,
) -> Result<(IntValue<'ctx>, IntValue<'ctx>), JitError> {
    let aligned =
        e.b.build_and(at, e.i64().const_int(!(size - 1), false), "")?;
    let inside = inside_memory(e, len, size, aligned)?;
    Ok((aligned, inside))
}

/// One phi per component at the join block the builder is in: component
/// `c` comes from `values[c]` of each `(values, block)` of `incoming`.
pub(super) fn join_components<'ctx>(
    e: &Emit<'ctx, '_>,
    vt: VectorType<'ctx>,
    count: usize,
    incoming: &[(&[V<'ctx>], BasicBlock<'ctx>)],
) -> Result<Vec<V<'ctx>>, JitError> {
    let mut out = Vec::new();
    for c in 0..count {
        let phi = e.b.build_phi(vt, "")?;
        for (values, from) in incoming {
            phi.add_incoming(&[(&values[c], *from)]);
        }
        out.push(phi.as_basic_value().into_vector_value());
    }
    Ok(out)
}

/// Each component of the element at `base + aligned` (checked to be in
/// bounds) loaded once and broadcast to every lane, the inactive ones
/// included (see the module documentation).
pub(super) fn broadcast_components<'ctx>(
    e: &Emit<'ctx, '_>,
    base: PointerValue<'ctx>,
    aligned: IntValue<'ctx>,
    format: MemFormat,
    vt: VectorType<'ctx>,
) -> Result<Vec<V<'ctx>>, JitError> {
    let b = &e.b;
    let elem_bytes = u64::from(format.elem.bytes());
    let mut components = Vec::new();
    for i in 0..u64::from(format.count) {
        let off = b.build_int_add(aligned, e.i64().const_int(i * elem_bytes, false), "")?;
        // SAFETY (for LLVM): the caller checked the element is in bounds.
        let ptr = unsafe { b.build_gep(e.cx.i8_type(), base, &[off], "")? };
        let x = e.load_aligned(vt.get_element_type(), ptr, format.elem.bytes())?;
        components.push(e.splat(x)?);
    }
    Ok(components)
}

/// Lanes of `mask` load consecutive elements of `vt` from `ptr` on (one
/// or more per lane; `mask` has a bit per element); 0 in the others.
/// Below AVX-512 a whole warp loads the vector plainly: masked loads are
/// slower where the target has them (AVX2, 32 and 64 bits: streaming 64
/// MiB with `vpmaskmovd` took 6.4 ms against 4.5 ms with plain loads on an
/// AVX2 host), and where it has none LLVM expands them into a test and a
/// branch per element. A partial warp takes the masked load, or the lane
/// loop where the target has none (32 elements at a time).
pub(super) fn load_consecutive<'ctx>(
    e: &Emit<'ctx, '_>,
    func: FunctionValue<'ctx>,
    vt: VectorType<'ctx>,
    ptr: PointerValue<'ctx>,
    align: IntValue<'ctx>,
    mask: V<'ctx>,
) -> Result<V<'ctx>, JitError> {
    let masked = || -> Result<V<'ctx>, JitError> {
        Ok(e.call_intrinsic(
            "llvm.masked.load",
            &[vt.into(), ptr.get_type().into()],
            &[
                ptr.into(),
                align.into(),
                mask.into(),
                vt.const_zero().into(),
            ],
        )?
        .into_vector_value())
    };
    if e.avx512 {
        return masked();
    }
    let bytes = lane_loop::element_bytes(vt);
    whole_warp_or_lanes(e, func, mask, |whole| {
        Ok(Some(if whole {
            e.load_aligned(vt.into(), ptr, bytes)?.into_vector_value()
        } else if has_masked_access(e, bytes) {
            masked()?
        } else {
            // Runs of 32 elements (x2 and x4 formats have 2 or 4): a masked
            // load LLVM expands per element needs a stack frame of hundreds
            // of KiB at level 0 (each element's step keeps a copy of the
            // whole vector), more than a warp's stack has.
            let chunk_t = crate::emit::vec_of(vt.get_element_type());
            let offsets = run_offsets(e, bytes);
            let mut chunks = Vec::new();
            for (c, chunk_mask) in run_chunks(e, mask)?.into_iter().enumerate() {
                let at = c as u64 * u64::from(LANES * bytes);
                chunks.push(lane_loop::gather(e, ptr, offsets, at, chunk_mask, chunk_t)?);
            }
            concat_all(e, chunks)?
        }))
    })?
    .ok_or_else(|| JitError::Internal("a load without a value".into()))
}

/// Lanes of `mask` store their elements of `value` consecutively from
/// `ptr` on; as [`load_consecutive`]. Masked stores are slower still than masked
/// loads (`vpmaskmovd` took about 12 ns, against under 3 ns for a plain
/// 32-byte store, on the same host).
pub(super) fn store_consecutive<'ctx>(
    e: &Emit<'ctx, '_>,
    func: FunctionValue<'ctx>,
    value: V<'ctx>,
    ptr: PointerValue<'ctx>,
    align: IntValue<'ctx>,
    mask: V<'ctx>,
) -> Result<(), JitError> {
    let vt = value.get_type();
    let masked = || {
        e.call_void_intrinsic(
            "llvm.masked.store",
            &[vt.into(), ptr.get_type().into()],
            &[value.into(), ptr.into(), align.into(), mask.into()],
        )
    };
    if e.avx512 {
        return masked();
    }
    let bytes = lane_loop::element_bytes(vt);
    whole_warp_or_lanes(e, func, mask, |whole| {
        if whole {
            e.store_aligned(ptr, value.into(), bytes)?;
        } else if has_masked_access(e, bytes) {
            masked()?;
        } else {
            // As in `load_consecutive`: runs of 32 elements.
            let offsets = run_offsets(e, bytes);
            let chunks = run_chunks(e, mask)?.into_iter().zip(run_chunks(e, value)?);
            for (c, (chunk_mask, chunk)) in chunks.enumerate() {
                let at = c as u64 * u64::from(LANES * bytes);
                lane_loop::scatter(e, ptr, offsets, at, chunk_mask, chunk)?;
            }
        }
        Ok(None)
    })?;
    Ok(())
}

/// Whether the target loads and stores elements of `bytes` under a mask.
fn has_masked_access(e: &Emit<'_, '_>, bytes: u32) -> bool {
    e.avx512 || (e.avx2 && bytes >= 4)
}

/// `v` (an element of a run per lane: its mask or its values) in runs of
/// 32 elements; a single run as it is.
fn run_chunks<'ctx>(e: &Emit<'ctx, '_>, v: V<'ctx>) -> Result<Vec<V<'ctx>>, JitError> {
    let runs = v.get_type().get_size() / LANES;
    if runs == 1 {
        return Ok(vec![v]);
    }
    (0..runs).map(|c| e.lane_run(v, c * LANES, LANES)).collect()
}

/// The vectors of `parts` (of the same type, a power of two of them) one
/// after another.
fn concat_all<'ctx>(e: &Emit<'ctx, '_>, mut parts: Vec<V<'ctx>>) -> Result<V<'ctx>, JitError> {
    while parts.len() > 1 {
        parts = parts
            .chunks(2)
            .map(|pair| e.concat(pair[0], pair[1]))
            .collect::<Result<_, _>>()?;
    }
    parts
        .pop()
        .ok_or_else(|| JitError::Internal("a run without elements".into()))
}

/// Lane `l`'s byte offset in a run of `bytes`-byte elements.
fn run_offsets<'ctx>(e: &Emit<'ctx, '_>, bytes: u32) -> V<'ctx> {
    e.lanes_const(32, |l| u64::from(l * bytes))
}

/// `path(true)` when every lane of `mask` is set, else `path(false)`; the
/// two results (if any) joined.
fn whole_warp_or_lanes<'ctx>(
    e: &Emit<'ctx, '_>,
    func: FunctionValue<'ctx>,
    mask: V<'ctx>,
    path: impl Fn(bool) -> Result<Option<V<'ctx>>, JitError>,
) -> Result<Option<V<'ctx>>, JitError> {
    let b = &e.b;
    let width = std::num::NonZero::new(mask.get_type().get_size())
        .and_then(|n| e.cx.custom_width_int_type(n).ok())
        .ok_or_else(|| JitError::Internal("a run's mask without lanes".into()))?;
    let bits = b.build_bit_cast(mask, width, "")?.into_int_value();
    let whole = b.build_int_compare(IntPredicate::EQ, bits, width.const_all_ones(), "")?;
    either(e, func, whole, path)
}

/// `path(true)` where `cond` holds, else `path(false)`, each in a block of
/// its own; the two results (if any) joined where the paths meet.
pub(super) fn either<'ctx>(
    e: &Emit<'ctx, '_>,
    func: FunctionValue<'ctx>,
    cond: IntValue<'ctx>,
    path: impl Fn(bool) -> Result<Option<V<'ctx>>, JitError>,
) -> Result<Option<V<'ctx>>, JitError> {
    let b = &e.b;
    let then_bb = e.cx.append_basic_block(func, "either.then");
    let else_bb = e.cx.append_basic_block(func, "either.else");
    let join = e.cx.append_basic_block(func, "either.joined");
    b.build_conditional_branch(cond, then_bb, else_bb)?;
    let mut arms = Vec::new();
    for (bb, taken) in [(then_bb, true), (else_bb, false)] {
        b.position_at_end(bb);
        let v = path(taken)?;
        arms.push((v, e.current_block()?));
        b.build_unconditional_branch(join)?;
    }
    b.position_at_end(join);
    let (Some(a), Some(c)) = (arms[0].0, arms[1].0) else {
        return Ok(None);
    };
    let phi = b.build_phi(a.get_type(), "")?;
    phi.add_incoming(&[(&a, arms[0].1), (&c, arms[1].1)]);
    Ok(Some(phi.as_basic_value().into_vector_value()))
}

/// The current mask without the helper lanes, which neither store nor
/// update atomically (nor fault doing so).
pub(super) fn mask_without_helpers<'ctx>(fl: &FnLowering<'ctx, '_>) -> Result<V<'ctx>, JitError> {
    let e = fl.e;
    let m = fl.mask.current(e)?;
    let helpers = e.bits_to_mask(fl.helper_bits()?)?;
    Ok(e.b.build_and(m, e.b.build_not(helpers, "")?, "")?)
}

fn gather<'ctx>(
    fl: &FnLowering<'ctx, '_>,
    a: &Access<'ctx>,
    byte_offset: u64,
    vt: VectorType<'ctx>,
    align: IntValue<'ctx>,
) -> Result<V<'ctx>, JitError> {
    let e = fl.e;
    if !lane_loop::native_for(e, vt) {
        return lane_loop::gather(e, a.base, lane_offsets(fl, a)?, byte_offset, a.mask, vt);
    }
    let ptrs = pointers(fl, a, byte_offset)?;
    Ok(e.call_intrinsic(
        "llvm.masked.gather",
        &[vt.into(), ptrs.get_type().into()],
        &[
            ptrs.into(),
            align.into(),
            a.mask.into(),
            vt.const_zero().into(),
        ],
    )?
    .into_vector_value())
}

fn scatter<'ctx>(
    fl: &FnLowering<'ctx, '_>,
    a: &Access<'ctx>,
    byte_offset: u64,
    value: V<'ctx>,
    align: IntValue<'ctx>,
) -> Result<(), JitError> {
    let e = fl.e;
    if !lane_loop::native_for(e, value.get_type()) {
        return lane_loop::scatter(e, a.base, lane_offsets(fl, a)?, byte_offset, a.mask, value);
    }
    let ptrs = pointers(fl, a, byte_offset)?;
    e.call_void_intrinsic(
        "llvm.masked.scatter",
        &[value.get_type().into(), ptrs.get_type().into()],
        &[value.into(), ptrs.into(), align.into(), a.mask.into()],
    )
}

/// Every component of the access for each lane, through gathers.
fn vector_load<'ctx>(
    fl: &FnLowering<'ctx, '_>,
    a: &Access<'ctx>,
    format: MemFormat,
    vt: VectorType<'ctx>,
    align: IntValue<'ctx>,
) -> Result<Vec<V<'ctx>>, JitError> {
    let elem = u64::from(format.elem.bytes());
    (0..u64::from(format.count))
        .map(|i| gather(fl, a, i * elem, vt, align))
        .collect()
}

/// The raw components of a load, lane by lane: masked gathers. Callers
/// take runs of consecutive elements inside the memory before this, so a
/// warp gets here with scattered addresses or with faulting lanes.
fn lanes_load<'ctx>(
    fl: &FnLowering<'ctx, '_>,
    mem: MemRef,
    format: MemFormat,
    addr: V<'ctx>,
    addr_ty: Type,
    m: V<'ctx>,
) -> Result<Vec<V<'ctx>>, JitError> {
    if narrow_address(mem, addr_ty) {
        return lanes::load(fl, &span(fl, mem)?, format, addr, m, false);
    }
    let a = access(fl, mem, format.bytes(), addr, addr_ty, m, abi::FAULT_LOAD)?;
    let vt = elem_vec(fl, format.elem);
    let align = elem_align(fl, format.elem);
    vector_load(fl, &a, format, vt, align)
}

/// Whether an access goes through the module's routine for its kind
/// ([`lanes`]): an `i32` address into a buffer or shared memory.
fn narrow_address(mem: MemRef, addr_ty: Type) -> bool {
    addr_ty == Type::I32 && !matches!(mem, MemRef::Private(_))
}

/// What the active lanes' addresses look like, tested at run time on the
/// addresses as given (before any per-lane 64-bit offsets are built).
struct AddressShape<'ctx> {
    /// Active lanes as a bit set, and the first one's address (zero-extended).
    bits: IntValue<'ctx>,
    at: IntValue<'ctx>,
    /// Some lane is active and all active lanes give `at`.
    uniform: IntValue<'ctx>,
    /// Some lane is active, lane `l` gives `at + (l - first) * size`, `at`
    /// is a multiple of `size` and the whole run is inside the memory.
    run_inside: IntValue<'ctx>,
    /// Where lane 0's element of the run is (may lie before the memory).
    run_start: PointerValue<'ctx>,
}

fn address_shape<'ctx>(
    fl: &FnLowering<'ctx, '_>,
    mem: MemRef,
    size: u32,
    addr: V<'ctx>,
    addr_ty: Type,
    m: V<'ctx>,
) -> Result<AddressShape<'ctx>, JitError> {
    let e = fl.e;
    let b = &e.b;
    let w = addr_ty.bits();
    let bits = e.mask_to_bits(m)?;
    let some = any_lane(fl, bits)?;
    let first = fl.e.lowest_lane(bits)?;
    let last = fl.e.highest_lane(bits)?;
    let at_w = b.build_extract_element(addr, first, "")?.into_int_value();
    let last_w = b.build_extract_element(addr, last, "")?.into_int_value();
    // Some lane is active and every active lane's address is `v`'s.
    let all_active = |v: V<'ctx>| -> Result<IntValue<'ctx>, JitError> {
        Ok(b.build_and(active_lanes_equal(e, m, v, addr)?, some, "")?)
    };
    let uniform = all_active(e.splat(at_w.into())?)?;
    // Lane l's expected address, modulo 2^w: at + (l - first) * size.
    let lanes = e.lanes_const(w, |l| u64::from(l) * u64::from(size));
    let first_w = b.build_int_z_extend_or_bit_cast(first, e.int_t(w), "")?;
    let sz_w = e.int_t(w).const_int(u64::from(size), false);
    let lane0_w = b.build_int_sub(at_w, b.build_int_mul(first_w, sz_w, "")?, "")?;
    let consecutive = all_active(b.build_int_add(e.splat(lane0_w.into())?, lanes, "")?)?;
    // In 64 bits: the run does not wrap (so every lane's address is the
    // expected one), starts aligned and ends inside the memory.
    let wide = |x: IntValue<'ctx>| -> Result<IntValue<'ctx>, JitError> {
        Ok(if w == 64 {
            x
        } else {
            b.build_int_z_extend(x, e.i64(), "")?
        })
    };
    let at = wide(at_w)?;
    let at_last = wide(last_w)?;
    let span_lanes = b.build_int_sub(last, first, "")?;
    let span_bytes = b.build_int_mul(
        b.build_int_z_extend(span_lanes, e.i64(), "")?,
        e.i64().const_int(u64::from(size), false),
        "",
    )?;
    let no_wrap = b.build_int_compare(
        IntPredicate::EQ,
        b.build_int_add(at, span_bytes, "")?,
        at_last,
        "",
    )?;
    let no_wrap = b.build_and(
        no_wrap,
        b.build_int_compare(IntPredicate::ULE, at, at_last, "")?,
        "",
    )?;
    let misalign = b.build_and(at, e.i64().const_int(u64::from(size) - 1, false), "")?;
    let aligned = b.build_int_compare(IntPredicate::EQ, misalign, e.i64().const_zero(), "")?;
    let span = span(fl, mem)?;
    let end_ok = inside_memory(fl.e, span.len, u64::from(size), at_last)?;
    let mut run_inside = b.build_and(consecutive, no_wrap, "")?;
    for c in [aligned, end_ok] {
        run_inside = b.build_and(run_inside, c, "")?;
    }
    let (_, run_start) = run_start(fl, span.base, first, at, size)?;
    Ok(AddressShape {
        bits,
        at,
        uniform,
        run_inside,
        run_start,
    })
}

/// Loads by the shape of the addresses: when all active lanes give one
/// address, the access is checked and done once in scalar code and
/// broadcast to the active lanes (0 elsewhere, as a gather gives); when
/// they read one run of consecutive elements inside the memory, one masked
/// vector load; otherwise [`lanes_load`]. Faults are the same: with one
/// address all active lanes are out of bounds or none, and the first of
/// them is the first fault.
fn shaped_load<'ctx>(
    fl: &FnLowering<'ctx, '_>,
    mem: MemRef,
    format: MemFormat,
    addr: V<'ctx>,
    addr_ty: Type,
    m: V<'ctx>,
) -> Result<Vec<V<'ctx>>, JitError> {
    if narrow_address(mem, addr_ty) {
        return lanes::load(fl, &span(fl, mem)?, format, addr, m, true);
    }
    let e = fl.e;
    let b = &e.b;
    let shape = address_shape(fl, mem, format.bytes(), addr, addr_ty, m)?;
    let vt = elem_vec(fl, format.elem);
    let align = elem_align(fl, format.elem);
    let uniform_bb = e.cx.append_basic_block(fl.func, "load.uniform");
    let inside_bb = e.cx.append_basic_block(fl.func, "load.uniform.inside");
    let outside_bb = e.cx.append_basic_block(fl.func, "load.uniform.outside");
    let not_uniform_bb = e.cx.append_basic_block(fl.func, "load.not.uniform");
    let run_bb = e.cx.append_basic_block(fl.func, "load.run");
    let lanes_bb = e.cx.append_basic_block(fl.func, "load.lanes");
    let join = e.cx.append_basic_block(fl.func, "load.joined");
    b.build_conditional_branch(shape.uniform, uniform_bb, not_uniform_bb)?;

    b.position_at_end(uniform_bb);
    let span = span(fl, mem)?;
    let size = u64::from(format.bytes());
    let (aligned, inside) = aligned_inside(fl.e, span.len, size, shape.at)?;
    b.build_conditional_branch(inside, inside_bb, outside_bb)?;

    b.position_at_end(outside_bb);
    let at_lanes = e.splat(shape.at.into())?;
    record_faults(fl, shape.bits, at_lanes, abi::FAULT_LOAD, &span)?;
    b.build_unconditional_branch(join)?;

    b.position_at_end(inside_bb);
    let scalars = broadcast_components(e, span.base, aligned, format, vt)?;
    b.build_unconditional_branch(join)?;

    b.position_at_end(not_uniform_bb);
    let run = format.count == 1;
    if run {
        b.build_conditional_branch(shape.run_inside, run_bb, lanes_bb)?;
    } else {
        b.build_unconditional_branch(lanes_bb)?;
    }
    b.position_at_end(run_bb);
    let run_value = if run {
        let v = load_consecutive(e, fl.func, vt, shape.run_start, align, m)?;
        let run_end = e.current_block()?;
        b.build_unconditional_branch(join)?;
        Some((v, run_end))
    } else {
        b.build_unreachable()?;
        None
    };

    b.position_at_end(lanes_bb);
    let lanes = lanes_load(fl, mem, format, addr, addr_ty, m)?;
    let lanes_end = e.current_block()?;
    b.build_unconditional_branch(join)?;

    b.position_at_end(join);
    let zeros = vec![vt.const_zero(); scalars.len()];
    let run_values: Vec<V<'ctx>> = run_value.iter().map(|(v, _)| *v).collect();
    let mut incoming = vec![
        (scalars.as_slice(), inside_bb),
        (zeros.as_slice(), outside_bb),
        (lanes.as_slice(), lanes_end),
    ];
    if let Some((_, run_end)) = run_value {
        incoming.push((run_values.as_slice(), run_end));
    }
    join_components(e, vt, scalars.len(), &incoming)
}

/// The remark of an access of a private array: each lane has its own copy.
fn private_remark(fl: &FnLowering<'_, '_>, mem: MemRef) {
    if !fl.wants_remarks() {
        return;
    }
    fl.remark(
        crate::lower::RemarkKind::Memory,
        true,
        format!(
            "{}: a private array: each lane reaches its own copy, lane by lane",
            memory_name(fl, mem)
        ),
    );
}

/// `load.FMT`: by the address shape the lane-shape analysis found
/// (`facts`), else by the shape tested at run time.
pub fn load<'ctx>(
    fl: &FnLowering<'ctx, '_>,
    mem: MemRef,
    format: MemFormat,
    addr: V<'ctx>,
    addr_ty: Type,
    facts: AddressFacts,
) -> Result<Vec<V<'ctx>>, JitError> {
    let e = fl.e;
    let m = fl.mask.current(e)?;
    let raws = if matches!(mem, MemRef::Private(_)) {
        private_remark(fl, mem);
        lanes_load(fl, mem, format, addr, addr_ty, m)?
    } else {
        let dynamic = || shaped_load(fl, mem, format, addr, addr_ty, m);
        known::load(fl, mem, format, addr, addr_ty, m, facts, &dynamic)?
    };
    let mut out = Vec::new();
    for raw in raws {
        let reg = format.elem.register_type();
        let v = match format.elem {
            NumFormat::S8 | NumFormat::S16 => e.b.build_int_s_extend(raw, e.int_vec(32), "")?,
            NumFormat::U8 | NumFormat::U16 => e.b.build_int_z_extend(raw, e.int_vec(32), "")?,
            NumFormat::F32 | NumFormat::F64 => {
                e.b.build_bit_cast(raw, e.vec_type(reg), "")?
                    .into_vector_value()
            }
            NumFormat::F16 => f16_to_f32(fl, raw)?,
            _ => raw,
        };
        out.push(v);
    }
    Ok(out)
}

/// `store.FMT`: by the address shape the lane-shape analysis found
/// (`facts`), else by the shape tested at run time.
pub fn store<'ctx>(
    fl: &FnLowering<'ctx, '_>,
    mem: MemRef,
    format: MemFormat,
    addr: V<'ctx>,
    addr_ty: Type,
    values: &[(V<'ctx>, Type)],
    facts: AddressFacts,
) -> Result<(), JitError> {
    let e = fl.e;
    let b = &e.b;
    // Helper lanes write only their own private arrays (as the interpreter).
    let m = if matches!(mem, MemRef::Private(_)) {
        fl.mask.current(e)?
    } else {
        mask_without_helpers(fl)?
    };
    let vt = elem_vec(fl, format.elem);
    let mut raws = Vec::new();
    for (v, ty) in values {
        let bits = if format.elem == NumFormat::F16 && *ty == Type::F32 {
            // Rounds to nearest even and writes NaN as 0x7fff.
            to_f16(fl, *v, Type::F32, Round::Nearest)?
        } else if ty.is_float() {
            let bits = to_bits(fl, *v, *ty)?;
            canonical_nan(fl, *v, bits, *ty)?
        } else {
            *v
        };
        raws.push(if ty.bits() > format.elem.bits() {
            b.build_int_truncate(bits, vt, "")?
        } else {
            bits
        });
    }
    if matches!(mem, MemRef::Private(_)) {
        private_remark(fl, mem);
        return lanes_store(fl, mem, format, addr, addr_ty, m, &raws);
    }
    let dynamic = || shaped_store(fl, mem, format, addr, addr_ty, m, &raws);
    known::store(fl, mem, format, addr, addr_ty, m, &raws, facts, &dynamic)
}

/// A store whose address shape is tested at run time: one run of
/// consecutive elements inside the memory is one masked vector store with
/// no per-lane offsets (single components), else [`lanes_store`].
fn shaped_store<'ctx>(
    fl: &FnLowering<'ctx, '_>,
    mem: MemRef,
    format: MemFormat,
    addr: V<'ctx>,
    addr_ty: Type,
    m: V<'ctx>,
    raws: &[V<'ctx>],
) -> Result<(), JitError> {
    if narrow_address(mem, addr_ty) {
        return lanes::store(fl, &span(fl, mem)?, format, addr, m, raws, true);
    }
    let e = fl.e;
    let b = &e.b;
    if format.count != 1 {
        return lanes_store(fl, mem, format, addr, addr_ty, m, raws);
    }
    let align = elem_align(fl, format.elem);
    let done = e.cx.append_basic_block(fl.func, "store.done");
    let shape = address_shape(fl, mem, format.bytes(), addr, addr_ty, m)?;
    let run_bb = e.cx.append_basic_block(fl.func, "store.run");
    let lanes_bb = e.cx.append_basic_block(fl.func, "store.lanes");
    b.build_conditional_branch(shape.run_inside, run_bb, lanes_bb)?;
    b.position_at_end(run_bb);
    store_consecutive(e, fl.func, raws[0], shape.run_start, align, m)?;
    b.build_unconditional_branch(done)?;
    b.position_at_end(lanes_bb);
    lanes_store(fl, mem, format, addr, addr_ty, m, raws)?;
    b.build_unconditional_branch(done)?;
    b.position_at_end(done);
    Ok(())
}

/// The raw components of a store, lane by lane: masked scatters, which
/// store in ascending lane order. As for [`lanes_load`], runs of
/// consecutive elements inside the memory are taken before this.
fn lanes_store<'ctx>(
    fl: &FnLowering<'ctx, '_>,
    mem: MemRef,
    format: MemFormat,
    addr: V<'ctx>,
    addr_ty: Type,
    m: V<'ctx>,
    raws: &[V<'ctx>],
) -> Result<(), JitError> {
    let align = elem_align(fl, format.elem);
    if narrow_address(mem, addr_ty) {
        return lanes::store(fl, &span(fl, mem)?, format, addr, m, raws, false);
    }
    let a = access(fl, mem, format.bytes(), addr, addr_ty, m, abi::FAULT_STORE)?;
    for (i, raw) in raws.iter().enumerate() {
        let offset = i as u64 * u64::from(format.elem.bytes());
        scatter(fl, &a, offset, *raw, align)?;
    }
    Ok(())
}
