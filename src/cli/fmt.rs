//! `warpjit fmt FILE [--check | --write]`: the canonical text of a module.
//!
//! The printer knows nothing of comments, so `//!` comments (directives and
//! file documentation) are kept by moving them to the top of the output.
//! `--write` refuses to rewrite a file whose other comments would be lost.

use super::{read_source, CommandResult, Failure};
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
    let canonical = canonical_text(&source).map_err(|diagnostics| {
        err_text!("{}", diagnostics.render(&file, &source));
        Failure::Reported
    })?;
    if args.check {
        return match first_difference(&source, &canonical) {
            None => {
                out_line!("ok: {file} is in canonical form");
                Ok(())
            }
            Some(line) => Err(Failure::Message(format!(
                "{file}:{line}: not in canonical form (run `warpjit fmt --write {file}`)"
            ))),
        };
    }
    if args.write {
        if source == canonical {
            out_line!("ok: {file} is already in canonical form");
            return Ok(());
        }
        let dropped = plain_comment_lines(&source);
        if let Some(&line) = dropped.first() {
            return Err(Failure::Message(format!(
                "{file}:{line}: not rewritten: fmt would drop {} comment line{} \
                 (only `//!` comments are kept); `warpjit fmt {file}` prints the canonical form",
                dropped.len(),
                if dropped.len() == 1 { "" } else { "s" }
            )));
        }
        std::fs::write(&args.file, &canonical).map_err(|e| format!("cannot write {file}: {e}"))?;
        out_line!("formatted {file}");
        return Ok(());
    }
    out_text!("{canonical}");
    Ok(())
}

/// The `//!` comments, then the printed module.
fn canonical_text(source: &str) -> Result<String, warpjit_ir::Diagnostics> {
    let module = text::parse(source)?;
    let mut out = String::new();
    for line in source.lines() {
        if let Some(at) = line.find("//!") {
            out.push_str(line[at..].trim_end());
            out.push('\n');
        }
    }
    if !out.is_empty() {
        out.push('\n');
    }
    out.push_str(&text::print(&module));
    Ok(out)
}

/// 1-based lines holding a `//` comment that is not a `//!` comment.
fn plain_comment_lines(source: &str) -> Vec<usize> {
    source
        .lines()
        .enumerate()
        .filter(|(_, line)| {
            line.find("//")
                .is_some_and(|at| !line[at..].starts_with("//!"))
        })
        .map(|(i, _)| i + 1)
        .collect()
}

/// The first line where the texts differ, or None if they are equal.
fn first_difference(a: &str, b: &str) -> Option<usize> {
    if a == b {
        return None;
    }
    let mut a_lines = a.lines();
    let mut b_lines = b.lines();
    let mut line = 1;
    loop {
        match (a_lines.next(), b_lines.next()) {
            (Some(x), Some(y)) if x == y => line += 1,
            _ => return Some(line),
        }
    }
}
