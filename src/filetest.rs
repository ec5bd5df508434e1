//! Filetests: `.warp` files whose expectations are comments.
//!
//! ```text
//! //! run: --grid 2 --buffer out=zeros:64       how to run it (as `warpjit run`)
//! //! expect: out[0..4] = 0 1 2 3                 buffer contents after the run
//! //! expect: out[63] = 0x3f                      one element
//! //! expect: @out[4..8] = 7*4                    VALUE*N repeats a value
//! ```
//!
//! A file with `expect:` lines is run with its `run:` arguments (`--print`
//! and `--output` are ignored) on the interpreter and on the JIT, or on the
//! one `--backend` names; every `expect:` line is then checked after each
//! run. `BUFFER` is a name (with or without `@`) or a binding;
//! `[RANGE]` is `A..B` or a single index, and without it the line covers the
//! whole buffer. The values are in the buffer's declared element type, as
//! `--buffer const:` reads them (decimal, `0x` bit patterns, floats); they
//! must match exactly, except that `nan` matches any NaN.
//!
//! A file with `expect-error: TEXT` comments must fail `warpjit check`: each
//! such comment needs a diagnostic on its own line whose message contains
//! TEXT, and every diagnostic must be expected by a comment on its line.

use crate::directives::{self, DirectiveKind};
use crate::run::options::{BufferRef, ElemRange};
use crate::run::{self, plan::find_buffer, Backend};
use crate::values::{self, decode_float, read_element};
use std::path::Path;
use warpjit_ir::{text, Diagnostic, Diagnostics, Module, VerifiedModule};

/// True when `source` has `expect:` or `expect-error:` lines.
pub fn has_expectations(source: &str) -> bool {
    directives::scan(source).is_ok_and(|found| {
        found.iter().any(|d| {
            matches!(
                d.kind,
                DirectiveKind::Expect(_) | DirectiveKind::ExpectError(_)
            )
        })
    })
}

/// Runs the filetest in `path`; the error lists every failed expectation.
pub fn run_file(path: &Path) -> Result<(), String> {
    let source = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    run_source(&path.display().to_string(), &source)
}

/// Runs a filetest given as text; `file` names it in messages.
pub fn run_source(file: &str, source: &str) -> Result<(), String> {
    let found = directives::scan(source).map_err(|e| format!("{file}: {e}"))?;
    let expected_errors: Vec<(usize, &str)> = found
        .iter()
        .filter_map(|d| match &d.kind {
            DirectiveKind::ExpectError(text) => Some((d.line, text.as_str())),
            _ => None,
        })
        .collect();
    let expectations: Vec<(usize, &str)> = found
        .iter()
        .filter_map(|d| match &d.kind {
            DirectiveKind::Expect(text) => Some((d.line, text.as_str())),
            _ => None,
        })
        .collect();
    match (expected_errors.is_empty(), expectations.is_empty()) {
        (true, true) => Err(format!(
            "{file}: no `//! expect:` or `//! expect-error:` lines"
        )),
        (false, false) => Err(format!(
            "{file}: a file either runs (`expect:`) or fails to check (`expect-error:`), not both"
        )),
        (false, true) => check_errors(file, source, &expected_errors),
        (true, false) => check_run(file, source, &expectations),
    }
}

fn check(source: &str) -> Result<VerifiedModule, Diagnostics> {
    VerifiedModule::new(text::parse(source)?)
}

