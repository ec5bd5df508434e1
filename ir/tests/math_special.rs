//! Special values (C99 Annex F / libm conventions), exact cases, symmetry and
//! determinism of the transcendental functions.

use warpjit_ir::semantics::math::{
    cos_f32, cos_f64, exp2_f32, exp2_f64, log2_f32, log2_f64, sin_f32, sin_f64,
};

/// Equality of bit patterns, so -0 != +0 and NaN payloads count.
macro_rules! assert_bits {
    ($got:expr, $want:expr, $($context:tt)*) => {{
        let (got, want) = ($got, $want);
        assert_eq!(
            got.to_bits(),
            want.to_bits(),
            "{}: got {:e}, want {:e}",
            format!($($context)*),
            got,
            want
        );
    }};
}

const DEFAULT_NAN_F32: u32 = 0x7fc0_0000;
const DEFAULT_NAN_F64: u64 = 0x7ff8_0000_0000_0000;

/// NaNs with both signs and unusual payloads: none may leak into a result.
fn nans_f32() -> [f32; 4] {
    [
        f32::NAN,
        -f32::NAN,
        f32::from_bits(0x7f80_0001),
        f32::from_bits(0xffc1_2345),
    ]
}

fn nans_f64() -> [f64; 4] {
    [
        f64::NAN,
        -f64::NAN,
        f64::from_bits(0x7ff0_0000_0000_0001),
        f64::from_bits(0xfff8_1234_5678_9abc),
    ]
}

#[test]
fn nan_inputs_give_the_default_quiet_nan() {
    for x in nans_f32() {
        for (name, f) in [
            ("exp2", exp2_f32 as fn(f32) -> f32),
            ("log2", log2_f32),
            ("sin", sin_f32),
            ("cos", cos_f32),
        ] {
            assert_eq!(
                f(x).to_bits(),
                DEFAULT_NAN_F32,
                "{name}_f32({:#x})",
                x.to_bits()
            );
        }
    }
    for x in nans_f64() {
        for (name, f) in [
            ("exp2", exp2_f64 as fn(f64) -> f64),
            ("log2", log2_f64),
            ("sin", sin_f64),
            ("cos", cos_f64),
        ] {
            assert_eq!(
                f(x).to_bits(),
                DEFAULT_NAN_F64,
                "{name}_f64({:#x})",
                x.to_bits()
            );
        }
    }
}

#[test]
fn exp2_special_values_follow_libm() {
    // C99 F.9.3.2: exp2(+-0) = 1, exp2(-inf) = +0, exp2(+inf) = +inf.
    assert_bits!(exp2_f32(0.0), 1.0f32, "exp2_f32(+0)");
    assert_bits!(exp2_f32(-0.0), 1.0f32, "exp2_f32(-0)");
    assert_bits!(exp2_f32(f32::NEG_INFINITY), 0.0f32, "exp2_f32(-inf)");
    assert_bits!(exp2_f32(f32::INFINITY), f32::INFINITY, "exp2_f32(+inf)");
    assert_bits!(exp2_f64(0.0), 1.0f64, "exp2_f64(+0)");
    assert_bits!(exp2_f64(-0.0), 1.0f64, "exp2_f64(-0)");
    assert_bits!(exp2_f64(f64::NEG_INFINITY), 0.0f64, "exp2_f64(-inf)");
    assert_bits!(exp2_f64(f64::INFINITY), f64::INFINITY, "exp2_f64(+inf)");
}

