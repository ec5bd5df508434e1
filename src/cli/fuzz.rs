//! `warpjit fuzz`: a differential fuzz campaign (see docs/fuzzing.md).

use super::jit_args::JitArgs;
use super::{CommandResult, Failure};
use crate::fuzz::campaign::{FoundCase, Progress};
use crate::fuzz::compare::FindingKind;
use crate::fuzz::{run_campaign, CampaignOptions, Summary};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;
use std::path::PathBuf;
use std::time::{Duration, Instant};
use warpjit_ir::reduce::ReduceLimits;

#[derive(clap::Args, Debug)]
pub struct FuzzArgs {
    /// Stop starting cases after this long: `90s`, `5m`, `1h` or seconds.
    /// Without --time or --cases: 60s.
    #[arg(long, value_name = "DURATION", value_parser = parse_time_limit)]
    time: Option<Duration>,
    /// Stop after this many cases.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    cases: Option<u64>,
    /// Campaign seed, decimal or `0x` hex; case i is generated from a seed
    /// mixed from it and i. Default: from the clock (printed, so the
    /// campaign can be repeated).
    #[arg(long, value_name = "S", value_parser = parse_seed)]
    seed: Option<u64>,
    /// Worker threads, each with its own JIT (default: available cores).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=1024))]
    jobs: Option<u32>,
    /// Directory for reproducers.
    #[arg(long, value_name = "DIR", default_value = "fuzz-findings")]
    out: PathBuf,
    /// Stop at the first difference.
    #[arg(long)]
    stop_on_first: bool,
    /// Time budget for reducing each finding: `30s`, `2m` or seconds (0: do not reduce).
    #[arg(long, value_name = "DURATION", value_parser = parse_duration, default_value = "60s")]
    reduce_time: Duration,
    #[command(flatten)]
    jit: JitArgs,
    /// Each case compiles for a target (native, avx2, sse4.2) and an
    /// optimisation level (0-3) drawn from its seed, so one campaign covers
    /// the code of every kind; reproducers name the case's.
    #[arg(long, conflicts_with_all = ["opt_level", "target"])]
    vary_jit: bool,
}

/// Exit status when the campaign found differences.
pub const EXIT_FOUND: u8 = 3;

pub fn fuzz(args: &FuzzArgs) -> CommandResult {
    let seed = args.seed.unwrap_or_else(clock_seed);
    let jobs = args.jobs.map_or_else(
        || std::thread::available_parallelism().map_or(1, |n| n.get()),
        |n| n as usize,
    );
    let time = match (args.time, args.cases) {
        (None, None) => Some(Duration::from_secs(60)),
        (t, _) => t,
    };
    check_out_dir(&args.out)?;
    let opts = CampaignOptions {
        seed,
        cases: args.cases,
        time,
        jobs,
        out_dir: args.out.clone(),
        stop_on_first: args.stop_on_first,
        reduce: ReduceLimits {
            max_attempts: if args.reduce_time.is_zero() { 0 } else { 2_000 },
            max_time: args.reduce_time,
        },
        jit: args.jit.options(),
        vary_jit: args.vary_jit,
    };
    let jit = if args.vary_jit {
        "each case's target and level".to_string()
    } else {
        format!("{} at -O{}", args.jit.target.name(), args.jit.opt_level)
    };
    err_line!(
        "fuzz: seed {seed}, {jobs} job{}, JIT for {jit}, {}{}; reproducers in {}",
        if jobs == 1 { "" } else { "s" },
        time.map_or(String::new(), |t| format!("for {}s", t.as_secs_f64())),
        args.cases.map_or(String::new(), |n| format!(
            "{}{n} cases",
            if time.is_some() { " or " } else { "" }
        )),
        args.out.display()
    );
    let mut progress = Display::new(args.cases);
    let summary = run_campaign(&opts, &mut progress);
    progress.finish();
    print_summary(&summary, seed);
    if summary.findings.is_empty() {
        Ok(())
    } else {
        Err(Failure::Exit(EXIT_FOUND))
    }
}

fn print_summary(s: &Summary, seed: u64) {
    out_line!(
        "fuzz summary: seed {seed}, {} cases in {:.1}s ({:.2} cases/s)",
        s.cases,
        s.elapsed.as_secs_f64(),
        s.cases_per_second()
    );
    out_line!(
        "  mismatches {}, compile errors {}, crashes {}, hangs {}; {} cases the JIT does not support",
        s.count(FindingKind::Mismatch),
        s.count(FindingKind::CompileError),
        s.count(FindingKind::Crash),
        s.count(FindingKind::Hang),
        s.unsupported
    );
    let kinds: Vec<String> = s.coverage.iter().map(|(k, n)| format!("{k}:{n}")).collect();
    out_line!(
        "  coverage: {} kinds of operation and statement: {}",
        s.coverage.len(),
        kinds.join(" ")
    );
    for f in &s.findings {
        out_line!("  {}", found_line(f));
    }
}

fn found_line(f: &FoundCase) -> String {
    let place = match &f.reproducer {
        Ok(dir) => format!("reproducer {}", dir.display()),
        Err(e) => format!("no reproducer: {e}"),
    };
    format!(
        "{} on {} in case {} (seed {:#x}), reduced {} -> {} statements; {place}",
        f.kind.name(),
        f.engine,
        f.case_index,
        f.case_seed,
        f.statements.0,
        f.statements.1
    )
}

/// A bar on a terminal; plain lines every few seconds otherwise.
struct Display {
    bar: Option<ProgressBar>,
    last_line: Instant,
}

