//! `warpjit check FILE...`: parse and verify, report every diagnostic.

use super::{CommandResult, Failure};
use crate::files::read_source;
use std::path::PathBuf;
use std::time::Instant;
use warpjit_ir::{text, VerifiedModule};

#[derive(clap::Args, Debug)]
pub struct CheckArgs {
    /// .warp files to check.
    #[arg(required = true, value_name = "FILE")]
    files: Vec<PathBuf>,
}

pub fn check(args: &CheckArgs) -> CommandResult {
    let mut failed = 0usize;
    for path in &args.files {
        match check_file(path) {
            Ok(summary) => out_line!("ok: {summary}"),
            Err(Failure::Message(message)) => {
                err_line!("error: {message}");
                failed += 1;
            }
            Err(Failure::Reported | Failure::Exit(_)) => failed += 1,
        }
    }
    let total = args.files.len();
    match failed {
        0 if total > 1 => {
            out_line!("ok: {total} files checked");
            Ok(())
        }
        0 => Ok(()),
        _ if total > 1 => Err(Failure::Message(format!(
            "{failed} of {total} files have errors"
        ))),
        _ => Err(Failure::Reported),
    }
}

/// Checks one file; on success says what it holds.
fn check_file(path: &std::path::Path) -> Result<String, Failure> {
    let file = path.display().to_string();
    let source = read_source(path)?;
    let started = Instant::now();
    let checked = text::parse(&source).and_then(VerifiedModule::new);
    tracing::info!(file, elapsed = ?started.elapsed(), "parsed and verified");
    match checked {
        Ok(module) => {
            let kernels = module.kernels().count();
            let functions = module.functions.len() - kernels;
            Ok(format!(
                "{file} ({kernels} kernel{}, {functions} function{}, {} buffer{}, {} param{})",
                plural(kernels),
                plural(functions),
                module.buffers.len(),
                plural(module.buffers.len()),
                module.params.len(),
                plural(module.params.len()),
            ))
        }
        Err(diagnostics) => {
            err_text!("{}", diagnostics.render(&file, &source));
            Err(Failure::Reported)
        }
    }
}

fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}
