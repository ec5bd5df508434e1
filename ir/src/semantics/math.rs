//! Transcendental functions: sin, cos, exp2 and log2 for f32 and f64.
//!
//! The reference interpreter computes one lane at a time and the JIT computes
//! 32 lanes per vector instruction; both must give the same bits. So each
//! function is written once, generically, as a straight-line sequence of
//! basic IEEE operations on the [`FloatOps`] trait. The interpreter
//! instantiates the trait with plain scalars ([`ScalarF32`], [`ScalarF64`],
//! behind [`sin_f32`] and the other entry points); the JIT must instantiate the
//! same trait with LLVM vector values and call the same generic [`sin`],
//! [`cos`], [`exp2`], [`log2`]. Because every trait operation is exactly
//! specified by IEEE 754 (round to nearest even, denormals kept) or is pure bit
//! manipulation, the two instantiations agree bit for bit. One trait
//! operation is composite, [`FloatOps::scale_by_power_of_two`]: its default
//! is two multiplies of which only the second rounds, and a backend may run
//! it as one instruction that rounds `a * 2^n` once, which gives the same
//! bits.
//!
//! There are no data-dependent branches, loops or table lookups: special
//! cases are folded in with [`FloatOps::select`], so a vector lowering runs the
//! same instructions for every lane. Per call: exp2 24 operations (6 of them
//! fmas) for f32 / 30 (12) for f64, log2 37 (12) / 49 (24), sin 31 (12) / 37
//! (18), cos 29 (12) / 35 (18), bitcasts not counted.
//!
//! # Method
//!
//! The `round_magic` constant is 1.5 * 2^p (p = 23 or 52 stored mantissa
//! bits): `(t + magic) - magic` rounds `t` to the nearest integer (ties to
//! even) for |t| <= 2^(p-1), and the bits of `t + magic` minus the bits of
//! `magic` are that integer. This replaces both rounding and float/int
//! conversion instructions (f64 <-> i64 conversions are not native vector
//! instructions on AVX2).
//!
//! - `exp2(x)`: x is clamped to [-(bias+p+1), bias+2] (so +-inf need no extra
//!   case), split as x = n + f with n = round(x) and |f| <= 1/2 (exact), and
//!   2^f = 1 + f Q(f), a polynomial of degree 6 (f32) / 12 (f64). The result
//!   is scaled by 2^(n >> 1) and then by 2^(n - (n >> 1)): both factors are
//!   normal numbers, the first product is exact, and the second rounds once,
//!   which gives correct overflow to infinity and gradual underflow through
//!   the denormals (AVX-512's `vscalefps` rounds the same product once).
//!   f = 0 gives exactly 1, so exp2 of an integer is exact.
//! - `log2(x)`: denormal inputs are first scaled by 2^24 (f32) / 2^54 (f64).
//!   The bits of x minus the bits of sqrt(1/2) give the exponent e (arithmetic
//!   shift) and a mantissa m in [sqrt(1/2), sqrt(2)); f = m - 1 is exact.
//!   log2(1 + f) = K f + f^2 T(f), a polynomial of degree 11 (f32) / 23 (f64),
//!   with K = 1/ln 2 carried as two floats and `K_hi f` split exactly into
//!   two floats with an fma. The sum e + K_hi f is also formed exactly
//!   (two-sum), so only the last addition rounds. A power of two gives f = 0
//!   and exactly e.
//! - `sin(x)`, `cos(x)`: computed on |x|; sin takes the sign of x at the end,
//!   which makes it exactly odd and gives sin(-0) = -0. k = round(|x| 2/pi)
//!   with 2/pi as two floats; r = |x| - k pi/2 by three fmas against a
//!   three-part split of pi/2 (Cody-Waite; the first step is exact).
//!   sin r = r + r^3 S(r^2) (degree 9 for f32, 15 for f64) and cos r =
//!   1 - r^2/2 + r^4 C(r^2) (degree 8 / 14) are both evaluated; bit 0 of k
//!   picks one and bit 1 the sign. Past |x| = 1.5 * 2^22 (f32) / 1.5 * 2^51
//!   (f64) the quotient no longer rounds through the magic constant and an
//!   exact reduction would need a table of 2/pi bits (a gather), so such
//!   arguments are replaced by 0: sin gives +-0 (x's sign) and cos gives 1.
//!
//! Coefficients are minimax fits of the relative error (Remez exchange in
//! 50-60 digit arithmetic with mpmath), then rounded to the format; the
//! rounding was compensated either by refitting the higher coefficients after
//! rounding each lower one, or by a small search over neighbouring
//! representable values. The fit error of each table is noted next to it.
//!
//! # Accuracy
//!
//! Maximum errors in units in the last place of the exact result. f32 was
//! measured exhaustively (every input in the range, against the f64 libm
//! functions); f64 over 1 to 2 million random samples per range (uniform and
//! per-binade) against a double-double reference.
//!
//! - exp2: 0.88 (f32), 0.85 (f64), over all x, denormal results included.
//! - log2: 0.96 (f32), 0.95 (f64), over all x > 0, denormals included.
//! - sin, cos, f32: 1.49 for |x| <= 2^17; 1.55 up to 2^19; 2.08 up to 2^21;
//!   2.32 up to the reduction limit 1.5 * 2^22.
//! - sin, cos, f64: 1.45 for |x| <= 2^20; 1.49 up to 2^40; 13 up to the
//!   reduction limit 1.5 * 2^51.
//!
//! Past the reduction limit sin and cos carry no information (see above).
//! The errors grow past 2^17 (f32) and 2^40 (f64) because the rounded
//! quotient |x| 2/pi can be off by more than 1/2 there, leaving r slightly
//! outside the polynomials' fitted interval (|r| <= 0.792 / 0.786).
//!
//! # Special values
//!
//! As C99 Annex F: exp2(+-0) = 1, exp2(-inf) = +0, exp2(+inf) = +inf, exp2
//! overflows to +inf and underflows through the denormals to +0 (2^-150 and
//! 2^-1075, exact ties, round to 0). log2(+-0) = -inf, log2(x < 0) = NaN
//! (-inf included), log2(+inf) = +inf, log2(1) = +0, log2(2^k) = k exactly,
//! denormal powers included. sin(+-inf) = cos(+-inf) = NaN, sin(+-0) = +-0,
//! cos(+-0) = 1. A NaN result is always the default quiet NaN (0x7fc00000,
//! 0x7ff8000000000000); input NaN payloads are never propagated.
//!
//! # Lowering rules for a vector instantiation
//!
//! The results are identical only if every [`FloatOps`] operation is lowered
//! exactly as documented on the trait:
//! - `fma` must be a fused multiply-add with a single rounding (`llvm.fma`;
//!   never `llvm.fmuladd`, never a multiply followed by an add). The log2
//!   head/error split is wrong without it, and every polynomial rounds
//!   differently.
//! - No instruction may carry fast-math flags (`contract`, `reassoc`, `nsz`,
//!   `nnan`, `ninf`, `arcp`, `afn`): `(t + magic) - magic`, the two-sum
//!   steps and the NaN/zero selects depend on literal IEEE semantics.
//! - Denormals must not be flushed (no FTZ/DAZ in MXCSR).
//! - Comparisons are ordered (`fcmp olt/ole/oeq`: false when an operand is
//!   NaN); `select` is a per-lane blend; bitcasts keep bits; integer add and
//!   sub wrap; shifts are by a constant below the width (`shl`, `ashr`).
//! - [`FloatOps::float`] receives only values exact in the width; NaN means
//!   the default quiet NaN above.
//!
//! The routines never look at values while emitting operations, so an
//! instantiation that builds IR may record a builder failure and return a
//! placeholder value; the emitted sequence is the same.

