//! Gathers and scatters as a loop over the active lanes, where the target
//! has no such instruction: elements narrower than 32 bits, and targets
//! without AVX-512 (LLVM expands even AVX2 gathers on AMD hosts), except
//! that AVX2 gathers 32-bit elements by `vpgatherdd` called directly.
//! LLVM expands a masked gather or scatter it cannot select into a test,
//! a branch and a block per lane: 64 blocks, which took a third of a
//! kernel's code generation for one byte load (W6). The loop is three
//! blocks: the lanes' offsets and values go through stack arrays, indexed
//! by the lane, so no vector is rebuilt per lane. Lanes go in ascending
//! order, as a scatter stores them.

use crate::emit::{Emit, LANES};
use crate::JitError;
use inkwell::types::{BasicType, VectorType};
use inkwell::values::{BasicValue, IntValue, PointerValue, VectorValue};
use inkwell::IntPredicate;

type V<'ctx> = VectorValue<'ctx>;

/// Whether the target gathers and scatters `bits`-wide elements itself.
pub fn native(e: &Emit<'_, '_>, bits: u32) -> bool {
    e.avx512 && bits >= 32
}

/// [`native`] for the elements of `vt`.
pub fn native_for(e: &Emit<'_, '_>, vt: VectorType<'_>) -> bool {
    native(e, element_bytes(vt) * 8)
}

/// The lanes of `mask` load `vt`'s elements at `base + offsets + at`
/// (`offsets`: unsigned, `i32` or `i64` lanes); 0 in the other lanes.
pub fn gather<'ctx>(
    e: &Emit<'ctx, '_>,
    base: PointerValue<'ctx>,
    offsets: V<'ctx>,
    at: u64,
    mask: V<'ctx>,
    vt: VectorType<'ctx>,
) -> Result<V<'ctx>, JitError> {
    let offset_bits = offsets
        .get_type()
        .get_element_type()
        .into_int_type()
        .get_bit_width();
    if e.avx2 && !e.avx512 && element_bytes(vt) == 4 && offset_bits == 32 {
        return gather_by_quarters(e, base, offsets, at, mask, vt);
    }
    let results = entry_alloca(e, vt)?;
    e.store_aligned(results, vt.const_zero().into(), element_bytes(vt))?;
    each_lane(e, base, offsets, at, mask, |lane, ptr| {
        let t = vt.get_element_type();
        let x = e.load_aligned(t, ptr, element_bytes(vt))?;
        e.store_aligned(element_slot(e, results, vt, lane)?, x, element_bytes(vt))
    })?;
    Ok(e.load_aligned(vt.into(), results, element_bytes(vt))?
        .into_vector_value())
}

/// [`gather`] of 32-bit elements on AVX2: `vpgatherdd` per quarter, called
/// as the target's intrinsic because LLVM expands its own masked gather on
/// hosts whose gathers its cost model calls slow; on such a host (Zen 3) a
/// C loop of `vpgatherdd` took 9 ns per 8 lanes against 17-20 ns lane by
/// lane. The intrinsic's indices are signed, so it reads from
/// `base + at + 2^31` with each offset's top bit flipped.
fn gather_by_quarters<'ctx>(
    e: &Emit<'ctx, '_>,
    base: PointerValue<'ctx>,
    offsets: V<'ctx>,
    at: u64,
    mask: V<'ctx>,
    vt: VectorType<'ctx>,
) -> Result<V<'ctx>, JitError> {
    let b = &e.b;
    let i32x8 = e.i32().vec_type(8);
    let bias = (1u64 << 31) + at;
    // SAFETY (for LLVM): the gather adds the flipped offsets back, so it
    // touches only `base + offset + at` of the lanes of `mask`.
    let biased_base =
        unsafe { b.build_gep(e.cx.i8_type(), base, &[e.i64().const_int(bias, false)], "")? };
    let flipped = b.build_xor(offsets, e.splat_int(32, 1 << 31), "")?;
    let lanes = b.build_int_s_extend(mask, e.int_vec(32), "")?;
    let scale = e.cx.i8_type().const_int(1, false);
    let mut quarters = Vec::with_capacity(4);
    for q in 0..4 {
        let index = e.lane_run(flipped, 8 * q, 8)?;
        let take = e.lane_run(lanes, 8 * q, 8)?;
        let args = [
            i32x8.const_zero().into(),
            biased_base.into(),
            index.into(),
            take.into(),
            scale.into(),
        ];
        let words = e.call_intrinsic("llvm.x86.avx2.gather.d.d.256", &[], &args)?;
        quarters.push(words.into_vector_value());
    }
    let low = e.concat(quarters[0], quarters[1])?;
    let high = e.concat(quarters[2], quarters[3])?;
    let words = e.concat(low, high)?;
    Ok(b.build_bit_cast(words, vt, "")?.into_vector_value())
}

