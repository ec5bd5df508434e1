//! Buffer contents given on the command line (`--buffer NAME=SPEC`).
//!
//! | SPEC | contents |
//! | --- | --- |
//! | `zeros[:TYPE]:COUNT` | COUNT zero elements |
//! | `const[:TYPE]:COUNT:VALUE` | COUNT copies of VALUE |
//! | `iota[:TYPE]:COUNT[:START[:STEP]]` | START, START+STEP, ... (integers wrap) |
//! | `random[:TYPE]:COUNT[:SEED]` | SplitMix64 numbers from SEED (default 0) |
//! | `file:PATH[:TYPE]` | the file's bytes, little-endian |
//!
//! TYPE defaults to the buffer's declared element type. Random integers are
//! the low bits of successive SplitMix64 outputs (uniform over the type's
//! range); random floats are uniform in [0, 1): the top 53 (f64), 24 (f32) or
//! 11 (f16) bits of an output scaled by 2^-53, 2^-24 or 2^-11, so every value
//! is exact in its format.

use crate::values::{self, decode_float, encode_float, parse_format, write_element};
use std::path::PathBuf;
use warpjit_ir::NumFormat;

/// The `random:` pattern's generator: the one the program generator uses.
pub use warpjit_ir::generate::SplitMix64;

/// The largest buffer the command line creates: 32-bit addresses reach 4 GiB.
pub const MAX_BUFFER_BYTES: u64 = 1 << 32;

#[derive(Clone, Debug, PartialEq)]
pub enum BufferSpec {
    Zeros {
        format: Option<NumFormat>,
        count: u64,
    },
    Const {
        format: Option<NumFormat>,
        count: u64,
        value: String,
    },
    Iota {
        format: Option<NumFormat>,
        count: u64,
        start: Option<String>,
        step: Option<String>,
    },
    Random {
        format: Option<NumFormat>,
        count: u64,
        seed: u64,
    },
    File {
        path: PathBuf,
        format: Option<NumFormat>,
    },
}

const KINDS: &str = "zeros, const, iota, random, file";

impl BufferSpec {
    /// Parses the SPEC syntax above (values are checked later, once the
    /// element type is known).
    pub fn parse(text: &str) -> Result<BufferSpec, String> {
        let (kind, rest) = text.split_once(':').unwrap_or((text, ""));
        if kind == "file" {
            return parse_file_spec(rest);
        }
        let mut parts: Vec<&str> = if rest.is_empty() {
            Vec::new()
        } else {
            rest.split(':').collect()
        };
        let format = match parts.first() {
            Some(first) if first.parse::<u64>().is_err() => {
                let format = parse_format(first).ok_or_else(|| {
                    format!(
                        "unknown element type `{first}` (types: {})",
                        values::format_names()
                    )
                })?;
                parts.remove(0);
                Some(format)
            }
            _ => None,
        };
        let usage = match kind {
            "zeros" => "zeros[:TYPE]:COUNT",
            "const" => "const[:TYPE]:COUNT:VALUE",
            "iota" => "iota[:TYPE]:COUNT[:START[:STEP]]",
            "random" => "random[:TYPE]:COUNT[:SEED]",
            _ => return Err(format!("unknown buffer kind `{kind}` (kinds: {KINDS})")),
        };
        let count_text = parts
            .first()
            .ok_or_else(|| format!("missing COUNT; the form is {usage}"))?;
        let count = count_text
            .parse::<u64>()
            .map_err(|_| format!("COUNT `{count_text}` is not a number; the form is {usage}"))?;
        let extra = &parts[1..];
        let arity_ok = match kind {
            "zeros" => extra.is_empty(),
            "const" => extra.len() == 1,
            "iota" => extra.len() <= 2,
            _ => extra.len() <= 1,
        };
        if !arity_ok {
            return Err(format!("`{text}` does not have the form {usage}"));
        }
        Ok(match kind {
            "zeros" => BufferSpec::Zeros { format, count },
            "const" => BufferSpec::Const {
                format,
                count,
                value: extra[0].to_string(),
            },
            "iota" => BufferSpec::Iota {
                format,
                count,
                start: extra.first().map(|s| s.to_string()),
                step: extra.get(1).map(|s| s.to_string()),
            },
            _ => {
                let seed = match extra.first() {
                    Some(s) => values::parse_int_literal(s)
                        .ok()
                        .filter(|v| (0..=u64::MAX as i128).contains(v))
                        .map(|v| v as u64)
                        .ok_or_else(|| format!("SEED `{s}` is not an unsigned 64-bit number"))?,
                    None => 0,
                };
                BufferSpec::Random {
                    format,
                    count,
                    seed,
                }
            }
        })
    }

