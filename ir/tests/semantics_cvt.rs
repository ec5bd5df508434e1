//! CVT: NV_gpu_program5's conversion rules and HARDWARE.md 21-26, with the
//! rounding checked against exact reference arithmetic.

use proptest::prelude::*;
use warpjit_ir::semantics::cvt;
use warpjit_ir::NumFormat::{self, *};
use warpjit_ir::Round::{self, Ceil, Floor, Nearest, Trunc};

const ROUNDS: [Round; 4] = [Nearest, Ceil, Floor, Trunc];

fn f32b(x: f32) -> u64 {
    x.to_bits() as u64
}
fn f64b(x: f64) -> u64 {
    x.to_bits()
}

// ---- float -> int (HARDWARE.md 21) ----

#[test]
fn float_to_int_saturates_hardware_21() {
    let two_31 = f32b(2147483648.0);
    for r in ROUNDS {
        assert_eq!(cvt(S32, F32, r, two_31), 0x7fff_ffff);
        assert_eq!(cvt(S32, F32, r, f32b(-2147483648.0)), 0x8000_0000);
        assert_eq!(cvt(S32, F32, r, f32b(-3e9)), 0x8000_0000);
        assert_eq!(cvt(U32, F32, r, f32b(5e9)), 0xffff_ffff);
        assert_eq!(cvt(U32, F32, r, f32b(-1.0)), 0);
        assert_eq!(cvt(U32, F32, r, f32b(-1e30)), 0);
        // Narrow results saturate to their own range (2^31 -> 0x7fff, ...).
        assert_eq!(cvt(S16, F32, r, two_31), 0x7fff);
        assert_eq!(cvt(U8, F32, r, two_31), 0xff);
        assert_eq!(cvt(S8, F32, r, two_31), 0x7f);
        assert_eq!(cvt(U16, F32, r, two_31), 0xffff);
        assert_eq!(cvt(S16, F32, r, f32b(-1e6)), 0x8000);
        assert_eq!(cvt(S8, F32, r, f32b(-1e6)), 0x80);
        assert_eq!(cvt(U16, F32, r, f32b(-7.0)), 0);
    }
}

#[test]
fn float_to_int_specials_hardware_21() {
    let (inf, ninf, nan) = (f32b(f32::INFINITY), f32b(f32::NEG_INFINITY), 0x7fc0_0000);
    for r in ROUNDS {
        assert_eq!(cvt(S32, F32, r, inf), 0x7fff_ffff);
        assert_eq!(cvt(S32, F32, r, ninf), 0x8000_0000);
        assert_eq!(cvt(S32, F32, r, nan), 0);
        assert_eq!(cvt(U32, F32, r, inf), 0xffff_ffff);
        assert_eq!(cvt(U32, F32, r, ninf), 0);
        assert_eq!(cvt(U32, F32, r, nan), 0);
        assert_eq!(cvt(S16, F32, r, nan), 0);
        assert_eq!(cvt(U8, F32, r, nan), 0);
        // S64: +inf -> MAX, -inf and NaN -> MIN (measured).
        assert_eq!(cvt(S64, F32, r, inf), 0x7fff_ffff_ffff_ffff);
        assert_eq!(cvt(S64, F32, r, ninf), 0x8000_0000_0000_0000);
        assert_eq!(cvt(S64, F32, r, nan), 0x8000_0000_0000_0000);
        assert_eq!(cvt(S64, F32, r, 0xffff_ffff), 0x8000_0000_0000_0000);
        assert_eq!(cvt(S64, F64, r, f64b(f64::NAN)), 0x8000_0000_0000_0000);
        assert_eq!(cvt(U64, F32, r, nan), 0);
        assert_eq!(cvt(U64, F32, r, inf), u64::MAX);
        assert_eq!(cvt(U64, F32, r, ninf), 0);
        // f16 sources: 0x7c00 = +inf, 0x7e00 = NaN.
        assert_eq!(cvt(S32, F16, r, 0x7c00), 0x7fff_ffff);
        assert_eq!(cvt(S32, F16, r, 0x7e00), 0);
        assert_eq!(cvt(S64, F16, r, 0x7e00), 0x8000_0000_0000_0000);
    }
}