#[test]
fn exp2_overflow_and_underflow_thresholds() {
    // 2^128 is past f32::MAX; the largest float below 128 still gives a finite
    // result just under 2^128.
    assert_bits!(exp2_f32(128.0), f32::INFINITY, "exp2_f32(128)");
    assert_bits!(exp2_f32(1e30), f32::INFINITY, "exp2_f32(1e30)");
    let below = f32::from_bits(128f32.to_bits() - 1);
    assert!(exp2_f32(below).is_finite() && exp2_f32(below) > 3.4e38);
    // 2^-150 is exactly half the smallest denormal: ties to even gives 0.
    // Anything above rounds up to 2^-149.
    assert_bits!(exp2_f32(-150.0), 0.0f32, "exp2_f32(-150)");
    assert_bits!(exp2_f32(-1e30), 0.0f32, "exp2_f32(-1e30)");
    assert_bits!(exp2_f32(-149.5), f32::from_bits(1), "exp2_f32(-149.5)");
    assert_bits!(
        exp2_f32(-149.99998),
        f32::from_bits(1),
        "exp2_f32(-149.99998)"
    );
    assert_bits!(exp2_f32(-150.00002), 0.0f32, "exp2_f32(-150.00002)");

    assert_bits!(exp2_f64(1024.0), f64::INFINITY, "exp2_f64(1024)");
    let below = f64::from_bits(1024f64.to_bits() - 1);
    assert!(exp2_f64(below).is_finite() && exp2_f64(below) > 1.79e308);
    assert_bits!(exp2_f64(-1075.0), 0.0f64, "exp2_f64(-1075)");
    assert_bits!(exp2_f64(-1074.5), f64::from_bits(1), "exp2_f64(-1074.5)");
    assert_bits!(exp2_f64(-1e300), 0.0f64, "exp2_f64(-1e300)");
}

#[test]
fn exp2_of_an_integer_is_the_exact_power_of_two() {
    for n in -149..=127 {
        let want = f32::from_bits(if n >= -126 {
            ((n + 127) as u32) << 23
        } else {
            1 << (n + 149)
        });
        assert_bits!(exp2_f32(n as f32), want, "exp2_f32({n})");
    }
    for n in -1074..=1023 {
        let want = f64::from_bits(if n >= -1022 {
            ((n + 1023) as u64) << 52
        } else {
            1 << (n + 1074)
        });
        assert_bits!(exp2_f64(n as f64), want, "exp2_f64({n})");
    }
}

#[test]
fn log2_special_values_follow_libm() {
    // C99 F.9.3.12: log2(+-0) = -inf, log2(x < 0) = NaN, log2(1) = +0,
    // log2(+inf) = +inf.
    assert_bits!(log2_f32(0.0), f32::NEG_INFINITY, "log2_f32(+0)");
    assert_bits!(log2_f32(-0.0), f32::NEG_INFINITY, "log2_f32(-0)");
    assert_bits!(log2_f32(1.0), 0.0f32, "log2_f32(1)");
    assert_bits!(log2_f32(f32::INFINITY), f32::INFINITY, "log2_f32(+inf)");
    for x in [
        -1.0f32,
        -f32::MIN_POSITIVE,
        -f32::from_bits(1),
        f32::NEG_INFINITY,
        -3e38,
    ] {
        assert_eq!(log2_f32(x).to_bits(), DEFAULT_NAN_F32, "log2_f32({x:e})");
    }
    assert_bits!(log2_f64(0.0), f64::NEG_INFINITY, "log2_f64(+0)");
    assert_bits!(log2_f64(-0.0), f64::NEG_INFINITY, "log2_f64(-0)");
    assert_bits!(log2_f64(1.0), 0.0f64, "log2_f64(1)");
    assert_bits!(log2_f64(f64::INFINITY), f64::INFINITY, "log2_f64(+inf)");
    for x in [
        -1.0f64,
        -f64::MIN_POSITIVE,
        -f64::from_bits(1),
        f64::NEG_INFINITY,
    ] {
        assert_eq!(log2_f64(x).to_bits(), DEFAULT_NAN_F64, "log2_f64({x:e})");
    }
}

#[test]
fn log2_of_a_power_of_two_is_exact_denormals_included() {
    for k in -149..=127 {
        let x = f32::from_bits(if k >= -126 {
            ((k + 127) as u32) << 23
        } else {
            1 << (k + 149)
        });
        assert_bits!(log2_f32(x), k as f32, "log2_f32(2^{k})");
    }
    for k in -1074..=1023 {
        let x = f64::from_bits(if k >= -1022 {
            ((k + 1023) as u64) << 52
        } else {
            1 << (k + 1074)
        });
        assert_bits!(log2_f64(x), k as f64, "log2_f64(2^{k})");
    }
}