/// Which IEEE binary format an instantiation of [`FloatOps`] computes in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FloatWidth {
    /// binary32: 23 stored mantissa bits, exponent bias 127.
    F32,
    /// binary64: 52 stored mantissa bits, exponent bias 1023.
    F64,
}

/// The operations the transcendental routines are built from, for one float
/// width. `F` is a float (or a vector of floats), `I` the same-width signed
/// integer (or vector), `M` a per-lane truth value.
///
/// Every operation is exact IEEE 754 arithmetic in round-to-nearest-even with
/// denormals kept, or pure bit manipulation; an implementation must not
/// substitute an approximation, fuse or split operations, or reassociate.
pub trait FloatOps {
    /// A float of this width, or a vector of them.
    type F: Copy;
    /// A signed integer of the same width, or a vector of them.
    type I: Copy;
    /// A truth value per lane.
    type M: Copy;
    /// The float format.
    const WIDTH: FloatWidth;

    /// The constant `value`. The routines only pass values that are exactly
    /// representable in this width (or NaN, meaning the default quiet NaN).
    fn float(&self, value: f64) -> Self::F;
    /// The constant `value`, truncated to this width's low bits.
    fn int(&self, value: i64) -> Self::I;

    /// `a + b`, rounded once.
    fn add(&self, a: Self::F, b: Self::F) -> Self::F;
    /// `a - b`, rounded once.
    fn sub(&self, a: Self::F, b: Self::F) -> Self::F;
    /// `a * b`, rounded once.
    fn mul(&self, a: Self::F, b: Self::F) -> Self::F;
    /// `a * b + c` with a single rounding (a true fused multiply-add).
    fn fma(&self, a: Self::F, b: Self::F, c: Self::F) -> Self::F;