#[test]
fn float_to_int_rounding_modifiers() {
    // (value, ROUND, CEIL, FLR, TRUNC), as NV_gpu_program5 describes them.
    let table: [(f32, [i32; 4]); 8] = [
        (2.5, [2, 3, 2, 2]),
        (3.5, [4, 4, 3, 3]),
        (-2.5, [-2, -2, -3, -2]),
        (-0.5, [0, 0, -1, 0]),
        (0.5, [0, 1, 0, 0]),
        (1.25, [1, 2, 1, 1]),
        (-1.75, [-2, -1, -2, -1]),
        (-0.0, [0, 0, 0, 0]),
    ];
    for (x, expected) in table {
        for (r, e) in ROUNDS.into_iter().zip(expected) {
            assert_eq!(cvt(S32, F32, r, f32b(x)), e as u32 as u64, "{x} {r:?}");
            assert_eq!(
                cvt(S64, F64, r, f64b(x as f64)),
                e as i64 as u64,
                "{x} {r:?}"
            );
        }
    }
    // Largest f32 below 2^31 converts exactly.
    assert_eq!(cvt(S32, F32, Nearest, f32b(2147483520.0)), 2147483520);
    assert_eq!(
        cvt(U64, F64, Nearest, f64b(18446744073709549568.0)),
        18446744073709549568
    );
    assert_eq!(
        cvt(U64, F64, Nearest, f64b(18446744073709551616.0)),
        u64::MAX
    );
}

/// A float value as an f64 (exact for f16, f32, f64).
fn float_value(fmt: NumFormat, bits: u64) -> f64 {
    match fmt {
        F64 => f64::from_bits(bits),
        F32 => f32::from_bits(bits as u32) as f64,
        F16 => f16_value(bits as u16),
        _ => unreachable!("not a float format"),
    }
}

/// An f16's value computed from its fields.
fn f16_value(h: u16) -> f64 {
    let sign = if h & 0x8000 != 0 { -1.0 } else { 1.0 };
    let exp = (h >> 10) & 0x1f;
    let frac = (h & 0x3ff) as f64;
    match exp {
        0 => sign * frac * 2f64.powi(-24),
        31 if frac == 0.0 => sign * f64::INFINITY,
        31 => f64::NAN,
        e => sign * (1024.0 + frac) * 2f64.powi(e as i32 - 25),
    }
}

fn int_range(f: NumFormat) -> (i128, i128) {
    let bits = f.bits();
    if f.is_signed() {
        (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)
    } else {
        (0, (1i128 << bits) - 1)
    }
}

/// Reference float -> int through std's exact f64 rounding functions.
fn reference_float_to_int(dst: NumFormat, x: f64, r: Round) -> u64 {
    if x.is_nan() {
        return if dst == S64 { 1 << 63 } else { 0 };
    }
    let rounded = match r {
        Nearest => x.round_ties_even(),
        Ceil => x.ceil(),
        Floor => x.floor(),
        Trunc => x.trunc(),
    };
    let (min, max) = int_range(dst);
    let v = (rounded as i128).clamp(min, max);
    let bits = dst.bits();
    (v as u64)
        & if bits == 64 {
            u64::MAX
        } else {
            (1 << bits) - 1
        }
}

const INT_FORMATS: [NumFormat; 8] = [S8, S16, S32, S64, U8, U16, U32, U64];

