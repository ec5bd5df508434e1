//! A double-double reference (about 104 correct bits) for exp2, log2, sin and
//! cos, and the ulp-error measure the accuracy tests use.
//!
//! Slow and simple on purpose: exact argument reduction, then Taylor series
//! summed in double-double arithmetic. The math tests include this file as a
//! module; on its own it checks the reference against values computed with
//! mpmath at 60 digits.

#![allow(dead_code)]

/// An unevaluated sum `hi + lo` with `|lo| <= ulp(hi) / 2`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Dd {
    pub hi: f64,
    pub lo: f64,
}

fn two_sum(a: f64, b: f64) -> Dd {
    let s = a + b;
    let b_part = s - a;
    let a_part = s - b_part;
    Dd {
        hi: s,
        lo: (a - a_part) + (b - b_part),
    }
}

fn fast_two_sum(a: f64, b: f64) -> Dd {
    let s = a + b;
    Dd {
        hi: s,
        lo: b - (s - a),
    }
}

fn two_product(a: f64, b: f64) -> Dd {
    let p = a * b;
    Dd {
        hi: p,
        lo: a.mul_add(b, -p),
    }
}

impl Dd {
    pub fn new(x: f64) -> Dd {
        Dd { hi: x, lo: 0.0 }
    }

    pub fn plus(self, other: Dd) -> Dd {
        let s = two_sum(self.hi, other.hi);
        let t = two_sum(self.lo, other.lo);
        let s = fast_two_sum(s.hi, s.lo + t.hi);
        fast_two_sum(s.hi, s.lo + t.lo)
    }

    pub fn negated(self) -> Dd {
        Dd {
            hi: -self.hi,
            lo: -self.lo,
        }
    }

    pub fn minus(self, other: Dd) -> Dd {
        self.plus(other.negated())
    }

    pub fn times(self, other: Dd) -> Dd {
        let p = two_product(self.hi, other.hi);
        fast_two_sum(p.hi, p.lo + (self.hi * other.lo + self.lo * other.hi))
    }

    pub fn divided_by(self, other: Dd) -> Dd {
        let q1 = self.hi / other.hi;
        let r = self.minus(other.times(Dd::new(q1)));
        let q2 = r.hi / other.hi;
        let r = r.minus(other.times(Dd::new(q2)));
        let q3 = r.hi / other.hi;
        fast_two_sum(q1, q2).plus(Dd::new(q3))
    }

    /// `self * 2^k`, exact while both parts stay normal.
    pub fn scale(self, k: i32) -> Dd {
        let factor = |x: f64| {
            let mut x = x;
            let mut k = k;
            while k > 1000 {
                x *= power_of_two(1000);
                k -= 1000;
            }
            while k < -1000 {
                x *= power_of_two(-1000);
                k += 1000;
            }
            x * power_of_two(k)
        };
        Dd {
            hi: factor(self.hi),
            lo: factor(self.lo),
        }
    }
}

pub const LN2: Dd = Dd {
    hi: std::f64::consts::LN_2,
    lo: 2.3190468138462996e-17,
};

/// pi/2 in four parts.
const HALF_PI: [f64; 4] = [
    std::f64::consts::FRAC_PI_2,
    6.123233995736766e-17,
    -1.4973849048591698e-33,
    5.562271104316826e-50,
];

/// e^y - 1 for |y| <= 0.5, accurate relative to the result.
fn expm1_small(y: Dd) -> Dd {
    let mut term = y;
    let mut sum = y;
    for k in 2..=30 {
        term = term.times(y).divided_by(Dd::new(k as f64));
        sum = sum.plus(term);
    }
    sum
}

/// e^y for |y| <= 0.5.
fn exp_small(y: Dd) -> Dd {
    Dd::new(1.0).plus(expm1_small(y))
}

/// 2^x as `(m, n)` with 2^x = m * 2^n and m in [0.7, 1.5). x finite, |x| < 2^40.
pub fn exp2_parts(x: f64) -> (Dd, i32) {
    let n = x.round_ties_even();
    let f = x - n;
    (exp_small(LN2.times(Dd::new(f))), n as i32)
}

/// 2^x for x whose result is a normal number.
pub fn exp2(x: f64) -> Dd {
    let (m, n) = exp2_parts(x);
    m.scale(n)
}

/// log2(x) for finite x > 0.
pub fn log2(x: f64) -> Dd {
    let (x, shift) = if x < f64::MIN_POSITIVE {
        (x * 2f64.powi(64), -64)
    } else {
        (x, 0)
    };
    let biased = ((x.to_bits() >> 52) & 0x7ff) as i32;
    let mut exponent = biased - 1023;
    let mut m = f64::from_bits((x.to_bits() & !(0x7ffu64 << 52)) | (1023u64 << 52));
    if m > std::f64::consts::SQRT_2 {
        m *= 0.5;
        exponent += 1;
    }
    // One Newton step on ln: ln m = y0 + ln(1 + u) with u = m e^-y0 - 1
    // tiny, formed as (m - 1) + m (e^-y0 - 1) so no digits cancel.
    let y0 = m.ln();
    let u = Dd::new(m - 1.0).plus(expm1_small(Dd::new(-y0)).times(Dd::new(m)));
    let ln_m = Dd::new(y0).plus(u).minus(u.times(u).times(Dd::new(0.5)));
    ln_m.divided_by(LN2)
        .plus(Dd::new((exponent + shift) as f64))
}

