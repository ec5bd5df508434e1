//! Literals and buffer contents that reach the edge cases: zero, signs,
//! extremes, shift amounts around the width, NaNs, infinities, denormals,
//! f16 overflow boundaries.

use super::rng::{pick, RngLike};
use crate::types::{Const, Type};

pub(super) fn interesting(rng: &mut impl RngLike, ty: Type) -> Const {
    let random = rng.next_u64();
    match ty {
        Type::Bool => Const::bool(random & 1 == 1),
        Type::I8 | Type::I16 => {
            let edges = [0u64, 1, 0x7f, 0x80, 0xff, 0x7fff, 0x8000, 0xffff];
            Const::new(
                ty,
                if rng.chance(50) {
                    *pick(rng, &edges)
                } else {
                    random
                },
            )
        }
        Type::I32 => {
            let edges: [u32; 16] = [
                0,
                1,
                2,
                3,
                7,
                31,
                32,
                33,
                63,
                64,
                0xff,
                0x100,
                0x7fff_ffff,
                0x8000_0000,
                0xffff_ffff,
                0xffff_fffe,
            ];
            let bits = match rng.below(3) {
                0 => *pick(rng, &edges),
                1 => random as u32 % 100,
                _ => random as u32,
            };
            Const::new(ty, u64::from(bits))
        }
        Type::I64 => {
            let edges: [u64; 12] = [
                0,
                1,
                2,
                63,
                64,
                65,
                0xffff_ffff,
                0x1_0000_0000,
                i64::MAX as u64,
                i64::MIN as u64,
                u64::MAX,
                u64::MAX - 1,
            ];
            let bits = match rng.below(3) {
                0 => *pick(rng, &edges),
                1 => random % 100,
                _ => random,
            };
            Const::new(ty, bits)
        }
        Type::F16 => {
            let edges = [
                0u64, 0x8000, 0x3c00, 0xbc00, 0x3800, 0x7bff, 0x7c00, 0xfc00, 0x7e00, 0x0001,
                0x03ff, 0x0400,
            ];
            Const::new(
                ty,
                if rng.chance(60) {
                    *pick(rng, &edges)
                } else {
                    random
                },
            )
        }
        Type::F32 => {
            let edges: [f32; 22] = [
                0.0,
                -0.0,
                1.0,
                -1.0,
                0.5,
                1.5,
                2.5,
                -2.5,
                3.0,
                100.0,
                1e30,
                -1e-30,
                f32::INFINITY,
                f32::NEG_INFINITY,
                f32::MAX,
                f32::MIN_POSITIVE,
                16_777_217.0,
                65504.0,
                65520.0,
                2_147_483_648.0,
                -2_147_483_904.0,
                std::f32::consts::PI,
            ];
            let odd_bits: [u32; 6] = [
                0x7fc0_0000, // quiet NaN
                0x7fc0_0001, // NaN with a payload
                0xffc0_0000, // negative NaN
                0x7f80_0001, // signalling NaN
                0x0000_0001, // smallest denormal
                0x007f_ffff, // largest denormal
            ];
            let bits = match rng.below(4) {
                0 | 1 => pick(rng, &edges).to_bits(),
                2 => *pick(rng, &odd_bits),
                _ => {
                    // A moderate random value: random mantissa and sign, exponent near 0.
                    let exp = 120 + (random >> 40) as u32 % 16;
                    (random as u32 & 0x807f_ffff) | (exp << 23)
                }
            };
            Const::new(ty, u64::from(bits))
        }
        Type::F64 => {
            let edges: [f64; 16] = [
                0.0,
                -0.0,
                1.0,
                -1.0,
                0.5,
                2.5,
                -3.5,
                1e300,
                -1e-300,
                f64::INFINITY,
                f64::NEG_INFINITY,
                f64::MAX,
                f64::MIN_POSITIVE,
                9_007_199_254_740_993.0,
                i64::MAX as f64,
                std::f64::consts::E,
            ];
            let odd_bits: [u64; 4] = [
                0x7ff8_0000_0000_0000,
                0x7ff8_0000_0000_0001,
                0xfff8_0000_0000_0000,
                0x0000_0000_0000_0001,
            ];
            let bits = match rng.below(4) {
                0 | 1 => pick(rng, &edges).to_bits(),
                2 => *pick(rng, &odd_bits),
                _ => {
                    let exp = 1016 + (random >> 52) % 16;
                    (random & 0x800f_ffff_ffff_ffff) | (exp << 52)
                }
            };
            Const::new(ty, bits)
        }
    }
}

/// What a buffer starts with.
pub(super) enum Fill {
    /// Random bytes (shows which bytes a run left untouched).
    Random,
    /// 32-bit words that are interesting as integers or f32.
    Values,
    /// Small counters, so wrapping and min/max atomics see both sides.
    Counters,
}

pub(super) fn buffer_bytes(rng: &mut impl RngLike, len: usize, fill: Fill) -> Vec<u8> {
    let mut bytes = Vec::with_capacity(len + 4);
    while bytes.len() < len {
        let word: u32 = match fill {
            Fill::Random => rng.next_u64() as u32,
            Fill::Values => {
                if rng.chance(50) {
                    interesting(rng, Type::F32).bits as u32
                } else {
                    interesting(rng, Type::I32).bits as u32
                }
            }
            Fill::Counters => {
                if rng.chance(80) {
                    rng.below(20) as u32
                } else {
                    rng.next_u64() as u32
                }
            }
        };
        bytes.extend_from_slice(&word.to_le_bytes());
    }
    bytes.truncate(len);
    bytes
}
