//! The benchmark suite behind `warpjit bench` and `cargo bench`
//! (docs/benchmarks.md): workloads W1-W8 and the micro-benchmarks, the
//! scalar Rust baselines, the engines that run them, timing and reports.
//!
//! Data flow: a [`Case`] (workload or micro-benchmark) -> [`Prepared`]
//! (inputs built, expected output computed by the Rust twin) -> each
//! [`engines::Engine`] prepares the kernel once (compile time) and runs it
//! `runs` times on fresh copies of the inputs -> [`report`] prints the table,
//! JSON or SVG.

pub mod baselines;
pub mod engines;
pub mod inputs;
pub mod micro;
pub mod report;
pub mod runner;
pub mod workloads;

use crate::bench::baselines::Threads;
use std::sync::Arc;
use warpjit_ir::{text, VerifiedModule};

/// Full sizes (workloads.md), or small ones for tests and quick looks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Size {
    Full,
    Small,
}

/// One kernel launch: `@main` of `module` on a 1-D grid with the given
/// initial buffers (in the module's buffer order).
pub struct Launch {
    pub module: Arc<VerifiedModule>,
    pub grid: [u32; 3],
    pub workgroup: [u32; 3],
    pub params: Vec<u64>,
    pub buffers: Vec<Vec<u8>>,
}

/// Checks a launch's final buffers; the error says what differs.
pub type Check = Box<dyn Fn(&[Vec<u8>]) -> Result<(), String> + Send>;

/// The Rust twin of a workload, owning its inputs and outputs.
pub type Baseline = Box<dyn FnMut(Threads) + Send>;

/// A case ready to measure.
pub struct Prepared {
    pub launch: Launch,
    /// Work units per run (see the case's unit).
    pub units: f64,
    /// The scalar Rust version (workloads only).
    pub baseline: Option<Baseline>,
    /// Compares the kernel's output with an independent Rust computation
    /// (workloads only; micro-benchmarks are compared across engines).
    pub check: Option<Check>,
}

/// Something the suite measures.
#[derive(Clone, Copy)]
pub enum Case {
    Workload(&'static workloads::Workload),
    Micro(&'static micro::Micro),
}

impl Case {
    /// Every case: the workloads, then the micro-benchmarks.
    pub fn all() -> Vec<Case> {
        workloads::WORKLOADS
            .iter()
            .map(Case::Workload)
            .chain(micro::MICROS.iter().map(Case::Micro))
            .collect()
    }

    /// The name `warpjit bench NAME` selects it by: `saxpy`,
    /// `micro.ballot`.
    pub fn name(&self) -> String {
        match self {
            Case::Workload(w) => w.name.to_string(),
            Case::Micro(m) => format!("micro.{}", m.name),
        }
    }

    /// `W2` for workloads, `micro` otherwise.
    pub fn id(&self) -> &'static str {
        match self {
            Case::Workload(w) => w.id,
            Case::Micro(_) => "micro",
        }
    }

    pub fn unit(&self) -> &'static str {
        match self {
            Case::Workload(w) => w.unit,
            Case::Micro(m) => m.unit,
        }
    }

    pub fn prepare(&self, size: Size) -> Result<Prepared, String> {
        match self {
            Case::Workload(w) => w.prepare(size),
            Case::Micro(m) => m.prepare(size),
        }
    }

    /// The cases `names` select, in suite order: a case's name or id
    /// (`W3`), `workloads`, or `micro` (every micro-benchmark); no names
    /// select everything. Unknown names are an error listing the known
    /// ones.
    pub fn select(names: &[String]) -> Result<Vec<Case>, String> {
        let all = Case::all();
        if names.is_empty() {
            return Ok(all);
        }
        for name in names {
            let known = name == "workloads"
                || name == "micro"
                || all
                    .iter()
                    .any(|c| c.name() == *name || c.id().eq_ignore_ascii_case(name));
            if !known {
                let listed: Vec<String> = all
                    .iter()
                    .map(|c| match c {
                        Case::Workload(_) => format!("{} ({})", c.name(), c.id()),
                        Case::Micro(_) => c.name(),
                    })
                    .collect();
                return Err(format!(
                    "unknown benchmark `{name}` (known: workloads, micro, {})",
                    listed.join(", ")
                ));
            }
        }
        Ok(all
            .into_iter()
            .filter(|c| {
                names.iter().any(|n| {
                    c.name() == *n
                        || (matches!(c, Case::Workload(_)) && c.id().eq_ignore_ascii_case(n))
                        || (n == "workloads" && matches!(c, Case::Workload(_)))
                        || (n == "micro" && matches!(c, Case::Micro(_)))
                })
            })
            .collect())
    }
}

/// Parses and verifies a bundled program; the error is the rendered
/// diagnostics.
pub fn parse_module(file: &str, source: &str) -> Result<Arc<VerifiedModule>, String> {
    let parsed = text::parse(source).map_err(|d| d.render(file, source))?;
    let verified = VerifiedModule::new(parsed).map_err(|d| d.render(file, source))?;
    Ok(Arc::new(verified))
}
