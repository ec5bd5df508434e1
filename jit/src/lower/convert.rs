//! CVT, and the f16 <-> f32 conversions loads and stores share.
//!
//! Directed rounding (CEIL/FLR/TRUNC) of int -> float and float -> float:
//! convert to nearest, compare the result exactly with the source, and step
//! one ulp toward the wanted direction with integer arithmetic on the bits
//! when the nearest result lies on the wrong side. Stepping from a nonzero
//! float: toward +inf is bits+1 for positive and bits-1 for negative values
//! (and the reverse toward -inf); from +0 up is the smallest denormal, from
//! -0 down its negative. Infinity stepped toward zero gives the largest
//! finite value, so overflow also follows the direction.

use super::ops::{canonical_nan, from_bits, to_bits};
use super::FnLowering;
use crate::emit::LANES;
use crate::JitError;
use inkwell::values::VectorValue;
use inkwell::{FloatPredicate, IntPredicate};
use warpjit_ir::{NumFormat, Round, Type};

type V<'ctx> = VectorValue<'ctx>;

/// An f32 or f64 vector rounded to f16 bits (`<32 x i16>`) by `round`,
/// with integer operations only: the significand is shifted into f16's
/// precision (normal, or denormal in units of 2^-24) and the dropped bits
/// decide the increment, which carries into the exponent and up to
/// infinity by itself. Overflow follows the direction; NaN gives 0x7fff.
pub fn to_f16<'ctx>(
    fl: &FnLowering<'ctx, '_>,
    x: V<'ctx>,
    ty: Type,
    round: Round,
) -> Result<V<'ctx>, JitError> {
    let e = fl.e;
    let b = &e.b;
    let (w, fb, bias): (u32, u64, u64) = if ty == Type::F64 {
        (64, 52, 1023)
    } else {
        (32, 23, 127)
    };
    let c = |v: u64| e.splat_int(w, v);
    let cmp = |p: IntPredicate, a: V<'ctx>, v: V<'ctx>| b.build_int_compare(p, a, v, "");
    let bits = to_bits(fl, x, ty)?;
    let sign = b.build_right_shift(bits, c(u64::from(w) - 1), false, "")?;
    let neg = cmp(IntPredicate::NE, sign, c(0))?;
    let exp = b.build_right_shift(bits, c(fb), false, "")?;
    let exp = b.build_and(exp, c((1 << (w as u64 - fb - 1)) - 1), "")?;
    let man = b.build_and(bits, c((1 << fb) - 1), "")?;
    let exp_max = (1u64 << (w as u64 - fb - 1)) - 1;
    let is_top = cmp(IntPredicate::EQ, exp, c(exp_max))?;
    let is_nan = b.build_and(is_top, cmp(IntPredicate::NE, man, c(0))?, "")?;
    let over = cmp(IntPredicate::UGT, exp, c(bias + 15))?;
    let normal = cmp(IntPredicate::UGE, exp, c(bias - 14))?;
    // Normal f16: exponent rebias, fraction shifted by fb - 10.
    let sn = fb - 10;
    let nexp = b.build_int_sub(exp, c(bias - 15), "")?;
    let nexp = b.build_left_shift(nexp, c(10), "")?;
    let h_norm = b.build_or(nexp, b.build_right_shift(man, c(sn), false, "")?, "")?;
    let rem_norm = b.build_and(man, c((1 << sn) - 1), "")?;
    let half_norm = c(1 << (sn - 1));
    // Denormal f16: the whole significand in units of 2^-24.
    let is_den_src = cmp(IntPredicate::EQ, exp, c(0))?;
    let full = b.build_or(man, c(1 << fb), "")?;
    let sig = sel(fl, is_den_src, man, full)?;
    let exp_eff = sel(fl, is_den_src, c(1), exp)?;
    let shift = b.build_int_sub(c(bias + fb - 24), exp_eff, "")?;
    let too_far = cmp(IntPredicate::UGT, shift, c(u64::from(w) - 1))?;
    let shift = sel(fl, too_far, c(u64::from(w) - 1), shift)?;
    let h_den = b.build_right_shift(sig, shift, false, "")?;
    let low = b.build_int_sub(b.build_left_shift(c(1), shift, "")?, c(1), "")?;
    let rem_den = b.build_and(sig, low, "")?;
    let half_den = b.build_left_shift(c(1), b.build_int_sub(shift, c(1), "")?, "")?;
    let h = sel(fl, normal, h_norm, h_den)?;
    let rem = sel(fl, normal, rem_norm, rem_den)?;
    let half = sel(fl, normal, half_norm, half_den)?;
    let inexact = cmp(IntPredicate::NE, rem, c(0))?;
    let inc = match round {
        Round::Nearest => {
            let above = cmp(IntPredicate::UGT, rem, half)?;
            let tie = cmp(IntPredicate::EQ, rem, half)?;
            let odd = cmp(IntPredicate::NE, b.build_and(h, c(1), "")?, c(0))?;
            b.build_or(above, b.build_and(tie, odd, "")?, "")?
        }
        Round::Ceil => b.build_and(inexact, b.build_not(neg, "")?, "")?,
        Round::Floor => b.build_and(inexact, neg, "")?,
        Round::Trunc => e.i1().vec_type(LANES).const_zero(),
    };
    let h = b.build_int_add(h, b.build_int_z_extend(inc, e.int_vec(w), "")?, "")?;
    // Overflow: infinity when the direction points away from zero.
    let to_inf = match round {
        Round::Nearest => e.all_lanes(),
        Round::Ceil => b.build_not(neg, "")?,
        Round::Floor => neg,
        Round::Trunc => e.i1().vec_type(LANES).const_zero(),
    };
    let overflow = sel(fl, to_inf, c(0x7c00), c(0x7bff))?;
    let h = sel(fl, over, overflow, h)?;
    let h = sel(fl, is_top, c(0x7c00), h)?;
    let h = b.build_or(h, b.build_left_shift(sign, c(15), "")?, "")?;
    let h = sel(fl, is_nan, c(0x7fff), h)?;
    Ok(b.build_int_truncate(h, e.int_vec(16), "")?)
}