/// `(r, k mod 4)` with x = k pi/2 + r, |r| <= pi/4 (slightly more). x >= 0.
fn reduce_half_pi(x: f64) -> (Dd, u32) {
    let k = (x * std::f64::consts::FRAC_2_PI).round_ties_even();
    let mut r = Dd::new(x);
    for part in HALF_PI {
        r = r.minus(two_product(k, part));
    }
    (r, (k as u64 % 4) as u32)
}

fn sin_taylor(r: Dd) -> Dd {
    let r2 = r.times(r);
    let mut term = r;
    let mut sum = r;
    for k in 1..=16 {
        let d = (2 * k) as f64 * (2 * k + 1) as f64;
        term = term.times(r2).divided_by(Dd::new(-d));
        sum = sum.plus(term);
    }
    sum
}

fn cos_taylor(r: Dd) -> Dd {
    let r2 = r.times(r);
    let mut term = Dd::new(1.0);
    let mut sum = term;
    for k in 1..=16 {
        let d = (2 * k - 1) as f64 * (2 * k) as f64;
        term = term.times(r2).divided_by(Dd::new(-d));
        sum = sum.plus(term);
    }
    sum
}

/// sin(x) for finite |x| < 2^40.
pub fn sin(x: f64) -> Dd {
    let (r, quadrant) = reduce_half_pi(x.abs());
    let value = match quadrant {
        0 => sin_taylor(r),
        1 => cos_taylor(r),
        2 => sin_taylor(r).negated(),
        _ => cos_taylor(r).negated(),
    };
    if x < 0.0 {
        value.negated()
    } else {
        value
    }
}

/// cos(x) for finite |x| < 2^40.
pub fn cos(x: f64) -> Dd {
    let (r, quadrant) = reduce_half_pi(x.abs());
    match quadrant {
        0 => cos_taylor(r),
        1 => sin_taylor(r).negated(),
        2 => cos_taylor(r).negated(),
        _ => sin_taylor(r),
    }
}

/// The distance from `got` to `exact`, in units of the last place of a
/// format with `mantissa_bits` stored bits and smallest exponent `min_exponent`
/// (the exponent of its smallest normal number). `exact` must be finite and
/// `got` finite.
pub fn ulp_error(got: f64, exact: Dd, mantissa_bits: i32, min_exponent: i32) -> f64 {
    let magnitude = exact.hi.abs();
    let mut exponent = if magnitude == 0.0 {
        min_exponent
    } else {
        let biased = ((magnitude.to_bits() >> 52) & 0x7ff) as i32;
        if biased == 0 {
            -1023
        } else {
            biased - 1023
        }
    };
    // hi a power of two with lo pulling it below: the exact value is in the
    // binade underneath.
    let is_power_of_two = magnitude.to_bits() & ((1u64 << 52) - 1) == 0;
    if is_power_of_two && exact.lo != 0.0 && exact.lo.signum() != exact.hi.signum() {
        exponent -= 1;
    }
    let ulp = power_of_two(exponent.max(min_exponent) - mantissa_bits);
    let difference = Dd::new(got).minus(exact);
    (difference.hi / ulp).abs()
}

/// 2^e for -1074 <= e <= 1023, built from bits (powi would underflow
/// through its reciprocal).
pub fn power_of_two(e: i32) -> f64 {
    if e >= -1022 {
        f64::from_bits(((e + 1023) as u64) << 52)
    } else {
        f64::from_bits(1u64 << (e + 1074))
    }
}

/// [`ulp_error`] against the exact value `exact * 2^n`: `got` is scaled by
/// 2^-n exactly first, so results in the denormal range are measured in
/// their own (wider) ulps without the reference underflowing.
pub fn ulp_error_scaled(got: f64, exact: Dd, n: i32, mantissa_bits: i32, min_exponent: i32) -> f64 {
    let scaled = Dd::new(got).scale(-n).hi;
    ulp_error(scaled, exact, mantissa_bits, min_exponent - n)
}

/// Ulp error of an f32 exp2 result (finite, or infinite when 2^x overflows).
pub fn exp2_error_f32(got: f32, x: f32) -> f64 {
    let (m, n) = exp2_parts(x as f64);
    if got.is_infinite() {
        // Correct when 2^x rounds to infinity: 2^x >= (2 - 2^-24) 2^127.
        let threshold = Dd::new(2.0 - power_of_two(-24)).scale(127 - n);
        return if got > 0.0 && m.minus(threshold).hi >= 0.0 {
            0.0
        } else {
            f64::INFINITY
        };
    }
    ulp_error_scaled(got as f64, m, n, 23, -126)
}

