//! IEEE 754 binary formats (f16, f32, f64) and exact rounding into them.
//!
//! Every conversion that can round (int -> float, float -> narrower float,
//! float -> int) goes through [`round_to_float`] or [`round_to_integer`]:
//! the input is an exact value `(-1)^neg * mag * 2^exp`, so the result is the
//! correctly rounded neighbour for each rounding mode, with no host float
//! arithmetic involved.

use crate::ops::Round;

/// The layout of an IEEE binary interchange format.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FloatFormat {
    /// Explicit fraction bits (the significand has one more).
    pub frac_bits: u32,
    pub exp_bits: u32,
}

impl FloatFormat {
    pub const F16: FloatFormat = FloatFormat {
        frac_bits: 10,
        exp_bits: 5,
    };
    pub const F32: FloatFormat = FloatFormat {
        frac_bits: 23,
        exp_bits: 8,
    };
    pub const F64: FloatFormat = FloatFormat {
        frac_bits: 52,
        exp_bits: 11,
    };

    pub fn bias(self) -> i32 {
        (1 << (self.exp_bits - 1)) - 1
    }

    fn exp_field_max(self) -> u64 {
        (1 << self.exp_bits) - 1
    }

    fn frac_mask(self) -> u64 {
        (1 << self.frac_bits) - 1
    }

    pub fn sign_bit(self) -> u64 {
        1 << (self.frac_bits + self.exp_bits)
    }

    /// The NaN the NVIDIA GPU writes: sign clear, every other bit set
    /// (f16 0x7fff, f32 0x7fffffff, f64 0x7fffffffffffffff).
    pub fn canonical_nan(self) -> u64 {
        self.sign_bit() - 1
    }

    pub fn infinity(self) -> u64 {
        self.exp_field_max() << self.frac_bits
    }

    pub fn max_finite(self) -> u64 {
        self.infinity() - 1
    }

    pub fn is_nan(self, bits: u64) -> bool {
        bits & (self.sign_bit() - 1) > self.infinity()
    }
}

/// A float's value: NaN, an infinity, or exactly `(-1)^neg * mag * 2^exp`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Decoded {
    Nan,
    Inf { neg: bool },
    Finite { neg: bool, mag: u64, exp: i32 },
}

pub fn decode(fmt: FloatFormat, bits: u64) -> Decoded {
    let neg = bits & fmt.sign_bit() != 0;
    let exp_field = (bits >> fmt.frac_bits) & fmt.exp_field_max();
    let frac = bits & fmt.frac_mask();
    let min_exp = 1 - fmt.bias() - fmt.frac_bits as i32;
    if exp_field == fmt.exp_field_max() {
        if frac != 0 {
            Decoded::Nan
        } else {
            Decoded::Inf { neg }
        }
    } else if exp_field == 0 {
        Decoded::Finite {
            neg,
            mag: frac,
            exp: min_exp,
        }
    } else {
        Decoded::Finite {
            neg,
            mag: frac | (1 << fmt.frac_bits),
            exp: min_exp + exp_field as i32 - 1,
        }
    }
}

/// `mag / 2^shift` rounded to an integer by `round`, for a value of sign `neg`.
pub fn shift_right_rounded(mag: u128, shift: u32, neg: bool, round: Round) -> u128 {
    if shift == 0 {
        return mag;
    }
    let (quotient, half, sticky) = match shift {
        1..=127 => (
            mag >> shift,
            (mag >> (shift - 1)) & 1 != 0,
            mag & ((1u128 << (shift - 1)) - 1) != 0,
        ),
        128 => (0, mag >> 127 != 0, mag & (u128::MAX >> 1) != 0),
        _ => (0, false, mag != 0),
    };
    let inexact = half || sticky;
    let round_up = match round {
        Round::Nearest => half && (sticky || quotient & 1 == 1),
        Round::Ceil => inexact && !neg,
        Round::Floor => inexact && neg,
        Round::Trunc => false,
    };
    quotient + round_up as u128
}

