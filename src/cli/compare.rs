//! `warpjit compare A.warp [B.warp]`: time two runs against each other in
//! one process, launches alternating in pairs.

use super::{load_module, CommandResult, Failure};
use crate::bench::report::json_string;
use crate::run::compare::{compare, BufferMatch, CompareOptions, Comparison, Side, SideTimes};
use crate::run::{self, RunOptions, RunPlan};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::Duration;
use warpjit_ir::VerifiedModule;

#[derive(clap::Args, Debug)]
#[command(after_help = "\
Each side's options: its file's `//! run:` lines (their --print and --output \
are ignored), then the options given here for both sides, then --a or --b. \
After the warm-up launches, the timed launches alternate: A then B, B then A, \
and so on, each on fresh copies of the input buffers (copied in before the \
clock starts). `B faster in k of N pairs` and its sign-test p-value say how \
sure the difference is on a host whose speed drifts; below 0.05 the faster \
side is named.

Examples:
  warpjit compare examples/mandelbrot.warp --a \"--opt-level 1\" --b \"--opt-level 2\"
  warpjit compare examples/mandelbrot.warp --a \"--sms 1\" --b \"--sms 2\"
  warpjit compare old.warp new.warp --grid 1024 --param n=1000000")]
// The run options that write outputs are refused here: not in the help.
#[command(mut_arg("prints", |a| a.hide(true)))]
#[command(mut_arg("outputs", |a| a.hide(true)))]
#[command(mut_arg("image", |a| a.hide(true)))]
pub struct CompareArgs {
    /// Side A's .warp file.
    #[arg(value_name = "FILE_A")]
    file_a: PathBuf,
    /// Side B's .warp file (default: side A's).
    #[arg(value_name = "FILE_B")]
    file_b: Option<PathBuf>,
    /// Run options for side A only, as on a `//! run:` line.
    #[arg(long = "a", value_name = "OPTIONS", allow_hyphen_values = true)]
    a_options: Option<String>,
    /// Run options for side B only, as on a `//! run:` line.
    #[arg(long = "b", value_name = "OPTIONS", allow_hyphen_values = true)]
    b_options: Option<String>,
    /// Timed pairs of launches.
    #[arg(long, value_name = "N", default_value_t = 30,
          value_parser = clap::value_parser!(u32).range(1..=100_000))]
    pairs: u32,
    /// Untimed launches of each side before the pairs (the first one's
    /// outputs are compared).
    #[arg(long, value_name = "N", default_value_t = 3,
          value_parser = clap::value_parser!(u32).range(1..=1000))]
    warmups: u32,
    /// Print the result as JSON (times in seconds).
    #[arg(long)]
    json: bool,
    // Boxed: the options are far larger than the other arguments.
    #[command(flatten)]
    options: Box<RunOptions>,
}

pub fn compare_command(args: CompareArgs) -> CommandResult {
    if let Some(option) = output_option(&args.options) {
        return Err(Failure::Message(format!(
            "{option} is not used by compare (it only times the runs)"
        )));
    }
    let file_b = args.file_b.clone().unwrap_or_else(|| args.file_a.clone());
    let (module_a, plan_a) = side_plan(&args.file_a, &args.options, "--a", &args.a_options)?;
    let (module_b, plan_b) = side_plan(&file_b, &args.options, "--b", &args.b_options)?;
    let options = CompareOptions {
        warmups: args.warmups,
        pairs: args.pairs,
    };
    let json = args.json;
    let result = compare(
        Side {
            module: &module_a,
            plan: &plan_a,
        },
        Side {
            module: &module_b,
            plan: &plan_b,
        },
        options,
        |what| {
            if !json {
                err_line!("compare: {what}");
            }
        },
    )?;
    let labels = [
        side_label(&args.file_a, &args.a_options),
        side_label(&file_b, &args.b_options),
    ];
    if json {
        out_line!("{}", to_json(&labels, [&plan_a, &plan_b], options, &result));
    } else {
        out_text!("{}", to_text(&labels, [&plan_a, &plan_b], options, &result));
    }
    Ok(())
}