fn check_errors(file: &str, source: &str, expected: &[(usize, &str)]) -> Result<(), String> {
    let diagnostics = match check(source) {
        Ok(_) => {
            return Err(format!(
                "{file}: checked without errors, but {} error(s) are expected (first at line {})",
                expected.len(),
                expected[0].0
            ))
        }
        Err(d) => d.0,
    };
    let line_of = |d: &Diagnostic| d.line_col(source).0;
    let mentions = |d: &Diagnostic, text: &str| {
        d.message.contains(text) || d.notes.iter().any(|n| n.contains(text))
    };
    let mut failures = Vec::new();
    for (line, text) in expected {
        if !diagnostics
            .iter()
            .any(|d| line_of(d) == *line && mentions(d, text))
        {
            let on_line: Vec<String> = diagnostics
                .iter()
                .filter(|d| line_of(d) == *line)
                .map(|d| format!("`{}`", d.message))
                .collect();
            failures.push(if on_line.is_empty() {
                format!("{file}:{line}: expected an error containing `{text}`; none on this line")
            } else {
                format!(
                    "{file}:{line}: expected an error containing `{text}`; got {}",
                    on_line.join(", ")
                )
            });
        }
    }
    for d in &diagnostics {
        if !expected.iter().any(|(line, _)| *line == line_of(d)) {
            failures.push(format!("unexpected {}", d.one_line(file, source)));
        }
    }
    if failures.is_empty() {
        Ok(())
    } else {
        Err(failures.join("\n"))
    }
}

fn check_run(file: &str, source: &str, expectations: &[(usize, &str)]) -> Result<(), String> {
    let module = check(source).map_err(|d| d.render(file, source))?;
    let mut options = run::options_from_source(file, source)?;
    options.prints.clear();
    options.outputs.clear();
    // The interpreter defines the semantics; the JIT must give the same.
    let backends = match options.backend {
        Some(named) => vec![named],
        None => vec![Backend::Interp, Backend::Jit],
    };
    let mut failures = Vec::new();
    for backend in backends {
        options.backend = Some(backend);
        let on = backend.name();
        let mut plan = run::plan(&module, &options).map_err(|e| format!("{file} ({on}): {e}"))?;
        run::execute(&module, &mut plan).map_err(|e| format!("{file} ({on}): {e}"))?;
        failures.extend(expectations.iter().filter_map(|(line, text)| {
            check_expectation(&module, &plan.buffers, text)
                .err()
                .map(|e| format!("{file}:{line}: on {on}: {e}"))
        }));
    }
    if failures.is_empty() {
        Ok(())
    } else {
        Err(failures.join("\n"))
    }
}

