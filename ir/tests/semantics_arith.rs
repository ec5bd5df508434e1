//! Integer and float arithmetic edge tables: total division (RISC-V), PTX
//! shift clamping, wrapping abs/neg, IEEE-2019 minimumNumber/maximumNumber,
//! comparisons, rounding, fma.

use proptest::prelude::*;
use warpjit_ir::semantics::{binary, compare, fma, unary};
use warpjit_ir::{BinaryOp, CmpOp, Type, UnaryOp};

const I32: Type = Type::I32;
const I64: Type = Type::I64;
const F32: Type = Type::F32;
const F64: Type = Type::F64;

fn w32(v: i32) -> u64 {
    v as u32 as u64
}
fn f(x: f32) -> u64 {
    x.to_bits() as u64
}
fn d(x: f64) -> u64 {
    x.to_bits()
}

#[test]
fn division_edge_table_i32() {
    use BinaryOp::*;
    let min = w32(i32::MIN);
    let rows: [(BinaryOp, u64, u64, u64); 16] = [
        (DivU, 7, 0, 0xffff_ffff),
        (DivU, 0, 0, 0xffff_ffff),
        (RemU, 7, 0, 7),
        (RemU, 0xffff_ffff, 0, 0xffff_ffff),
        (DivS, 7, 0, 0xffff_ffff),
        (DivS, w32(-7), 0, 0xffff_ffff),
        (RemS, w32(-7), 0, w32(-7)),
        (DivS, min, w32(-1), min),
        (RemS, min, w32(-1), 0),
        (DivS, w32(-7), 2, w32(-3)),
        (DivS, 7, w32(-2), w32(-3)),
        (RemS, w32(-7), 2, w32(-1)),
        (RemS, 7, w32(-2), 1),
        (RemS, w32(-7), w32(-2), w32(-1)),
        (DivU, 0xffff_fff9, 2, 0x7fff_fffc),
        (RemU, 0xffff_fff9, 2, 1),
    ];
    for (op, a, b, expected) in rows {
        assert_eq!(binary(op, I32, a, b), expected, "{op:?} {a:#x} {b:#x}");
    }
}

#[test]
fn division_edge_table_i64() {
    use BinaryOp::*;
    let min = i64::MIN as u64;
    let m1 = u64::MAX;
    assert_eq!(binary(DivU, I64, 9, 0), u64::MAX);
    assert_eq!(binary(RemU, I64, 9, 0), 9);
    assert_eq!(binary(DivS, I64, 9, 0), m1);
    assert_eq!(binary(RemS, I64, (-9i64) as u64, 0), (-9i64) as u64);
    assert_eq!(binary(DivS, I64, min, m1), min);
    assert_eq!(binary(RemS, I64, min, m1), 0);
    assert_eq!(binary(DivS, I64, (-9i64) as u64, 4), (-2i64) as u64);
    assert_eq!(binary(RemS, I64, (-9i64) as u64, 4), (-1i64) as u64);
    // i32 MIN as an i64 is an ordinary value.
    assert_eq!(binary(DivS, I64, w32(i32::MIN), m1), 0xffff_ffff_8000_0000);
}

#[test]
fn shift_clamping_ptx() {
    use BinaryOp::*;
    let neg = w32(-8);
    let rows: [(BinaryOp, u64, u64, u64); 14] = [
        (Shl, 1, 31, 0x8000_0000),
        (Shl, 1, 32, 0),
        (Shl, 1, 33, 0),
        (Shl, 1, 0xffff_ffff, 0),
        (Shl, 0xffff_ffff, 4, 0xffff_fff0),
        (ShrU, 0x8000_0000, 31, 1),
        (ShrU, 0x8000_0000, 32, 0),
        (ShrU, 0xffff_ffff, 100, 0),
        (ShrS, neg, 1, w32(-4)),
        (ShrS, neg, 31, 0xffff_ffff),
        (ShrS, neg, 32, 0xffff_ffff),
        (ShrS, neg, 0xffff_ffff, 0xffff_ffff),
        (ShrS, 0x7fff_ffff, 32, 0),
        (ShrS, 0x7fff_ffff, 30, 1),
    ];
    for (op, a, b, expected) in rows {
        assert_eq!(binary(op, I32, a, b), expected, "{op:?} {a:#x} {b:#x}");
    }
    assert_eq!(binary(Shl, I64, 1, 63), 1 << 63);
    assert_eq!(binary(Shl, I64, 1, 64), 0);
    assert_eq!(binary(ShrU, I64, u64::MAX, 64), 0);
    assert_eq!(binary(ShrS, I64, 1 << 63, 64), u64::MAX);
    assert_eq!(binary(ShrS, I64, 1 << 63, u64::MAX), u64::MAX);
    // An i32 amount of 32 is not masked to 0 (unlike x86 scalar shifts).
    assert_eq!(binary(Shl, I32, 5, 32), 0);
}

