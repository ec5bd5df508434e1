//! Arithmetic, logic and comparisons on one lane.
//!
//! Integer operations wrap and are total (division by zero, `MIN / -1` and
//! oversized shifts all have defined results). Float operations are IEEE 754
//! with denormals kept and no contraction; only `fma` fuses.
//!
//! Operations the verifier rejects for a type (e.g. `sqrt` on i32, anything
//! arithmetic on f16) return 0 rather than panic.

use super::bitfield;
use super::convert::sign_extend;
use super::ieee::{self, FloatFormat};
use super::math;
use crate::ops::{BinaryOp, CmpOp, UnaryOp};
use crate::types::Type;

/// The float operations shared by f32 and f64, so each rule is written once.
trait Real: Copy + PartialEq + PartialOrd {
    const SIGN_BIT: u64;
    fn from_lane(a: u64) -> Self;
    fn to_lane(self) -> u64;
    fn is_nan(self) -> bool;
    fn is_sign_negative(self) -> bool;
    fn add(self, b: Self) -> Self;
    fn sub(self, b: Self) -> Self;
    fn mul(self, b: Self) -> Self;
    fn div(self, b: Self) -> Self;
    fn one() -> Self;
    fn floor(self) -> Self;
    fn ceil(self) -> Self;
    fn round_even(self) -> Self;
    fn trunc(self) -> Self;
    fn sqrt(self) -> Self;
    fn mul_add(self, b: Self, c: Self) -> Self;
    fn exp2(self) -> Self;
    fn log2(self) -> Self;
    fn sin(self) -> Self;
    fn cos(self) -> Self;
}

macro_rules! impl_real {
    ($t:ty, $bits:ty, $sign:expr, $exp2:path, $log2:path, $sin:path, $cos:path) => {
        impl Real for $t {
            const SIGN_BIT: u64 = $sign;
            fn from_lane(a: u64) -> Self {
                <$t>::from_bits(a as $bits)
            }
            fn to_lane(self) -> u64 {
                self.to_bits() as u64
            }
            fn is_nan(self) -> bool {
                <$t>::is_nan(self)
            }
            fn is_sign_negative(self) -> bool {
                <$t>::is_sign_negative(self)
            }
            fn add(self, b: Self) -> Self {
                self + b
            }
            fn sub(self, b: Self) -> Self {
                self - b
            }
            fn mul(self, b: Self) -> Self {
                self * b
            }
            fn div(self, b: Self) -> Self {
                self / b
            }
            fn one() -> Self {
                1.0
            }
            fn floor(self) -> Self {
                <$t>::floor(self)
            }
            fn ceil(self) -> Self {
                <$t>::ceil(self)
            }
            fn round_even(self) -> Self {
                <$t>::round_ties_even(self)
            }
            fn trunc(self) -> Self {
                <$t>::trunc(self)
            }
            fn sqrt(self) -> Self {
                <$t>::sqrt(self)
            }
            fn mul_add(self, b: Self, c: Self) -> Self {
                <$t>::mul_add(self, b, c)
            }
            fn exp2(self) -> Self {
                $exp2(self)
            }
            fn log2(self) -> Self {
                $log2(self)
            }
            fn sin(self) -> Self {
                $sin(self)
            }
            fn cos(self) -> Self {
                $cos(self)
            }
        }
    };
}

impl_real!(
    f32,
    u32,
    1 << 31,
    math::exp2_f32,
    math::log2_f32,
    math::sin_f32,
    math::cos_f32
);
impl_real!(
    f64,
    u64,
    1 << 63,
    math::exp2_f64,
    math::log2_f64,
    math::sin_f64,
    math::cos_f64
);

/// The result of `op` on one lane; `ty` is the operand type. Btc, Btfl and
/// Btfm give i32 bits, IsNan a bool.
pub fn unary(op: UnaryOp, ty: Type, a: u64) -> u64 {
    let a = a & ty.bit_mask();
    match ty {
        Type::F32 => float_unary::<f32>(op, a),
        Type::F64 => float_unary::<f64>(op, a),
        Type::F16 => 0,
        Type::Bool => match op {
            UnaryOp::Not => a ^ 1,
            _ => 0,
        },
        Type::I8 | Type::I16 | Type::I32 | Type::I64 => int_unary(op, ty, a),
    }
}

fn int_unary(op: UnaryOp, ty: Type, a: u64) -> u64 {
    use UnaryOp::*;
    let mask = ty.bit_mask();
    match op {
        Neg => a.wrapping_neg() & mask,
        Abs => (sign_extend(a, ty.bits()).wrapping_abs() as u64) & mask,
        Not => !a & mask,
        Bfr => bitfield::bfr(ty, a),
        Btc => bitfield::btc(ty, a),
        Btfl => bitfield::btfl(ty, a),
        BtfmS => bitfield::btfm_s(ty, a),
        BtfmU => bitfield::btfm_u(ty, a),
        Floor | Ceil | Round | Trunc | Fract | Sqrt | Rsq | Rcp | Exp2 | Log2 | Sin | Cos
        | IsNan => 0,
    }
}

fn float_unary<T: Real>(op: UnaryOp, a: u64) -> u64 {
    use UnaryOp::*;
    let x = T::from_lane(a);
    let value = match op {
        // Sign-bit operations, as IEEE negate and abs are.
        Neg => return a ^ T::SIGN_BIT,
        Abs => return a & !T::SIGN_BIT,
        IsNan => return x.is_nan() as u64,
        Floor => x.floor(),
        Ceil => x.ceil(),
        Round => x.round_even(),
        Trunc => x.trunc(),
        Fract => x.sub(x.floor()),
        Sqrt => x.sqrt(),
        Rsq => T::one().div(x.sqrt()),
        Rcp => T::one().div(x),
        Exp2 => x.exp2(),
        Log2 => x.log2(),
        Sin => x.sin(),
        Cos => x.cos(),
        Not | Bfr | Btc | Btfl | BtfmS | BtfmU => return 0,
    };
    value.to_lane()
}

