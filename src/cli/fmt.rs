//! `warpjit fmt FILE [--check | --write]`: the canonical text of a module,
//! with its comments and blank lines where they were and each number
//! written as the file wrote it.

use super::{CommandResult, Failure};
use crate::files::read_source;
use std::path::PathBuf;
use warpjit_ir::text;

#[derive(clap::Args, Debug)]
pub struct FmtArgs {
    /// The .warp file.
    #[arg(value_name = "FILE")]
    file: PathBuf,
    /// Exit with an error if FILE is not in canonical form.
    #[arg(long, conflicts_with = "write")]
    check: bool,
    /// Rewrite FILE in canonical form.
    #[arg(long)]
    write: bool,
}

pub fn fmt(args: &FmtArgs) -> CommandResult {
    let file = args.file.display().to_string();
    let source = read_source(&args.file)?;
    let formatted = text::format(&source).map_err(|diagnostics| {
        err_text!("{}", diagnostics.render(&file, &source));
        Failure::Reported
    })?;
    if args.check {
        return match first_difference(&source, &formatted) {
            None => {
                out_line!("ok: {file} is in canonical form");
                Ok(())
            }
            Some(difference) => {
                err_text!("{}", difference.show(&file));
                Err(Failure::Message(format!(
                    "{file}:{}: not in canonical form (run `warpjit fmt --write {file}`)",
                    difference.line
                )))
            }
        };
    }
    if args.write {
        if source == formatted {
            out_line!("ok: {file} is already in canonical form");
            return Ok(());
        }
        std::fs::write(&args.file, &formatted).map_err(|e| format!("cannot write {file}: {e}"))?;
        out_line!("formatted {file}");
        return Ok(());
    }
    out_text!("{formatted}");
    Ok(())
}

/// The first line where a file and its formatted text differ.
struct Difference<'t> {
    /// 1-based.
    line: usize,
    /// The line in the file and in the formatted text, with its line end;
    /// None past the end.
    found: Option<&'t str>,
    expected: Option<&'t str>,
}

impl Difference<'_> {
    /// `file:line:` and the two lines, diff style.
    fn show(&self, file: &str) -> String {
        format!(
            "{file}:{}: first difference (- file, + formatted):\n- {}\n+ {}\n",
            self.line,
            shown_line(self.found),
            shown_line(self.expected)
        )
    }
}

/// A line without its line end, saying what the line end is when that is
/// all that may differ.
fn shown_line(line: Option<&str>) -> String {
    let Some(line) = line else {
        return "(end of file)".into();
    };
    if let Some(text) = line.strip_suffix("\r\n") {
        format!("{text} (a CRLF line end)")
    } else if let Some(text) = line.strip_suffix('\n') {
        if text.trim().is_empty() {
            "(a blank line)".into()
        } else {
            text.to_string()
        }
    } else {
        format!("{line} (no newline at the end of the file)")
    }
}

fn first_difference<'t>(source: &'t str, formatted: &'t str) -> Option<Difference<'t>> {
    let mut found = source.split_inclusive('\n');
    let mut expected = formatted.split_inclusive('\n');
    let mut line = 1;
    loop {
        match (found.next(), expected.next()) {
            (None, None) => return None,
            (Some(a), Some(b)) if a == b => line += 1,
            (found, expected) => {
                return Some(Difference {
                    line,
                    found,
                    expected,
                })
            }
        }
    }
}
