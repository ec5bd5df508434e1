//! Literals: giving a literal's text a value of a type, and writing a
//! constant back as text that reads as the same bits.

use super::syntax::LitForm;
use crate::types::{Const, Type};
use std::cmp::Ordering;

/// The constant `form` denotes as a `ty`, or the reason it denotes none.
pub(crate) fn literal_const(form: LitForm<'_>, ty: Type) -> Result<Const, String> {
    match form {
        LitForm::Bool(b) => match ty {
            Type::Bool => Ok(Const::bool(b)),
            _ => Err(format!(
                "expected {} literal, found the bool `{b}`",
                article(ty)
            )),
        },
        LitForm::Hex(text) => {
            let digits = text[2..].trim_start_matches('0');
            let bits = match digits.len() {
                0 => Some(0),
                1..=16 => u64::from_str_radix(digits, 16).ok(),
                _ => None,
            };
            match bits {
                Some(bits) if bits <= ty.bit_mask() => Ok(Const::new(ty, bits)),
                _ => Err(format!(
                    "hex literal `{}` does not fit in {} bits for {ty}",
                    super::lexer::shorten(text),
                    ty.bits()
                )),
            }
        }
        LitForm::Int(text) => match ty {
            Type::Bool => Err(format!(
                "expected a bool literal (`true` or `false`), found the integer `{}`",
                super::lexer::shorten(text)
            )),
            Type::I8 | Type::I16 | Type::I32 | Type::I64 => {
                let width = ty.bits();
                let min = -(1i128 << (width - 1));
                let max = (1i128 << width) - 1;
                match parse_int(text) {
                    Some(v) if (min..=max).contains(&v) => Ok(Const::new(ty, v as u64)),
                    _ => Err(format!(
                        "integer literal `{}` does not fit in {ty} (from {min} to {max}, read as signed or unsigned)",
                        super::lexer::shorten(text)
                    )),
                }
            }
            Type::F16 | Type::F32 | Type::F64 => float_const(text, ty),
        },
        LitForm::Float(text) => match ty {
            Type::F16 | Type::F32 | Type::F64 => float_const(text, ty),
            _ => Err(format!(
                "expected {} literal, found the float literal `{}`",
                article(ty),
                super::lexer::shorten(text)
            )),
        },
    }
}

fn article(ty: Type) -> String {
    match ty {
        Type::Bool => "a bool".into(),
        t => format!("an {t}"),
    }
}

/// Decimal integer text (maybe negative) as an i128; None past 2^64.
fn parse_int(text: &str) -> Option<i128> {
    let (negative, digits) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text),
    };
    let digits = digits.trim_start_matches('0');
    if digits.len() > 20 {
        return None;
    }
    let magnitude: i128 = if digits.is_empty() {
        0
    } else {
        digits.parse().ok()?
    };
    Some(if negative { -magnitude } else { magnitude })
}

/// Decimal text (integer or float syntax), `inf` or `nan` as a float type.
fn float_const(text: &str, ty: Type) -> Result<Const, String> {
    let (negative, body) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text),
    };
    let sign_bit = |bits: u64| {
        if negative {
            bits | 1 << (ty.bits() - 1)
        } else {
            bits
        }
    };
    match body {
        "inf" => return Ok(Const::new(ty, sign_bit(infinity_bits(ty)))),
        "nan" => return Ok(Const::new(ty, sign_bit(quiet_nan_bits(ty)))),
        _ => {}
    }
    let overflow = || {
        format!(
            "literal `{}` overflows {ty} (its largest finite value is {})",
            super::lexer::shorten(text),
            largest_finite(ty)
        )
    };
    let bits = match ty {
        Type::F64 => {
            let v: f64 = body.parse().map_err(|_| overflow())?;
            if v.is_infinite() {
                return Err(overflow());
            }
            v.to_bits()
        }
        Type::F32 => {
            let v: f32 = body.parse().map_err(|_| overflow())?;
            if v.is_infinite() {
                return Err(overflow());
            }
            v.to_bits() as u64
        }
        _ => {
            let bits = f16_from_decimal(body).ok_or_else(overflow)?;
            if bits == F16_INFINITY {
                return Err(overflow());
            }
            bits as u64
        }
    };
    Ok(Const::new(ty, sign_bit(bits)))
}

fn infinity_bits(ty: Type) -> u64 {
    match ty {
        Type::F16 => F16_INFINITY as u64,
        Type::F32 => f32::INFINITY.to_bits() as u64,
        _ => f64::INFINITY.to_bits(),
    }
}