    /// `a < b`; false if either is NaN.
    fn lt(&self, a: Self::F, b: Self::F) -> Self::M;
    /// `a <= b`; false if either is NaN.
    fn le(&self, a: Self::F, b: Self::F) -> Self::M;
    /// `a == b`; false if either is NaN (and +0 == -0).
    fn eq(&self, a: Self::F, b: Self::F) -> Self::M;
    /// `if mask { a } else { b }`, per lane, bits unchanged.
    fn select(&self, mask: Self::M, a: Self::F, b: Self::F) -> Self::F;

    /// The bit pattern of `a`.
    fn bitcast_to_int(&self, a: Self::F) -> Self::I;
    /// The float with bit pattern `a`.
    fn bitcast_to_float(&self, a: Self::I) -> Self::F;
    /// Wrapping `a + b`.
    fn int_add(&self, a: Self::I, b: Self::I) -> Self::I;
    /// Wrapping `a - b`.
    fn int_sub(&self, a: Self::I, b: Self::I) -> Self::I;
    /// Bitwise `a & b`.
    fn int_and(&self, a: Self::I, b: Self::I) -> Self::I;
    /// Bitwise `a ^ b`.
    fn int_xor(&self, a: Self::I, b: Self::I) -> Self::I;
    /// `a << amount`; `amount` is a constant below the width.
    fn int_shl(&self, a: Self::I, amount: u32) -> Self::I;
    /// Arithmetic (sign-filling) `a >> amount`; `amount` is a constant below
    /// the width.
    fn int_shr_arith(&self, a: Self::I, amount: u32) -> Self::I;
    /// `a == b`.
    fn int_eq(&self, a: Self::I, b: Self::I) -> Self::M;

    /// `a * 2^n` rounded once, for `a` in [1/2, 2] and an integer `n` in
    /// exp2's clamped range, given as an integer (`n`) and as the float of
    /// the same value (`n_float`). This multiplies by two powers of two:
    /// the first product stays normal, so it is exact and the second
    /// multiply is the only rounding. A backend may use one instruction
    /// that rounds `a * 2^n` once (AVX-512's `vscalefps`): same bits.
    fn scale_by_power_of_two(&self, a: Self::F, n: Self::I, n_float: Self::F) -> Self::F
    where
        Self: Sized,
    {
        let _ = n_float;
        scale_in_two_steps(self, a, n)
    }
}