const PLAIN_EVERY: Duration = Duration::from_secs(10);

impl Display {
    fn new(cases: Option<u64>) -> Display {
        if !std::io::stderr().is_terminal() {
            return Display {
                bar: None,
                last_line: Instant::now(),
            };
        }
        let bar = match cases {
            Some(n) => ProgressBar::with_draw_target(Some(n), ProgressDrawTarget::stderr()),
            None => ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr()),
        };
        let template = if cases.is_some() {
            "{elapsed_precise} [{bar:30}] {pos}/{len} {msg}"
        } else {
            "{elapsed_precise} {spinner} {pos} cases {msg}"
        };
        if let Ok(style) = ProgressStyle::with_template(template) {
            bar.set_style(style.progress_chars("=> "));
        }
        Display {
            bar: Some(bar),
            last_line: Instant::now(),
        }
    }

    fn finish(&mut self) {
        if let Some(bar) = self.bar.take() {
            bar.finish_and_clear();
        }
    }
}

fn status(s: &Summary) -> String {
    format!(
        "{:.2} cases/s, {} mismatches, {} crashes, {} hangs, {} op kinds",
        s.cases_per_second(),
        s.count(FindingKind::Mismatch) + s.count(FindingKind::CompileError),
        s.count(FindingKind::Crash),
        s.count(FindingKind::Hang),
        s.coverage.len()
    )
}

impl Progress for Display {
    fn update(&mut self, s: &Summary) {
        match &self.bar {
            Some(bar) => {
                bar.set_position(s.cases);
                bar.set_message(status(s));
            }
            None if self.last_line.elapsed() >= PLAIN_EVERY => {
                self.last_line = Instant::now();
                err_line!(
                    "fuzz: {:.0}s, {} cases, {}",
                    s.elapsed.as_secs_f64(),
                    s.cases,
                    status(s)
                );
            }
            None => {}
        }
    }

    fn found(&mut self, f: &FoundCase) {
        let line = format!("fuzz: found {}", found_line(f));
        match &self.bar {
            Some(bar) => bar.println(line),
            None => err_line!("{line}"),
        }
    }
}

fn clock_seed() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() ^ u64::from(d.subsec_nanos()))
}

/// `90s`, `5m`, `1h`, `250ms` or a number of seconds.
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let t = text.trim();
    let (number, scale) = if let Some(n) = t.strip_suffix("ms") {
        (n, 0.001)
    } else if let Some(n) = t.strip_suffix('s') {
        (n, 1.0)
    } else if let Some(n) = t.strip_suffix('m') {
        (n, 60.0)
    } else if let Some(n) = t.strip_suffix('h') {
        (n, 3600.0)
    } else {
        (t, 1.0)
    };
    let value: f64 = number
        .parse()
        .map_err(|_| format!("`{text}` is not a duration (e.g. 90s, 5m, 1h)"))?;
    let secs = value * scale;
    if !secs.is_finite() || !(0.0..=1e9).contains(&secs) {
        return Err(format!(
            "`{text}` is not a duration between 0 and 10^9 seconds"
        ));
    }
    Ok(Duration::from_secs_f64(secs))
}

/// A campaign's time limit: a duration ([`parse_duration`]) above zero.
fn parse_time_limit(text: &str) -> Result<Duration, String> {
    let limit = parse_duration(text)?;
    if limit.is_zero() {
        return Err("a campaign needs some time; give more than 0".into());
    }
    Ok(limit)
}

/// A seed in decimal, or in hex after `0x` (as reproducers print seeds).
fn parse_seed(text: &str) -> Result<u64, String> {
    let t = text.trim();
    let parsed = match t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        Some(hex) => u64::from_str_radix(hex, 16),
        None => t.parse(),
    };
    parsed.map_err(|_| format!("`{text}` is not a seed (a number below 2^64, decimal or 0x hex)"))
}

/// Whether reproducers can be written under `dir`: it is a directory, or
/// can be created (the probe leaves nothing behind; the campaign creates
/// it when it has something to write).
fn check_out_dir(dir: &std::path::Path) -> Result<(), String> {
    let shown = dir.display();
    if dir.exists() {
        return if dir.is_dir() {
            Ok(())
        } else {
            Err(format!("--out {shown}: not a directory"))
        };
    }
    let mut created = Vec::new();
    let mut missing = Some(dir);
    while let Some(d) = missing.filter(|d| !d.as_os_str().is_empty() && !d.exists()) {
        created.push(d);
        missing = d.parent();
    }
    std::fs::create_dir_all(dir).map_err(|e| format!("--out {shown}: cannot create it: {e}"))?;
    for d in created {
        let _ = std::fs::remove_dir(d);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::{parse_seed, parse_time_limit};
    use std::time::Duration;

    #[test]
    fn seeds_are_decimal_or_hex_and_time_limits_positive() {
        assert_eq!(parse_seed("16"), Ok(16));
        assert_eq!(parse_seed("0x10"), Ok(16));
        assert_eq!(parse_seed("0xe684cb8a34198f58"), Ok(0xe684_cb8a_3419_8f58));
        assert_eq!(parse_seed("18446744073709551615"), Ok(u64::MAX));
        for bad in ["", "0x", "-1", "18446744073709551616", "0x1_0", "ten"] {
            assert!(parse_seed(bad).is_err(), "{bad:?}");
        }
        assert_eq!(parse_time_limit("2m"), Ok(Duration::from_secs(120)));
        assert!(parse_time_limit("0").is_err());
        assert!(parse_time_limit("0ms").is_err());
    }
}