proptest! {
    #[test]
    fn f64_to_int_matches_reference(bits in any::<u64>(), scale in -70i32..70, r in 0usize..4) {
        // Half the cases near integers of every magnitude.
        let x = if scale % 2 == 0 {
            f64::from_bits(bits)
        } else {
            ((bits >> 11) as f64 / 2f64.powi(53)) * 2f64.powi(scale) - 2f64.powi(scale - 1)
        };
        for dst in INT_FORMATS {
            prop_assert_eq!(
                cvt(dst, F64, ROUNDS[r], f64b(x)),
                reference_float_to_int(dst, x, ROUNDS[r]),
                "{} {:?} {:?}", x, dst, ROUNDS[r]
            );
        }
    }

    #[test]
    fn f32_to_int_matches_reference(bits in any::<u32>(), r in 0usize..4) {
        let x = f32::from_bits(bits) as f64;
        for dst in INT_FORMATS {
            prop_assert_eq!(
                cvt(dst, F32, ROUNDS[r], bits as u64),
                reference_float_to_int(dst, x, ROUNDS[r])
            );
        }
    }
}

#[test]
fn f16_to_int_all_halves() {
    for h in 0..=0xffffu64 {
        let x = f16_value(h as u16);
        for r in ROUNDS {
            for dst in INT_FORMATS {
                assert_eq!(
                    cvt(dst, F16, r, h),
                    reference_float_to_int(dst, x, r),
                    "{h:#x}"
                );
            }
        }
    }
}

// ---- int -> int (HARDWARE.md 22) ----

#[test]
fn int_to_int_drops_high_bits_hardware_22() {
    assert_eq!(cvt(S16, S32, Nearest, 0x1234_8765), 0x8765);
    assert_eq!(cvt(U8, S32, Nearest, 0x1ff), 0xff);
    assert_eq!(cvt(S8, U32, Nearest, 0x180), 0x80);
    assert_eq!(cvt(U16, U32, Nearest, 0xdead_beef), 0xbeef);
    // Widening extends per the source format.
    assert_eq!(cvt(S32, S16, Nearest, 0x8000), 0xffff_8000);
    assert_eq!(cvt(U32, S16, Nearest, 0x8000), 0xffff_8000);
    assert_eq!(cvt(S32, U16, Nearest, 0x8000), 0x8000);
    assert_eq!(cvt(S64, S32, Nearest, 0xffff_ffff), u64::MAX);
    assert_eq!(cvt(S64, U32, Nearest, 0xffff_ffff), 0xffff_ffff);
    assert_eq!(cvt(U64, S8, Nearest, 0x80), 0xffff_ffff_ffff_ff80);
    assert_eq!(cvt(S32, S64, Ceil, 0x1_0000_0005), 5);
}

proptest! {
    #[test]
    fn int_to_int_is_extend_then_truncate(a in any::<u64>(), s in 0usize..8, d in 0usize..8, r in 0usize..4) {
        let (src, dst) = (INT_FORMATS[s], INT_FORMATS[d]);
        let value: i128 = if src.is_signed() {
            let shift = 128 - src.bits();
            ((a as i128) << shift) >> shift
        } else {
            (a as u128 & ((1u128 << src.bits()) - 1)) as i128
        };
        let expected = (value as u128 & ((1u128 << dst.bits()) - 1)) as u64;
        prop_assert_eq!(cvt(dst, src, ROUNDS[r], a), expected);
    }
}

// ---- conversions to f16 and between floats (HARDWARE.md 23, 26) ----

