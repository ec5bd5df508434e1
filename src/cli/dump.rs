//! `warpjit dump --llvm|--asm|--remarks FILE`: the code the JIT generates
//! for a file, or what its lowering decided, statement by statement.

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
    #[arg(long, conflicts_with_all = ["asm", "remarks"])]
    llvm: bool,
    /// Print the machine code as assembly.
    #[arg(long, conflicts_with = "remarks")]
    asm: bool,
    /// Print what the JIT decided for each kernel and statement, at its
    /// file:line:col: how each load, store and atomic reaches memory, which
    /// conditions are uniform, which loop variables stay scalars, which
    /// calls are inlined. "(per lane)" marks where a warp works lane by
    /// lane or under a divergent mask.
    #[arg(long)]
    remarks: bool,
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
    let (file, source, module) = load_module(&args.file)?;
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
    if args.remarks {
        let remarks = compiled
            .remarks()
            .map_err(|e| format!("{file}: cannot build the remarks: {e}"))?;
        out_text!("{}", render_remarks(&file, &source, &remarks));
        return Ok(());
    }
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

/// Each remark as `FILE:LINE:COL: @function: kind: message` with its
/// statement's first line below it, then a count.
fn render_remarks(file: &str, source: &str, remarks: &[warpjit_jit::Remark]) -> String {
    let mut out = String::new();
    for r in remarks {
        let per_lane = if r.lane_by_lane { " (per lane)" } else { "" };
        let message = format!(
            "@{}: {}{per_lane}: {}",
            r.function,
            r.kind.name(),
            r.message
        );
        out.push_str(&warpjit_ir::Diagnostic::new(r.span, message).one_line(file, source));
        out.push('\n');
        let start = (r.span.start as usize).min(source.len());
        let end = (r.span.end as usize).clamp(start, source.len());
        let text = source.get(start..end).unwrap_or("");
        let first = text.lines().next().unwrap_or("").trim();
        if !first.is_empty() {
            out.push_str(&format!("    {first}\n"));
        }
    }
    let per_lane = remarks.iter().filter(|r| r.lane_by_lane).count();
    out.push_str(&format!(
        "{} remarks, {per_lane} per lane (lane by lane or under a divergent mask)\n",
        remarks.len()
    ));
    out
}
