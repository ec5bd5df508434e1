//! Launches: validation, workgroups in order, warps and barriers.
//!
//! Within a workgroup the schedule is fixed: warps run in order 0, 1, 2, ...
//! each until it finishes or waits at a barrier. Once every unfinished warp
//! waits, the barrier opens and the next pass starts again at warp 0.

use super::exec::Env;
use super::memory::GlobalMemory;
use super::warp::{WarpState, WarpStatus};
use super::{ExecError, LaunchConfig, LaunchReport};
use crate::module::{FuncId, Function, Module};
use crate::verify::VerifiedModule;
use std::sync::atomic::AtomicBool;

use crate::verify::MAX_WORKGROUP_INVOCATIONS as MAX_WORKGROUP_THREADS;

/// Runs every workgroup of the grid in order (x fastest); workgroup `n` runs
/// on SM `n % sm_count`. The launch is validated before anything runs; a grid
/// with no workgroups runs nothing.
pub fn launch(
    module: &VerifiedModule,
    kernel: FuncId,
    cfg: &LaunchConfig,
    params: &[u64],
    memory: &mut dyn GlobalMemory,
) -> Result<LaunchReport, ExecError> {
    let kernel_fn = validate(module, kernel, cfg, params, &*memory)?;
    let mut report = LaunchReport::default();
    let mut linear = 0u64;
    for z in 0..cfg.grid[2] {
        for y in 0..cfg.grid[1] {
            for x in 0..cfg.grid[0] {
                let run = WorkgroupRun {
                    workgroup_id: [x, y, z],
                    sm_id: (linear % u64::from(cfg.sm_count)) as u32,
                    first_warp_slot: 0,
                    cancel: None,
                };
                run_validated(module, kernel_fn, cfg, &run, params, memory, &mut report)?;
                linear += 1;
            }
        }
    }
    Ok(report)
}

/// Runs one workgroup on SM `sm_id`, its warps in slots 0, 1, ..., adding
/// to `report`.
#[allow(clippy::too_many_arguments)]
pub fn run_workgroup(
    module: &VerifiedModule,
    kernel: FuncId,
    cfg: &LaunchConfig,
    workgroup_id: [u32; 3],
    sm_id: u32,
    params: &[u64],
    memory: &mut dyn GlobalMemory,
    report: &mut LaunchReport,
) -> Result<(), ExecError> {
    let placement = Placement {
        workgroup_id,
        sm_id,
        first_warp_slot: 0,
    };
    run_workgroup_placed(module, kernel, cfg, placement, params, memory, report, None)
}

/// Where a workgroup runs: its id in the grid, its SM, and the SM warp slot
/// of its warp 0 (warp `i` of the workgroup has `warp_id` =
/// `first_warp_slot + i`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Placement {
    pub workgroup_id: [u32; 3],
    pub sm_id: u32,
    pub first_warp_slot: u32,
}

/// Runs one workgroup where `placement` says, adding to `report`. When
/// `cancel` is raised the workgroup stops before its next statement with
/// [`ExecError::Cancelled`]; its memory writes so far remain.
#[allow(clippy::too_many_arguments)]
pub fn run_workgroup_placed(
    module: &VerifiedModule,
    kernel: FuncId,
    cfg: &LaunchConfig,
    placement: Placement,
    params: &[u64],
    memory: &mut dyn GlobalMemory,
    report: &mut LaunchReport,
    cancel: Option<&AtomicBool>,
) -> Result<(), ExecError> {
    let kernel_fn = validate(module, kernel, cfg, params, &*memory)?;
    let Placement {
        workgroup_id,
        sm_id,
        first_warp_slot,
    } = placement;
    for d in 0..3 {
        if workgroup_id[d] >= cfg.grid[d] {
            return Err(invalid(format!(
                "workgroup id {:?} is outside the grid {:?}",
                workgroup_id, cfg.grid
            )));
        }
    }
    if sm_id >= cfg.sm_count {
        return Err(invalid(format!(
            "sm id {sm_id} is not below the SM count {}",
            cfg.sm_count
        )));
    }
    let warps = cfg.warps_per_workgroup();
    if u64::from(first_warp_slot) + warps > u64::from(cfg.warps_per_sm) {
        return Err(invalid(format!(
            "{warps} warps from slot {first_warp_slot} do not fit in {} warp slots",
            cfg.warps_per_sm
        )));
    }
    let run = WorkgroupRun {
        workgroup_id,
        sm_id,
        first_warp_slot,
        cancel,
    };
    run_validated(module, kernel_fn, cfg, &run, params, memory, report)
}

/// Checks a launch: the kernel, the configuration, the parameters (count,
/// and each value zero-extended from its type) and the buffer count.
pub fn validate_launch(
    module: &VerifiedModule,
    kernel: FuncId,
    cfg: &LaunchConfig,
    params: &[u64],
    memory: &dyn GlobalMemory,
) -> Result<(), ExecError> {
    validate(module, kernel, cfg, params, memory).map(|_| ())
}

fn invalid(reason: String) -> ExecError {
    ExecError::InvalidLaunch(reason)
}