#[test]
fn f32_to_f16_values_hardware_23() {
    assert_eq!(cvt(F16, F32, Nearest, f32b(0.5)), 0x3800);
    assert_eq!(cvt(F16, F32, Ceil, f32b(65519.0)), 0x7c00);
    assert_eq!(cvt(F16, F32, Nearest, f32b(65520.0)), 0x7c00);
    assert_eq!(cvt(F16, F32, Nearest, f32b(65519.0)), 0x7bff);
    assert_eq!(cvt(F16, F32, Trunc, f32b(65519.0)), 0x7bff);
    assert_eq!(cvt(F16, F32, Floor, f32b(65519.0)), 0x7bff);
    // Out of range: the largest finite half unless rounding toward infinity.
    assert_eq!(cvt(F16, F32, Trunc, f32b(1e6)), 0x7bff);
    assert_eq!(cvt(F16, F32, Floor, f32b(1e6)), 0x7bff);
    assert_eq!(cvt(F16, F32, Ceil, f32b(1e6)), 0x7c00);
    assert_eq!(cvt(F16, F32, Floor, f32b(-1e6)), 0xfc00);
    assert_eq!(cvt(F16, F32, Ceil, f32b(-1e6)), 0xfbff);
    assert_eq!(cvt(F16, F32, Trunc, f32b(-1e6)), 0xfbff);
    assert_eq!(cvt(F16, F32, Nearest, f32b(-1e6)), 0xfc00);
    // Infinities stay infinite in every mode; NaN -> 0x7fff.
    for r in ROUNDS {
        assert_eq!(cvt(F16, F32, r, f32b(f32::INFINITY)), 0x7c00);
        assert_eq!(cvt(F16, F32, r, f32b(f32::NEG_INFINITY)), 0xfc00);
        assert_eq!(cvt(F16, F32, r, 0x7fc0_0000), 0x7fff);
        assert_eq!(cvt(F16, F32, r, 0xffff_ffff), 0x7fff);
        assert_eq!(cvt(F16, F64, r, f64b(f64::NAN)), 0x7fff);
    }
    // Denormal halves are produced exactly.
    assert_eq!(cvt(F16, F32, Nearest, f32b(2f32.powi(-24))), 0x0001);
    assert_eq!(cvt(F16, F32, Nearest, f32b(-(2f32.powi(-24)))), 0x8001);
    assert_eq!(cvt(F16, F32, Nearest, f32b(2f32.powi(-15))), 0x0200);
    // Half of the smallest denormal: tie to even (0); directed modes differ.
    let half_min = f32b(2f32.powi(-25));
    assert_eq!(cvt(F16, F32, Nearest, half_min), 0x0000);
    assert_eq!(cvt(F16, F32, Ceil, half_min), 0x0001);
    assert_eq!(cvt(F16, F32, Floor, half_min), 0x0000);
    assert_eq!(cvt(F16, F32, Floor, f32b(-(2f32.powi(-25)))), 0x8001);
    assert_eq!(cvt(F16, F32, Nearest, f32b(3.0 * 2f32.powi(-26))), 0x0001);
    // Signed zeros survive.
    assert_eq!(cvt(F16, F32, Nearest, f32b(-0.0)), 0x8000);
    assert_eq!(cvt(F16, F32, Ceil, f32b(-1e-30)), 0x8000);
}

#[test]
fn f16_to_f32_values_hardware_23() {
    assert_eq!(cvt(F32, F16, Nearest, 0x3800), f32b(0.5));
    assert_eq!(cvt(F32, F16, Nearest, 0x0001), f32b(2f32.powi(-24)));
    assert_eq!(cvt(F32, F16, Nearest, 0x7c00), f32b(f32::INFINITY));
    assert_eq!(cvt(F32, F16, Nearest, 0xfc00), f32b(f32::NEG_INFINITY));
    assert_eq!(cvt(F32, F16, Nearest, 0x7e00), 0x7fff_ffff);
    assert_eq!(cvt(F32, F16, Nearest, 0xfc01), 0x7fff_ffff);
    assert_eq!(cvt(F64, F16, Nearest, 0x7e00), 0x7fff_ffff_ffff_ffff);
    // Only the low 16 bits are read.
    assert_eq!(cvt(F32, F16, Nearest, 0xffff_3800), f32b(0.5));
}