/// `nan` is the positive quiet NaN with no payload.
fn quiet_nan_bits(ty: Type) -> u64 {
    match ty {
        Type::F16 => 0x7e00,
        Type::F32 => 0x7fc0_0000,
        _ => 0x7ff8_0000_0000_0000,
    }
}

fn largest_finite(ty: Type) -> &'static str {
    match ty {
        Type::F16 => "65504",
        Type::F32 => "3.4028235e38",
        _ => "1.7976931348623157e308",
    }
}

const F16_INFINITY: u16 = 0x7c00;

/// Non-negative decimal text rounded to the nearest f16 (ties to even),
/// as magnitude bits; overflow gives infinity. None if the text is no number.
///
/// The text is first rounded to f64. That cannot change which f16 is
/// nearest, except when the f64 lands exactly halfway between two f16s: then
/// the decimal itself is compared with the halfway point.
fn f16_from_decimal(text: &str) -> Option<u16> {
    let a: f64 = text.parse().ok()?;
    if a.is_infinite() || a >= 65536.0 {
        return Some(F16_INFINITY);
    }
    // Scale so that the f16 significand is the integer part (exact: powers of two).
    let (scaled, exp_field) = if a < f64::powi(2.0, -14) {
        (a * f64::powi(2.0, 24), 0u32)
    } else {
        let e = ((a.to_bits() >> 52) & 0x7ff) as i32 - 1023;
        (a * f64::powi(2.0, 10 - e), (e + 15) as u32)
    };
    let floor = scaled.floor();
    let mut significand = floor as u32;
    let round_up = match (scaled - floor).partial_cmp(&0.5) {
        Some(Ordering::Greater) => true,
        Some(Ordering::Less) => false,
        _ => match compare_decimal(text, a) {
            Ordering::Greater => true,
            Ordering::Less => false,
            Ordering::Equal => significand & 1 == 1,
        },
    };
    if round_up {
        significand += 1;
    }
    if exp_field == 0 {
        // Subnormal; rounding up to 1024 gives the smallest normal's encoding.
        return Some(significand as u16);
    }
    let (significand, exp_field) = if significand == 2048 {
        (1024, exp_field + 1)
    } else {
        (significand, exp_field)
    };
    if exp_field >= 31 {
        return Some(F16_INFINITY);
    }
    Some(((exp_field << 10) | (significand - 1024)) as u16)
}

/// Compares non-negative decimal text exactly with `halfway`, a point halfway
/// between two f16 values (a multiple of 2^-25 below 2^17).
fn compare_decimal(text: &str, halfway: f64) -> Ordering {
    let (digits, exp) = normalize_decimal(text);
    // halfway * 10^25 is an integer: halfway * 2^25 * 5^25 < 2^42 * 2^59.
    let scaled = (halfway * f64::powi(2.0, 25)) as u128 * 5u128.pow(25);
    let (h_digits, h_exp) = normalize_decimal(&format!("{scaled}e-25"));
    if digits.is_empty() || h_digits.is_empty() {
        return digits.len().cmp(&h_digits.len());
    }
    // Compare the position of the leading digit, then the digits.
    let magnitude = digits.len() as i128 + exp;
    let h_magnitude = h_digits.len() as i128 + h_exp;
    magnitude
        .cmp(&h_magnitude)
        .then_with(|| digits.as_bytes().cmp(h_digits.as_bytes()))
}

/// Decimal text as significant digits (no leading or trailing zeros) and
/// the power of ten they are scaled by.
fn normalize_decimal(text: &str) -> (String, i128) {
    let (mantissa, exp_text) = match text.find(['e', 'E']) {
        Some(i) => (&text[..i], &text[i + 1..]),
        None => (text, "0"),
    };
    let mut exp = parse_exponent(exp_text);
    let (int_part, frac_part) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    exp -= frac_part.len() as i128;
    let all = format!("{int_part}{frac_part}");
    let trimmed = all.trim_start_matches('0');
    let significant = trimmed.trim_end_matches('0');
    exp += (trimmed.len() - significant.len()) as i128;
    (significant.to_string(), exp)
}