/// One `BUFFER[RANGE] = VALUES` line against the buffers after the run.
fn check_expectation(module: &Module, buffers: &[Vec<u8>], text: &str) -> Result<(), String> {
    let (target, wanted) = text
        .split_once('=')
        .ok_or_else(|| format!("`{text}` is not BUFFER[RANGE] = VALUES"))?;
    let target = target.trim();
    let (name, range) = match target.split_once('[') {
        Some((name, rest)) => {
            let inner = rest
                .strip_suffix(']')
                .ok_or_else(|| format!("`{target}`: missing `]`"))?;
            (name.trim(), ElemRange::parse(inner)?)
        }
        None => (target, ElemRange::default()),
    };
    let buffer = find_buffer(module, &BufferRef::parse(name)?)?;
    let decl = &module.buffers[buffer];
    let format = decl.elem;
    let len = buffers[buffer].len() as u64 / format.bytes() as u64;
    let (start, end) = range.within(len)?;
    let mut values = Vec::new();
    for word in wanted.split_whitespace() {
        let (value, repeat) = match word.split_once('*') {
            Some((value, count)) => (
                value,
                count
                    .parse::<usize>()
                    .map_err(|_| format!("`{word}`: repeat count `{count}` is not a number"))?,
            ),
            None => (word, 1),
        };
        if values.len().saturating_add(repeat) as u64 > end - start {
            return Err(format!(
                "@{}[{start}..{end}] has {} elements, the line gives more values",
                decl.name,
                end - start
            ));
        }
        for _ in 0..repeat {
            values.push(value);
        }
    }
    if values.len() as u64 != end - start {
        return Err(format!(
            "@{}[{start}..{end}] has {} elements, the line gives {} values",
            decl.name,
            end - start,
            values.len()
        ));
    }
    let mut mismatches = Vec::new();
    let mut count = 0;
    for (offset, text) in values.iter().enumerate() {
        let index = start + offset as u64;
        let actual = read_element(&buffers[buffer], format, index as usize);
        let matches = if format.is_float() && text.trim_start_matches(['-', '+']) == "nan" {
            decode_float(format, actual).is_nan()
        } else {
            values::parse_element(format, text).map_err(|e| format!("value {e}"))? == actual
        };
        if !matches {
            count += 1;
            if mismatches.len() < 8 {
                mismatches.push(format!(
                    "[{index}] expected {text}, got {} ({})",
                    values::format_decimal(format, actual),
                    values::format_hex(format, actual)
                ));
            }
        }
    }
    if count == 0 {
        return Ok(());
    }
    let more = if count > mismatches.len() {
        format!(" and {} more", count - mismatches.len())
    } else {
        String::new()
    };
    Err(format!(
        "@{}: {} of {} elements differ: {}{more}",
        decl.name,
        count,
        end - start,
        mismatches.join("; ")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    const FILL: &str = "//! run: --grid 1 --workgroup 8 --buffer out=zeros:8\n\
                        buffer @out[0]: u32\n\
                        kernel @main {\n\
                          %i = global_id.x\n\
                          %addr = shl %i, 2\n\
                          %v = mul %i, 3\n\
                          store.u32 @out, %addr, %v\n\
                        }\n";

    #[test]
    fn matching_expectations_pass() {
        let source = format!("{FILL}//! expect: out[0..4] = 0 3 6 9\n//! expect: @out[7] = 21\n");
        assert_eq!(run_source("fill.warp", &source), Ok(()));
        let whole = format!("{FILL}//! expect: 0 = 0 3 6 9 0xc 15 18 21\n");
        assert_eq!(run_source("fill.warp", &whole), Ok(()));
    }

    #[test]
    fn wrong_values_fail_with_the_line_and_element() {
        let source = format!("{FILL}//! expect: out[1..3] = 3 7\n");
        let err = run_source("fill.warp", &source).unwrap_err();
        assert!(err.contains("fill.warp:9:"), "{err}");
        assert!(err.contains("[2] expected 7, got 6"), "{err}");
        // Checked after the run on each backend.
        assert!(
            err.contains(":9: on interp: ") && err.contains(":9: on jit: "),
            "{err}"
        );
    }

    #[test]
    fn wrong_value_counts_and_names_fail() {
        let short = format!("{FILL}//! expect: out[0..4] = 0 3\n");
        assert!(run_source("f", &short).unwrap_err().contains("4 elements"));
        let missing = format!("{FILL}//! expect: nope[0] = 0\n");
        assert!(run_source("f", &missing)
            .unwrap_err()
            .contains("no buffer @nope"));
        let repeated = format!("{FILL}//! expect: out[4..8] = 0*4\n");
        assert!(run_source("f", &repeated).unwrap_err().contains("4 of 4"));
    }

    #[test]
    fn expected_errors_must_match_line_and_text() {
        let bad = "kernel @main {\n  %x = add 1:i32, 1.5:f32 //! expect-error: type\n}\n";
        assert_eq!(run_source("bad.warp", bad), Ok(()));
        let wrong_text = bad.replace("expect-error: type", "expect-error: no such words");
        assert!(run_source("bad.warp", &wrong_text).is_err());
        let wrong_line = "kernel @main { //! expect-error: type\n  %x = add 1:i32, 1.5:f32\n}\n";
        let err = run_source("bad.warp", wrong_line).unwrap_err();
        assert!(err.contains("unexpected bad.warp:2:"), "{err}");
    }

    #[test]
    fn a_clean_file_with_expected_errors_fails() {
        let source = format!("{FILL}//! expect-error: something\n");
        assert!(run_source("f", &source)
            .unwrap_err()
            .contains("checked without errors"));
    }
}