/// Format facts and coefficients for one width.
struct Params {
    /// Stored mantissa bits (23 or 52).
    mantissa_bits: u32,
    exponent_bias: i64,
    /// 1.5 * 2^mantissa_bits; see the module docs.
    round_magic: f64,
    /// exp2 clamps its argument to [exp2_min, exp2_max]; beyond them the
    /// result is 0 or infinity anyway.
    exp2_min: f64,
    exp2_max: f64,
    /// 2^f = 1 + f * (exp2_poly[0] + f * exp2_poly[1] + ...) for |f| <= 1/2.
    exp2_poly: &'static [f64],
    /// The smallest normal number.
    min_normal: f64,
    /// log2 scales denormal inputs by 2^log2_denormal_shift.
    log2_denormal_shift: u32,
    log2_denormal_scale: f64,
    /// Bits of the float nearest sqrt(1/2): the lower end of the mantissa range.
    sqrt_half_bits: i64,
    /// 1/ln 2 = inv_ln2_hi + inv_ln2_lo to about twice the format's precision.
    inv_ln2_hi: f64,
    inv_ln2_lo: f64,
    /// log2(1 + f) = inv_ln2 * f + f^2 * (log2_poly[0] + f * log2_poly[1] + ...).
    log2_poly: &'static [f64],
    /// 2/pi = two_over_pi_hi + two_over_pi_lo.
    two_over_pi_hi: f64,
    two_over_pi_lo: f64,
    /// pi/2 = half_pi[0] + half_pi[1] + half_pi[2] to about three times the
    /// format's precision.
    half_pi: [f64; 3],
    /// sin and cos reduce |x| only up to this bound; see the module docs.
    trig_limit: f64,
    /// sin r = r + r^3 * (sin_poly[0] + r^2 * sin_poly[1] + ...).
    sin_poly: &'static [f64],
    /// cos r = 1 + r^2 * (cos_poly[0] + r^2 * cos_poly[1] + ...).
    cos_poly: &'static [f64],
}

const F32_PARAMS: Params = Params {
    mantissa_bits: 23,
    exponent_bias: 127,
    round_magic: 12582912.0,
    exp2_min: -151.0,
    exp2_max: 129.0,
    exp2_poly: &EXP2_F32,
    min_normal: f32::MIN_POSITIVE as f64,
    log2_denormal_shift: 24,
    log2_denormal_scale: 16777216.0,
    sqrt_half_bits: 0x3f35_04f3,
    inv_ln2_hi: 1.4426950216293335,
    inv_ln2_lo: 1.925963033500011e-08,
    log2_poly: &LOG2_F32,
    two_over_pi_hi: 0.6366197466850281,
    two_over_pi_lo: 2.5682552973194106e-08,
    half_pi: [
        1.5707963705062866,
        -4.371138828673793e-08,
        -1.7151245100058819e-15,
    ],
    trig_limit: 6291456.0,
    sin_poly: &SIN_F32,
    cos_poly: &COS_F32,
};

const F64_PARAMS: Params = Params {
    mantissa_bits: 52,
    exponent_bias: 1023,
    round_magic: 6755399441055744.0,
    exp2_min: -1076.0,
    exp2_max: 1025.0,
    exp2_poly: &EXP2_F64,
    min_normal: f64::MIN_POSITIVE,
    log2_denormal_shift: 54,
    log2_denormal_scale: 18014398509481984.0,
    sqrt_half_bits: 0x3fe6_a09e_667f_3bcd,
    inv_ln2_hi: std::f64::consts::LOG2_E,
    inv_ln2_lo: 2.0355273740931033e-17,
    log2_poly: &LOG2_F64,
    two_over_pi_hi: std::f64::consts::FRAC_2_PI,
    two_over_pi_lo: -3.935735335036497e-17,
    half_pi: [
        std::f64::consts::FRAC_PI_2,
        6.123233995736766e-17,
        -1.4973849048591698e-33,
    ],
    trig_limit: 3377699720527872.0,
    sin_poly: &SIN_F64,
    cos_poly: &COS_F64,
};

// Polynomial coefficients, lowest degree first; each value is exactly
// representable in its format. The error noted is the approximation's
// maximum relative error with the coefficients as written.

