//! The generic routines instantiated the way a vector backend does: every
//! trait operation acts on a whole array of lanes at once. The results must
//! equal the scalar entry points bit for bit, lane by lane, for ordinary and
//! special inputs alike. A second instantiation that splits fma into a
//! multiply and an add shows why the lowering rules on `FloatOps` matter.

use warpjit_ir::semantics::math::{self, FloatOps, FloatWidth};

const LANES: usize = 8;

macro_rules! lane_ops {
    ($name:ident, $float:ty, $int:ty, $width:expr, fused = $fused:expr) => {
        struct $name;

        impl FloatOps for $name {
            type F = [$float; LANES];
            type I = [$int; LANES];
            type M = [bool; LANES];
            const WIDTH: FloatWidth = $width;

            fn float(&self, value: f64) -> Self::F {
                [if value.is_nan() {
                    <$float>::NAN
                } else {
                    value as $float
                }; LANES]
            }
            fn int(&self, value: i64) -> Self::I {
                [value as $int; LANES]
            }
            fn add(&self, a: Self::F, b: Self::F) -> Self::F {
                std::array::from_fn(|i| a[i] + b[i])
            }
            fn sub(&self, a: Self::F, b: Self::F) -> Self::F {
                std::array::from_fn(|i| a[i] - b[i])
            }
            fn mul(&self, a: Self::F, b: Self::F) -> Self::F {
                std::array::from_fn(|i| a[i] * b[i])
            }
            fn fma(&self, a: Self::F, b: Self::F, c: Self::F) -> Self::F {
                if $fused {
                    std::array::from_fn(|i| a[i].mul_add(b[i], c[i]))
                } else {
                    std::array::from_fn(|i| a[i] * b[i] + c[i])
                }
            }
            fn lt(&self, a: Self::F, b: Self::F) -> Self::M {
                std::array::from_fn(|i| a[i] < b[i])
            }
            fn le(&self, a: Self::F, b: Self::F) -> Self::M {
                std::array::from_fn(|i| a[i] <= b[i])
            }
            fn eq(&self, a: Self::F, b: Self::F) -> Self::M {
                std::array::from_fn(|i| a[i] == b[i])
            }
            fn select(&self, mask: Self::M, a: Self::F, b: Self::F) -> Self::F {
                std::array::from_fn(|i| if mask[i] { a[i] } else { b[i] })
            }
            fn bitcast_to_int(&self, a: Self::F) -> Self::I {
                a.map(|x| x.to_bits() as $int)
            }
            fn bitcast_to_float(&self, a: Self::I) -> Self::F {
                a.map(|x| <$float>::from_bits(x as _))
            }
            fn int_add(&self, a: Self::I, b: Self::I) -> Self::I {
                std::array::from_fn(|i| a[i].wrapping_add(b[i]))
            }
            fn int_sub(&self, a: Self::I, b: Self::I) -> Self::I {
                std::array::from_fn(|i| a[i].wrapping_sub(b[i]))
            }
            fn int_and(&self, a: Self::I, b: Self::I) -> Self::I {
                std::array::from_fn(|i| a[i] & b[i])
            }
            fn int_xor(&self, a: Self::I, b: Self::I) -> Self::I {
                std::array::from_fn(|i| a[i] ^ b[i])
            }
            fn int_shl(&self, a: Self::I, amount: u32) -> Self::I {
                a.map(|x| x << amount)
            }
            fn int_shr_arith(&self, a: Self::I, amount: u32) -> Self::I {
                a.map(|x| x >> amount)
            }
            fn int_eq(&self, a: Self::I, b: Self::I) -> Self::M {
                std::array::from_fn(|i| a[i] == b[i])
            }
        }
    };
}

lane_ops!(LanesF32, f32, i32, FloatWidth::F32, fused = true);
lane_ops!(LanesF64, f64, i64, FloatWidth::F64, fused = true);
lane_ops!(SplitFmaLanesF32, f32, i32, FloatWidth::F32, fused = false);
lane_ops!(SplitFmaLanesF64, f64, i64, FloatWidth::F64, fused = false);

/// Small deterministic generator (xorshift64).
struct Rng(u64);