/// Ulp error of an f64 exp2 result (finite, or infinite when 2^x overflows).
pub fn exp2_error_f64(got: f64, x: f64) -> f64 {
    let (m, n) = exp2_parts(x);
    if got.is_infinite() {
        let threshold = Dd::new(2.0 - power_of_two(-53)).scale(1023 - n);
        return if got > 0.0 && m.minus(threshold).hi >= 0.0 {
            0.0
        } else {
            f64::INFINITY
        };
    }
    ulp_error_scaled(got, m, n, 52, -1022)
}

/// Ulp error of an f32 result against the exact value.
pub fn ulp_error_f32(got: f32, exact: Dd) -> f64 {
    ulp_error(got as f64, exact, 23, -126)
}

/// Ulp error of an f64 result against the exact value.
pub fn ulp_error_f64(got: f64, exact: Dd) -> f64 {
    ulp_error(got, exact, 52, -1022)
}

/// Relative distance between two double-doubles.
fn relative_difference(a: Dd, b: Dd) -> f64 {
    (a.minus(b).hi / b.hi).abs()
}

/// Values computed with mpmath at 60 digits: (x, hi, lo).
#[cfg(test)]
const EXP2_KNOWN: [(f64, f64, f64); 4] = [
    (0.3, 1.2311444133449163, -3.572339831433251e-17),
    (
        -0.5,
        std::f64::consts::FRAC_1_SQRT_2,
        -4.833646656726457e-17,
    ),
    (100.7, 2.0593044755556034e+30, -39899919515258.91),
    (-900.3, 9.609369732284763e-272, 7.127189956611088e-289),
];

#[cfg(test)]
const LOG2_KNOWN: [(f64, f64, f64); 5] = [
    (1.0000001, 1.4426949695965583e-07, 6.897421541207991e-24),
    (0.7, -0.5145731728297583, 8.76352077439819e-18),
    (3e+300, 998.1633909669299, -4.944591132756189e-14),
    (2.5e-323, -1071.6780719051126, -6.33385952568616e-14),
    (1.41, 0.49569516262406876, 1.248161437896479e-17),
];

#[cfg(test)]
const SIN_KNOWN: [(f64, f64, f64); 5] = [
    (0.5, 0.479425538604203, -5.103969860556013e-18),
    (1000000.0, -0.34999350217129294, -1.5952848809323968e-17),
    (355.0, -3.014435335948845e-05, 1.3012643991046347e-21),
    (536870912.123, 0.20813696782544433, -1.27025590835949e-18),
    (103993.0, -1.9129335778423752e-05, 1.6616884502200222e-21),
];

#[cfg(test)]
const COS_KNOWN: [(f64, f64, f64); 5] = [
    (0.5, 0.8775825618903728, -4.2623149864279997e-17),
    (1000000.0, 0.9367521275331447, 4.637088260214747e-17),
    (355.0, -0.999999999545659, 1.0574612846643521e-17),
    (536870912.123, -0.9780996895124903, -4.5932512670984195e-17),
    (103993.0, 0.9999999998170342, 9.980368235853908e-18),
];

#[cfg(test)]
fn check_known(name: &str, f: fn(f64) -> Dd, known: &[(f64, f64, f64)]) {
    for &(x, hi, lo) in known {
        let expected = Dd { hi, lo };
        let got = f(x);
        let difference = relative_difference(got, expected);
        assert!(
            difference < 2f64.powi(-100),
            "{name}({x:e}) = {got:?}, mpmath gives {expected:?} (relative difference {difference:e})"
        );
    }
}

#[test]
fn reference_exp2_matches_mpmath() {
    check_known("exp2", exp2, &EXP2_KNOWN);
}

#[test]
fn reference_log2_matches_mpmath() {
    check_known("log2", log2, &LOG2_KNOWN);
}

#[test]
fn reference_sin_matches_mpmath() {
    check_known("sin", sin, &SIN_KNOWN);
    check_known("sin", |x| sin(-x).negated(), &SIN_KNOWN);
}

#[test]
fn reference_cos_matches_mpmath() {
    check_known("cos", cos, &COS_KNOWN);
    check_known("cos", |x| cos(-x), &COS_KNOWN);
}

#[test]
fn ulp_error_counts_units_of_the_exact_binade() {
    // 1 - 2^-53 lies in [0.5, 1), whose ulp is 2^-53.
    let just_below_one = Dd {
        hi: 1.0,
        lo: -(2f64.powi(-53)),
    };
    assert_eq!(ulp_error_f64(1.0, just_below_one), 1.0);
    assert_eq!(ulp_error_f64(1.0 + 2f64.powi(-52), Dd::new(1.0)), 1.0);
    assert_eq!(ulp_error_f32(1.0 + 2f32.powi(-23), Dd::new(1.0)), 1.0);
    // Denormals: one step is 2^-149 for f32.
    assert_eq!(
        ulp_error_f32(f32::from_bits(3), Dd::new(f32::from_bits(1) as f64)),
        2.0
    );
}