#[test]
fn log2_of_extreme_finite_inputs() {
    // log2(f32::MAX) = 128 + log2(1 - 2^-24) rounds to 128. The largest
    // denormal is (1 - 2^-23) 2^-126, whose log2 is within 2^-22 of -126,
    // far less than half an ulp (2^-18) there. log2(3 * 2^-149) =
    // -149 + log2(3) = -147.41504 (nearest f32: 0xc3136a40).
    assert_bits!(log2_f32(f32::MAX), 128.0f32, "log2_f32(MAX)");
    assert_bits!(
        log2_f32(f32::from_bits(0x007f_ffff)),
        -126.0f32,
        "log2_f32(largest denormal)"
    );
    assert_bits!(
        log2_f32(f32::from_bits(3)),
        f32::from_bits(0xc313_6a40),
        "log2_f32(3 * 2^-149)"
    );
    assert_bits!(log2_f64(f64::MAX), 1024.0f64, "log2_f64(MAX)");
}

#[test]
fn sin_cos_special_values_follow_libm() {
    // C99 F.9.1.6/F.9.1.5: sin(+-0) = +-0, cos(+-0) = 1, sin/cos(+-inf) = NaN.
    assert_bits!(sin_f32(0.0), 0.0f32, "sin_f32(+0)");
    assert_bits!(sin_f32(-0.0), -0.0f32, "sin_f32(-0)");
    assert_bits!(cos_f32(0.0), 1.0f32, "cos_f32(+0)");
    assert_bits!(cos_f32(-0.0), 1.0f32, "cos_f32(-0)");
    assert_bits!(sin_f64(0.0), 0.0f64, "sin_f64(+0)");
    assert_bits!(sin_f64(-0.0), -0.0f64, "sin_f64(-0)");
    assert_bits!(cos_f64(0.0), 1.0f64, "cos_f64(+0)");
    assert_bits!(cos_f64(-0.0), 1.0f64, "cos_f64(-0)");
    for x in [f32::INFINITY, f32::NEG_INFINITY] {
        assert_eq!(sin_f32(x).to_bits(), DEFAULT_NAN_F32, "sin_f32({x})");
        assert_eq!(cos_f32(x).to_bits(), DEFAULT_NAN_F32, "cos_f32({x})");
    }
    for x in [f64::INFINITY, f64::NEG_INFINITY] {
        assert_eq!(sin_f64(x).to_bits(), DEFAULT_NAN_F64, "sin_f64({x})");
        assert_eq!(cos_f64(x).to_bits(), DEFAULT_NAN_F64, "cos_f64({x})");
    }
}

#[test]
fn sin_of_tiny_arguments_is_the_argument() {
    // sin x = x - x^3/6: below 2^-12 (f32) / 2^-27 (f64) the cubic term is
    // under half an ulp, so the correctly rounded result is x itself, denormals
    // included; cos x = 1 - x^2/2 rounds to 1 there too.
    for bits in (1..0x3980_0000u32).step_by(9973) {
        let x = f32::from_bits(bits);
        assert_bits!(sin_f32(x), x, "sin_f32({x:e})");
        assert_bits!(sin_f32(-x), -x, "sin_f32({:e})", -x);
        assert_bits!(cos_f32(x), 1.0f32, "cos_f32({x:e})");
    }
    for bits in (1..0x3e40_0000_0000_0000u64).step_by(0x0000_3f1a_2b3c_4d5f) {
        let x = f64::from_bits(bits);
        assert_bits!(sin_f64(x), x, "sin_f64({x:e})");
        assert_bits!(cos_f64(x), 1.0f64, "cos_f64({x:e})");
    }
}