#[test]
fn f32_denormal_widens_exactly_hardware_26() {
    assert_eq!(cvt(F64, F32, Nearest, 1), f64b(2f64.powi(-149)));
    assert_eq!(cvt(F64, F32, Nearest, 0x7fc0_0001), 0x7fff_ffff_ffff_ffff);
    assert_eq!(cvt(F32, F64, Nearest, f64b(2f64.powi(-149))), 1);
    assert_eq!(cvt(F32, F64, Nearest, f64b(2f64.powi(-150))), 0);
    assert_eq!(cvt(F32, F64, Ceil, f64b(2f64.powi(-1000))), 1);
    assert_eq!(cvt(F32, F64, Trunc, f64b(1e300)), f32b(f32::MAX));
    assert_eq!(cvt(F32, F64, Nearest, f64b(1e300)), f32b(f32::INFINITY));
}

#[test]
fn f16_round_trips_for_all_halves() {
    for h in 0..=0xffffu64 {
        let single = cvt(F32, F16, Nearest, h);
        let double = cvt(F64, F16, Nearest, h);
        let x = f16_value(h as u16);
        if x.is_nan() {
            assert_eq!(single, 0x7fff_ffff);
            assert_eq!(double, 0x7fff_ffff_ffff_ffff);
            for r in ROUNDS {
                assert_eq!(cvt(F16, F32, r, single), 0x7fff);
            }
            continue;
        }
        // Widening is exact and keeps the sign of zero.
        assert_eq!(single, f32b(x as f32), "{h:#x}");
        assert_eq!(double, f64b(x), "{h:#x}");
        assert_eq!(cvt(F64, F32, Nearest, single), double);
        // Narrowing an exact value gives it back in every mode.
        for r in ROUNDS {
            assert_eq!(cvt(F16, F32, r, single), h, "{h:#x} {r:?}");
            assert_eq!(cvt(F16, F64, r, double), h, "{h:#x} {r:?}");
            assert_eq!(cvt(F16, F16, r, h), h);
        }
    }
}

/// Bits of the next float above `bits` in a format whose positive values
/// are ordered by their bits (sign bit `sign`).
fn next_up(bits: u64, sign: u64) -> u64 {
    if bits == sign {
        1 // -0 -> smallest positive denormal
    } else if bits & sign != 0 {
        bits - 1
    } else {
        bits + 1
    }
}
fn next_down(bits: u64, sign: u64) -> u64 {
    if bits == 0 {
        sign | 1
    } else if bits & sign != 0 {
        bits + 1
    } else {
        bits - 1
    }
}

/// Checks that `result` (bits of `fmt`, f16 or f32) is the correctly
/// rounded neighbour of the exact f64 `x` under `r`. Values and midpoints
/// of f16/f32 are exact in f64; the step past the largest finite value
/// is 2^(emax+1), as IEEE 754 defines the overflow threshold.
fn check_rounded(fmt: NumFormat, x: f64, r: Round, result: u64) -> Result<(), String> {
    let (sign, inf, overflow_step) = match fmt {
        F16 => (0x8000u64, 0x7c00u64, 65536.0f64),
        F32 => (0x8000_0000, 0x7f80_0000, 2f64.powi(128)),
        _ => unreachable!("narrow float formats only"),
    };
    let value = |bits: u64| float_value(fmt, bits);
    let r_value = value(result);
    let fail = |why: &str| Err(format!("{x:e} {r:?} -> {result:#x} ({r_value:e}): {why}"));
    if r_value.is_nan() {
        return fail("NaN from a number");
    }
    if (result & sign != 0) != x.is_sign_negative() {
        return fail("sign");
    }
    if r_value == x {
        return Ok(());
    }
    // Directed modes compare with the true values (infinities included);
    // nearest compares with midpoints, an infinity sitting at the overflow
    // step.
    let magnitude = result & !sign;
    let up_bits = (magnitude != inf || result & sign != 0).then(|| next_up(result, sign));
    let down_bits = (magnitude != inf || result & sign == 0).then(|| next_down(result, sign));
    let position = |bits: Option<u64>, beyond: f64| match bits {
        None => beyond,
        Some(b) if value(b).is_infinite() => value(b).signum() * overflow_step,
        Some(b) => value(b),
    };
    let actual = |bits: Option<u64>, beyond: f64| bits.map_or(beyond, value);
    let (here, up, down) = (
        r_value,
        actual(up_bits, f64::INFINITY),
        actual(down_bits, f64::NEG_INFINITY),
    );
    let (here_mid, up_mid, down_mid) = (
        position(Some(result), 0.0),
        position(up_bits, f64::INFINITY),
        position(down_bits, f64::NEG_INFINITY),
    );
    let below = here <= x && x < up;
    let above = down < x && x <= here;
    let ok = match r {
        Floor => below,
        Ceil => above,
        Trunc => {
            if x > 0.0 {
                below
            } else {
                above
            }
        }
        Nearest => {
            let lo = (down_mid + here_mid) / 2.0;
            let hi = (here_mid + up_mid) / 2.0;
            let even = result & 1 == 0;
            (lo < x && x < hi) || (even && (x == lo || x == hi))
        }
    };
    if ok {
        Ok(())
    } else {
        fail("not the right neighbour")
    }
}