// On |f| <= 1/2: 2^-27.3. Remez, rounded, then a +-2 ulp search.
const EXP2_F32: [f64; 6] = [
    0.6931472420692444,
    0.24022652208805084,
    0.055502939969301224,
    0.009618028998374939,
    0.0013409990351647139,
    0.00015469736536033452,
];

// On [sqrt(1/2) - 1, sqrt(2) - 1]: 2^-29.1. Remez, rounded, +-2 ulp search.
const LOG2_F32: [f64; 10] = [
    -0.7213475108146667,
    0.48089802265167236,
    -0.360674113035202,
    0.28857043385505676,
    -0.2404647320508957,
    0.20513029396533966,
    -0.179000124335289,
    0.17161408066749573,
    -0.16841010749340057,
    0.09713410586118698,
];

// On |r| <= 0.792: 2^-32.2. Remez, refitted after rounding each coefficient.
const SIN_F32: [f64; 4] = [
    -0.1666666716337204,
    0.008333382196724415,
    -0.0001985414419323206,
    2.842453113771626e-06,
];

// On |r| <= 0.792: 2^-32.2. -1/2 fixed; Remez, refitted after each rounding.
const COS_F32: [f64; 4] = [
    -0.5,
    0.041666653007268906,
    -0.001388759701512754,
    2.445925201755017e-05,
];

// On |f| <= 1/2: 2^-56.7 (the rounding of ln 2 dominates). Remez, rounded,
// then a +-2 ulp search.
const EXP2_F64: [f64; 12] = [
    std::f64::consts::LN_2,
    0.2402265069591007,
    0.05550410866482179,
    0.009618129107628492,
    0.0013333558146374238,
    0.00015403530393354783,
    1.5252733871034379e-05,
    1.3215486823296222e-06,
    1.0178045296501756e-07,
    7.054891467811118e-09,
    4.457533018943659e-10,
    2.5737813502097143e-11,
];
// On [sqrt(1/2) - 1, sqrt(2) - 1]: 2^-59.9. Remez, rounded, +-2 ulp search.
const LOG2_F64: [f64; 22] = [
    -0.7213475204444817,
    0.48089834696298805,
    -0.36067376022224995,
    0.28853900817769174,
    -0.2404491734792619,
    0.2060992915689806,
    -0.18033688035706483,
    0.1602994482064475,
    -0.14426948931950526,
    0.13115411417676112,
    -0.12022511471326569,
    0.11097654418512576,
    -0.10303805113986726,
    0.09616759488537949,
    -0.09032215978634037,
    0.08516721847407001,
    -0.07903779250111419,
    0.07246410814173485,
    -0.07484120764054747,
    0.08749507590668036,
    -0.07826913446831384,
    0.03251407253936744,
];

// On |r| <= 0.786: 2^-62.3. Remez, refitted after rounding each coefficient.
const SIN_F64: [f64; 7] = [
    -0.16666666666666666,
    0.008333333333332967,
    -0.0001984126984084322,
    2.755731900440594e-06,
    -2.5052051985479547e-08,
    1.6051870968232749e-10,
    -7.269056579224204e-13,
];

// On |r| <= 0.786: 2^-63.2. -1/2 fixed; Remez, refitted after each rounding.
const COS_F64: [f64; 7] = [
    -0.5,
    0.04166666666666665,
    -0.001388888888888142,
    2.4801587293378577e-05,
    -2.7557315338647067e-07,
    2.0875842868895406e-09,
    -1.1365247757851645e-11,
];

fn params<O: FloatOps>() -> &'static Params {
    match O::WIDTH {
        FloatWidth::F32 => &F32_PARAMS,
        FloatWidth::F64 => &F64_PARAMS,
    }
}

fn bit_width<O: FloatOps>() -> u32 {
    match O::WIDTH {
        FloatWidth::F32 => 32,
        FloatWidth::F64 => 64,
    }
}

