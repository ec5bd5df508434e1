//! Warp intrinsics that read other lanes: votes, thread-group votes,
//! shuffles, quad swizzles and derivatives. Inactive lanes compute too; the
//! rules for reading an inactive lane (0, or 0.0) come from the mask bits.

use super::FnLowering;
use crate::emit::LANES;
use crate::JitError;
use inkwell::types::VectorType;
use inkwell::values::{IntValue, VectorValue};
use inkwell::{FloatPredicate, IntPredicate};
use warpjit_ir::semantics::{derivative_lanes, quad_source, tg_true};
use warpjit_ir::{Axis, QuadSel, ShuffleForm, ShuffleMode, TgOp, Type, VoteOp};

type V<'ctx> = VectorValue<'ctx>;

fn sel<'ctx>(
    fl: &FnLowering<'ctx, '_>,
    c: V<'ctx>,
    a: V<'ctx>,
    b: V<'ctx>,
) -> Result<V<'ctx>, JitError> {
    Ok(fl.e.b.build_select(c, a, b, "")?.into_vector_value())
}

/// The vote's truth over `participants` (bit sets) for `ballot`.
fn truth<'ctx>(
    fl: &FnLowering<'ctx, '_>,
    all: bool,
    any: bool,
    participants: IntValue<'ctx>,
    ballot: IntValue<'ctx>,
) -> Result<IntValue<'ctx>, JitError> {
    let b = &fl.e.b;
    let zero = fl.e.i32().const_zero();
    let is_all = b.build_int_compare(IntPredicate::EQ, ballot, participants, "")?;
    let is_any = b.build_int_compare(IntPredicate::NE, ballot, zero, "")?;
    Ok(match (all, any) {
        (true, false) => is_all,
        (false, true) => is_any,
        _ => b.build_or(is_all, b.build_not(is_any, "")?, "")?,
    })
}

/// `vote.OP p[, guard g]`: (result, ballot, participants mask).
pub fn vote<'ctx>(
    fl: &FnLowering<'ctx, '_>,
    op: VoteOp,
    p: V<'ctx>,
    guard: Option<V<'ctx>>,
) -> Result<(V<'ctx>, V<'ctx>, V<'ctx>), JitError> {
    let e = fl.e;
    let m = fl.mask.current(e)?;
    let part = match guard {
        Some(g) => e.b.build_and(m, g, "")?,
        None => m,
    };
    let part_bits = e.mask_to_bits(part)?;
    let ballot = e.mask_to_bits(e.b.build_and(part, p, "")?)?;
    let t = truth(fl, op == VoteOp::All, op == VoteOp::Any, part_bits, ballot)?;
    let r = e.splat(t.into())?;
    let r = sel(fl, part, r, e.i1().vec_type(LANES).const_zero())?;
    let bal = e.splat(ballot.into())?;
    let bal = sel(fl, part, bal, e.int_vec(32).const_zero())?;
    Ok((r, bal, part))
}

/// TGALL/TGANY/TGEQ/TGBALLOT over the active lanes.
pub fn thread_group<'ctx>(
    fl: &FnLowering<'ctx, '_>,
    op: TgOp,
    x: V<'ctx>,
    ty: Type,
) -> Result<V<'ctx>, JitError> {
    let e = fl.e;
    let b = &e.b;
    let nonzero = match ty {
        Type::Bool => x,
        Type::F32 => {
            // Ordered |x| >= the smallest normal: NaN, zeros, denormals are zero.
            let a = e
                .call_intrinsic("llvm.fabs", &[x.get_type().into()], &[x.into()])?
                .into_vector_value();
            let min = e.splat_const(Type::F32, u64::from(f32::MIN_POSITIVE.to_bits()));
            b.build_float_compare(FloatPredicate::OGE, a, min, "")?
        }
        _ => b.build_int_compare(IntPredicate::NE, x, x.get_type().const_zero(), "")?,
    };
    let m = fl.mask.current(e)?;
    let active = e.mask_to_bits(m)?;
    let nz = e.mask_to_bits(b.build_and(m, nonzero, "")?)?;
    if op == TgOp::Ballot {
        return e.splat(nz.into());
    }
    let t = truth(fl, op == TgOp::All, op == TgOp::Any, active, nz)?;
    let tv = e.splat(t.into())?;
    let truth_bits = e.splat_const(ty, tg_true(ty));
    let zero = e.vec_type(ty).const_zero();
    sel(fl, tv, truth_bits, zero)
}