fn validate<'m>(
    module: &'m Module,
    kernel: FuncId,
    cfg: &LaunchConfig,
    params: &[u64],
    memory: &dyn GlobalMemory,
) -> Result<&'m Function, ExecError> {
    let kernel_fn = module
        .functions
        .get(kernel.0 as usize)
        .ok_or_else(|| invalid(format!("no function with index {}", kernel.0)))?;
    if !kernel_fn.is_kernel() {
        return Err(invalid(format!("@{} is not a kernel", kernel_fn.name)));
    }
    let threads = cfg.threads_per_workgroup();
    if threads == 0 || threads > MAX_WORKGROUP_THREADS {
        let [x, y, z] = cfg.workgroup;
        // The product saturates, so u64::MAX stands for any larger count.
        let count = match threads {
            u64::MAX => "more than 2^64".to_string(),
            n => n.to_string(),
        };
        return Err(invalid(format!(
            "workgroup size ({x}, {y}, {z}) has {count} threads; it must have 1 to {MAX_WORKGROUP_THREADS}"
        )));
    }
    if cfg.sm_count == 0 {
        return Err(invalid("the SM count is 0".into()));
    }
    let warps = cfg.warps_per_workgroup();
    if warps > u64::from(cfg.warps_per_sm) {
        return Err(invalid(format!(
            "a workgroup of {threads} threads needs {warps} warps but an SM has {} warp slots",
            cfg.warps_per_sm
        )));
    }
    let [gx, gy, gz] = cfg.grid;
    if u64::from(gx)
        .checked_mul(u64::from(gy))
        .and_then(|n| n.checked_mul(u64::from(gz)))
        .is_none()
    {
        return Err(invalid(format!(
            "grid ({gx}, {gy}, {gz}) has more than 2^64 workgroups"
        )));
    }
    for (d, name) in ["x", "y", "z"].iter().enumerate() {
        let ids = u64::from(cfg.grid[d]) * u64::from(cfg.workgroup[d]);
        if ids > 1u64 << 32 {
            return Err(invalid(format!(
                "grid {name} {} times workgroup {name} {} overflows the 32-bit global_id.{name}",
                cfg.grid[d], cfg.workgroup[d]
            )));
        }
    }
    if params.len() != module.params.len() {
        return Err(invalid(format!(
            "the module has {} parameters but {} values were given",
            module.params.len(),
            params.len()
        )));
    }
    for (decl, value) in module.params.iter().zip(params) {
        if value & !decl.ty.bit_mask() != 0 {
            return Err(invalid(format!(
                "parameter %{} is {} but the value {value:#x} does not fit it (values are zero-extended bit patterns)",
                decl.name, decl.ty
            )));
        }
    }
    if memory.buffer_count() != module.buffers.len() {
        return Err(invalid(format!(
            "the module declares {} buffers but {} were bound",
            module.buffers.len(),
            memory.buffer_count()
        )));
    }
    Ok(kernel_fn)
}

/// One workgroup's place and cancellation flag, checked against the launch.
struct WorkgroupRun<'a> {
    workgroup_id: [u32; 3],
    sm_id: u32,
    first_warp_slot: u32,
    cancel: Option<&'a AtomicBool>,
}

fn run_validated<'m>(
    module: &'m Module,
    kernel: &'m Function,
    cfg: &LaunchConfig,
    run: &WorkgroupRun<'_>,
    params: &[u64],
    memory: &mut dyn GlobalMemory,
    report: &mut LaunchReport,
) -> Result<(), ExecError> {
    let workgroup_id = run.workgroup_id;
    let mut shared = Vec::with_capacity(module.shared.len());
    for decl in &module.shared {
        let mut bytes = Vec::new();
        bytes
            .try_reserve_exact(decl.size as usize)
            .map_err(|_| ExecError::OutOfMemory {
                what: format!("shared memory @{}", decl.name),
                bytes: u64::from(decl.size),
            })?;
        bytes.resize(decl.size as usize, 0);
        shared.push(bytes);
    }

    let warp_count = cfg.warps_per_workgroup() as u32;
    let mut warps = Vec::with_capacity(warp_count as usize);
    for index in 0..warp_count {
        let existing = cfg.lanes_present(index);
        warps.push(WarpState::new(index, existing, kernel, cfg.fuel)?);
    }

    let mut env = Env {
        module,
        kernel,
        cfg,
        params,
        workgroup_id,
        sm_id: run.sm_id,
        shared,
        memory,
        faults: &mut report.faults,
        first_warp_slot: run.first_warp_slot,
        cancel: run.cancel,
    };
    let result = run_warps(&mut warps, &mut env);
    let statements: u64 = warps.iter().map(|w| w.statements).sum();
    report.statements = report.statements.saturating_add(statements);
    report.workgroups += 1;
    result.map_err(|(warp, e)| e.at(&kernel.name, workgroup_id, warp))
}

/// The barrier schedule: passes over the warps until all have finished.
fn run_warps<'m>(
    warps: &mut [WarpState<'m>],
    env: &mut Env<'m, '_>,
) -> Result<(), (u32, ExecError)> {
    loop {
        let mut waiting = false;
        for warp in warps.iter_mut() {
            if warp.status == WarpStatus::Finished {
                continue;
            }
            match warp.run(env).map_err(|e| (warp.index, e))? {
                WarpStatus::AtBarrier => waiting = true,
                WarpStatus::Finished | WarpStatus::Running => {}
            }
        }
        // Every unfinished warp now waits at a barrier: it opens.
        if !waiting {
            return Ok(());
        }
    }
}
