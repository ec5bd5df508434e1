//! A kernel run: options -> plan (checked against the module) -> launch on a
//! backend -> buffers printed and written. The CLI and the filetest runner
//! both go through here.

pub mod options;
pub mod output;
pub mod plan;

pub use options::{Backend, RunOptions};
pub use plan::{plan, RunPlan};

use crate::directives::{self, DirectiveKind};
use std::time::{Duration, Instant};
use warpjit_ir::interp::{self, ExecError, LaunchConfig, LaunchReport};
use warpjit_ir::VerifiedModule;

/// What a launch did and how long it took.
#[derive(Clone, Debug)]
pub struct RunOutcome {
    pub report: LaunchReport,
    pub wall: Duration,
}

/// The options of a file's `//! run:` lines, later lines on top of earlier
/// ones. `file` names the file in errors.
pub fn options_from_source(file: &str, source: &str) -> Result<RunOptions, String> {
    let mut options = RunOptions::default();
    for directive in directives::scan(source).map_err(|e| format!("{file}: {e}"))? {
        if let DirectiveKind::Run(words) = directive.kind {
            let origin = format!("{file}:{}", directive.line);
            options = options.then(RunOptions::from_words(&words, &origin)?);
        }
    }
    Ok(options)
}

/// Launches the planned kernel; the buffers in `plan` are updated in place.
pub fn execute(module: &VerifiedModule, plan: &mut RunPlan) -> Result<RunOutcome, String> {
    let mut config = LaunchConfig::new(plan.grid.0, plan.workgroup.0);
    if let Some(sms) = plan.sm_count {
        config.sm_count = sms;
    }
    if let Some(warps) = plan.warps_per_sm {
        config.warps_per_sm = warps;
    }
    config.fuel = plan.fuel;
    tracing::info!(
        kernel = %plan.kernel_name,
        grid = %plan.grid,
        workgroup = %plan.workgroup,
        sm_count = config.sm_count,
        warps_per_sm = config.warps_per_sm,
        fuel = ?config.fuel,
        backend = plan.backend.name(),
        "launch"
    );
    let start = Instant::now();
    let result = match plan.backend {
        Backend::Interp => interp::launch(
            module,
            plan.kernel,
            &config,
            &plan.params,
            &mut plan.buffers,
        ),
    };
    let wall = start.elapsed();
    let report = result.map_err(|e| match e {
        ExecError::FuelExhausted { .. } => format!(
            "{e}; --fuel {} statements per warp",
            plan.fuel.unwrap_or_default()
        ),
        ExecError::InvalidLaunch(_) => {
            format!("{e} (grid {}, workgroup {})", plan.grid, plan.workgroup)
        }
        other => other.to_string(),
    })?;
    tracing::info!(statements = report.statements, ?wall, "launch finished");
    Ok(RunOutcome { report, wall })
}