proptest! {
    #[test]
    fn f64_to_f32_and_f16_correctly_rounded(bits in any::<u64>(), near in any::<u32>(), r in 0usize..4) {
        let r = ROUNDS[r];
        // Random doubles, and doubles a few ulps around f32 and f16 values
        // (midpoints included).
        let around_f32 = f32::from_bits(near) as f64;
        let wiggle = ((bits & 7) as i64 - 3) as f64;
        let x = [
            f64::from_bits(bits),
            around_f32 + wiggle * around_f32.abs() * 2f64.powi(-25),
            f16_value(near as u16) * (1.0 + wiggle * 2f64.powi(-12)),
        ][(bits >> 61) as usize % 3];
        prop_assume!(x.is_finite());
        prop_assert!(check_rounded(F32, x, r, cvt(F32, F64, r, f64b(x))).is_ok(),
            "{}", check_rounded(F32, x, r, cvt(F32, F64, r, f64b(x))).unwrap_err());
        let h = cvt(F16, F64, r, f64b(x));
        prop_assert!(check_rounded(F16, x, r, h).is_ok(), "{}", check_rounded(F16, x, r, h).unwrap_err());
    }

    #[test]
    fn f32_to_f16_correctly_rounded(bits in any::<u32>(), r in 0usize..4) {
        let x = f32::from_bits(bits);
        prop_assume!(x.is_finite());
        let h = cvt(F16, F32, ROUNDS[r], bits as u64);
        prop_assert!(check_rounded(F16, x as f64, ROUNDS[r], h).is_ok(),
            "{}", check_rounded(F16, x as f64, ROUNDS[r], h).unwrap_err());
    }
}

#[test]
fn f32_to_f16_near_every_half() {
    // Every f32 within a few ulps of every finite half and of each midpoint.
    for h in 0..0x7c00u32 {
        let base = f16_value(h as u16) as f32;
        let centre = base.to_bits();
        for delta in [-2i64, -1, 0, 1, 2, 4096, 4095, 4097] {
            let bits = (centre as i64 + delta).clamp(0, 0x7f7f_ffff) as u32;
            for sign in [0, 0x8000_0000] {
                let b = bits | sign;
                let x = f32::from_bits(b) as f64;
                for r in ROUNDS {
                    let got = cvt(F16, F32, r, b as u64);
                    if let Err(e) = check_rounded(F16, x, r, got) {
                        panic!("{e}");
                    }
                }
            }
        }
    }
}

// ---- int -> float (HARDWARE.md 24) ----

