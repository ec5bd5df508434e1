//! CVT, bitcasts, NaN canonicalization, PK64/UP64 and the conversions
//! between memory elements and registers.

use super::ieee::{self, FloatFormat, Integral};
use crate::ops::{NumFormat, Round};
use crate::types::Type;

fn float_format_of_type(ty: Type) -> Option<FloatFormat> {
    match ty {
        Type::F16 => Some(FloatFormat::F16),
        Type::F32 => Some(FloatFormat::F32),
        Type::F64 => Some(FloatFormat::F64),
        _ => None,
    }
}

fn float_format(f: NumFormat) -> Option<FloatFormat> {
    float_format_of_type(f.ir_type())
}

fn low_bits(value: u64, bits: u32) -> u64 {
    if bits >= 64 {
        value
    } else {
        value & ((1u64 << bits) - 1)
    }
}

/// `value`'s low `bits` bits read as a two's complement number.
pub(crate) fn sign_extend(value: u64, bits: u32) -> i64 {
    if bits == 0 || bits >= 64 {
        value as i64
    } else {
        let unused = 64 - bits;
        ((value << unused) as i64) >> unused
    }
}

/// The integer a register of integer format `f` holds.
fn read_int(f: NumFormat, a: u64) -> i128 {
    if f.is_signed() {
        sign_extend(a, f.bits()) as i128
    } else {
        low_bits(a, f.bits()) as i128
    }
}

/// The range of integer format `f`.
fn int_range(f: NumFormat) -> (i128, i128) {
    let bits = f.bits();
    if f.is_signed() {
        (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)
    } else {
        (0, (1i128 << bits) - 1)
    }
}

/// CVT.dst.src with rounding modifier `round` (NV_gpu_program5 CVT plus the
/// hardware facts of HARDWARE.md 21-24). `a` holds a value of
/// `src.ir_type()`; the result holds a value of `dst.ir_type()`.
///
/// - int -> int: the source is sign- or zero-extended per `src`, then the
///   bits above `dst`'s width are dropped (no SAT exists).
/// - int -> float and float -> float: correctly rounded by `round`
///   (denormals kept, overflow to infinity only toward infinity); NaN becomes
///   the canonical NaN.
/// - float -> int: rounded to an integer by `round`, then saturated to the
///   range of `dst`; NaN gives 0, except S64 gives 0x8000000000000000.
pub fn cvt(dst: NumFormat, src: NumFormat, round: Round, a: u64) -> u64 {
    let a = low_bits(a, src.bits());
    let result = match (float_format(dst), float_format(src)) {
        (Some(to), Some(from)) => ieee::convert_float(to, from, a, round),
        (Some(to), None) => {
            let value = read_int(src, a);
            ieee::round_to_float(to, value < 0, value.unsigned_abs(), 0, round)
        }
        (None, Some(from)) => float_to_int(dst, ieee::round_to_integer(from, a, round)),
        (None, None) => read_int(src, a) as u64,
    };
    low_bits(result, dst.bits())
}

fn float_to_int(dst: NumFormat, value: Integral) -> u64 {
    let (min, max) = int_range(dst);
    let clamped = match value {
        Integral::Nan if dst == NumFormat::S64 => min,
        Integral::Nan => 0,
        Integral::Huge { neg } => {
            if neg {
                min
            } else {
                max
            }
        }
        Integral::Value(v) => v.clamp(min, max),
    };
    clamped as u64
}

/// The NaN warpjit writes whenever float bits become visible: the one the
/// NVIDIA GPU produces (HARDWARE.md 23). Zero for non-float types.
pub fn canonical_nan_bits(ty: Type) -> u64 {
    float_format_of_type(ty).map_or(0, FloatFormat::canonical_nan)
}

/// `a` with any NaN of float type `ty` replaced by the canonical NaN; other
/// values and non-float types unchanged.
pub fn canonicalize(ty: Type, a: u64) -> u64 {
    match float_format_of_type(ty) {
        Some(fmt) if fmt.is_nan(a & ty.bit_mask()) => fmt.canonical_nan(),
        _ => a & ty.bit_mask(),
    }
}

/// True when `a` is a NaN of float type `ty`.
pub fn is_nan(ty: Type, a: u64) -> bool {
    float_format_of_type(ty).is_some_and(|fmt| fmt.is_nan(a & ty.bit_mask()))
}

/// `bitcast.to` of a value of type `from` (same width). A NaN source gives
/// the canonical NaN's bits: float bits become visible here.
pub fn bitcast(from: Type, to: Type, a: u64) -> u64 {
    canonicalize(from, a) & to.bit_mask()
}

/// PK64: `lo` is the low word, `hi` the high word (little-endian, HARDWARE.md 27).
pub fn pk64(lo: u64, hi: u64) -> u64 {
    (lo & 0xffff_ffff) | (hi << 32)
}

/// UP64: (low word, high word).
pub fn up64(a: u64) -> (u64, u64) {
    (a & 0xffff_ffff, a >> 32)
}

/// The register value a load of one element of format `elem` produces from
/// the element's raw little-endian bits: narrow integers sign- or
/// zero-extend to i32, f16 widens exactly to f32 (f16 NaN -> 0x7fffffff).
pub fn load_convert(elem: NumFormat, raw: u64) -> u64 {
    let raw = low_bits(raw, elem.bits());
    match elem {
        NumFormat::S8 | NumFormat::S16 => sign_extend(raw, elem.bits()) as u32 as u64,
        NumFormat::F16 => ieee::f16_to_f32_bits(raw as u16) as u64,
        _ => raw,
    }
}

/// The raw element bits a store of format `elem` writes for a value of type
/// `value_ty` (the register type of `elem` or the exact narrow type):
/// integers keep their low bits; f32 -> f16 rounds to nearest even; every
/// float NaN is written as the canonical NaN.
pub fn store_convert(elem: NumFormat, value_ty: Type, a: u64) -> u64 {
    let a = a & value_ty.bit_mask();
    match (float_format(elem), float_format_of_type(value_ty)) {
        (Some(to), Some(from)) if to != from => ieee::convert_float(to, from, a, Round::Nearest),
        (Some(to), _) if to.is_nan(low_bits(a, elem.bits())) => to.canonical_nan(),
        _ => low_bits(a, elem.bits()),
    }
}