/// The result of `op` on one lane; `ty` is the operand (and result) type.
pub fn binary(op: BinaryOp, ty: Type, a: u64, b: u64) -> u64 {
    let (a, b) = (a & ty.bit_mask(), b & ty.bit_mask());
    match ty {
        Type::F32 => float_binary::<f32>(op, a, b),
        Type::F64 => float_binary::<f64>(op, a, b),
        Type::F16 => 0,
        Type::Bool | Type::I8 | Type::I16 | Type::I32 | Type::I64 => int_binary(op, ty, a, b),
    }
}

fn int_binary(op: BinaryOp, ty: Type, a: u64, b: u64) -> u64 {
    use BinaryOp::*;
    let width = ty.bits();
    let mask = ty.bit_mask();
    let (sa, sb) = (sign_extend(a, width), sign_extend(b, width));
    let result = match op {
        Add => a.wrapping_add(b),
        Sub => a.wrapping_sub(b),
        Mul => a.wrapping_mul(b),
        And => a & b,
        Or => a | b,
        Xor => a ^ b,
        // RISC-V's total division: x/0 = all ones, x%0 = x, MIN/-1 = MIN,
        // MIN%-1 = 0 (the wrapping ops give the last two).
        DivU => a.checked_div(b).unwrap_or(u64::MAX),
        RemU => a.checked_rem(b).unwrap_or(a),
        DivS if sb == 0 => u64::MAX,
        DivS => sa.wrapping_div(sb) as u64,
        RemS if sb == 0 => a,
        RemS => sa.wrapping_rem(sb) as u64,
        MinS => sa.min(sb) as u64,
        MaxS => sa.max(sb) as u64,
        MinU => a.min(b),
        MaxU => a.max(b),
        // PTX clamping: amounts are unsigned, and an amount >= the width
        // shifts every bit out (all sign bits for shr.s).
        Shl if b >= width as u64 => 0,
        Shl => a << b,
        ShrU if b >= width as u64 => 0,
        ShrU => a >> b,
        ShrS => (sa >> b.min(63)) as u64,
        Div | Min | Max | Pow => 0,
    };
    result & mask
}

fn float_binary<T: Real>(op: BinaryOp, a: u64, b: u64) -> u64 {
    use BinaryOp::*;
    let (x, y) = (T::from_lane(a), T::from_lane(b));
    let value = match op {
        Add => x.add(y),
        Sub => x.sub(y),
        Mul => x.mul(y),
        Div => x.div(y),
        Min => return minimum_number::<T>(a, b, true),
        Max => return minimum_number::<T>(a, b, false),
        Pow => y.mul(x.log2()).exp2(),
        _ => return 0,
    };
    value.to_lane()
}

/// IEEE 754-2019 minimumNumber (`min`) / maximumNumber (`!min`): a NaN
/// operand loses to a number, and -0 orders below +0.
fn minimum_number<T: Real>(a: u64, b: u64, min: bool) -> u64 {
    let (x, y) = (T::from_lane(a), T::from_lane(b));
    match (x.is_nan(), y.is_nan()) {
        (true, _) => return b,
        (false, true) => return a,
        _ => {}
    }
    if x == y {
        // Equal values differ only for zeros: pick by the sign bit.
        let x_first = x.is_sign_negative() == min;
        return if x_first { a } else { b };
    }
    if (x < y) == min {
        a
    } else {
        b
    }
}

/// `fma a, b, c`: a*b+c with one rounding.
pub fn fma(ty: Type, a: u64, b: u64, c: u64) -> u64 {
    fn fused<T: Real>(a: u64, b: u64, c: u64) -> u64 {
        T::from_lane(a)
            .mul_add(T::from_lane(b), T::from_lane(c))
            .to_lane()
    }
    match ty {
        Type::F32 => fused::<f32>(a, b, c),
        Type::F64 => fused::<f64>(a, b, c),
        _ => 0,
    }
}

/// The comparison `op` on one lane; `ty` is the operand type.
///
/// For floats (f16 included, for `eq`/`ne`), `eq` and the ordered
/// comparisons are false when either side is NaN, `ne` is true; -0 == +0.
/// For bool and integers, `eq`/`ne` compare bits, `.s`/`.u` read the
/// operands as signed/unsigned.
pub fn compare(op: CmpOp, ty: Type, a: u64, b: u64) -> bool {
    use CmpOp::*;
    let (a, b) = (a & ty.bit_mask(), b & ty.bit_mask());
    let float = match ty {
        Type::F16 => Some(FloatFormat::F16),
        Type::F32 => Some(FloatFormat::F32),
        Type::F64 => Some(FloatFormat::F64),
        _ => None,
    };
    if let Some(fmt) = float {
        let (x, y) = (ieee::to_f64(fmt, a), ieee::to_f64(fmt, b));
        return match op {
            Eq => x == y,
            Ne => x != y,
            Lt | LtS | LtU => x < y,
            Le | LeS | LeU => x <= y,
            Gt | GtS | GtU => x > y,
            Ge | GeS | GeU => x >= y,
        };
    }
    let (sa, sb) = (sign_extend(a, ty.bits()), sign_extend(b, ty.bits()));
    match op {
        Eq => a == b,
        Ne => a != b,
        LtS | Lt => sa < sb,
        LeS | Le => sa <= sb,
        GtS | Gt => sa > sb,
        GeS | Ge => sa >= sb,
        LtU => a < b,
        LeU => a <= b,
        GtU => a > b,
        GeU => a >= b,
    }
}
