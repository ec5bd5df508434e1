//! Comparing an engine's run with the reference, and describing the
//! difference for people.

use super::exec::RunResult;
use std::fmt::Write as _;
use warpjit_ir::interp::FaultReport;

/// What kind of bug a difference is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum FindingKind {
    /// Both finished with different memory or fault reports, or one failed.
    Mismatch,
    /// The JIT refused a verified program (other than "unsupported").
    CompileError,
    /// A panic in an engine.
    Crash,
    /// One side ran out of fuel or time where the other finished.
    Hang,
}

impl FindingKind {
    pub fn name(self) -> &'static str {
        match self {
            FindingKind::Mismatch => "mismatch",
            FindingKind::CompileError => "compile-error",
            FindingKind::Crash => "crash",
            FindingKind::Hang => "hang",
        }
    }
}

/// The bug `other` shows against `reference`, if any. `Unsupported` is not
/// a bug; the reference failing the same way as the engine is agreement.
pub fn classify(reference: &RunResult, other: &RunResult) -> Option<FindingKind> {
    use RunResult::*;
    match (reference, other) {
        (_, Unsupported(_)) => None,
        (Crashed(_), _) | (_, Crashed(_)) => Some(FindingKind::Crash),
        (_, CompileError(_)) => Some(FindingKind::CompileError),
        (Hang(_), Hang(_)) => None,
        (Hang(_), _) | (_, Hang(_)) => Some(FindingKind::Hang),
        (
            Finished {
                buffers: a,
                faults: fa,
            },
            Finished {
                buffers: b,
                faults: fb,
            },
        ) => (a != b || !same_faults(fa, fb)).then_some(FindingKind::Mismatch),
        (Failed(_), Failed(_)) => None,
        _ => Some(FindingKind::Mismatch),
    }
}

fn same_faults(a: &FaultReport, b: &FaultReport) -> bool {
    (a.loads, a.stores, a.atomics, &a.first) == (b.loads, b.stores, b.atomics, &b.first)
}

/// Most differing bytes listed per buffer.
const MAX_LISTED: usize = 32;

/// A readable account of how `other` differs from `reference`.
pub fn describe(
    buffer_names: &[String],
    reference_name: &str,
    reference: &RunResult,
    other_name: &str,
    other: &RunResult,
) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "{reference_name}: {}", reference.summary());
    let _ = writeln!(out, "{other_name}: {}", other.summary());
    if let (
        RunResult::Finished {
            buffers: a,
            faults: fa,
        },
        RunResult::Finished {
            buffers: b,
            faults: fb,
        },
    ) = (reference, other)
    {
        if !same_faults(fa, fb) {
            let _ = writeln!(out, "\nfault reports differ:");
            let _ = writeln!(out, "  {reference_name}: {fa:?}");
            let _ = writeln!(out, "  {other_name}: {fb:?}");
        }
        for (i, (x, y)) in a.iter().zip(b).enumerate() {
            let name = buffer_names.get(i).map_or("?", String::as_str);
            let differing: Vec<usize> = (0..x.len().max(y.len()))
                .filter(|&k| x.get(k) != y.get(k))
                .collect();
            if differing.is_empty() {
                continue;
            }
            let _ = writeln!(
                out,
                "\nbuffer @{name} (binding {i}): {} of {} bytes differ",
                differing.len(),
                x.len()
            );
            let _ = writeln!(
                out,
                "  {:>8}  {:>18}  {:>18}",
                "byte", reference_name, other_name
            );
            // Whole 4-byte words around each differing byte.
            let mut words: Vec<usize> = differing.iter().map(|k| k / 4 * 4).collect();
            words.dedup();
            for &w in words.iter().take(MAX_LISTED) {
                let _ = writeln!(
                    out,
                    "  {w:>8}  {:>18}  {:>18}",
                    word_hex(x, w),
                    word_hex(y, w)
                );
            }
            if words.len() > MAX_LISTED {
                let _ = writeln!(out, "  ... {} more words", words.len() - MAX_LISTED);
            }
        }
    }
    out
}

fn word_hex(bytes: &[u8], at: usize) -> String {
    let end = (at + 4).min(bytes.len());
    let word = bytes.get(at..end).unwrap_or(&[]);
    let mut text = String::from("0x");
    for b in word.iter().rev() {
        let _ = write!(text, "{b:02x}");
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    fn finished(bytes: &[u8], loads: u64) -> RunResult {
        RunResult::Finished {
            buffers: vec![bytes.to_vec()],
            faults: FaultReport {
                loads,
                ..FaultReport::default()
            },
        }
    }

    #[test]
    fn classifies_each_kind_of_difference() {
        let a = finished(&[1, 2, 3, 4], 0);
        assert_eq!(classify(&a, &a.clone()), None);
        assert_eq!(
            classify(&a, &finished(&[1, 2, 3, 5], 0)),
            Some(FindingKind::Mismatch)
        );
        assert_eq!(
            classify(&a, &finished(&[1, 2, 3, 4], 1)),
            Some(FindingKind::Mismatch)
        );
        let hang = RunResult::Hang("fuel".into());
        assert_eq!(classify(&a, &hang), Some(FindingKind::Hang));
        assert_eq!(classify(&hang, &hang.clone()), None);
        assert_eq!(
            classify(&a, &RunResult::Crashed("boom".into())),
            Some(FindingKind::Crash)
        );
        assert_eq!(
            classify(&a, &RunResult::CompileError("llvm".into())),
            Some(FindingKind::CompileError)
        );
        assert_eq!(classify(&a, &RunResult::Unsupported("x".into())), None);
        assert_eq!(
            classify(&a, &RunResult::Failed("oom".into())),
            Some(FindingKind::Mismatch)
        );
    }

    #[test]
    fn the_description_lists_differing_words_and_faults() {
        let text = describe(
            &["out".into()],
            "reference",
            &finished(&[1, 0, 0, 0, 9, 9, 9, 9], 0),
            "jit",
            &finished(&[1, 0, 0, 0, 9, 9, 9, 8], 2),
        );
        assert!(
            text.contains("buffer @out (binding 0): 1 of 8 bytes differ"),
            "{text}"
        );
        assert!(
            text.contains("0x09090909") && text.contains("0x08090909"),
            "{text}"
        );
        assert!(text.contains("fault reports differ"), "{text}");
    }
}