/// A CLI option that writes results, which compare does not do.
fn output_option(options: &RunOptions) -> Option<&'static str> {
    if !options.prints.is_empty() {
        Some("--print")
    } else if !options.outputs.is_empty() {
        Some("--output")
    } else if options.image.is_some() {
        Some("--image")
    } else {
        None
    }
}

/// One side's module and plan: the file's `//! run:` lines, the shared
/// options, then the side's own.
fn side_plan(
    path: &Path,
    shared: &RunOptions,
    flag: &str,
    own: &Option<String>,
) -> Result<(VerifiedModule, RunPlan), Failure> {
    let (file, source, module) = load_module(path)?;
    let mut options = run::options_from_source(&file, &source)?;
    options.prints.clear();
    options.outputs.clear();
    options.image = None;
    options = options.then(shared.clone());
    if let Some(words) = own {
        let words = crate::directives::split_words(words).map_err(|e| format!("{flag}: {e}"))?;
        let own = RunOptions::from_words_in(&words, flag, "")?;
        if let Some(option) = output_option(&own) {
            return Err(Failure::Message(format!(
                "{flag}: {option} is not used by compare (it only times the runs)"
            )));
        }
        options = options.then(own);
    }
    let plan = run::plan(&module, &options).map_err(|e| format!("{file}: {e}"))?;
    Ok((module, plan))
}

fn side_label(path: &Path, own: &Option<String>) -> String {
    match own {
        Some(words) => format!("{} {}", path.display(), words.trim()),
        None => path.display().to_string(),
    }
}

fn ms(d: Duration) -> String {
    format!("{:.3} ms", d.as_secs_f64() * 1e3)
}

fn describe(plan: &RunPlan, times: &SideTimes) -> String {
    let sms = format!(
        "{} SM{}",
        times.sm_count,
        if times.sm_count == 1 { "" } else { "s" }
    );
    let compiled = match times.compile_time {
        Some(c) if c.cache_hit => {
            ", code from the compile cache (the same module and JIT options as A)".to_string()
        }
        Some(c) => format!(", compiled in {}", ms(c.time)),
        None => String::new(),
    };
    format!(
        "@{} on {} with {sms}, grid {} x workgroup {}{compiled}",
        plan.kernel_name,
        plan.backend.name(),
        plan.grid,
        plan.workgroup
    )
}

fn outputs_line(buffers: &[BufferMatch]) -> String {
    if buffers.is_empty() {
        return "outputs: no buffer of the same name on both sides".into();
    }
    let parts: Vec<String> = buffers
        .iter()
        .map(|b| match b.first_difference {
            None => format!("@{} identical", b.name),
            Some(at) => format!("@{} differs (first at byte {at})", b.name),
        })
        .collect();
    format!("outputs after the first launch: {}", parts.join(", "))
}

/// The ratio of B's median to A's, and what the sign test says.
fn judge(result: &Comparison) -> (f64, &'static str) {
    let pairs = result.a.times.len();
    let ratio = result.b.quantile(0.5).as_secs_f64() / result.a.quantile(0.5).as_secs_f64();
    let conclusion = if result.p_value() >= 0.05 {
        "no difference beyond the noise"
    } else if 2 * result.b_faster as usize > pairs - result.ties as usize {
        "B is faster"
    } else {
        "A is faster"
    };
    (ratio, conclusion)
}

/// The closing line: the ratio of medians and what the sign test says.
fn verdict(result: &Comparison) -> String {
    let pairs = result.a.times.len();
    let (ratio, conclusion) = judge(result);
    let ties = match result.ties {
        0 => String::new(),
        n => format!(", {n} tied"),
    };
    format!(
        "B's median / A's: {ratio:.3}; B faster in {} of {pairs} pairs{ties} (sign test p = {:.3}): {conclusion}",
        result.b_faster,
        result.p_value()
    )
}

