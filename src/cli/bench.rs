//! `warpjit bench [NAMES...]`: runs the benchmark suite (docs/benchmarks.md)
//! and prints a table, JSON, or an SVG chart.

use super::CommandResult;
use crate::bench::engines::Engine;
use crate::bench::runner::{self, BenchOptions, Measurement};
use crate::bench::{baselines, report, Case, Size};
use std::path::PathBuf;

#[derive(clap::Args, Debug)]
pub struct BenchArgs {
    /// Cases to run: a workload's name or id (`saxpy`, `W2`), a
    /// micro-benchmark (`micro.ballot`), `workloads` or `micro`; none runs
    /// everything.
    #[arg(value_name = "NAMES")]
    names: Vec<String>,
    /// Timed runs per configuration, after one warm-up run; one run of
    /// each configuration a round.
    #[arg(long, value_name = "N", default_value_t = 5,
          value_parser = clap::value_parser!(u32).range(1..=10_000))]
    runs: u32,
    /// Timed runs of the interpreter, which is slow (no warm-up).
    #[arg(long, value_name = "N", default_value_t = 1,
          value_parser = clap::value_parser!(u32).range(1..=10_000))]
    interp_runs: u32,
    /// Leave the interpreter out.
    #[arg(long)]
    no_interp: bool,
    /// Small inputs (the test sizes) instead of the full workloads.
    #[arg(long)]
    small: bool,
    /// SMs of the "all SMs" JIT configuration (default: every core).
    #[arg(long, value_name = "N",
          value_parser = clap::value_parser!(u32).range(1..=1024))]
    sms: Option<u32>,
    /// Print JSON instead of the table.
    #[arg(long)]
    json: bool,
    /// Also write an SVG bar chart of the speedups to FILE.
    #[arg(long, value_name = "FILE.svg")]
    plot: Option<PathBuf>,
    /// List the cases and exit.
    #[arg(long)]
    list: bool,
    #[command(flatten)]
    prefetch: crate::run::options::PrefetchArg,
}

pub fn bench(args: &BenchArgs) -> CommandResult {
    let cases = Case::select(&args.names)?;
    if args.list {
        for case in &cases {
            let what = match case {
                Case::Workload(w) => format!("{} ({})", w.file, w.unit),
                Case::Micro(m) => m.what.to_string(),
            };
            out_line!("{:<6} {:<28} {what}", case.id(), case.name());
        }
        return Ok(());
    }
    if let Some(path) = &args.plot {
        // Before minutes of measuring, not after.
        let micro_only = cases.iter().all(|c| matches!(c, Case::Micro(_)));
        if args.no_interp && micro_only {
            return Err(format!(
                "--plot {}: micro-benchmarks are plotted against the interpreter, \
                 which --no-interp leaves out",
                path.display()
            )
            .into());
        }
        check_plot_path(path)?;
    }
    let options = BenchOptions {
        runs: args.runs as usize,
        interp_runs: if args.no_interp {
            0
        } else {
            args.interp_runs as usize
        },
        size: if args.small { Size::Small } else { Size::Full },
        sms: args.sms.unwrap_or_else(Engine::all_cores),
        jit: warpjit_jit::JitOptions {
            prefetch_ahead: args.prefetch.prefetch_ahead(),
            ..warpjit_jit::JitOptions::default()
        },
    };
    let mut rows: Vec<Measurement> = Vec::new();
    let total = cases.len();
    for (i, case) in cases.iter().enumerate() {
        let mut progress = |what: &str| err_line!("[{}/{total}] {what}", i + 1);
        rows.extend(runner::measure(*case, &options, &mut progress)?);
    }
    if let Some(path) = &args.plot {
        let (chart, bars) = report::svg(&rows);
        std::fs::write(path, chart).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        match bars {
            0 => err_line!(
                "wrote {}: no bars (no speedup could be measured)",
                path.display()
            ),
            n => err_line!(
                "wrote {}: {n} bar{}",
                path.display(),
                if n == 1 { "" } else { "s" }
            ),
        }
    }
    if args.json {
        out_text!("{}", report::json(&rows, &machine(&options)));
    } else {
        for (key, value) in machine(&options) {
            out_line!("{key}: {value}");
        }
        out_line!("");
        out_text!("{}", report::table(&rows));
    }
    let wrong = rows
        .iter()
        .filter(|r| matches!(r.outcome, runner::Outcome::Wrong(_)))
        .count();
    if wrong > 0 {
        return Err(format!("{wrong} configuration(s) gave wrong output (see above)").into());
    }
    Ok(())
}

/// What the figures were measured on.
fn machine(options: &BenchOptions) -> Vec<(&'static str, String)> {
    vec![
        ("cores", Engine::all_cores().to_string()),
        (
            "sizes",
            if options.size == Size::Full {
                "full".into()
            } else {
                "small (--small)".into()
            },
        ),
        ("rust baselines", baselines::instruction_set().to_string()),
        ("warpjit", env!("CARGO_PKG_VERSION").to_string()),
        ("prefetch ahead", options.jit.prefetch_ahead.name().into()),
    ]
}

/// Whether the plot can go to `path`: it names an `.svg` file (the chart is
/// SVG text) that is not a directory, in a directory that exists or is
/// created now (as `run --output` creates its directories).
fn check_plot_path(path: &std::path::Path) -> Result<(), String> {
    let shown = path.display();
    if path.is_dir() {
        return Err(format!("--plot {shown}: is a directory"));
    }
    let svg = path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("svg"));
    if !svg {
        return Err(format!(
            "--plot {shown}: the chart is written as SVG; give a file name ending in .svg"
        ));
    }
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent).map_err(|e| {
            format!(
                "--plot {shown}: cannot create the directory {}: {e}",
                parent.display()
            )
        })?;
    }
    Ok(())
}