/// `coefficients[0] + x * (coefficients[1] + x * (...))` by Horner's rule
/// with fmas.
fn polynomial<O: FloatOps>(ops: &O, x: O::F, coefficients: &[f64]) -> O::F {
    match coefficients.split_last() {
        Some((&highest, lower)) => lower
            .iter()
            .rev()
            .fold(ops.float(highest), |acc, &c| ops.fma(acc, x, ops.float(c))),
        None => ops.float(0.0),
    }
}

/// 2^n for an integer n whose power of two is a normal number.
fn power_of_two<O: FloatOps>(ops: &O, n: O::I) -> O::F {
    let p = params::<O>();
    let biased = ops.int_add(n, ops.int(p.exponent_bias));
    ops.bitcast_to_float(ops.int_shl(biased, p.mantissa_bits))
}

/// `a * 2^n` as [`FloatOps::scale_by_power_of_two`] describes: times
/// 2^(n >> 1), exactly, then times 2^(n - (n >> 1)), rounding once.
pub fn scale_in_two_steps<O: FloatOps>(ops: &O, a: O::F, n: O::I) -> O::F {
    let n_half = ops.int_shr_arith(n, 1);
    let n_rest = ops.int_sub(n, n_half);
    let scaled = ops.mul(a, power_of_two(ops, n_half));
    ops.mul(scaled, power_of_two(ops, n_rest))
}

/// `|a|`, by clearing the sign bit.
fn abs<O: FloatOps>(ops: &O, a: O::F) -> O::F {
    let magnitude_mask = ops.int(i64::MAX >> (64 - bit_width::<O>()));
    ops.bitcast_to_float(ops.int_and(ops.bitcast_to_int(a), magnitude_mask))
}

/// 2^x.
pub fn exp2<O: FloatOps>(ops: &O, x: O::F) -> O::F {
    let p = params::<O>();
    let lowest = ops.float(p.exp2_min);
    let highest = ops.float(p.exp2_max);
    let clamped = ops.select(ops.lt(x, lowest), lowest, x);
    let clamped = ops.select(ops.lt(highest, clamped), highest, clamped);

    let magic = ops.float(p.round_magic);
    let shifted = ops.add(clamped, magic);
    let n = ops.int_sub(ops.bitcast_to_int(shifted), ops.bitcast_to_int(magic));
    let n_float = ops.sub(shifted, magic);
    let fraction = ops.sub(clamped, n_float);

    let q = polynomial(ops, fraction, p.exp2_poly);
    let mantissa = ops.fma(fraction, q, ops.float(1.0));
    let result = ops.scale_by_power_of_two(mantissa, n, n_float);

    // x != x only for NaN.
    ops.select(ops.eq(x, x), result, ops.float(f64::NAN))
}