    /// The bytes of the buffer; `declared` is the buffer's element type.
    pub fn materialize(&self, declared: NumFormat) -> Result<Vec<u8>, String> {
        match self {
            BufferSpec::File { path, format } => {
                let format = format.unwrap_or(declared);
                let bytes =
                    crate::files::read_at_most(path, MAX_BUFFER_BYTES, "4 GiB").map_err(|e| {
                        match mistyped_format(path) {
                            Some(word) if !path.exists() => format!(
                                "{e} (`{word}` after the last `:` is not a type: {})",
                                values::format_names()
                            ),
                            _ => e,
                        }
                    })?;
                if bytes.len() % format.bytes() as usize != 0 {
                    return Err(format!(
                        "{} has {} bytes, not a whole number of {} elements",
                        path.display(),
                        bytes.len(),
                        format.name()
                    ));
                }
                Ok(bytes)
            }
            BufferSpec::Zeros { format, count } => allocate(format.unwrap_or(declared), *count),
            BufferSpec::Const {
                format,
                count,
                value,
            } => {
                let format = format.unwrap_or(declared);
                let bits =
                    values::parse_element(format, value).map_err(|e| format!("VALUE {e}"))?;
                fill(format, *count, |_| bits)
            }
            BufferSpec::Iota {
                format,
                count,
                start,
                step,
            } => {
                let format = format.unwrap_or(declared);
                let start = start.as_deref().unwrap_or("0");
                let step = step.as_deref().unwrap_or("1");
                if format.is_float() {
                    let start_value = decode_float(
                        format,
                        values::parse_element(format, start).map_err(|e| format!("START {e}"))?,
                    );
                    let step_value = decode_float(
                        format,
                        values::parse_element(format, step).map_err(|e| format!("STEP {e}"))?,
                    );
                    fill(format, *count, |i| {
                        encode_float(format, start_value + i as f64 * step_value)
                    })
                } else {
                    values::int_bits(start, format.bits()).map_err(|e| format!("START {e}"))?;
                    let start_value = values::parse_int_literal(start)?;
                    let step_value =
                        values::parse_int_literal(step).map_err(|e| format!("STEP {e}"))?;
                    fill(format, *count, |i| {
                        (start_value.wrapping_add((i as i128).wrapping_mul(step_value))) as u64
                    })
                }
            }
            BufferSpec::Random {
                format,
                count,
                seed,
            } => {
                let format = format.unwrap_or(declared);
                let mut rng = SplitMix64::new(*seed);
                fill(format, *count, |_| random_element(format, rng.next_u64()))
            }
        }
    }
}

/// The word after the last `:` of `path` when it looks like an attempt at a
/// type (`u9`, `f31`): a letter, then digits and letters, 2 to 6 long.
fn mistyped_format(path: &std::path::Path) -> Option<&str> {
    let (_, last) = path.to_str()?.rsplit_once(':')?;
    let mut chars = last.chars();
    let typelike = (2..=6).contains(&last.len())
        && chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && last.chars().any(|c| c.is_ascii_digit())
        && chars.all(|c| c.is_ascii_alphanumeric());
    typelike.then_some(last)
}

fn parse_file_spec(rest: &str) -> Result<BufferSpec, String> {
    if rest.is_empty() {
        return Err("missing PATH; the form is file:PATH[:TYPE]".into());
    }
    let (path, format) = match rest.rsplit_once(':') {
        Some((path, last)) if !path.is_empty() => match parse_format(last) {
            Some(format) => (path, Some(format)),
            None => (rest, None),
        },
        _ => (rest, None),
    };
    Ok(BufferSpec::File {
        path: PathBuf::from(path),
        format,
    })
}

fn allocate(format: NumFormat, count: u64) -> Result<Vec<u8>, String> {
    let size = count
        .checked_mul(format.bytes() as u64)
        .filter(|&n| n <= MAX_BUFFER_BYTES)
        .ok_or_else(|| format!("{count} {} elements are more than 4 GiB", format.name()))?;
    let mut bytes = Vec::new();
    bytes
        .try_reserve_exact(size as usize)
        .map_err(|_| format!("cannot allocate {size} bytes"))?;
    bytes.resize(size as usize, 0);
    Ok(bytes)
}

fn fill(
    format: NumFormat,
    count: u64,
    mut element: impl FnMut(u64) -> u64,
) -> Result<Vec<u8>, String> {
    let mut bytes = allocate(format, count)?;
    for i in 0..count {
        write_element(&mut bytes, format, i as usize, element(i));
    }
    Ok(bytes)
}

