//! Measuring a case on every configuration: warm-up, timed runs in
//! rounds across the configurations, output checks.

use crate::bench::baselines::{self, Threads};
use crate::bench::engines::{Engine, ReadyKernel};
use crate::bench::{Case, Prepared, Size};
use crate::stats::median;
use std::time::{Duration, Instant};

/// What `warpjit bench` was asked to do.
#[derive(Clone, Debug)]
pub struct BenchOptions {
    /// Timed runs per configuration (after one warm-up run).
    pub runs: usize,
    /// Timed runs of the interpreter (0: it does not run).
    pub interp_runs: usize,
    pub size: Size,
    /// SMs of the "all SMs" JIT configuration.
    pub sms: u32,
    /// How the JIT compiles.
    pub jit: warpjit_jit::JitOptions,
}

/// A configuration a case is measured on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Config {
    Kernel(Engine),
    Rust(Threads),
}

impl Config {
    pub fn label(self) -> String {
        match self {
            Config::Kernel(engine) => engine.label(),
            Config::Rust(Threads::One) => "rust 1 thread".into(),
            Config::Rust(Threads::All) => format!("rust rayon {}", baselines::pool_threads()),
        }
    }

    /// A short stable key for scripts: `interp`, `jit1`, `jit`, `rust1`,
    /// `rayon`.
    pub fn key(self) -> &'static str {
        match self {
            Config::Kernel(Engine::Interpreter) => "interp",
            Config::Kernel(Engine::Jit { sms: 1 }) => "jit1",
            Config::Kernel(Engine::Jit { .. }) => "jit",
            Config::Rust(Threads::One) => "rust1",
            Config::Rust(Threads::All) => "rayon",
        }
    }
}

/// How a configuration fared.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Ran, and the output matched the Rust version (or the first engine).
    Checked,
    /// Ran; nothing to compare with.
    Unchecked,
    /// Ran, but the output is wrong.
    Wrong(String),
    /// Could not run (compile error, unsupported construct, launch error).
    Failed(String),
}

/// One row of the report.
#[derive(Clone, Debug)]
pub struct Measurement {
    pub case: String,
    pub id: &'static str,
    pub unit: &'static str,
    pub config: Config,
    pub label: String,
    /// Work units per run.
    pub units: f64,
    /// The timed runs (empty when it failed).
    pub times: Vec<Duration>,
    /// Whether a warm-up run came first.
    pub warmed_up: bool,
    /// JIT compile time: the median of `engines::COLD_COMPILES` cold
    /// compiles of the kernel.
    pub compile: Option<Duration>,
    pub outcome: Outcome,
}

impl Measurement {
    pub fn min(&self) -> Option<Duration> {
        self.times.iter().min().copied()
    }

    pub fn median(&self) -> Option<Duration> {
        median(&self.times)
    }

    /// The median over the min, from three timed runs on: how far the
    /// typical run strayed from the best one.
    pub fn spread(&self) -> Option<f64> {
        if self.times.len() < 3 {
            return None;
        }
        let (min, median) = (self.min()?.as_secs_f64(), self.median()?.as_secs_f64());
        (min > 0.0).then(|| median / min)
    }

    /// Units per second at the median time.
    pub fn throughput(&self) -> Option<f64> {
        let median = self.median()?.as_secs_f64();
        (median > 0.0).then(|| self.units / median)
    }
}

/// The configurations `options` asks for, in table order.
pub fn configs(options: &BenchOptions) -> Vec<Config> {
    let mut configs = Vec::new();
    if options.interp_runs > 0 {
        configs.push(Config::Kernel(Engine::Interpreter));
    }
    configs.push(Config::Kernel(Engine::Jit { sms: 1 }));
    if options.sms > 1 {
        configs.push(Config::Kernel(Engine::Jit { sms: options.sms }));
    }
    configs.push(Config::Rust(Threads::One));
    configs.push(Config::Rust(Threads::All));
    configs
}

