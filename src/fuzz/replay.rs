//! Re-running a reproducer directory on every engine.

use super::compare::{classify, describe, FindingKind};
use super::exec::{effective_machine, run_on, Engine, Launch, Machine, Workspace};
use crate::run;
use std::path::Path;
use std::sync::Arc;
use warpjit_ir::{text, VerifiedModule};
use warpjit_jit::JitOptions;
use warpjit_runtime::RuntimeConfig;

/// One engine's verdict.
#[derive(Clone, Debug)]
pub struct EngineVerdict {
    pub engine: Engine,
    pub machine: Machine,
    /// The difference from the reference, if any.
    pub finding: Option<FindingKind>,
    /// Both results and what differs, readable.
    pub report: String,
}

/// What a replay found.
#[derive(Clone, Debug)]
pub struct Replay {
    /// How the JIT engines compiled (from the `//! run:` lines).
    pub jit: JitOptions,
    pub verdicts: Vec<EngineVerdict>,
}

impl Replay {
    pub fn differs(&self) -> bool {
        self.verdicts.iter().any(|v| v.finding.is_some())
    }
}

/// A launch keeps every buffer's size, so a finding's `reference-NAME.bin`
/// is as long as the buffer it started from: an input of another length
/// was truncated or replaced, and replaying it would say nothing.
fn check_sizes_against_results(
    dir: &Path,
    module: &VerifiedModule,
    buffers: &[Vec<u8>],
) -> Result<(), String> {
    for (decl, bytes) in module.buffers.iter().zip(buffers) {
        let result = dir.join(format!("reference-{}.bin", decl.name));
        let Ok(meta) = std::fs::metadata(&result) else {
            continue;
        };
        if meta.len() != bytes.len() as u64 {
            return Err(format!(
                "{}: @{} starts with {} bytes, but {} has {}: the reproducer's files \
                 do not belong together (an input truncated or replaced?)",
                dir.display(),
                decl.name,
                bytes.len(),
                result.display(),
                meta.len()
            ));
        }
    }
    Ok(())
}

/// Runs `DIR/program.warp` with the launch of its `//! run:` lines (buffer
/// files relative to DIR; the JIT's `--target`, `--opt-level` and
/// `--prefetch-ahead` from them too) on the reference and on every other engine.
pub fn replay_dir(dir: &Path) -> Result<Replay, String> {
    let file = dir.join("program.warp");
    let shown = file.display().to_string();
    let source = crate::files::read_source(&file)?;
    let module = text::parse(&source)
        .and_then(VerifiedModule::new)
        .map_err(|d| format!("{shown} does not check:\n{}", d.render(&shown, &source)))?;
    // Buffer files are taken from DIR, where the `//! run:` lines are.
    let options = run::options_from_source(&shown, &source)?;
    // The options named in plan's hints go on those lines: replay has none.
    let plan = run::plan(&module, &options).map_err(|e| {
        format!("{shown}: {e} (replay takes its options from the file's `//! run:` lines)")
    })?;
    check_sizes_against_results(dir, &module, &plan.buffers)?;
    let launch = Launch {
        grid: plan.grid.0,
        workgroup: plan.workgroup.0,
        params: plan.params.clone(),
        buffers: plan.buffers.clone(),
    };
    let defaults = RuntimeConfig::default();
    let machine = Machine {
        sm_count: plan.sm_count.unwrap_or(defaults.sm_count),
        warps_per_sm: plan.warps_per_sm.unwrap_or(defaults.warps_per_sm),
    };
    let names: Vec<String> = module.buffers.iter().map(|b| b.name.clone()).collect();
    let module = Arc::new(module);
    let sm_id = super::case::reads_sm_id(&module);
    let mut ws = Workspace::new(plan.jit);
    let mut verdicts = Vec::new();
    for engine in Engine::ALL.into_iter().skip(1) {
        let m = effective_machine(engine, machine, sm_id);
        let expected = run_on(Engine::Reference, &mut ws, &module, plan.kernel, &launch, m);
        let got = run_on(engine, &mut ws, &module, plan.kernel, &launch, m);
        verdicts.push(EngineVerdict {
            engine,
            machine: m,
            finding: classify(&expected, &got),
            report: describe(&names, "reference", &expected, engine.name(), &got),
        });
    }
    Ok(Replay {
        jit: plan.jit,
        verdicts,
    })
}
