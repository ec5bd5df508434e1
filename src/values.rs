//! Text <-> bit patterns for buffer elements and kernel parameters.
//!
//! Everything is a `u64` bit pattern zero-extended from the value's width, the
//! same convention the IR uses for lane values. Integers are accepted as
//! decimal (optionally negative) or `0x` hex; a value must fit the width as a
//! signed or an unsigned number, like literals in the text format. For float
//! formats a `0x` number is the raw bit pattern; anything else is read as a
//! decimal float (`1.5`, `-2e-3`, `inf`, `nan`) and rounded to nearest even.
//! NaN becomes the canonical NaN the GPU produces (f16 0x7fff, f32
//! 0x7fffffff, f64 0x7fffffffffffffff).

use warpjit_ir::semantics::ieee;
use warpjit_ir::{NumFormat, Round, Type};

/// A format name as the command line spells it: the IR's `s8 ... f64`, with
/// `i8 i16 i32 i64` accepted for `s8 s16 s32 s64`.
pub fn parse_format(name: &str) -> Option<NumFormat> {
    let canonical = match name {
        "i8" => "s8",
        "i16" => "s16",
        "i32" => "s32",
        "i64" => "s64",
        other => other,
    };
    NumFormat::from_name(canonical)
}

/// The list of format names, for error messages.
pub fn format_names() -> String {
    let names: Vec<&str> = NumFormat::ALL.iter().map(|f| f.name()).collect();
    names.join(" ")
}

fn width_mask(bits: u32) -> u64 {
    if bits >= 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    }
}

/// Parses an integer literal (`42`, `-7`, `0xff`) into an `i128`. Hex
/// literals are bit patterns, so they may not carry a sign.
pub fn parse_int_literal(text: &str) -> Result<i128, String> {
    let (negative, digits) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text.strip_prefix('+').unwrap_or(text)),
    };
    let magnitude = if let Some(hex) = digits
        .strip_prefix("0x")
        .or_else(|| digits.strip_prefix("0X"))
    {
        if negative {
            return Err(format!(
                "`{text}`: a hex value is a bit pattern and takes no sign"
            ));
        }
        u128::from_str_radix(hex, 16)
    } else {
        digits.parse::<u128>()
    }
    .map_err(|_| format!("`{text}` is not an integer"))?;
    if magnitude > u64::MAX as u128 + 1 {
        return Err(format!("`{text}` does not fit in 64 bits"));
    }
    let value = magnitude as i128;
    Ok(if negative { -value } else { value })
}

/// An integer literal as a `bits`-wide pattern: it must fit as a signed or
/// an unsigned number of that width.
pub fn int_bits(text: &str, bits: u32) -> Result<u64, String> {
    let value = parse_int_literal(text)?;
    let min = -(1i128 << (bits - 1));
    let max = (1i128 << bits) - 1;
    if value < min || value > max {
        return Err(format!(
            "`{text}` does not fit in {bits} bits (range {min}..={max})"
        ));
    }
    Ok((value as u64) & width_mask(bits))
}

/// Whether `text` spells infinity (`inf`, `-Infinity`, ...) rather than a
/// number too large for `f64`.
fn names_infinity(text: &str) -> bool {
    let t = text.trim_start_matches(['+', '-']).to_ascii_lowercase();
    t == "inf" || t == "infinity"
}

fn float_value(text: &str) -> Result<f64, String> {
    text.parse::<f64>()
        .map_err(|_| format!("`{text}` is not a number"))
}

/// Encodes `x` in a float format (round to nearest even, canonical NaN).
pub fn encode_float(format: NumFormat, x: f64) -> u64 {
    match format {
        NumFormat::F16 => f64_to_f16_bits(x) as u64,
        NumFormat::F32 => {
            if x.is_nan() {
                0x7fff_ffff
            } else {
                (x as f32).to_bits() as u64
            }
        }
        _ => {
            if x.is_nan() {
                0x7fff_ffff_ffff_ffff
            } else {
                x.to_bits()
            }
        }
    }
}

/// Decodes a float format's bits to `f64` (exactly: every f16 and f32 value
/// is an f64 value).
pub fn decode_float(format: NumFormat, bits: u64) -> f64 {
    match format {
        NumFormat::F16 => f16_bits_to_f64(bits as u16),
        NumFormat::F32 => f32::from_bits(bits as u32) as f64,
        _ => f64::from_bits(bits),
    }
}

/// Parses one element of `format`.
pub fn parse_element(format: NumFormat, text: &str) -> Result<u64, String> {
    let text = text.trim();
    if format.is_float() {
        if text.starts_with("0x") || text.starts_with("0X") {
            return int_bits(text, format.bits());
        }
        let x = float_value(text)?;
        let bits = encode_float(format, x);
        // A finite number too large for the format is a mistake (as in
        // program text); `inf` says so when infinity is meant.
        if x.is_finite() && decode_float(format, bits).is_infinite()
            || x.is_infinite() && !names_infinity(text)
        {
            return Err(format!("`{text}` overflows {}", format.name()));
        }
        return Ok(bits);
    }
    int_bits(text, format.bits())
}