#[test]
fn int_to_f32_directed_rounding_hardware_24() {
    let x = 16777217;
    assert_eq!(cvt(F32, U32, Trunc, x), f32b(16777216.0));
    assert_eq!(cvt(F32, U32, Floor, x), f32b(16777216.0));
    assert_eq!(cvt(F32, U32, Ceil, x), f32b(16777218.0));
    assert_eq!(cvt(F32, U32, Nearest, x), f32b(16777216.0));
    assert_eq!(cvt(F32, U32, Nearest, 16777219), f32b(16777220.0));
    let neg = (-16777217i32) as u32 as u64;
    assert_eq!(cvt(F32, S32, Floor, neg), f32b(-16777218.0));
    assert_eq!(cvt(F32, S32, Ceil, neg), f32b(-16777216.0));
    assert_eq!(cvt(F32, S32, Trunc, neg), f32b(-16777216.0));
    // U32 reads the bits unsigned (HARDWARE.md 25: the assembly is right).
    assert_eq!(cvt(F32, U32, Nearest, 0xffff_ffff), f32b(4294967296.0));
    assert_eq!(cvt(F32, S32, Nearest, 0xffff_ffff), f32b(-1.0));
    assert_eq!(cvt(F32, U32, Trunc, 0xffff_ffff), f32b(4294967040.0));
    assert_eq!(
        cvt(F64, U64, Nearest, u64::MAX),
        f64b(18446744073709551616.0)
    );
    assert_eq!(cvt(F64, U64, Floor, u64::MAX), f64b(18446744073709549568.0));
    assert_eq!(
        cvt(F64, S64, Nearest, 1 << 63),
        f64b(-9223372036854775808.0)
    );
    // Integers beyond the f16 range.
    assert_eq!(cvt(F16, S32, Nearest, 65519), 0x7bff);
    assert_eq!(cvt(F16, S32, Nearest, 65520), 0x7c00);
    assert_eq!(cvt(F16, S32, Trunc, 100000), 0x7bff);
    assert_eq!(cvt(F16, S32, Ceil, 65505), 0x7c00);
    assert_eq!(cvt(F16, S32, Floor, (-65505i32) as u32 as u64), 0xfc00);
    assert_eq!(cvt(F16, U8, Nearest, 0xff), 0x5bf8);
    assert_eq!(cvt(F32, S8, Nearest, 0x80), f32b(-128.0));
    assert_eq!(cvt(F32, S32, Nearest, 0), 0);
}

/// An integer-valued float bit pattern as an exact integer position; an
/// infinity sits at `overflow` (signed).
fn int_position(fmt: NumFormat, bits: u64, overflow: i128) -> i128 {
    let v = float_value(fmt, bits);
    if v.is_infinite() {
        if v > 0.0 {
            overflow
        } else {
            -overflow
        }
    } else {
        assert_eq!(
            v.fract(),
            0.0,
            "an integer's neighbour is an integer once inexact"
        );
        v as i128
    }
}

/// Checks that `result` is the correctly rounded `fmt` value of integer `x`,
/// in exact i128 arithmetic.
fn check_int_rounded(fmt: NumFormat, x: i128, r: Round, result: u64) -> Result<(), String> {
    let (sign, overflow) = match fmt {
        F16 => (0x8000u64, 65536i128),
        F32 => (0x8000_0000, 1i128 << 100),
        F64 => (1 << 63, 1i128 << 100),
        _ => unreachable!("float formats only"),
    };
    let v = float_value(fmt, result);
    if v.is_finite() && v == x as f64 && v as i128 == x {
        return Ok(());
    }
    let fail = |why: &str| Err(format!("{x} {r:?} -> {result:#x}: {why}"));
    if x == 0 || (result & sign != 0) != (x < 0) {
        return fail("sign or zero");
    }
    // Directed modes compare with the true values (an infinity beyond every
    // integer); nearest compares with midpoints, an infinity sitting at the
    // overflow step.
    let infinite = v.is_infinite();
    let up_bits = (!infinite || v < 0.0).then(|| next_up(result, sign));
    let down_bits = (!infinite || v > 0.0).then(|| next_down(result, sign));
    let actual = |bits: Option<u64>, beyond: i128| match bits {
        None => beyond,
        Some(b) if float_value(fmt, b).is_infinite() => {
            if float_value(fmt, b) > 0.0 {
                i128::MAX
            } else {
                i128::MIN
            }
        }
        Some(b) => int_position(fmt, b, overflow),
    };
    let position =
        |bits: Option<u64>, beyond: i128| bits.map_or(beyond, |b| int_position(fmt, b, overflow));
    let (here, up, down) = (
        actual(Some(result), 0),
        actual(up_bits, i128::MAX),
        actual(down_bits, i128::MIN),
    );
    let (here_mid, up_mid, down_mid) = (
        position(Some(result), 0),
        position(up_bits, i128::MAX / 4),
        position(down_bits, i128::MIN / 4),
    );
    let below = here <= x && x < up;
    let above = down < x && x <= here;
    let ok = match r {
        Floor => below,
        Ceil => above,
        Trunc => {
            if x > 0 {
                below
            } else {
                above
            }
        }
        Nearest => {
            let even = result & 1 == 0;
            let (twice, lo, hi) = (2 * x, down_mid + here_mid, here_mid + up_mid);
            (lo < twice && twice < hi) || (even && (twice == lo || twice == hi))
        }
    };
    if ok {
        Ok(())
    } else {
        fail("not the right neighbour")
    }
}