#[test]
fn sin_cos_past_the_reduction_limit_are_pinned() {
    // Beyond 1.5 * 2^22 (f32) / 1.5 * 2^51 (f64) the argument is not reduced:
    // sin gives +-0 with x's sign and cos gives 1, deterministically.
    for x in [6291457.0f32, 1e7, 1e20, f32::MAX] {
        assert_bits!(sin_f32(x), 0.0f32, "sin_f32({x:e})");
        assert_bits!(sin_f32(-x), -0.0f32, "sin_f32({:e})", -x);
        assert_bits!(cos_f32(x), 1.0f32, "cos_f32({x:e})");
        assert_bits!(cos_f32(-x), 1.0f32, "cos_f32({:e})", -x);
    }
    for x in [3377699720527873.0f64, 1e20, f64::MAX] {
        assert_bits!(sin_f64(x), 0.0f64, "sin_f64({x:e})");
        assert_bits!(sin_f64(-x), -0.0f64, "sin_f64({:e})", -x);
        assert_bits!(cos_f64(x), 1.0f64, "cos_f64({x:e})");
    }
    // Right at the limit the reduction still runs.
    assert!(sin_f32(6291456.0).abs() <= 1.0 && sin_f32(6291456.0) != 0.0);
    assert!(sin_f64(3377699720527872.0) != 0.0);
}

#[test]
fn sin_is_odd_and_cos_even_bit_for_bit() {
    for bits in (0..0x4ac0_0000u32).step_by(4093) {
        let x = f32::from_bits(bits);
        assert_bits!(sin_f32(-x), -sin_f32(x), "sin_f32(-{x:e})");
        assert_bits!(cos_f32(-x), cos_f32(x), "cos_f32(-{x:e})");
    }
    let mut x = 1e-300f64;
    while x < 1e15 {
        assert_bits!(sin_f64(-x), -sin_f64(x), "sin_f64(-{x:e})");
        assert_bits!(cos_f64(-x), cos_f64(x), "cos_f64(-{x:e})");
        x *= 1.0123;
    }
}

#[test]
fn results_stay_in_range() {
    // |sin|, |cos| <= 1 and exp2 > 0 for every finite argument; log2 is
    // monotonic across the mantissa-range wrap at sqrt(2).
    for bits in (0..0x7f80_0000u32).step_by(10007) {
        let x = f32::from_bits(bits);
        assert!(
            sin_f32(x).abs() <= 1.0 && cos_f32(x).abs() <= 1.0,
            "x = {x:e}"
        );
        assert!(exp2_f32(-x) >= 0.0 && exp2_f32(x) >= 1.0, "x = {x:e}");
    }
    let sqrt2 = std::f32::consts::SQRT_2.to_bits();
    let mut previous = log2_f32(f32::from_bits(sqrt2 - 5000));
    for bits in sqrt2 - 4999..sqrt2 + 5000 {
        let current = log2_f32(f32::from_bits(bits));
        assert!(current >= previous, "log2_f32 decreases at {:#x}", bits);
        previous = current;
    }
}

#[test]
fn every_call_gives_the_same_bits() {
    // No hidden state: repeated and interleaved calls agree.
    let inputs: Vec<f32> = (0..5000u32)
        .map(|i| f32::from_bits(i.wrapping_mul(0x9e37_79b9)))
        .collect();
    let first: Vec<[u32; 4]> = inputs
        .iter()
        .map(|&x| [exp2_f32(x), log2_f32(x), sin_f32(x), cos_f32(x)].map(f32::to_bits))
        .collect();
    for (i, &x) in inputs.iter().enumerate().rev() {
        let again = [cos_f32(x), sin_f32(x), log2_f32(x), exp2_f32(x)].map(f32::to_bits);
        let want = first[i];
        assert_eq!(again, [want[3], want[2], want[1], want[0]], "x = {x:e}");
    }
    let inputs: Vec<f64> = (0..5000u64)
        .map(|i| f64::from_bits(i.wrapping_mul(0x9e37_79b9_7f4a_7c15)))
        .collect();
    let first: Vec<[u64; 4]> = inputs
        .iter()
        .map(|&x| [exp2_f64(x), log2_f64(x), sin_f64(x), cos_f64(x)].map(f64::to_bits))
        .collect();
    for (i, &x) in inputs.iter().enumerate() {
        let again = [exp2_f64(x), log2_f64(x), sin_f64(x), cos_f64(x)].map(f64::to_bits);
        assert_eq!(again, first[i], "x = {x:e}");
    }
}