/// One random element from a 64-bit random number (see the module doc).
fn random_element(format: NumFormat, x: u64) -> u64 {
    match format {
        NumFormat::F64 => encode_float(format, (x >> 11) as f64 * 2f64.powi(-53)),
        NumFormat::F32 => encode_float(format, (x >> 40) as f64 * 2f64.powi(-24)),
        NumFormat::F16 => encode_float(format, (x >> 53) as f64 * 2f64.powi(-11)),
        _ => x,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::values::read_element;

    fn elements(spec: &str, declared: NumFormat) -> Vec<u64> {
        let bytes = BufferSpec::parse(spec)
            .and_then(|s| s.materialize(declared))
            .unwrap_or_else(|e| panic!("{spec}: {e}"));
        (0..bytes.len() / declared.bytes() as usize)
            .map(|i| read_element(&bytes, declared, i))
            .collect()
    }

    #[test]
    fn splitmix64_matches_the_published_sequence_for_seed_0() {
        // First outputs of SplitMix64 seeded with 0, as listed with the
        // reference implementation (Vigna's splitmix64.c).
        let mut rng = SplitMix64::new(0);
        assert_eq!(rng.next_u64(), 0xe220_a839_7b1d_cdaf);
        assert_eq!(rng.next_u64(), 0x6e78_9e6a_a1b9_65f4);
        assert_eq!(rng.next_u64(), 0x06c4_5d18_8009_454f);
    }

    #[test]
    fn kinds_fill_as_documented() {
        assert_eq!(elements("zeros:3", NumFormat::U32), [0, 0, 0]);
        assert_eq!(elements("const:2:-1", NumFormat::S16), [0xffff, 0xffff]);
        assert_eq!(elements("iota:4", NumFormat::U32), [0, 1, 2, 3]);
        assert_eq!(elements("iota:3:10:-4", NumFormat::S32), [10, 6, 2]);
        // Integers wrap at the type's width.
        assert_eq!(elements("iota:u8:3:254", NumFormat::U8), [254, 255, 0]);
        assert_eq!(
            elements("iota:3:0.5:0.25", NumFormat::F32),
            [0.5f32, 0.75, 1.0].map(|x| x.to_bits() as u64)
        );
    }

    #[test]
    fn random_is_seeded_and_floats_lie_in_unit_interval() {
        assert_eq!(
            elements("random:2:7", NumFormat::U64),
            elements("random:2:7", NumFormat::U64)
        );
        assert_ne!(
            elements("random:2:7", NumFormat::U64),
            elements("random:2:8", NumFormat::U64)
        );
        for format in [NumFormat::F16, NumFormat::F32, NumFormat::F64] {
            for bits in elements(&format!("random:{}:1000:3", format.name()), format) {
                let x = decode_float(format, bits);
                assert!((0.0..1.0).contains(&x), "{x} from {}", format.name());
            }
        }
        let bytes = elements("random:u8:1000", NumFormat::U8);
        assert!(bytes.iter().any(|&b| b > 200) && bytes.iter().any(|&b| b < 50));
    }

    #[test]
    fn bad_specs_say_what_is_wrong() {
        let err = |s: &str| BufferSpec::parse(s).unwrap_err();
        assert!(err("ones:4").contains("unknown buffer kind `ones`"));
        assert!(err("zeros").contains("missing COUNT"));
        assert!(err("zeros:u33:4").contains("unknown element type `u33`"));
        assert!(err("const:u32:4").contains("const[:TYPE]:COUNT:VALUE"));
        assert!(err("iota:x1").contains("unknown element type"));
        let spec = BufferSpec::parse("const:u8:4:300").expect("syntax is fine");
        assert!(spec.materialize(NumFormat::U8).unwrap_err().contains("300"));
        let huge = BufferSpec::parse("zeros:u64:1000000000000").expect("syntax is fine");
        assert!(huge
            .materialize(NumFormat::U64)
            .unwrap_err()
            .contains("4 GiB"));
    }

    #[test]
    fn file_spec_takes_a_trailing_type() {
        assert_eq!(
            BufferSpec::parse("file:data/in.bin:f32"),
            Ok(BufferSpec::File {
                path: "data/in.bin".into(),
                format: Some(NumFormat::F32)
            })
        );
        assert_eq!(
            BufferSpec::parse("file:C:/x.bin"),
            Ok(BufferSpec::File {
                path: "C:/x.bin".into(),
                format: None
            })
        );
    }

    #[test]
    fn a_missing_file_whose_name_ends_in_a_near_type_names_it() {
        let dir = std::env::temp_dir().join(format!("warpjit-mistyped-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let input = dir.join("in.bin");
        std::fs::write(&input, [0u8; 8]).unwrap();
        let spec = |suffix: &str| {
            BufferSpec::parse(&format!("file:{}{suffix}", input.display())).expect("syntax")
        };
        let err = spec(":u9").materialize(NumFormat::U32).unwrap_err();
        assert!(
            err.contains("`u9` after the last `:` is not a type: "),
            "{err}"
        );
        assert!(err.contains("u32"), "{err}");
        // A real type, and a file that does exist with a colon, read fine.
        assert_eq!(spec(":u16").materialize(NumFormat::U32).unwrap().len(), 8);
        std::fs::write(dir.join("in.bin:v2"), [1u8; 4]).unwrap();
        assert_eq!(spec(":v2").materialize(NumFormat::U32).unwrap(), [1u8; 4]);
        // A name that does not look like a type gets the plain error.
        let err = spec(":backup").materialize(NumFormat::U32).unwrap_err();
        assert!(!err.contains("not a type"), "{err}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