proptest! {
    #[test]
    fn int_to_float_correctly_rounded(a in any::<u64>(), shift in 0u32..64, s in 0usize..8, r in 0usize..4) {
        let src = INT_FORMATS[s];
        let a = a >> shift;
        let x: i128 = if src.is_signed() {
            let unused = 128 - src.bits();
            ((a as i128) << unused) >> unused
        } else {
            (a as u128 & ((1u128 << src.bits()) - 1)) as i128
        };
        for dst in [F16, F32, F64] {
            let got = cvt(dst, src, ROUNDS[r], a);
            prop_assert!(check_int_rounded(dst, x, ROUNDS[r], got).is_ok(),
                "{}", check_int_rounded(dst, x, ROUNDS[r], got).unwrap_err());
        }
    }
}

#[test]
fn every_format_pair_and_mode_fits_the_destination() {
    let samples = [
        0u64,
        1,
        0x7f,
        0x80,
        0xffff,
        0x8000_0000,
        0x7fc0_0000,
        0x3f80_0000,
        0x7ff8_0000_0000_0000,
        u64::MAX,
        0x4330_0000_0000_0001,
        0xc3e0_0000_0000_0000,
    ];
    for dst in NumFormat::ALL {
        for src in NumFormat::ALL {
            for r in ROUNDS {
                for a in samples {
                    let got = cvt(dst, src, r, a);
                    let bits = dst.bits();
                    if bits < 64 {
                        assert_eq!(got >> bits, 0, "{dst:?}.{src:?} {r:?} {a:#x}");
                    }
                    // Only the source's own bits are read.
                    let src_mask = if src.bits() == 64 {
                        u64::MAX
                    } else {
                        (1 << src.bits()) - 1
                    };
                    assert_eq!(cvt(dst, src, r, a & src_mask), got);
                }
            }
        }
    }
}

#[test]
fn same_format_is_identity_except_nan() {
    for f in NumFormat::ALL {
        for a in [
            0u64,
            1,
            0x3c00,
            0x3f80_0000,
            0x8000,
            0x4000_0000_0000_0000,
            0x7bff,
        ] {
            let mask = if f.bits() == 64 {
                u64::MAX
            } else {
                (1 << f.bits()) - 1
            };
            let a = a & mask;
            for r in ROUNDS {
                assert_eq!(cvt(f, f, r, a), a, "{f:?} {a:#x}");
            }
        }
    }
    // Float-to-float CVT does not round to an integer.
    assert_eq!(cvt(F32, F32, Floor, f32b(2.5)), f32b(2.5));
    assert_eq!(cvt(F32, F64, Ceil, f64b(2.5)), f32b(2.5));
}