/// An exponent, saturated far beyond any value that matters.
fn parse_exponent(text: &str) -> i128 {
    let (negative, digits) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text.strip_prefix('+').unwrap_or(text)),
    };
    let digits = digits.trim_start_matches('0');
    let magnitude: i128 = if digits.len() > 30 {
        i128::from(u64::MAX)
    } else {
        digits.parse().unwrap_or(0)
    };
    if negative {
        -magnitude
    } else {
        magnitude
    }
}

/// The exact value of an f16.
pub fn f16_to_f32(bits: u16) -> f32 {
    f32::from_bits(crate::semantics::ieee::f16_to_f32_bits(bits))
}

/// The text of a constant's value in the canonical form, without its type.
pub(crate) fn format_const(c: Const) -> String {
    match c.ty {
        Type::Bool => if c.bits != 0 { "true" } else { "false" }.into(),
        Type::I8 | Type::I16 | Type::I32 | Type::I64 => {
            let shift = 64 - c.ty.bits();
            let signed = ((c.bits << shift) as i64) >> shift;
            if -65536 < signed && signed < 65536 {
                signed.to_string()
            } else {
                format!("{:#x}", c.bits)
            }
        }
        Type::F16 => {
            let v = f16_to_f32(c.bits as u16);
            if v.is_nan() {
                format!("{:#x}", c.bits)
            } else {
                format!("{v:?}")
            }
        }
        Type::F32 => {
            let v = f32::from_bits(c.bits as u32);
            if v.is_nan() {
                format!("{:#x}", c.bits)
            } else {
                format!("{v:?}")
            }
        }
        Type::F64 => {
            let v = f64::from_bits(c.bits);
            if v.is_nan() {
                format!("{:#x}", c.bits)
            } else {
                format!("{v:?}")
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f16(text: &str) -> Option<u16> {
        f16_from_decimal(text)
    }

    #[test]
    fn f16_rounding_matches_ieee() {
        assert_eq!(f16("1"), Some(0x3c00));
        assert_eq!(f16("65504"), Some(0x7bff));
        // 65520 is halfway between 65504 and 2^16 and rounds to even: overflow.
        assert_eq!(f16("65520"), Some(F16_INFINITY));
        assert_eq!(f16("65519.999999999999999999"), Some(0x7bff));
        assert_eq!(f16("5.960464477539063e-8"), Some(0x0001));
        // Half the smallest subnormal ties to zero (even).
        assert_eq!(f16("2.98023223876953125e-8"), Some(0x0000));
        assert_eq!(f16("2.98023223876953125000000000001e-8"), Some(0x0001));
        // 1 + 2^-11 lies halfway between 1 and 1 + 2^-10: even is 1.
        assert_eq!(f16("1.00048828125"), Some(0x3c00));
        // A decimal just above it that rounds to the same f64.
        assert_eq!(f16("1.00048828125000000000000001"), Some(0x3c01));
        assert_eq!(f16("1.00146484375"), Some(0x3c02));
        assert_eq!(f16("6.103515625e-5"), Some(0x0400));
    }

    #[test]
    fn f16_exact_values() {
        assert_eq!(f16_to_f32(0x3c00), 1.0);
        assert_eq!(f16_to_f32(0x0001), f32::powi(2.0, -24));
        assert_eq!(f16_to_f32(0xfbff), -65504.0);
        assert!(f16_to_f32(0x7e00).is_nan());
        for bits in 0..=u16::MAX {
            let v = f16_to_f32(bits);
            if v.is_nan() || v.is_infinite() {
                continue;
            }
            let text = format!("{:?}", v.abs());
            assert_eq!(
                f16(&text),
                Some(bits & 0x7fff),
                "{bits:#x} printed as {text}"
            );
        }
    }

    #[test]
    fn constants_print_in_canonical_form() {
        assert_eq!(format_const(Const::i32(-1)), "-1");
        assert_eq!(format_const(Const::i32(65535)), "65535");
        assert_eq!(format_const(Const::i32(65536)), "0x10000");
        assert_eq!(format_const(Const::i32(-65536)), "0xffff0000");
        assert_eq!(format_const(Const::new(Type::I8, 0x80)), "-128");
        assert_eq!(format_const(Const::f32(1.0)), "1.0");
        assert_eq!(format_const(Const::f64(1e-10)), "1e-10");
        assert_eq!(format_const(Const::f32(f32::NEG_INFINITY)), "-inf");
        assert_eq!(
            format_const(Const::new(Type::F32, 0x7fc0_0001)),
            "0x7fc00001"
        );
        assert_eq!(format_const(Const::new(Type::F16, 0x3555)), "0.33325195");
    }
}