fn sel<'ctx>(
    fl: &FnLowering<'ctx, '_>,
    c: V<'ctx>,
    a: V<'ctx>,
    b: V<'ctx>,
) -> Result<V<'ctx>, JitError> {
    Ok(fl.e.b.build_select(c, a, b, "")?.into_vector_value())
}

/// f16 bits (`<32 x i16>`) to f32, exactly; NaN gives 0x7fffffff.
pub fn f16_to_f32<'ctx>(fl: &FnLowering<'ctx, '_>, h: V<'ctx>) -> Result<V<'ctx>, JitError> {
    let e = fl.e;
    let b = &e.b;
    let h32 = b.build_int_z_extend(h, e.int_vec(32), "")?;
    let sign = b.build_and(h32, e.splat_int(32, 0x8000), "")?;
    let sign = b.build_left_shift(sign, e.splat_int(32, 16), "")?;
    let exp = b.build_right_shift(h32, e.splat_int(32, 10), false, "")?;
    let exp = b.build_and(exp, e.splat_int(32, 0x1f), "")?;
    let man = b.build_and(h32, e.splat_int(32, 0x3ff), "")?;
    // Normal: rebias the exponent (15 -> 127) and widen the fraction.
    let nexp = b.build_int_add(exp, e.splat_int(32, 112), "")?;
    let nexp = b.build_left_shift(nexp, e.splat_int(32, 23), "")?;
    let nman = b.build_left_shift(man, e.splat_int(32, 13), "")?;
    let normal = b.build_or(nexp, nman, "")?;
    // Denormal (and zero): man * 2^-24, exact in f32.
    let f32v = e.vec_type(Type::F32);
    let manf = b.build_unsigned_int_to_float(man, f32v, "")?;
    let scale = e.splat_const(Type::F32, u64::from((2f32).powi(-24).to_bits()));
    let den = b.build_float_mul(manf, scale, "")?;
    let den = b
        .build_bit_cast(den, e.int_vec(32), "")?
        .into_vector_value();
    let is_den = b.build_int_compare(IntPredicate::EQ, exp, e.int_vec(32).const_zero(), "")?;
    let is_top = b.build_int_compare(IntPredicate::EQ, exp, e.splat_int(32, 0x1f), "")?;
    let man_zero = b.build_int_compare(IntPredicate::EQ, man, e.int_vec(32).const_zero(), "")?;
    let mag = sel(fl, is_den, den, normal)?;
    let inf_or_nan = sel(
        fl,
        man_zero,
        e.splat_int(32, 0x7f80_0000),
        e.splat_int(32, 0x7fff_ffff),
    )?;
    let mag = sel(fl, is_top, inf_or_nan, mag)?;
    let is_nan = b.build_and(is_top, b.build_not(man_zero, "")?, "")?;
    let signed = b.build_or(mag, sign, "")?;
    let bits = sel(fl, is_nan, mag, signed)?;
    from_bits(fl, bits, Type::F32)
}