#[test]
fn wrapping_abs_neg_and_arithmetic() {
    assert_eq!(unary(UnaryOp::Abs, I32, w32(i32::MIN)), w32(i32::MIN));
    assert_eq!(unary(UnaryOp::Abs, I64, i64::MIN as u64), i64::MIN as u64);
    assert_eq!(unary(UnaryOp::Abs, I32, w32(-5)), 5);
    assert_eq!(unary(UnaryOp::Neg, I32, w32(i32::MIN)), w32(i32::MIN));
    assert_eq!(unary(UnaryOp::Neg, I32, 1), 0xffff_ffff);
    assert_eq!(unary(UnaryOp::Neg, I32, 0), 0);
    assert_eq!(unary(UnaryOp::Not, I32, 0), 0xffff_ffff);
    assert_eq!(unary(UnaryOp::Not, Type::Bool, 1), 0);
    assert_eq!(unary(UnaryOp::Not, Type::Bool, 0), 1);
    assert_eq!(binary(BinaryOp::Add, I32, 0xffff_ffff, 1), 0);
    assert_eq!(binary(BinaryOp::Mul, I32, 0x1_0001, 0x1_0001), 0x0002_0001);
    assert_eq!(binary(BinaryOp::Sub, I64, 0, 1), u64::MAX);
    assert_eq!(binary(BinaryOp::MinS, I32, 0xffff_ffff, 1), 0xffff_ffff);
    assert_eq!(binary(BinaryOp::MinU, I32, 0xffff_ffff, 1), 1);
    assert_eq!(binary(BinaryOp::MaxS, I32, 0xffff_ffff, 1), 1);
    assert_eq!(binary(BinaryOp::MaxU, I32, 0xffff_ffff, 1), 0xffff_ffff);
    assert_eq!(binary(BinaryOp::Xor, Type::Bool, 1, 1), 0);
    assert_eq!(binary(BinaryOp::Or, Type::Bool, 0, 1), 1);
    assert_eq!(binary(BinaryOp::And, Type::Bool, 1, 0), 0);
}

#[test]
fn float_min_max_are_ieee_2019_minimum_number() {
    use BinaryOp::{Max, Min};
    let nan = f(f32::NAN);
    assert_eq!(binary(Min, F32, nan, f(1.0)), f(1.0));
    assert_eq!(binary(Min, F32, f(1.0), nan), f(1.0));
    assert_eq!(binary(Max, F32, nan, f(-1.0)), f(-1.0));
    assert_eq!(binary(Max, F32, f(-1.0), 0xffff_ffff), f(-1.0));
    assert!(f32::from_bits(binary(Min, F32, nan, nan) as u32).is_nan());
    // -0 orders below +0, whatever the operand order.
    assert_eq!(binary(Min, F32, f(-0.0), f(0.0)), f(-0.0));
    assert_eq!(binary(Min, F32, f(0.0), f(-0.0)), f(-0.0));
    assert_eq!(binary(Max, F32, f(-0.0), f(0.0)), f(0.0));
    assert_eq!(binary(Max, F32, f(0.0), f(-0.0)), f(0.0));
    assert_eq!(binary(Min, F32, f(2.0), f(-3.0)), f(-3.0));
    assert_eq!(binary(Max, F32, f(2.0), f(-3.0)), f(2.0));
    assert_eq!(
        binary(Min, F32, f(f32::NEG_INFINITY), nan),
        f(f32::NEG_INFINITY)
    );
    assert_eq!(binary(Min, F64, d(f64::NAN), d(5.0)), d(5.0));
    assert_eq!(binary(Min, F64, d(0.0), d(-0.0)), d(-0.0));
    assert_eq!(binary(Max, F64, d(-0.0), d(0.0)), d(0.0));
}

#[test]
fn float_neg_and_abs_flip_the_sign_bit() {
    assert_eq!(unary(UnaryOp::Neg, F32, f(0.0)), f(-0.0));
    assert_eq!(unary(UnaryOp::Neg, F32, f(-2.5)), f(2.5));
    assert_eq!(unary(UnaryOp::Abs, F32, f(-0.0)), f(0.0));
    assert_eq!(unary(UnaryOp::Abs, F64, d(-3.0)), d(3.0));
    assert_eq!(unary(UnaryOp::Neg, F64, d(1.0)), d(-1.0));
    assert_eq!(unary(UnaryOp::IsNan, F32, 0xffff_ffff), 1);
    assert_eq!(unary(UnaryOp::IsNan, F32, f(f32::INFINITY)), 0);
}