/// log2(x).
pub fn log2<O: FloatOps>(ops: &O, x: O::F) -> O::F {
    let p = params::<O>();
    let denormal = ops.lt(x, ops.float(p.min_normal));
    let denormal_scale = ops.float(p.log2_denormal_scale);
    let normalized = ops.select(denormal, ops.mul(x, denormal_scale), x);

    // Exponent and mantissa relative to sqrt(1/2), so m lies in
    // [sqrt(1/2), sqrt(2)) and log2(m) is centred on 0.
    let sqrt_half = ops.int(p.sqrt_half_bits);
    let offset_bits = ops.int_sub(ops.bitcast_to_int(normalized), sqrt_half);
    let exponent = ops.int_shr_arith(offset_bits, p.mantissa_bits);
    let mantissa_mask = ops.int((1i64 << p.mantissa_bits) - 1);
    let m = ops.bitcast_to_float(ops.int_add(ops.int_and(offset_bits, mantissa_mask), sqrt_half));

    // The exponent as a float, through the round_magic bits; the denormal
    // scaling is undone by subtracting a larger magic.
    let magic = ops.float(p.round_magic);
    let magic_plus_shift = ops.float(p.round_magic + p.log2_denormal_shift as f64);
    let exponent_float = ops.sub(
        ops.bitcast_to_float(ops.int_add(exponent, ops.bitcast_to_int(magic))),
        ops.select(denormal, magic_plus_shift, magic),
    );

    // log2(m) = K f + f^2 T(f) with f = m - 1 (exact); K f is carried as
    // head + exact error.
    let f = ops.sub(m, ops.float(1.0));
    let inv_ln2_hi = ops.float(p.inv_ln2_hi);
    let head = ops.mul(f, inv_ln2_hi);
    let head_error = ops.fma(f, inv_ln2_hi, ops.mul(head, ops.float(-1.0)));
    let small = ops.fma(f, ops.float(p.inv_ln2_lo), head_error);
    let t = polynomial(ops, f, p.log2_poly);
    let tail = ops.fma(ops.mul(f, f), t, small);

    // exponent + head exactly as sum + sum_error (|exponent| >= |head| or
    // exponent = 0), then one rounding for the whole.
    let sum = ops.add(exponent_float, head);
    let sum_error = ops.add(ops.sub(exponent_float, sum), head);
    let result = ops.add(sum, ops.add(sum_error, tail));

    let infinity = ops.float(f64::INFINITY);
    let result = ops.select(ops.eq(x, infinity), infinity, result);
    let result = ops.select(
        ops.eq(x, ops.float(0.0)),
        ops.float(f64::NEG_INFINITY),
        result,
    );
    // False for negative x and for NaN.
    ops.select(ops.le(ops.float(0.0), x), result, ops.float(f64::NAN))
}

/// sin(x).
pub fn sin<O: FloatOps>(ops: &O, x: O::F) -> O::F {
    sin_or_cos(ops, x, Trig::Sin)
}