/// `(bits >> lane) & 1` per lane for a bit set and a lane-index vector.
fn bit_at<'ctx>(
    fl: &FnLowering<'ctx, '_>,
    bits: IntValue<'ctx>,
    lanes: V<'ctx>,
) -> Result<V<'ctx>, JitError> {
    let e = fl.e;
    let s = e.splat(bits.into())?;
    let v = e.b.build_right_shift(s, lanes, false, "")?;
    let v = e.b.build_and(v, e.splat_int(32, 1), "")?;
    Ok(e.b.build_int_compare(IntPredicate::NE, v, e.int_vec(32).const_zero(), "")?)
}

/// Lane `src[l]` of 32-bit `data` in each lane `l` (`src` in 0..32, lane
/// varying): two `vpermi2d` on AVX-512 (each half of the result picks from
/// the 32-entry table the two data halves make), sixteen `vpermd` and
/// blends on AVX2, else through memory.
fn permute<'ctx>(
    fl: &FnLowering<'ctx, '_>,
    data: V<'ctx>,
    src: V<'ctx>,
) -> Result<V<'ctx>, JitError> {
    let e = fl.e;
    if !e.avx512 {
        return if e.avx2 {
            permute_by_quarters(fl, data, src)
        } else {
            permute_through_memory(fl, data, src)
        };
    }
    let half = |v: V<'ctx>, hi: bool| e.lane_run(v, if hi { 16 } else { 0 }, 16);
    let (lo, hi) = (half(data, false)?, half(data, true)?);
    let pick = |s: V<'ctx>| -> Result<V<'ctx>, JitError> {
        Ok(e.call_intrinsic(
            "llvm.x86.avx512.vpermi2var.d.512",
            &[],
            &[lo.into(), s.into(), hi.into()],
        )?
        .into_vector_value())
    };
    let out_lo = pick(half(src, false)?)?;
    let out_hi = pick(half(src, true)?)?;
    e.concat(out_lo, out_hi)
}

/// The lanes of a constant vector of lane numbers, each taken modulo 32;
/// `None` unless it is a vector of plain integers (a constant data vector:
/// no poison lanes, no constant expressions).
fn const_lanes(v: V<'_>) -> Option<Vec<u32>> {
    if !v.is_const() || !v.is_constant_data_vector() {
        return None;
    }
    (0..v.get_type().get_size())
        .map(|l| match v.get_element_as_constant(l) {
            inkwell::values::BasicValueEnum::IntValue(i) => i
                .get_zero_extended_constant()
                .map(|n| (n % u64::from(LANES)) as u32),
            _ => None,
        })
        .collect()
}

/// [`permute`] with AVX2: each 8-lane quarter of the result is `vpermd` of
/// each data quarter by its indices, the one the index's bits 3 and 4 name
/// chosen by two rounds of blends.
fn permute_by_quarters<'ctx>(
    fl: &FnLowering<'ctx, '_>,
    data: V<'ctx>,
    src: V<'ctx>,
) -> Result<V<'ctx>, JitError> {
    let e = fl.e;
    let b = &e.b;
    let quarter = |v: V<'ctx>, q: u32| e.lane_run(v, 8 * q, 8);
    let tables = (0..4)
        .map(|q| quarter(data, q))
        .collect::<Result<Vec<_>, _>>()?;
    let bit_set = |s: V<'ctx>, bit: u64| -> Result<V<'ctx>, JitError> {
        let t = e.i32().vec_type(8);
        let one = VectorType::const_vector(&[e.i32().const_int(bit, false); 8]);
        let masked = b.build_and(s, one, "")?;
        Ok(b.build_int_compare(IntPredicate::NE, masked, t.const_zero(), "")?)
    };
    let mut out = Vec::with_capacity(4);
    for q in 0..4 {
        let s = quarter(src, q)?;
        let picks = tables
            .iter()
            .map(|&t| {
                Ok(
                    e.call_intrinsic("llvm.x86.avx2.permd", &[], &[t.into(), s.into()])?
                        .into_vector_value(),
                )
            })
            .collect::<Result<Vec<_>, JitError>>()?;
        let bit3 = bit_set(s, 8)?;
        let bit4 = bit_set(s, 16)?;
        let low = sel(fl, bit3, picks[1], picks[0])?;
        let high = sel(fl, bit3, picks[3], picks[2])?;
        out.push(sel(fl, bit4, high, low)?);
    }
    let lo = e.concat(out[0], out[1])?;
    let hi = e.concat(out[2], out[3])?;
    e.concat(lo, hi)
}