fn to_text(
    labels: &[String; 2],
    plans: [&RunPlan; 2],
    options: CompareOptions,
    result: &Comparison,
) -> String {
    let mut out = String::new();
    let sides = [("A", &result.a), ("B", &result.b)];
    for ((name, times), (label, plan)) in sides.iter().zip(labels.iter().zip(plans)) {
        let _ = writeln!(out, "{name}: {label}\n   {}", describe(plan, times));
    }
    let _ = writeln!(out, "{}", outputs_line(&result.buffers));
    let _ = writeln!(
        out,
        "{} pairs after {} warm-up launch{} of each side; the first side of a pair alternates:",
        options.pairs,
        options.warmups,
        if options.warmups == 1 { "" } else { "es" }
    );
    let _ = writeln!(
        out,
        "{:4}{:>13}{:>13}{:>13}{:>13}{:>13}",
        "", "min", "q1", "median", "q3", "max"
    );
    for (name, times) in sides {
        let _ = write!(out, "{name:4}");
        for q in [0.0, 0.25, 0.5, 0.75, 1.0] {
            let _ = write!(out, "{:>13}", ms(times.quantile(q)));
        }
        out.push('\n');
    }
    let _ = writeln!(out, "{}", verdict(result));
    out
}

fn to_json(
    labels: &[String; 2],
    plans: [&RunPlan; 2],
    options: CompareOptions,
    result: &Comparison,
) -> String {
    let side = |label: &str, plan: &RunPlan, times: &SideTimes| {
        let list: Vec<String> = times
            .times
            .iter()
            .map(|d| format!("{}", d.as_secs_f64()))
            .collect();
        let secs = |q: f64| times.quantile(q).as_secs_f64();
        let (compile, cache_hit) = match times.compile_time {
            Some(c) => (format!("{}", c.time.as_secs_f64()), c.cache_hit.to_string()),
            None => ("null".into(), "null".into()),
        };
        format!(
            "{{\"label\": {}, \"kernel\": {}, \"backend\": {}, \"sms\": {}, \"grid\": {}, \"workgroup\": {}, \"compile\": {compile}, \"compile_cache_hit\": {cache_hit}, \"min\": {}, \"q1\": {}, \"median\": {}, \"q3\": {}, \"max\": {}, \"times\": [{}]}}",
            json_string(label),
            json_string(&plan.kernel_name),
            json_string(plan.backend.name()),
            times.sm_count,
            json_dims(plan.grid.0),
            json_dims(plan.workgroup.0),
            secs(0.0),
            secs(0.25),
            secs(0.5),
            secs(0.75),
            secs(1.0),
            list.join(", ")
        )
    };
    let buffers: Vec<String> = result
        .buffers
        .iter()
        .map(|b| {
            format!(
                "{{\"name\": {}, \"first_difference\": {}}}",
                json_string(&b.name),
                b.first_difference
                    .map_or("null".into(), |at| at.to_string())
            )
        })
        .collect();
    let (ratio, conclusion) = judge(result);
    let ratio = if ratio.is_finite() {
        ratio.to_string()
    } else {
        "null".into()
    };
    format!(
        "{{\"pairs\": {}, \"warmups\": {}, \"a\": {}, \"b\": {}, \"median_ratio_b_over_a\": {ratio}, \"b_faster\": {}, \"ties\": {}, \"p_value\": {}, \"verdict\": {}, \"buffers\": [{}]}}",
        options.pairs,
        options.warmups,
        side(&labels[0], plans[0], &result.a),
        side(&labels[1], plans[1], &result.b),
        result.b_faster,
        result.ties,
        result.p_value(),
        json_string(conclusion),
        buffers.join(", ")
    )
}

fn json_dims([x, y, z]: [u32; 3]) -> String {
    format!("[{x}, {y}, {z}]")
}
