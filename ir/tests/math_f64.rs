//! Accuracy of the f64 transcendental functions, measured in ulps against the
//! double-double reference in `math_reference.rs` (about 104 correct bits),
//! over random samples and dense runs around the critical points.

#[path = "math_reference.rs"]
mod math_reference;

use math_reference::{exp2_error_f64, ulp_error_f64};
use warpjit_ir::semantics::math::{cos_f64, exp2_f64, log2_f64, sin_f64};

/// Small deterministic generator (xorshift64).
struct Rng(u64);

impl Rng {
    fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// Uniform in [0, 1).
    fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * 2f64.powi(-53)
    }

    /// Uniform in [low, high).
    fn uniform(&mut self, low: f64, high: f64) -> f64 {
        low + (high - low) * self.unit()
    }

    /// 2^u with u uniform in [low, high): spreads samples over binades.
    fn log_uniform(&mut self, low: f64, high: f64) -> f64 {
        self.uniform(low, high).exp2()
    }
}

/// The `count` bit patterns on each side of `x`, same sign.
fn neighbourhood(x: f64, count: u64) -> impl Iterator<Item = f64> {
    let bits = x.to_bits();
    (bits.saturating_sub(count)..=bits.saturating_add(count)).map(f64::from_bits)
}

struct Worst {
    name: &'static str,
    error: f64,
    at: f64,
}

impl Worst {
    fn new(name: &'static str) -> Worst {
        Worst {
            name,
            error: 0.0,
            at: 0.0,
        }
    }

    fn record(&mut self, x: f64, error: f64) {
        if error > self.error || error.is_nan() {
            self.error = if error.is_nan() { f64::INFINITY } else { error };
            self.at = x;
        }
    }

    fn assert_at_most(&self, bound: f64) {
        assert!(
            self.error <= bound,
            "{}: {:.3} ulp at x = {:e} ({:#018x}), bound {bound}",
            self.name,
            self.error,
            self.at,
            self.at.to_bits()
        );
    }
}

fn finite_error(got: f64, exact: math_reference::Dd) -> f64 {
    if got.is_finite() {
        ulp_error_f64(got, exact)
    } else {
        f64::INFINITY
    }
}

#[test]
fn exp2_f64_is_within_1_ulp() {
    let mut worst = Worst::new("exp2_f64");
    let mut rng = Rng(0x2545_f491_4f6c_dd1d);
    let mut inputs: Vec<f64> = Vec::new();
    // The whole range, past overflow (1024) and total underflow (-1075).
    inputs.extend((0..40_000).map(|_| rng.uniform(-1080.0, 1030.0)));
    // The polynomial's interval and tiny arguments.
    inputs.extend((0..20_000).map(|_| rng.uniform(-1.0, 1.0)));
    inputs.extend(
        (0..5_000)
            .map(|_| rng.log_uniform(-60.0, -1.0) * if rng.unit() < 0.5 { -1.0 } else { 1.0 }),
    );
    // Gradual underflow: results in the denormals.
    inputs.extend((0..10_000).map(|_| rng.uniform(-1075.0, -1022.0)));
    for center in [1024.0, -1022.0, -1074.0, -1075.0, 0.5, -0.5] {
        inputs.extend(neighbourhood(center, 500));
    }
    for &x in &inputs {
        worst.record(x, exp2_error_f64(exp2_f64(x), x));
    }
    worst.assert_at_most(1.0);
}

#[test]
fn log2_f64_is_within_1_ulp() {
    let mut worst = Worst::new("log2_f64");
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut inputs: Vec<f64> = Vec::new();
    // Random positive finite bit patterns: every binade equally likely.
    while inputs.len() < 30_000 {
        let x = f64::from_bits(rng.next_u64() >> 1);
        if x.is_finite() && x > 0.0 {
            inputs.push(x);
        }
    }
    // Near 1, where log2 is tiny and must stay accurate relative to itself.
    inputs.extend((0..20_000).map(|_| 1.0 + rng.uniform(-0.5, 0.5) * rng.log_uniform(-50.0, 0.0)));
    inputs.extend((0..10_000).map(|_| rng.uniform(0.7, 1.42)));
    // Denormals.
    inputs.extend((0..5_000).map(|_| f64::from_bits(rng.next_u64() & ((1 << 52) - 1))));
    for center in [
        1.0,
        std::f64::consts::SQRT_2,
        std::f64::consts::FRAC_1_SQRT_2,
    ] {
        inputs.extend(neighbourhood(center, 2_000));
    }
    for &x in &inputs {
        if x > 0.0 {
            worst.record(x, finite_error(log2_f64(x), math_reference::log2(x)));
        }
    }
    worst.assert_at_most(1.0);
}

/// Samples for sin and cos: |x| up to 2^limit_exponent.
fn trig_inputs(seed: u64, limit_exponent: f64, count: usize) -> Vec<f64> {
    let mut rng = Rng(seed);
    let limit = limit_exponent.exp2();
    let mut inputs: Vec<f64> = Vec::new();
    inputs.extend((0..count).map(|_| rng.uniform(0.0, limit)));
    inputs.extend((0..count).map(|_| rng.log_uniform(-30.0, limit_exponent)));
    inputs.extend((0..count / 2).map(|_| rng.uniform(0.0, 8.0)));
    // Next to k pi/2, where the reduced argument is smallest.
    for _ in 0..count / 20 {
        let k = (rng.unit() * limit / std::f64::consts::FRAC_PI_2).floor() + 1.0;
        inputs.extend(neighbourhood(k * std::f64::consts::FRAC_PI_2, 2));
    }
    inputs
}

#[test]
fn sin_cos_f64_are_within_2_ulp_up_to_2_pow_20() {
    let mut worst_sin = Worst::new("sin_f64");
    let mut worst_cos = Worst::new("cos_f64");
    for x in trig_inputs(0xdead_beef_cafe_f00d, 20.0, 15_000) {
        for x in [x, -x] {
            worst_sin.record(x, finite_error(sin_f64(x), math_reference::sin(x)));
            worst_cos.record(x, finite_error(cos_f64(x), math_reference::cos(x)));
        }
    }
    worst_sin.assert_at_most(2.0);
    worst_cos.assert_at_most(2.0);
}

#[test]
fn sin_cos_f64_stay_within_2_ulp_up_to_2_pow_40() {
    let mut worst_sin = Worst::new("sin_f64");
    let mut worst_cos = Worst::new("cos_f64");
    for x in trig_inputs(0x0123_4567_89ab_cdef, 40.0, 3_000) {
        worst_sin.record(x, finite_error(sin_f64(x), math_reference::sin(x)));
        worst_cos.record(x, finite_error(cos_f64(x), math_reference::cos(x)));
    }
    worst_sin.assert_at_most(2.0);
    worst_cos.assert_at_most(2.0);
}