/// [`permute`] without AVX-512: a store and a gather.
fn permute_through_memory<'ctx>(
    fl: &FnLowering<'ctx, '_>,
    data: V<'ctx>,
    src: V<'ctx>,
) -> Result<V<'ctx>, JitError> {
    let e = fl.e;
    let vt = data.get_type();
    let slot = fl.entry_alloca(vt, "permute")?;
    e.b.build_store(slot, data)?;
    let elem = vt.get_element_type();
    let elem_bytes: u64 = match elem {
        inkwell::types::BasicTypeEnum::IntType(t) => u64::from(t.get_bit_width().div_ceil(8)),
        _ => 4,
    };
    let base = e.b.build_ptr_to_int(slot, e.i64(), "")?;
    let base = e.splat(base.into())?;
    let off = e.b.build_int_z_extend(src, e.int_vec(64), "")?;
    let off = e.b.build_int_mul(off, e.splat_int(64, elem_bytes), "")?;
    let at = e.b.build_int_add(base, off, "")?;
    let ptrs = e.cx.ptr_type(Default::default()).vec_type(LANES);
    let ptrs =
        e.b.build_cast(inkwell::values::InstructionOpcode::IntToPtr, at, ptrs, "")?
            .into_vector_value();
    let align = e.i32().const_int(elem_bytes, false);
    Ok(e.call_intrinsic(
        "llvm.masked.gather",
        &[vt.into(), ptrs.get_type().into()],
        &[
            ptrs.into(),
            align.into(),
            e.all_lanes().into(),
            vt.const_zero().into(),
        ],
    )?
    .into_vector_value())
}

/// `shuffle.MODE data, index, width|mask` per the one hardware model.
pub fn shuffle<'ctx>(
    fl: &FnLowering<'ctx, '_>,
    mode: ShuffleMode,
    form: ShuffleForm,
    data: V<'ctx>,
    index: V<'ctx>,
    bound: V<'ctx>,
    ty: Type,
) -> Result<(V<'ctx>, V<'ctx>), JitError> {
    let e = fl.e;
    let b = &e.b;
    let c = |v: u64| e.splat_int(32, v);
    let lane = e.lanes_const(32, u64::from);
    let mask = match form {
        ShuffleForm::Mask => bound,
        ShuffleForm::Width => {
            let seg = b.build_int_sub(c(32), bound, "")?;
            let seg = b.build_and(seg, c(31), "")?;
            let seg = b.build_left_shift(seg, c(8), "")?;
            let clamp = if mode == ShuffleMode::Up { 0 } else { 31 };
            b.build_or(seg, c(clamp), "")?
        }
    };
    let bi = b.build_and(index, c(31), "")?;
    let clamp = b.build_and(mask, c(31), "")?;
    let seg = b.build_right_shift(mask, c(8), false, "")?;
    let seg = b.build_and(seg, c(31), "")?;
    let not_seg = b.build_not(seg, "")?;
    let min = b.build_and(lane, seg, "")?;
    let max = b.build_or(min, b.build_and(clamp, not_seg, "")?, "")?;
    let (src, valid) = match mode {
        ShuffleMode::Idx => {
            let s = b.build_or(min, b.build_and(bi, not_seg, "")?, "")?;
            (s, b.build_int_compare(IntPredicate::ULE, s, max, "")?)
        }
        ShuffleMode::Up => {
            let s = b.build_int_sub(lane, bi, "")?;
            (s, b.build_int_compare(IntPredicate::SGE, s, max, "")?)
        }
        ShuffleMode::Down => {
            let s = b.build_int_add(lane, bi, "")?;
            (s, b.build_int_compare(IntPredicate::ULE, s, max, "")?)
        }
        ShuffleMode::Xor => {
            let s = b.build_xor(lane, bi, "")?;
            (s, b.build_int_compare(IntPredicate::ULE, s, max, "")?)
        }
    };
    let src = sel(fl, valid, b.build_and(src, c(31), "")?, lane)?;
    let bits = match ty {
        Type::Bool => b.build_int_z_extend(data, e.int_vec(32), "")?,
        Type::F32 => b
            .build_bit_cast(data, e.int_vec(32), "")?
            .into_vector_value(),
        _ => data,
    };
    let m = fl.mask.current(e)?;
    // Below AVX-512 a source known when compiling (a constant index and
    // width) is a constant shuffle of the data and of the mask. AVX-512
    // keeps `vpermi2d`, which LLVM folds into a constant shuffle itself, and
    // tests the mask bits (`vptestmd`), cheaper than shuffling a mask
    // register.
    let (moved, active) = match const_lanes(src).filter(|_| !e.avx512) {
        Some(lanes) => (
            static_shuffle(fl, bits, |l| lanes[l as usize])?,
            static_shuffle(fl, m, |l| lanes[l as usize])?,
        ),
        None => (
            permute(fl, bits, src)?,
            bit_at(fl, e.mask_to_bits(m)?, src)?,
        ),
    };
    let moved = sel(fl, active, moved, e.int_vec(32).const_zero())?;
    let out = sel(fl, valid, moved, bits)?;
    let out = match ty {
        Type::Bool => b.build_int_truncate(out, e.i1().vec_type(LANES), "")?,
        Type::F32 => b
            .build_bit_cast(out, e.vec_type(Type::F32), "")?
            .into_vector_value(),
        _ => out,
    };
    Ok((out, valid))
}

