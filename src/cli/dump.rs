//! `warpjit dump --llvm|--asm FILE`: the code the JIT generates for a file.

use super::jit_args::JitArgs;
use super::{load_module, CommandResult};
use crate::run::options::Dims;
use std::path::PathBuf;
use std::time::Instant;

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
    /// Show the code for launches with workgroups of this size, whose sizes
    /// are constants in it (the default: the kernels' declared size, when
    /// they declare one and the same).
    #[arg(long, value_name = "X[,Y[,Z]]", value_parser = Dims::parse, conflicts_with = "warps")]
    workgroup: Option<Dims>,
    /// Show the code for launches of other sizes: for workgroups of whole
    /// warps (a multiple of 32 invocations) or for any workgroup. The JIT
    /// compiles each kind when a launch first needs it.
    #[arg(long, value_name = "KIND")]
    warps: Option<WarpsArg>,
}

#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
enum WarpsArg {
    Whole,
    Partial,
}

pub fn dump(args: &DumpArgs) -> CommandResult {
    let (file, _, module) = load_module(&args.file)?;
    let options = match (args.workgroup, args.warps) {
        (Some(Dims(size)), _) => {
            let limit = warpjit_ir::verify::MAX_WORKGROUP_INVOCATIONS;
            if warpjit_jit::invocations(size) > limit {
                return Err(format!(
                    "--workgroup {}: a workgroup has at most {limit} invocations",
                    Dims(size)
                )
                .into());
            }
            args.jit.options().for_workgroup(size)
        }
        (None, Some(kind)) => warpjit_jit::JitOptions {
            whole_warps: kind == WarpsArg::Whole,
            ..args.jit.options()
        },
        (None, None) => args.jit.options().for_declared(&module),
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