impl Rng {
    fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

/// Special values first, then a mix of random bit patterns and random values
/// in each function's main range, so that every lane array mixes cases.
fn inputs_f32() -> Vec<f32> {
    let mut inputs = vec![
        0.0,
        -0.0,
        1.0,
        -1.0,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::NAN,
        f32::from_bits(1),
        f32::MIN_POSITIVE,
        f32::MAX,
        128.0,
        -150.0,
        6291456.0,
        6291457.0,
        std::f32::consts::FRAC_PI_2,
    ];
    let mut rng = Rng(0x2545_f491_4f6c_dd1d);
    while inputs.len() < 40_000 {
        let bits = rng.next_u64();
        inputs.push(f32::from_bits(bits as u32));
        inputs.push((bits >> 40) as f32 / (1u64 << 24) as f32 * 300.0 - 150.0);
    }
    inputs
}

fn inputs_f64() -> Vec<f64> {
    let mut inputs = vec![
        0.0,
        -0.0,
        1.0,
        -1.0,
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::NAN,
        f64::from_bits(1),
        f64::MIN_POSITIVE,
        f64::MAX,
        1024.0,
        -1075.0,
        std::f64::consts::FRAC_PI_2,
    ];
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    while inputs.len() < 40_000 {
        let bits = rng.next_u64();
        inputs.push(f64::from_bits(bits));
        inputs.push((bits >> 11) as f64 / (1u64 << 53) as f64 * 2200.0 - 1100.0);
    }
    inputs
}

/// Runs `vector` over `inputs` in lane arrays (the tail padded with 1.0) and
/// compares every lane's bits with `scalar`.
fn check_lanes<T: Copy + Default + PartialEq + std::fmt::Debug + From<f32>>(
    name: &str,
    inputs: &[T],
    vector: impl Fn([T; LANES]) -> [T; LANES],
    scalar: impl Fn(T) -> T,
    bits: impl Fn(T) -> u64,
) {
    for chunk in inputs.chunks(LANES) {
        let lanes: [T; LANES] =
            std::array::from_fn(|i| chunk.get(i).copied().unwrap_or(T::from(1.0)));
        let got = vector(lanes);
        for (i, &x) in lanes.iter().enumerate() {
            assert_eq!(
                bits(got[i]),
                bits(scalar(x)),
                "{name}: lane {i} of {lanes:?} differs from the scalar entry point"
            );
        }
    }
}

#[test]
fn lane_arrays_match_the_scalar_entry_points_f32() {
    let inputs = inputs_f32();
    let bits = |x: f32| x.to_bits() as u64;
    check_lanes(
        "exp2_f32",
        &inputs,
        |v| math::exp2(&LanesF32, v),
        math::exp2_f32,
        bits,
    );
    check_lanes(
        "log2_f32",
        &inputs,
        |v| math::log2(&LanesF32, v),
        math::log2_f32,
        bits,
    );
    check_lanes(
        "sin_f32",
        &inputs,
        |v| math::sin(&LanesF32, v),
        math::sin_f32,
        bits,
    );
    check_lanes(
        "cos_f32",
        &inputs,
        |v| math::cos(&LanesF32, v),
        math::cos_f32,
        bits,
    );
}

#[test]
fn lane_arrays_match_the_scalar_entry_points_f64() {
    let inputs = inputs_f64();
    let bits = |x: f64| x.to_bits();
    check_lanes(
        "exp2_f64",
        &inputs,
        |v| math::exp2(&LanesF64, v),
        math::exp2_f64,
        bits,
    );
    check_lanes(
        "log2_f64",
        &inputs,
        |v| math::log2(&LanesF64, v),
        math::log2_f64,
        bits,
    );
    check_lanes(
        "sin_f64",
        &inputs,
        |v| math::sin(&LanesF64, v),
        math::sin_f64,
        bits,
    );
    check_lanes(
        "cos_f64",
        &inputs,
        |v| math::cos(&LanesF64, v),
        math::cos_f64,
        bits,
    );
}

/// How many inputs give different bits when fma is split into mul + add.
fn split_fma_differences<T: Copy>(
    inputs: &[T],
    fused: impl Fn(T) -> T,
    split: impl Fn([T; LANES]) -> [T; LANES],
    bits: impl Fn(T) -> u64,
) -> usize {
    inputs
        .chunks_exact(LANES)
        .map(|chunk| {
            let lanes: [T; LANES] = std::array::from_fn(|i| chunk[i]);
            let got = split(lanes);
            (0..LANES)
                .filter(|&i| bits(got[i]) != bits(fused(lanes[i])))
                .count()
        })
        .sum()
}

#[test]
fn splitting_fma_changes_results_so_it_must_stay_fused() {
    // The log2 head/error split (fma(f, K, -f K)) is exact only with a fused
    // operation; split, the error term is 0 and results move. The other
    // functions' polynomials also round differently.
    let inputs = inputs_f32();
    let bits = |x: f32| x.to_bits() as u64;
    let differences = [
        split_fma_differences(
            &inputs,
            math::exp2_f32,
            |v| math::exp2(&SplitFmaLanesF32, v),
            bits,
        ),
        split_fma_differences(
            &inputs,
            math::log2_f32,
            |v| math::log2(&SplitFmaLanesF32, v),
            bits,
        ),
        split_fma_differences(
            &inputs,
            math::sin_f32,
            |v| math::sin(&SplitFmaLanesF32, v),
            bits,
        ),
        split_fma_differences(
            &inputs,
            math::cos_f32,
            |v| math::cos(&SplitFmaLanesF32, v),
            bits,
        ),
    ];
    assert!(
        differences.iter().all(|&d| d > 0),
        "f32 exp2, log2, sin, cos: {differences:?}"
    );

    let inputs = inputs_f64();
    let bits = |x: f64| x.to_bits();
    let differences = [
        split_fma_differences(
            &inputs,
            math::exp2_f64,
            |v| math::exp2(&SplitFmaLanesF64, v),
            bits,
        ),
        split_fma_differences(
            &inputs,
            math::log2_f64,
            |v| math::log2(&SplitFmaLanesF64, v),
            bits,
        ),
        split_fma_differences(
            &inputs,
            math::sin_f64,
            |v| math::sin(&SplitFmaLanesF64, v),
            bits,
        ),
        split_fma_differences(
            &inputs,
            math::cos_f64,
            |v| math::cos(&SplitFmaLanesF64, v),
            bits,
        ),
    ];
    assert!(
        differences.iter().all(|&d| d > 0),
        "f64 exp2, log2, sin, cos: {differences:?}"
    );
}