/// Parses a kernel parameter of IR type `ty`: integers as above, floats as
/// above, `bool` as `true`/`false` (or `1`/`0`).
pub fn parse_param(ty: Type, text: &str) -> Result<u64, String> {
    let text = text.trim();
    match ty {
        Type::Bool => match text {
            "true" | "1" => Ok(1),
            "false" | "0" => Ok(0),
            _ => Err(format!("`{text}` is not a bool (true or false)")),
        },
        Type::F16 => parse_element(NumFormat::F16, text),
        Type::F32 => parse_element(NumFormat::F32, text),
        Type::F64 => parse_element(NumFormat::F64, text),
        Type::I8 | Type::I16 | Type::I32 | Type::I64 => int_bits(text, ty.bits()),
    }
}

/// Reads element `index` of `format` from little-endian `bytes`.
pub fn read_element(bytes: &[u8], format: NumFormat, index: usize) -> u64 {
    let size = format.bytes() as usize;
    let mut raw = [0u8; 8];
    raw[..size].copy_from_slice(&bytes[index * size..(index + 1) * size]);
    u64::from_le_bytes(raw)
}

/// Writes `bits` as element `index` of `format` into little-endian `bytes`.
pub fn write_element(bytes: &mut [u8], format: NumFormat, index: usize, bits: u64) {
    let size = format.bytes() as usize;
    bytes[index * size..(index + 1) * size].copy_from_slice(&bits.to_le_bytes()[..size]);
}

/// The element as a signed or unsigned integer, or a float.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Number {
    Signed(i64),
    Unsigned(u64),
    Float(f64),
}

pub fn decode(format: NumFormat, bits: u64) -> Number {
    if format.is_float() {
        Number::Float(decode_float(format, bits))
    } else if format.is_signed() {
        let shift = 64 - format.bits();
        Number::Signed(((bits << shift) as i64) >> shift)
    } else {
        Number::Unsigned(bits & width_mask(format.bits()))
    }
}

/// Decimal text of an element. Floats print the shortest text that reads
/// back to the same value in their own width (f16 via f32).
pub fn format_decimal(format: NumFormat, bits: u64) -> String {
    match format {
        NumFormat::F16 => float_text(f16_bits_to_f64(bits as u16) as f32),
        NumFormat::F32 => float_text(f32::from_bits(bits as u32)),
        NumFormat::F64 => float_text(f64::from_bits(bits)),
        _ => match decode(format, bits) {
            Number::Signed(v) => v.to_string(),
            Number::Unsigned(v) => v.to_string(),
            Number::Float(v) => v.to_string(),
        },
    }
}

/// The shortest text that reads back as `x`; very small and very large
/// magnitudes with an exponent (`1e-45`, not 47 characters of zeros).
fn float_text<T: std::fmt::Display + std::fmt::LowerExp + Into<f64> + Copy>(x: T) -> String {
    let magnitude = x.into().abs();
    if magnitude != 0.0 && magnitude.is_finite() && !(1e-5..1e16).contains(&magnitude) {
        format!("{x:e}")
    } else {
        format!("{x}")
    }
}

/// Hex text of an element's bit pattern, zero-padded to its width.
pub fn format_hex(format: NumFormat, bits: u64) -> String {
    let digits = format.bytes() as usize * 2;
    format!("0x{:0digits$x}", bits & width_mask(format.bits()))
}

/// IEEE binary16 bits to f64 (exact).
pub fn f16_bits_to_f64(h: u16) -> f64 {
    ieee::to_f64(ieee::FloatFormat::F16, u64::from(h))
}

