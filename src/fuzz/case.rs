//! One fuzz case: a generated program, the machines it runs on, and the
//! check of every engine against the reference.

use super::compare::{classify, FindingKind};
use super::exec::{effective_machine, run_on, Engine, Launch, Machine, RunResult, Workspace};
use std::collections::BTreeSet;
use std::sync::Arc;
use warpjit_ir::generate::{generate_case, Features, GenConfig, RngLike, SplitMix64};
use warpjit_ir::module::{walk_block, Module, Stmt};
use warpjit_ir::ops::{Builtin, Op};
use warpjit_ir::{FuncId, VerifiedModule};

/// The seed of case `index` of the campaign seeded `campaign`: a mix of
/// both, so neighbouring cases are unrelated and any case can be re-run alone.
pub fn case_seed(campaign: u64, index: u64) -> u64 {
    let mut mix = SplitMix64::new(campaign ^ index.wrapping_mul(0xd134_2543_de82_ef95));
    mix.next_u64()
}

/// A generated case, ready to run.
pub struct FuzzCase {
    pub seed: u64,
    pub module: Arc<VerifiedModule>,
    pub launch: Launch,
    /// Machine configurations to compare on.
    pub machines: Vec<Machine>,
}

/// SM counts and warp slots tried; each case gets two of them.
const MACHINES: [(u32, u32); 6] = [(1, 64), (2, 4), (3, 32), (4, 8), (7, 16), (16, 64)];

/// Generates case `seed`. Swarm testing: each feature is left out of some
/// cases, so rare combinations are not always drowned by common ones.
pub fn generate(seed: u64) -> Result<FuzzCase, String> {
    let mut rng = SplitMix64::new(seed);
    let mut features = Features::all();
    for flag in [
        &mut features.floats,
        &mut features.wide,
        &mut features.narrow,
        &mut features.loops,
        &mut features.calls,
        &mut features.early_returns,
        &mut features.kill,
        &mut features.demote,
        &mut features.ordered,
        &mut features.barriers,
        &mut features.out_of_bounds,
        &mut features.atomics,
        &mut features.shared,
        &mut features.private,
        &mut features.votes,
        &mut features.shuffles,
        &mut features.quads,
        &mut features.machine_ids,
    ] {
        *flag = rng.chance(75);
    }
    // Some cases are kernels short enough for the JIT to run many
    // workgroups per call (`KernelPlan::many_workgroups`), and some are
    // long and deeply nested, where the JIT's analyses of loops and
    // conditions meet nests the default sizes rarely make.
    let cfg = match rng.weighted(&[12, 8, 80]) {
        0 => GenConfig::short_kernels(features),
        1 => GenConfig {
            features,
            ..GenConfig::deep()
        },
        _ => GenConfig {
            features,
            ..GenConfig::default()
        },
    };
    let generated = generate_case(&mut rng, &cfg);
    let module = VerifiedModule::new(generated.module).map_err(|d| {
        format!("case seed {seed:#x}: the generator made a module that does not verify: {d}")
    })?;
    let first = rng.below(MACHINES.len() as u64) as usize;
    let second = (first + 1 + rng.below(MACHINES.len() as u64 - 1) as usize) % MACHINES.len();
    let machines = [first, second]
        .iter()
        .map(|&i| Machine {
            sm_count: MACHINES[i].0,
            warps_per_sm: MACHINES[i].1,
        })
        .collect();
    Ok(FuzzCase {
        seed,
        module: Arc::new(module),
        launch: Launch {
            grid: generated.grid,
            workgroup: generated.workgroup,
            params: generated.params,
            buffers: generated.buffer_data,
        },
        machines,
    })
}

/// A difference between an engine and the reference.
#[derive(Clone, Debug)]
pub struct Finding {
    pub kind: FindingKind,
    pub engine: Engine,
    pub machine: Machine,
    pub reference: RunResult,
    pub other: RunResult,
}

/// The kernel a case launches: the one `warpjit run` and `replay` choose
/// without `--kernel` (the only kernel, else `@main`), so a reproducer
/// runs what the campaign ran.
fn launched_kernel(module: &VerifiedModule) -> Option<FuncId> {
    crate::run::plan::choose_kernel(module, None)
        .ok()
        .map(|(id, _)| id)
}

/// Runs every engine on every machine and returns the first difference.
/// `unsupported` is set when the JIT declined the program.
pub fn check(
    ws: &mut Workspace,
    module: &Arc<VerifiedModule>,
    launch: &Launch,
    machines: &[Machine],
    unsupported: &mut bool,
) -> Option<Finding> {
    let kernel = launched_kernel(module)?;
    let sm_id = reads_sm_id(module);
    for &machine in machines {
        let mut reference: Option<(Machine, RunResult)> = None;
        for engine in Engine::ALL.into_iter().skip(1) {
            let m = effective_machine(engine, machine, sm_id);
            let expected = match &reference {
                Some((rm, r)) if *rm == m => r.clone(),
                _ => {
                    let r = run_on(Engine::Reference, ws, module, kernel, launch, m);
                    reference = Some((m, r.clone()));
                    r
                }
            };
            let got = run_on(engine, ws, module, kernel, launch, m);
            *unsupported |= matches!(got, RunResult::Unsupported(_));
            if let Some(kind) = classify(&expected, &got) {
                return Some(Finding {
                    kind,
                    engine,
                    machine: m,
                    reference: expected,
                    other: got,
                });
            }
        }
    }
    None
}

/// Re-checks one engine on one machine: the finding it shows, if any.
pub fn check_one(
    ws: &mut Workspace,
    module: &Arc<VerifiedModule>,
    launch: &Launch,
    engine: Engine,
    machine: Machine,
) -> Option<Finding> {
    let kernel = launched_kernel(module)?;
    let expected = run_on(Engine::Reference, ws, module, kernel, launch, machine);
    let got = run_on(engine, ws, module, kernel, launch, machine);
    classify(&expected, &got).map(|kind| Finding {
        kind,
        engine,
        machine,
        reference: expected,
        other: got,
    })
}

pub fn reads_sm_id(module: &Module) -> bool {
    let mut found = false;
    for f in &module.functions {
        walk_block(&f.body, &mut |s| {
            if let Stmt::Inst(i) = s {
                found |= i.op == Op::Builtin(Builtin::SmId);
            }
        });
    }
    found
}

/// The kinds of operation and statement a module contains (`add`, `cvt`,
/// `shuffle`, `if`, `loop`, ...), for coverage counts.
pub fn op_kinds(module: &Module) -> BTreeSet<String> {
    let mut kinds = BTreeSet::new();
    for f in &module.functions {
        walk_block(&f.body, &mut |s| {
            let kind = match s {
                Stmt::Inst(i) => {
                    // Families whose variants differ in kind keep their
                    // first qualifier: `shuffle.xor`, `atom.add`, `cmp.lt`.
                    let m = i.op.mnemonic();
                    let parts: Vec<&str> = m.split('.').collect();
                    match parts[..] {
                        [family @ ("shuffle" | "vote" | "atom" | "cmp" | "quad"), qualifier, ..] => {
                            format!("{family}.{qualifier}")
                        }
                        _ => parts[0].to_string(),
                    }
                }
                Stmt::If { .. } => "if".into(),
                Stmt::Loop { .. } => "loop".into(),
                Stmt::Break { .. } => "break".into(),
                Stmt::Continue { .. } => "continue".into(),
                Stmt::Return { .. } => "return".into(),
                Stmt::Kill { .. } => "kill".into(),
                Stmt::Ordered { .. } => "ordered".into(),
            };
            kinds.insert(kind);
        });
    }
    kinds
}