/// Measures `case` on every configuration; `progress` hears what starts.
///
/// Each configuration is prepared, warmed up and checked first; then the
/// timed runs go in rounds, one run of each configuration a round (in
/// reverse order every other round), so that a host whose speed drifts
/// (other tenants, clocks) slows every configuration alike and the ratios
/// compare runs made under the same conditions. The interpreter, which is
/// slow, makes its runs before the rounds.
pub fn measure(
    case: Case,
    options: &BenchOptions,
    progress: &mut dyn FnMut(&str),
) -> Result<Vec<Measurement>, String> {
    progress(&format!("{}: preparing inputs", case.name()));
    let mut prepared = case.prepare(options.size)?;
    let mut rows = Vec::new();
    let mut kernels = Vec::new();
    // Micro-benchmarks have no Rust version: the first engine's output is
    // the reference for the others.
    let mut reference: Option<Vec<Vec<u8>>> = None;
    for config in configs(options) {
        if matches!(config, Config::Rust(_)) && prepared.baseline.is_none() {
            continue;
        }
        progress(&format!("{}: {}", case.name(), config.label()));
        let mut row = Measurement {
            case: case.name(),
            id: case.id(),
            unit: case.unit(),
            config,
            label: config.label(),
            units: prepared.units,
            times: Vec::new(),
            warmed_up: false,
            compile: None,
            outcome: Outcome::Unchecked,
        };
        let kernel = match config {
            Config::Kernel(engine) => {
                prepare_kernel(engine, &prepared, options, &mut reference, &mut row)
            }
            Config::Rust(threads) => {
                if let Some(baseline) = prepared.baseline.as_mut() {
                    baselines::run(threads, baseline);
                    row.warmed_up = true;
                }
                None
            }
        };
        rows.push(row);
        kernels.push(kernel);
    }
    progress(&format!("{}: timed runs", case.name()));
    for round in 0..options.runs {
        let order: Vec<usize> = if round % 2 == 0 {
            (0..rows.len()).collect()
        } else {
            (0..rows.len()).rev().collect()
        };
        for i in order {
            let row = &mut rows[i];
            match (row.config, &kernels[i]) {
                (Config::Kernel(_), Some(kernel)) => match run_once(kernel, &prepared) {
                    Ok((elapsed, _)) => row.times.push(elapsed),
                    Err(e) => {
                        row.outcome = Outcome::Failed(e);
                        row.times.clear();
                        kernels[i] = None;
                    }
                },
                (Config::Rust(threads), _) => {
                    if let Some(baseline) = prepared.baseline.as_mut() {
                        let start = Instant::now();
                        baselines::run(threads, baseline);
                        row.times.push(start.elapsed());
                    }
                }
                // The interpreter (timed already) or a kernel that failed.
                (Config::Kernel(_), None) => {}
            }
        }
    }
    Ok(rows)
}

/// Compiles `engine`'s kernel and makes the first run, which is checked:
/// the JIT's warm-up, whose kernel is returned for the timed rounds, or the
/// interpreter's timed runs (its first one included: no warm-up).
fn prepare_kernel(
    engine: Engine,
    prepared: &Prepared,
    options: &BenchOptions,
    reference: &mut Option<Vec<Vec<u8>>>,
    row: &mut Measurement,
) -> Option<ReadyKernel> {
    let (ready, prepare_time) = match engine.prepare(&prepared.launch, &options.jit) {
        Ok(ready) => ready,
        Err(e) => {
            row.outcome = Outcome::Failed(e);
            return None;
        }
    };
    if matches!(engine, Engine::Jit { .. }) {
        row.compile = Some(prepare_time);
    }
    let first = match run_once(&ready, prepared) {
        Ok(first) => first,
        Err(e) => {
            row.outcome = Outcome::Failed(e);
            return None;
        }
    };
    row.outcome = check(prepared, reference, &first.1);
    if engine != Engine::Interpreter {
        row.warmed_up = true;
        return Some(ready);
    }
    row.times.push(first.0);
    while row.times.len() < options.interp_runs {
        match run_once(&ready, prepared) {
            Ok((elapsed, _)) => row.times.push(elapsed),
            Err(e) => {
                row.outcome = Outcome::Failed(e);
                row.times.clear();
                return None;
            }
        }
    }
    None
}

fn run_once(ready: &ReadyKernel, prepared: &Prepared) -> Result<(Duration, Vec<Vec<u8>>), String> {
    ready.run(&prepared.launch)
}

/// Compares a run's buffers with the Rust version, or with the first
/// engine's (which then becomes the reference).
fn check(
    prepared: &Prepared,
    reference: &mut Option<Vec<Vec<u8>>>,
    buffers: &[Vec<u8>],
) -> Outcome {
    if let Some(check) = &prepared.check {
        return match check(buffers) {
            Ok(()) => Outcome::Checked,
            Err(e) => Outcome::Wrong(e),
        };
    }
    match reference {
        None => {
            *reference = Some(buffers.to_vec());
            Outcome::Unchecked
        }
        Some(expected) => match (0..expected.len()).find(|&i| expected[i] != buffers[i]) {
            None => Outcome::Checked,
            Some(i) => Outcome::Wrong(format!("buffer {i} differs from the first engine's")),
        },
    }
}