#[test]
fn float_rounding_and_fract() {
    let u = |op, x: f32| f32::from_bits(unary(op, F32, f(x)) as u32);
    // round is half to even (HARDWARE.md 24).
    assert_eq!(u(UnaryOp::Round, 0.5), 0.0);
    assert_eq!(u(UnaryOp::Round, 1.5), 2.0);
    assert_eq!(u(UnaryOp::Round, 2.5), 2.0);
    assert_eq!(u(UnaryOp::Round, -2.5), -2.0);
    assert_eq!(unary(UnaryOp::Round, F32, f(-0.5)), f(-0.0));
    assert_eq!(u(UnaryOp::Floor, -0.5), -1.0);
    assert_eq!(u(UnaryOp::Ceil, -0.5), 0.0);
    assert_eq!(u(UnaryOp::Trunc, -1.75), -1.0);
    // fract(x) = x - floor(x).
    assert_eq!(u(UnaryOp::Fract, -0.25), 0.75);
    assert_eq!(u(UnaryOp::Fract, 3.5), 0.5);
    assert_eq!(unary(UnaryOp::Fract, F32, f(-0.0)), f(0.0));
    assert!(u(UnaryOp::Fract, f32::INFINITY).is_nan());
    assert_eq!(u(UnaryOp::Fract, 1e30), 0.0);
    // A tiny negative value: x - floor(x) = x + 1 rounds to 1.0.
    assert_eq!(u(UnaryOp::Fract, -1e-10), 1.0);
    assert_eq!(f64::from_bits(unary(UnaryOp::Round, F64, d(2.5))), 2.0);
}

#[test]
fn sqrt_rsq_rcp() {
    let u = |op, x: f32| f32::from_bits(unary(op, F32, f(x)) as u32);
    assert_eq!(u(UnaryOp::Sqrt, 4.0), 2.0);
    assert!(u(UnaryOp::Sqrt, -1.0).is_nan());
    assert_eq!(unary(UnaryOp::Sqrt, F32, f(-0.0)), f(-0.0));
    assert_eq!(u(UnaryOp::Rsq, 4.0), 0.5);
    assert_eq!(u(UnaryOp::Rsq, 0.0), f32::INFINITY);
    assert_eq!(u(UnaryOp::Rsq, -0.0), f32::NEG_INFINITY);
    assert_eq!(u(UnaryOp::Rsq, f32::INFINITY), 0.0);
    assert_eq!(u(UnaryOp::Rcp, -0.0), f32::NEG_INFINITY);
    assert_eq!(u(UnaryOp::Rcp, 4.0), 0.25);
    // rsq is two correctly rounded steps, not a fused reciprocal root:
    // 1 / sqrt(2) rounds twice.
    assert_eq!(u(UnaryOp::Rsq, 2.0), 1.0 / 2f32.sqrt());
    assert_eq!(u(UnaryOp::Rsq, 3.0), 1.0 / 3f32.sqrt());
}

#[test]
fn fma_rounds_once() {
    let e = 2f32.powi(-23);
    let (a, b) = (1.0 + e, 1.0 - e);
    // a*b = 1 - 2^-46 exactly; unfused it rounds to 1.0 first.
    assert_eq!(fma(F32, f(a), f(b), f(-1.0)), f(-(2f32.powi(-46))));
    assert_eq!(
        binary(
            BinaryOp::Add,
            F32,
            binary(BinaryOp::Mul, F32, f(a), f(b)),
            f(-1.0)
        ),
        f(0.0)
    );
    let e = 2f64.powi(-52);
    assert_eq!(
        fma(F64, d(1.0 + e), d(1.0 - e), d(-1.0)),
        d(-(2f64.powi(-104)))
    );
}