fn static_shuffle<'ctx>(
    fl: &FnLowering<'ctx, '_>,
    v: V<'ctx>,
    src: impl Fn(u32) -> u32,
) -> Result<V<'ctx>, JitError> {
    let e = fl.e;
    let idx = e.lanes_const(32, |l| u64::from(src(l)));
    Ok(e.b.build_shuffle_vector(v, v.get_type().get_poison(), idx, "")?)
}

/// `quad.SEL v[, add]`.
pub fn quad<'ctx>(
    fl: &FnLowering<'ctx, '_>,
    q: QuadSel,
    v: V<'ctx>,
    add: Option<V<'ctx>>,
) -> Result<V<'ctx>, JitError> {
    let e = fl.e;
    let moved = static_shuffle(fl, v, |l| quad_source(q, l))?;
    let moved = match add {
        Some(a) => e.b.build_float_add(moved, a, "")?,
        None => moved,
    };
    let m = fl.mask.current(e)?;
    let src_active = static_shuffle(fl, m, |l| quad_source(q, l))?;
    sel(fl, src_active, moved, v.get_type().const_zero())
}

/// `ddx`/`ddy`: 0.0 unless both members read are active.
pub fn derivative<'ctx>(
    fl: &FnLowering<'ctx, '_>,
    axis: Axis,
    fine: bool,
    v: V<'ctx>,
) -> Result<V<'ctx>, JitError> {
    let e = fl.e;
    let minuend = |l| derivative_lanes(axis, fine, l).0;
    let subtrahend = |l| derivative_lanes(axis, fine, l).1;
    let a = static_shuffle(fl, v, minuend)?;
    let s = static_shuffle(fl, v, subtrahend)?;
    let d = e.b.build_float_sub(a, s, "")?;
    let m = fl.mask.current(e)?;
    let ma = static_shuffle(fl, m, minuend)?;
    let ms = static_shuffle(fl, m, subtrahend)?;
    let both = e.b.build_and(ma, ms, "")?;
    sel(fl, both, d, v.get_type().const_zero())
}

/// The lanes of `remaining` whose key no lower lane of `remaining` shares:
/// one round of an ordered section.
pub fn first_of_each_key<'ctx>(
    fl: &FnLowering<'ctx, '_>,
    key: V<'ctx>,
    remaining: V<'ctx>,
) -> Result<V<'ctx>, JitError> {
    let e = fl.e;
    let b = &e.b;
    let lane = e.lanes_const(32, u64::from);
    let rem_bits = e.mask_to_bits(remaining)?;
    let mut dup = e.i1().vec_type(LANES).const_zero();
    let float = key.get_type().get_element_type().is_float_type();
    let key = if float {
        let w = if key.get_type().get_element_type().into_float_type() == e.cx.f64_type() {
            64
        } else {
            32
        };
        b.build_bit_cast(key, e.int_vec(w), "")?.into_vector_value()
    } else {
        key
    };
    for j in 0..LANES {
        let kj = b.build_extract_element(key, e.i32().const_int(u64::from(j), false), "")?;
        let kj = e.splat(kj)?;
        let same = b.build_int_compare(IntPredicate::EQ, key, kj, "")?;
        let above =
            b.build_int_compare(IntPredicate::UGT, lane, e.splat_int(32, u64::from(j)), "")?;
        let jbit = b.build_and(rem_bits, e.i32().const_int(1 << j, false), "")?;
        let j_in = b.build_int_compare(IntPredicate::NE, jbit, e.i32().const_zero(), "")?;
        let j_in = e.splat(j_in.into())?;
        let hit = b.build_and(b.build_and(same, above, "")?, j_in, "")?;
        dup = b.build_or(dup, hit, "")?;
    }
    Ok(b.build_and(remaining, b.build_not(dup, "")?, "")?)
}
