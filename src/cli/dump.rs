//! `warpjit dump --llvm|--asm FILE`: the code the JIT generates for a file.

use super::{read_source, CommandResult, Failure};
use std::path::PathBuf;
use std::time::Instant;
use warpjit_ir::{text, VerifiedModule};
use warpjit_jit::{JitOptions, Target};

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
    /// LLVM optimisation level.
    #[arg(
        short = 'O',
        long = "opt-level",
        value_name = "0-3",
        default_value_t = 2,
        value_parser = clap::value_parser!(u8).range(0..=3)
    )]
    opt_level: u8,
    /// Instruction set: native (everything the host has), avx2 or sse4.2.
    #[arg(long, value_name = "TARGET", default_value = "native", value_parser = crate::run::options::parse_target)]
    target: Target,
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
    let options = JitOptions {
        opt_level: args.opt_level,
        target: args.target,
        whole_warps,
    };
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