#[test]
fn comparisons() {
    use CmpOp::*;
    let nan = f(f32::NAN);
    for op in [Eq, Lt, Le, Gt, Ge] {
        assert!(!compare(op, F32, nan, f(1.0)), "{op:?}");
        assert!(!compare(op, F32, nan, nan), "{op:?}");
    }
    assert!(compare(Ne, F32, nan, nan));
    assert!(compare(Ne, F32, nan, f(1.0)));
    assert!(compare(Eq, F32, f(0.0), f(-0.0)));
    assert!(!compare(Lt, F32, f(-0.0), f(0.0)));
    assert!(compare(Le, F64, d(-0.0), d(0.0)));
    assert!(compare(Lt, F64, d(f64::NEG_INFINITY), d(-1e308)));
    // f16 (eq/ne work on every type).
    assert!(compare(Eq, Type::F16, 0x8000, 0x0000));
    assert!(!compare(Eq, Type::F16, 0x7e00, 0x7e00));
    assert!(compare(Ne, Type::F16, 0x7e00, 0x7e00));
    // Integers: bits for eq, signedness from the op.
    assert!(compare(LtS, I32, 0xffff_ffff, 1));
    assert!(!compare(LtU, I32, 0xffff_ffff, 1));
    assert!(compare(GeU, I32, 0x8000_0000, 0x7fff_ffff));
    assert!(!compare(GeS, I32, 0x8000_0000, 0x7fff_ffff));
    assert!(compare(LtS, I64, 1 << 63, 0));
    assert!(compare(Eq, Type::Bool, 1, 1));
    assert!(compare(Ne, Type::I8, 0x80, 0x7f));
    assert!(compare(Eq, Type::I16, 0x1_8000, 0x8000));
}

#[test]
fn pow_is_exp2_of_y_log2_x() {
    for (x, y) in [
        (2.0f32, 3.0f32),
        (10.0, 0.5),
        (0.0, 2.0),
        (-1.0, 0.5),
        (3.0, -2.0),
        (1.0, f32::NAN),
    ] {
        let log = unary(UnaryOp::Log2, F32, f(x));
        let product = binary(BinaryOp::Mul, F32, f(y), log);
        let expected = unary(UnaryOp::Exp2, F32, product);
        assert_eq!(binary(BinaryOp::Pow, F32, f(x), f(y)), expected, "{x} {y}");
    }
    let log = unary(UnaryOp::Log2, F64, d(7.0));
    let expected = unary(UnaryOp::Exp2, F64, binary(BinaryOp::Mul, F64, d(1.5), log));
    assert_eq!(binary(BinaryOp::Pow, F64, d(7.0), d(1.5)), expected);
}

proptest! {
    #[test]
    fn integer_ops_match_wrapping_std(a in any::<u32>(), b in any::<u32>()) {
        let (ua, ub) = (a as u64, b as u64);
        let (sa, sb) = (a as i32, b as i32);
        prop_assert_eq!(binary(BinaryOp::Add, I32, ua, ub), a.wrapping_add(b) as u64);
        prop_assert_eq!(binary(BinaryOp::Mul, I32, ua, ub), a.wrapping_mul(b) as u64);
        if let (Some(quotient), Some(remainder)) = (a.checked_div(b), a.checked_rem(b)) {
            prop_assert_eq!(binary(BinaryOp::DivU, I32, ua, ub), quotient as u64);
            prop_assert_eq!(binary(BinaryOp::RemU, I32, ua, ub), remainder as u64);
            prop_assert_eq!(binary(BinaryOp::DivS, I32, ua, ub), w32(sa.wrapping_div(sb)));
            prop_assert_eq!(binary(BinaryOp::RemS, I32, ua, ub), w32(sa.wrapping_rem(sb)));
        }
        let amount = b % 40;
        let shifted = |x: Option<u32>| x.map_or(0, |v| v as u64);
        prop_assert_eq!(binary(BinaryOp::Shl, I32, ua, amount as u64), shifted(a.checked_shl(amount)));
        prop_assert_eq!(binary(BinaryOp::ShrU, I32, ua, amount as u64), shifted(a.checked_shr(amount)));
        prop_assert_eq!(binary(BinaryOp::ShrS, I32, ua, amount as u64), w32(sa >> amount.min(31)));
        prop_assert_eq!(compare(CmpOp::LtS, I32, ua, ub), sa < sb);
        prop_assert_eq!(compare(CmpOp::LtU, I32, ua, ub), a < b);
    }

    #[test]
    fn results_never_exceed_the_type_width(a in any::<u64>(), b in any::<u64>()) {
        for op in warpjit_ir::all_binary() {
            for ty in [Type::Bool, I32, F32] {
                let mask = ty.bit_mask();
                prop_assert_eq!(binary(op, ty, a, b) & !mask, 0);
                // Stray high bits in the inputs are ignored.
                prop_assert_eq!(binary(op, ty, a & mask, b & mask), binary(op, ty, a, b));
            }
        }
        for op in warpjit_ir::all_unary() {
            let out = match op {
                UnaryOp::Btc | UnaryOp::Btfl | UnaryOp::BtfmS | UnaryOp::BtfmU => I32,
                UnaryOp::IsNan => Type::Bool,
                _ => I32,
            };
            prop_assert_eq!(unary(op, I32, a) & !out.bit_mask(), 0);
            prop_assert_eq!(unary(op, F32, a) & !0xffff_ffffu64, 0);
        }
    }
}