/// cos(x).
pub fn cos<O: FloatOps>(ops: &O, x: O::F) -> O::F {
    sin_or_cos(ops, x, Trig::Cos)
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Trig {
    Sin,
    Cos,
}

fn sin_or_cos<O: FloatOps>(ops: &O, x: O::F, which: Trig) -> O::F {
    let p = params::<O>();
    let magnitude = abs(ops, x);
    // Beyond the limit (and for inf and NaN) the reduction would be
    // meaningless; reduce 0 instead, and fix non-finite inputs at the end.
    let zero = ops.float(0.0);
    let a = ops.select(ops.le(magnitude, ops.float(p.trig_limit)), magnitude, zero);

    let scaled = ops.fma(
        a,
        ops.float(p.two_over_pi_hi),
        ops.mul(a, ops.float(p.two_over_pi_lo)),
    );
    let magic = ops.float(p.round_magic);
    let shifted = ops.add(scaled, magic);
    let k = ops.sub(shifted, magic);
    let r = p
        .half_pi
        .iter()
        .fold(a, |r, &part| ops.fma(k, ops.float(-part), r));

    // The low bits of `shifted` are k; cos(x) = sin(x + pi/2) is one
    // quadrant further.
    let quadrant_offset = match which {
        Trig::Sin => 0,
        Trig::Cos => 1,
    };
    let quadrant = ops.int_add(ops.bitcast_to_int(shifted), ops.int(quadrant_offset));

    let r2 = ops.mul(r, r);
    let sin_r = ops.fma(ops.mul(r, r2), polynomial(ops, r2, p.sin_poly), r);
    let cos_r = ops.fma(r2, polynomial(ops, r2, p.cos_poly), ops.float(1.0));
    let one = ops.int(1);
    let odd_quadrant = ops.int_eq(ops.int_and(quadrant, one), one);
    let value = ops.select(odd_quadrant, cos_r, sin_r);

    // Quadrants 2 and 3 negate; sin is odd, so it also takes x's sign.
    let width = bit_width::<O>();
    let quadrant_sign = ops.int_shl(ops.int_and(quadrant, ops.int(2)), width - 2);
    let sign = match which {
        Trig::Sin => {
            let sign_bit = ops.int(i64::MIN >> (64 - width));
            ops.int_xor(quadrant_sign, ops.int_and(ops.bitcast_to_int(x), sign_bit))
        }
        Trig::Cos => quadrant_sign,
    };
    let value = ops.bitcast_to_float(ops.int_xor(ops.bitcast_to_int(value), sign));

    let finite = ops.lt(magnitude, ops.float(f64::INFINITY));
    ops.select(finite, value, ops.float(f64::NAN))
}

/// [`FloatOps`] on plain `f32` values: the interpreter's instantiation.
#[derive(Clone, Copy, Debug, Default)]
pub struct ScalarF32;

/// [`FloatOps`] on plain `f64` values: the interpreter's instantiation.
#[derive(Clone, Copy, Debug, Default)]
pub struct ScalarF64;

macro_rules! scalar_ops {
    ($name:ident, $float:ty, $int:ty, $width:expr) => {
        impl FloatOps for $name {
            type F = $float;
            type I = $int;
            type M = bool;
            const WIDTH: FloatWidth = $width;

            fn float(&self, value: f64) -> $float {
                if value.is_nan() {
                    return <$float>::NAN;
                }
                debug_assert_eq!(value as $float as f64, value, "constant must be exact");
                value as $float
            }
            fn int(&self, value: i64) -> $int {
                value as $int
            }
            fn add(&self, a: $float, b: $float) -> $float {
                a + b
            }
            fn sub(&self, a: $float, b: $float) -> $float {
                a - b
            }
            fn mul(&self, a: $float, b: $float) -> $float {
                a * b
            }
            fn fma(&self, a: $float, b: $float, c: $float) -> $float {
                a.mul_add(b, c)
            }
            fn lt(&self, a: $float, b: $float) -> bool {
                a < b
            }
            fn le(&self, a: $float, b: $float) -> bool {
                a <= b
            }
            fn eq(&self, a: $float, b: $float) -> bool {
                a == b
            }
            fn select(&self, mask: bool, a: $float, b: $float) -> $float {
                if mask {
                    a
                } else {
                    b
                }
            }
            fn bitcast_to_int(&self, a: $float) -> $int {
                a.to_bits() as $int
            }
            fn bitcast_to_float(&self, a: $int) -> $float {
                <$float>::from_bits(a as _)
            }
            fn int_add(&self, a: $int, b: $int) -> $int {
                a.wrapping_add(b)
            }
            fn int_sub(&self, a: $int, b: $int) -> $int {
                a.wrapping_sub(b)
            }
            fn int_and(&self, a: $int, b: $int) -> $int {
                a & b
            }
            fn int_xor(&self, a: $int, b: $int) -> $int {
                a ^ b
            }
            fn int_shl(&self, a: $int, amount: u32) -> $int {
                a.wrapping_shl(amount)
            }
            fn int_shr_arith(&self, a: $int, amount: u32) -> $int {
                a.wrapping_shr(amount)
            }
            fn int_eq(&self, a: $int, b: $int) -> bool {
                a == b
            }
        }
    };
}

scalar_ops!(ScalarF32, f32, i32, FloatWidth::F32);
scalar_ops!(ScalarF64, f64, i64, FloatWidth::F64);

/// sin(x) for f32; see the module docs for accuracy and special values.
pub fn sin_f32(x: f32) -> f32 {
    sin(&ScalarF32, x)
}

/// cos(x) for f32.
pub fn cos_f32(x: f32) -> f32 {
    cos(&ScalarF32, x)
}

/// 2^x for f32.
pub fn exp2_f32(x: f32) -> f32 {
    exp2(&ScalarF32, x)
}

/// log2(x) for f32.
pub fn log2_f32(x: f32) -> f32 {
    log2(&ScalarF32, x)
}

/// sin(x) for f64.
pub fn sin_f64(x: f64) -> f64 {
    sin(&ScalarF64, x)
}

/// cos(x) for f64.
pub fn cos_f64(x: f64) -> f64 {
    cos(&ScalarF64, x)
}

/// 2^x for f64.
pub fn exp2_f64(x: f64) -> f64 {
    exp2(&ScalarF64, x)
}

/// log2(x) for f64.
pub fn log2_f64(x: f64) -> f64 {
    log2(&ScalarF64, x)
}