/// One ulp toward +inf (`up`) or -inf from float `r` of type `ty`.
fn step<'ctx>(
    fl: &FnLowering<'ctx, '_>,
    r: V<'ctx>,
    ty: Type,
    up: bool,
) -> Result<V<'ctx>, JitError> {
    let e = fl.e;
    let w = ty.bits();
    let bits = to_bits(fl, r, ty)?;
    let one = e.splat_int(w, 1);
    let inc = e.b.build_int_add(bits, one, "")?;
    let dec = e.b.build_int_sub(bits, one, "")?;
    let neg =
        e.b.build_int_compare(IntPredicate::SLT, bits, bits.get_type().const_zero(), "")?;
    let sign = e.splat_int(w, 1u64 << (w - 1));
    let is_zero = {
        let mag =
            e.b.build_and(bits, e.splat_int(w, (1u64 << (w - 1)) - 1), "")?;
        e.b.build_int_compare(IntPredicate::EQ, mag, bits.get_type().const_zero(), "")?
    };
    // Away from zero grows the magnitude; toward zero shrinks it.
    let (away, toward) = (inc, dec);
    let moved = if up {
        sel(fl, neg, toward, away)?
    } else {
        sel(fl, neg, away, toward)?
    };
    // From a zero: up gives +min denormal, down -min denormal.
    let from_zero = if up {
        e.splat_int(w, 1)
    } else {
        e.b.build_or(sign, one, "")?
    };
    let out = sel(fl, is_zero, from_zero, moved)?;
    from_bits(fl, out, ty)
}

/// Fixes a nearest-rounded `r` to the direction of `round`, given whether
/// `r` is above and below the exact value, and whether that value is negative.
fn direct<'ctx>(
    fl: &FnLowering<'ctx, '_>,
    r: V<'ctx>,
    ty: Type,
    round: Round,
    above: V<'ctx>,
    below: V<'ctx>,
    negative: V<'ctx>,
) -> Result<V<'ctx>, JitError> {
    let e = fl.e;
    let down = step(fl, r, ty, false)?;
    let up = step(fl, r, ty, true)?;
    match round {
        Round::Nearest => Ok(r),
        Round::Floor => sel(fl, above, down, r),
        Round::Ceil => sel(fl, below, up, r),
        Round::Trunc => {
            let pos_fix = e.b.build_and(above, e.b.build_not(negative, "")?, "")?;
            let neg_fix = e.b.build_and(below, negative, "")?;
            let r1 = sel(fl, pos_fix, down, r)?;
            sel(fl, neg_fix, up, r1)
        }
    }
}

