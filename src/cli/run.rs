//! `warpjit run FILE [OPTIONS]`: launch a kernel and report what it did.

use super::{load_module, CommandResult};
use crate::run::{self, output, RunOptions};
use std::path::PathBuf;
use std::time::Duration;

#[derive(clap::Args, Debug)]
pub struct RunArgs {
    /// The .warp file; its `//! run:` lines give default options.
    #[arg(value_name = "FILE")]
    file: PathBuf,
    // Boxed: the options are far larger than the other commands' arguments.
    #[command(flatten)]
    options: Box<RunOptions>,
}

pub fn run(args: RunArgs) -> CommandResult {
    let (file, source, module) = load_module(&args.file)?;
    let options = run::options_from_source(&file, &source)?.then(*args.options);
    tracing::debug!(?options, "run options");
    let mut plan = run::plan(&module, &options)?;
    let outcome = run::execute(&module, &mut plan)?;

    for print in &plan.prints {
        out_text!("{}", output::format_print(&module, &plan.buffers, print));
    }
    let mut written = Vec::new();
    for out in &plan.outputs {
        written.push(output::write_output(&module, &plan.buffers, out)?);
    }

    let invocations = plan.grid.product().saturating_mul(plan.workgroup.product());
    let workgroups = outcome.report.workgroups;
    out_line!(
        "ran @{} on {}: grid {} x workgroup {} ({workgroups} workgroup{}, {invocations} invocation{})",
        plan.kernel_name,
        plan.backend.name(),
        plan.grid,
        plan.workgroup,
        if workgroups == 1 { "" } else { "s" },
        if invocations == 1 { "" } else { "s" },
    );
    let used = outcome.report.sms_used();
    let sms = if used == outcome.sm_count {
        format!("{used} SM{}", if used == 1 { "" } else { "s" })
    } else {
        format!("{used} of {} SMs", outcome.sm_count)
    };
    let compiled = match outcome.compile_time {
        Some(c) if c.cache_hit => ", code from the compile cache".to_string(),
        Some(c) => format!(", compiled in {}", show_duration(c.time)),
        None => String::new(),
    };
    if plan.backend.counts_statements() {
        out_line!(
            "  time {} on {sms}, {} statements executed",
            show_duration(outcome.wall),
            outcome.report.statements
        );
    } else {
        out_line!("  time {} on {sms}{compiled}", show_duration(outcome.wall));
    }
    let faults = &outcome.report.faults;
    if faults.is_empty() {
        out_line!("  faults: none");
    } else {
        out_line!("  faults: {faults}");
    }
    for print in &plan.prints {
        let name = &module.buffers[print.buffer].name;
        out_line!(
            "  printed @{name}[{}..{}] as {}",
            print.range.start,
            print.range.end.unwrap_or(print.range.start),
            print.format.name()
        );
    }
    for line in written {
        out_line!("  {line}");
    }
    Ok(())
}

fn show_duration(d: Duration) -> String {
    let seconds = d.as_secs_f64();
    if seconds >= 1.0 {
        format!("{seconds:.3} s")
    } else {
        format!("{:.3} ms", seconds * 1000.0)
    }
}
