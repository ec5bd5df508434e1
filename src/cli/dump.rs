//! `warpjit dump --llvm|--asm FILE`: the code the JIT generates for a file.

use super::jit_args::JitArgs;
use super::{read_source, CommandResult, Failure};
use std::path::PathBuf;
use std::time::Instant;
use warpjit_ir::{text, VerifiedModule};

#[derive(clap::Args, Debug)]
pub struct DumpArgs {
    /// The .warp file to compile.
    #[arg(value_name = "FILE")]
    file: PathBuf,
    /// Print the optimised LLVM IR (the default).
    #[arg(long, conflicts_with = "asm")]
    llvm: bool,
    /// Print the machine code as assembly.
    #[arg(long)]
    asm: bool,
    #[command(flatten)]
    jit: JitArgs,
    /// Which code to show: for workgroups of whole warps (a multiple of 32
    /// invocations) or for any workgroup. The JIT compiles each kind when a
    /// launch first needs it; the default is the kind the kernels' declared
    /// workgroup sizes need.
    #[arg(long, value_name = "KIND")]
    warps: Option<WarpsArg>,
}

#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
enum WarpsArg {
    Whole,
    Partial,
}

pub fn dump(args: &DumpArgs) -> CommandResult {
    let file = args.file.display().to_string();
    let source = read_source(&args.file)?;
    let module = text::parse(&source)
        .and_then(VerifiedModule::new)
        .map_err(|diagnostics| {
            err_text!("{}", diagnostics.render(&file, &source));
            Failure::Reported
        })?;
    let whole_warps = match args.warps {
        Some(kind) => kind == WarpsArg::Whole,
        None => module
            .kernels()
            .all(|(id, _)| warpjit_jit::declared_whole_warps(&module, id)),
    };
    let options = args.jit.options(whole_warps);
    let started = Instant::now();
    let compiled = warpjit_jit::compile(&module, &options)
        .map_err(|e| format!("{file}: cannot compile: {e}"))?;
    tracing::info!(file, elapsed = ?started.elapsed(), times = ?compiled.compile_times(), "compiled");
    let code = if args.asm {
        compiled
            .assembly()
            .map_err(|e| format!("{file}: cannot emit assembly: {e}"))?
    } else {
        compiled
            .llvm_ir()
            .map_err(|e| format!("{file}: cannot print the LLVM IR: {e}"))?
    };
    out_text!("{code}");
    Ok(())
}