/// f64 to IEEE binary16 bits, rounding to nearest even; NaN gives 0x7fff.
pub fn f64_to_f16_bits(x: f64) -> u16 {
    ieee::convert_float(
        ieee::FloatFormat::F16,
        ieee::FloatFormat::F64,
        x.to_bits(),
        Round::Nearest,
    ) as u16
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integer_literals_fit_signed_or_unsigned() {
        assert_eq!(parse_element(NumFormat::U8, "255"), Ok(0xff));
        assert_eq!(parse_element(NumFormat::U8, "-1"), Ok(0xff));
        assert!(parse_element(NumFormat::U8, "256").is_err());
        assert!(parse_element(NumFormat::S8, "-129").is_err());
        assert_eq!(parse_element(NumFormat::S32, "-2"), Ok(0xffff_fffe));
        assert_eq!(
            parse_element(NumFormat::U64, "0xffffffffffffffff"),
            Ok(u64::MAX)
        );
        assert_eq!(
            parse_element(NumFormat::S64, "-9223372036854775808"),
            Ok(1 << 63)
        );
        assert!(parse_element(NumFormat::U32, "-0x1").is_err());
        assert!(parse_element(NumFormat::U32, "1.5").is_err());
    }

    #[test]
    fn float_literals_round_and_hex_is_raw_bits() {
        assert_eq!(parse_element(NumFormat::F32, "1.5"), Ok(0x3fc0_0000));
        assert_eq!(parse_element(NumFormat::F32, "0x7fc00001"), Ok(0x7fc0_0001));
        assert_eq!(parse_element(NumFormat::F64, "-2"), Ok((-2f64).to_bits()));
        // Canonical NaN of the GPU (HARDWARE.md 23).
        assert_eq!(parse_element(NumFormat::F32, "nan"), Ok(0x7fff_ffff));
        assert_eq!(parse_element(NumFormat::F16, "nan"), Ok(0x7fff));
        assert_eq!(parse_element(NumFormat::F16, "-inf"), Ok(0xfc00));
    }

    #[test]
    fn floats_too_large_for_their_format_are_refused() {
        let e = parse_element(NumFormat::F32, "1e40").unwrap_err();
        assert_eq!(e, "`1e40` overflows f32");
        assert!(parse_element(NumFormat::F16, "70000").is_err());
        assert!(parse_element(NumFormat::F64, "-1e400").is_err());
        assert!(parse_param(Type::F32, "1e40").is_err());
        // The largest finite values, and what rounds to them, are kept.
        assert_eq!(parse_element(NumFormat::F16, "65519"), Ok(0x7bff));
        assert_eq!(
            parse_element(NumFormat::F32, "3.4028235e38"),
            Ok(0x7f7f_ffff)
        );
        // Infinity is written as such.
        assert_eq!(parse_element(NumFormat::F32, "inf"), Ok(0x7f80_0000));
        assert_eq!(
            parse_element(NumFormat::F64, "-Infinity"),
            Ok((-f64::INFINITY).to_bits())
        );
    }

    #[test]
    fn f16_conversion_rounds_to_nearest_even() {
        assert_eq!(f64_to_f16_bits(1.0), 0x3c00);
        assert_eq!(f64_to_f16_bits(65504.0), 0x7bff);
        // 65520 is halfway between 65504 and 65536 (inf); even is inf.
        assert_eq!(f64_to_f16_bits(65520.0), 0x7c00);
        assert_eq!(f64_to_f16_bits(65519.0), 0x7bff);
        assert_eq!(f64_to_f16_bits(2f64.powi(-24)), 0x0001);
        assert_eq!(f64_to_f16_bits(2f64.powi(-25)), 0x0000);
        assert_eq!(f64_to_f16_bits(3.0 * 2f64.powi(-25)), 0x0002);
        assert_eq!(f64_to_f16_bits(-0.0), 0x8000);
        // 1 + 2^-11 lies halfway between 1 and 1 + 2^-10: even is 1.
        assert_eq!(f64_to_f16_bits(1.0 + 2f64.powi(-11)), 0x3c00);
        for h in 0..=0xffffu16 {
            let x = f16_bits_to_f64(h);
            if !x.is_nan() {
                assert_eq!(f64_to_f16_bits(x), h, "round trip of {h:#06x}");
            }
        }
    }

    #[test]
    fn params_follow_their_declared_type() {
        assert_eq!(parse_param(Type::Bool, "true"), Ok(1));
        assert!(parse_param(Type::Bool, "yes").is_err());
        assert_eq!(parse_param(Type::I32, "-1"), Ok(0xffff_ffff));
        assert_eq!(parse_param(Type::F32, "0.5"), Ok(0x3f00_0000));
        assert_eq!(parse_param(Type::I64, "0x10"), Ok(16));
    }

    #[test]
    fn tiny_and_huge_floats_print_with_an_exponent() {
        assert_eq!(format_decimal(NumFormat::F32, 1), "1e-45");
        assert_eq!(format_decimal(NumFormat::F64, 1), "5e-324");
        assert_eq!(format_decimal(NumFormat::F32, 0x7f7f_ffff), "3.4028235e38");
        assert_eq!(format_decimal(NumFormat::F16, 0x0001), "5.9604645e-8");
        assert_eq!(format_decimal(NumFormat::F32, 0x3fc0_0000), "1.5");
        assert_eq!(format_decimal(NumFormat::F32, 0x4b80_0000), "16777216");
        for bits in [1u64, 0x0080_0000, 0x7f7f_ffff, 0x8000_0001, 0x3dcc_cccd] {
            let text = format_decimal(NumFormat::F32, bits);
            assert_eq!(parse_element(NumFormat::F32, &text), Ok(bits), "{text}");
        }
    }

    #[test]
    fn element_text_round_trips() {
        assert_eq!(format_decimal(NumFormat::S16, 0xffff), "-1");
        assert_eq!(format_decimal(NumFormat::U16, 0xffff), "65535");
        assert_eq!(format_decimal(NumFormat::F32, 0x3fc0_0000), "1.5");
        assert_eq!(format_hex(NumFormat::U16, 0xab), "0x00ab");
        let mut bytes = vec![0u8; 8];
        write_element(&mut bytes, NumFormat::U16, 2, 0xbeef);
        assert_eq!(bytes, [0, 0, 0, 0, 0xef, 0xbe, 0, 0]);
        assert_eq!(read_element(&bytes, NumFormat::U16, 2), 0xbeef);
    }
}