/// The bits of `(-1)^neg * mag * 2^exp` rounded to `fmt` by `round`.
/// Subnormal results are kept; on overflow the result is infinity when the
/// rounding direction points away from zero on that side (nearest, or
/// ceil/floor toward the sign), otherwise the largest finite value.
pub fn round_to_float(fmt: FloatFormat, neg: bool, mag: u128, exp: i32, round: Round) -> u64 {
    let sign = if neg { fmt.sign_bit() } else { 0 };
    if mag == 0 {
        return sign;
    }
    let frac_bits = fmt.frac_bits as i32;
    let top_bit = 127 - mag.leading_zeros() as i32;
    let min_normal_exp = 1 - fmt.bias();
    // Exponent of the result's last significand bit: `frac_bits` below the
    // leading bit, but never below the subnormal spacing.
    let quantum = (top_bit + exp - frac_bits).max(min_normal_exp - frac_bits);
    let shift = quantum - exp;
    let significand = if shift <= 0 {
        mag << (-shift)
    } else {
        shift_right_rounded(mag, shift as u32, neg, round)
    };
    // Rounding up may carry into a new leading bit.
    let (significand, quantum) = if significand >> (frac_bits + 1) != 0 {
        (significand >> 1, quantum + 1)
    } else {
        (significand, quantum)
    };
    let significand = significand as u64;
    if significand == 0 {
        return sign;
    }
    if significand < 1 << frac_bits {
        return sign | significand;
    }
    let biased_exp = quantum + frac_bits + fmt.bias();
    if biased_exp as i64 >= fmt.exp_field_max() as i64 {
        let to_infinity = match round {
            Round::Nearest => true,
            Round::Ceil => !neg,
            Round::Floor => neg,
            Round::Trunc => false,
        };
        let magnitude = if to_infinity {
            fmt.infinity()
        } else {
            fmt.max_finite()
        };
        return sign | magnitude;
    }
    sign | ((biased_exp as u64) << frac_bits) | (significand & fmt.frac_mask())
}

/// Converts float bits between formats with the given rounding (exact when
/// widening). NaN becomes `to`'s canonical NaN.
pub fn convert_float(to: FloatFormat, from: FloatFormat, bits: u64, round: Round) -> u64 {
    match decode(from, bits) {
        Decoded::Nan => to.canonical_nan(),
        Decoded::Inf { neg } => {
            if neg {
                to.sign_bit() | to.infinity()
            } else {
                to.infinity()
            }
        }
        Decoded::Finite { neg, mag, exp } => round_to_float(to, neg, mag as u128, exp, round),
    }
}

/// The result of rounding a float to an integer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Integral {
    Nan,
    /// Beyond +-2^100 (including the infinities): saturates any 64-bit format.
    Huge {
        neg: bool,
    },
    Value(i128),
}

/// The float `bits` of `fmt` rounded to an integer by `round`.
pub fn round_to_integer(fmt: FloatFormat, bits: u64, round: Round) -> Integral {
    match decode(fmt, bits) {
        Decoded::Nan => Integral::Nan,
        Decoded::Inf { neg } => Integral::Huge { neg },
        Decoded::Finite { neg, mag, exp } => {
            let magnitude = if exp >= 0 {
                if mag != 0 && 64 - mag.leading_zeros() as i32 + exp > 100 {
                    return Integral::Huge { neg };
                }
                (mag as u128) << exp
            } else {
                shift_right_rounded(mag as u128, exp.unsigned_abs(), neg, round)
            };
            let magnitude = magnitude as i128;
            Integral::Value(if neg { -magnitude } else { magnitude })
        }
    }
}

/// f16 bits to f32 bits, exactly (NaN -> 0x7fffffff).
pub fn f16_to_f32_bits(h: u16) -> u32 {
    convert_float(FloatFormat::F32, FloatFormat::F16, h as u64, Round::Nearest) as u32
}

/// f32 bits to f16 bits with the given rounding (NaN -> 0x7fff).
pub fn f32_to_f16_bits(f: u32, round: Round) -> u16 {
    convert_float(FloatFormat::F16, FloatFormat::F32, f as u64, round) as u16
}

/// The value of float bits of `fmt` as an f64 (exact for f16 and f32).
pub fn to_f64(fmt: FloatFormat, bits: u64) -> f64 {
    f64::from_bits(convert_float(FloatFormat::F64, fmt, bits, Round::Nearest))
}