pub fn cvt<'ctx>(
    fl: &FnLowering<'ctx, '_>,
    dst: NumFormat,
    src: NumFormat,
    round: Round,
    x: V<'ctx>,
) -> Result<V<'ctx>, JitError> {
    let e = fl.e;
    let b = &e.b;
    let dst_t = dst.ir_type();
    match (dst.is_float(), src.is_float()) {
        (false, false) => {
            let (dw, sw) = (dst.bits(), src.bits());
            let vt = e.int_vec(dw);
            Ok(if dw > sw {
                if src.is_signed() {
                    b.build_int_s_extend(x, vt, "")?
                } else {
                    b.build_int_z_extend(x, vt, "")?
                }
            } else if dw < sw {
                b.build_int_truncate(x, vt, "")?
            } else {
                x
            })
        }
        (false, true) => {
            let (x, st) = if src == NumFormat::F16 {
                (f16_to_f32(fl, x)?, Type::F32)
            } else {
                (x, src.ir_type())
            };
            let name = match round {
                Round::Nearest => "llvm.roundeven",
                Round::Floor => "llvm.floor",
                Round::Ceil => "llvm.ceil",
                Round::Trunc => "llvm.trunc",
            };
            let r = e
                .call_intrinsic(name, &[x.get_type().into()], &[x.into()])?
                .into_vector_value();
            let it = e.int_vec(dst.bits());
            let sat = if dst.is_signed() {
                "llvm.fptosi.sat"
            } else {
                "llvm.fptoui.sat"
            };
            let v = e
                .call_intrinsic(sat, &[it.into(), r.get_type().into()], &[r.into()])?
                .into_vector_value();
            let _ = st;
            if dst == NumFormat::S64 {
                let nan = b.build_float_compare(FloatPredicate::UNO, x, x, "")?;
                sel(fl, nan, e.splat_int(64, 1 << 63), v)
            } else {
                Ok(v)
            }
        }
        (true, false) => {
            let sw = src.bits();
            // Nearest conversion of the source integer, widened to 64 bits.
            let wide = if sw < 64 {
                if src.is_signed() {
                    b.build_int_s_extend(x, e.int_vec(64), "")?
                } else {
                    b.build_int_z_extend(x, e.int_vec(64), "")?
                }
            } else {
                x
            };
            if dst == NumFormat::F16 {
                // Exact in f64 below 2^53; beyond, f16 overflows either way
                // and only the sign decides.
                let ft = e.vec_type(Type::F64);
                let d = if src.is_signed() {
                    b.build_signed_int_to_float(wide, ft, "")?
                } else {
                    b.build_unsigned_int_to_float(wide, ft, "")?
                };
                return to_f16(fl, d, Type::F64, round);
            }
            let ft = e.vec_type(dst_t);
            let r = if src.is_signed() {
                b.build_signed_int_to_float(wide, ft, "")?
            } else {
                b.build_unsigned_int_to_float(wide, ft, "")?
            };
            if round == Round::Nearest {
                return Ok(r);
            }
            // Compare r with the integer exactly: r is an integer-valued
            // float; above 2^63 (signed) / 2^64 (unsigned) it exceeds every source.
            let limit_bits = if src.is_signed() { 63 } else { 64 };
            let limit = if dst_t == Type::F64 {
                e.splat_const(Type::F64, (2f64).powi(limit_bits).to_bits())
            } else {
                e.splat_const(Type::F32, u64::from((2f32).powi(limit_bits).to_bits()))
            };
            let huge = b.build_float_compare(FloatPredicate::OGE, r, limit, "")?;
            let sat = if src.is_signed() {
                "llvm.fptosi.sat"
            } else {
                "llvm.fptoui.sat"
            };
            let back = e
                .call_intrinsic(sat, &[e.int_vec(64).into(), ft.into()], &[r.into()])?
                .into_vector_value();
            let (gt, lt) = if src.is_signed() {
                (IntPredicate::SGT, IntPredicate::SLT)
            } else {
                (IntPredicate::UGT, IntPredicate::ULT)
            };
            let above = b.build_int_compare(gt, back, wide, "")?;
            let above = b.build_or(above, huge, "")?;
            let below = b.build_int_compare(lt, back, wide, "")?;
            let below = b.build_and(below, b.build_not(huge, "")?, "")?;
            let negative = if src.is_signed() {
                b.build_int_compare(IntPredicate::SLT, wide, e.int_vec(64).const_zero(), "")?
            } else {
                e.i1().vec_type(LANES).const_zero()
            };
            direct(fl, r, dst_t, round, above, below, negative)
        }
        (true, true) => {
            let (x, st) = if src == NumFormat::F16 {
                (f16_to_f32(fl, x)?, Type::F32)
            } else {
                (x, src.ir_type())
            };
            let r = match (dst_t, st) {
                // From f16 the value is exact in f32, so only NaN changes.
                (Type::F16, st) => return to_f16(fl, x, st, round),
                (Type::F64, Type::F32) => b.build_float_ext(x, e.vec_type(Type::F64), "")?,
                (Type::F32, Type::F64) => {
                    let r = b.build_float_trunc(x, e.vec_type(Type::F32), "")?;
                    let rx = b.build_float_ext(r, e.vec_type(Type::F64), "")?;
                    let above = b.build_float_compare(FloatPredicate::OGT, rx, x, "")?;
                    let below = b.build_float_compare(FloatPredicate::OLT, rx, x, "")?;
                    let zero = e.vec_type(Type::F64).const_zero();
                    let negative = b.build_float_compare(FloatPredicate::OLT, x, zero, "")?;
                    direct(fl, r, Type::F32, round, above, below, negative)?
                }
                _ => x,
            };
            let bits = to_bits(fl, r, dst_t)?;
            let bits = canonical_nan(fl, r, bits, dst_t)?;
            from_bits(fl, bits, dst_t)
        }
    }
}