/// The lanes of `mask` store their element of `value` at
/// `base + offsets + at`, in ascending lane order.
pub fn scatter<'ctx>(
    e: &Emit<'ctx, '_>,
    base: PointerValue<'ctx>,
    offsets: V<'ctx>,
    at: u64,
    mask: V<'ctx>,
    value: V<'ctx>,
) -> Result<(), JitError> {
    let vt = value.get_type();
    let values = entry_alloca(e, vt)?;
    e.store_aligned(values, value.into(), element_bytes(vt))?;
    each_lane(e, base, offsets, at, mask, |lane, ptr| {
        let t = vt.get_element_type();
        let x = e.load_aligned(t, element_slot(e, values, vt, lane)?, element_bytes(vt))?;
        e.store_aligned(ptr, x, element_bytes(vt))
    })
}

/// Runs `body(lane, pointer)` for each lane of `mask`, lowest first.
fn each_lane<'ctx>(
    e: &Emit<'ctx, '_>,
    base: PointerValue<'ctx>,
    offsets: V<'ctx>,
    at: u64,
    mask: V<'ctx>,
    body: impl Fn(IntValue<'ctx>, PointerValue<'ctx>) -> Result<(), JitError>,
) -> Result<(), JitError> {
    let b = &e.b;
    let off_vt = offsets.get_type();
    let off_array = entry_alloca(e, off_vt)?;
    e.store_aligned(off_array, offsets.into(), element_bytes(off_vt))?;
    let bits = e.mask_to_bits(mask)?;
    let before = e.current_block()?;
    let func = before
        .get_parent()
        .ok_or_else(|| JitError::Internal("block without a function".into()))?;
    let header = e.cx.append_basic_block(func, "lane.next");
    let lane_bb = e.cx.append_basic_block(func, "lane.each");
    let exit = e.cx.append_basic_block(func, "lane.done");
    b.build_unconditional_branch(header)?;
    b.position_at_end(header);
    let pending = b.build_phi(e.i32(), "lane.pending")?;
    let left = pending.as_basic_value().into_int_value();
    let any = b.build_int_compare(IntPredicate::NE, left, e.i32().const_zero(), "")?;
    b.build_conditional_branch(any, lane_bb, exit)?;
    b.position_at_end(lane_bb);
    let lane = e.lowest_lane_in(left)?;
    let off_t = off_vt.get_element_type();
    let off = e
        .load_aligned(
            off_t,
            element_slot(e, off_array, off_vt, lane)?,
            element_bytes(off_vt),
        )?
        .into_int_value();
    let off = b.build_int_z_extend_or_bit_cast(off, e.i64(), "")?;
    let off = b.build_int_add(off, e.i64().const_int(at, false), "")?;
    // SAFETY (for LLVM): the lane is in `mask`, so its offset is in bounds.
    let ptr = unsafe { b.build_gep(e.cx.i8_type(), base, &[off], "")? };
    body(lane, ptr)?;
    let rest = b.build_and(
        left,
        b.build_int_sub(left, e.i32().const_int(1, false), "")?,
        "",
    )?;
    let last = e.current_block()?;
    b.build_unconditional_branch(header)?;
    pending.add_incoming(&[(&bits.as_basic_value_enum(), before), (&rest, last)]);
    b.position_at_end(exit);
    Ok(())
}

/// A stack array for the 32 elements of a `vt`.
fn entry_alloca<'ctx>(
    e: &Emit<'ctx, '_>,
    vt: VectorType<'ctx>,
) -> Result<PointerValue<'ctx>, JitError> {
    e.entry_alloca(vt.get_element_type().array_type(LANES), "lanes")
}

/// Lane `lane`'s element in a stack copy of a `vt`.
fn element_slot<'ctx>(
    e: &Emit<'ctx, '_>,
    array: PointerValue<'ctx>,
    vt: VectorType<'ctx>,
    lane: IntValue<'ctx>,
) -> Result<PointerValue<'ctx>, JitError> {
    let lane = e.b.build_int_z_extend(lane, e.i64(), "")?;
    // SAFETY (for LLVM): lane < 32 indexes the 32-element copy.
    Ok(unsafe { e.b.build_gep(vt.get_element_type(), array, &[lane], "")? })
}

/// The bytes of one element of `vt` (its alignment in the arrays).
pub(super) fn element_bytes(vt: VectorType<'_>) -> u32 {
    match vt.get_element_type() {
        inkwell::types::BasicTypeEnum::IntType(t) => t.get_bit_width().div_ceil(8),
        inkwell::types::BasicTypeEnum::FloatType(t) if t == t.get_context().f64_type() => 8,
        inkwell::types::BasicTypeEnum::FloatType(t) if t == t.get_context().f16_type() => 2,
        inkwell::types::BasicTypeEnum::PointerType(_) => 8,
        _ => 4,
    }
}
