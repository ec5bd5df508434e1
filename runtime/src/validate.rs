//! Launch checks, all done before anything runs: sizes with checked
//! arithmetic, buffers against the module's declarations, parameters.

use crate::config::{RuntimeConfig, MAX_WORKGROUP_THREADS};
use crate::error::LaunchError;
use crate::kernel::Kernel;
use crate::memory::{SmMemory, Storage};
use std::sync::Arc;
use warpjit_ir::interp::{self, ExecError, LaunchConfig};
use warpjit_ir::WARP_SIZE;

/// The interpreter's launch configuration and the number of workgroups of
/// a launch that passes every check.
pub(crate) fn check_launch(
    kernel: &Kernel,
    machine: &RuntimeConfig,
    grid: [u32; 3],
    workgroup: [u32; 3],
    params: &[u64],
    buffers: &[Arc<Storage>],
) -> Result<(LaunchConfig, u64), LaunchError> {
    let invalid = |reason: String| Err(LaunchError::Invalid(reason));
    let [wx, wy, wz] = workgroup;
    let threads = workgroup
        .iter()
        .try_fold(1u64, |n, &d| n.checked_mul(u64::from(d)))
        .unwrap_or(u64::MAX);
    if threads == 0 || threads > u64::from(MAX_WORKGROUP_THREADS) {
        return invalid(format!(
            "workgroup ({wx}, {wy}, {wz}) has {} threads; it must have 1 to {MAX_WORKGROUP_THREADS}",
            if threads == u64::MAX {
                "more than 2^64".to_string()
            } else {
                threads.to_string()
            }
        ));
    }
    let warps = threads.div_ceil(u64::from(WARP_SIZE));
    if warps > u64::from(machine.warps_per_sm) {
        return invalid(format!(
            "a workgroup of {threads} threads needs {warps} warps but an SM has {} warp slots",
            machine.warps_per_sm
        ));
    }
    let [gx, gy, gz] = grid;
    let Some(workgroups) = grid
        .iter()
        .try_fold(1u64, |n, &d| n.checked_mul(u64::from(d)))
    else {
        return invalid(format!(
            "grid ({gx}, {gy}, {gz}) has 2^64 workgroups or more"
        ));
    };
    for (d, axis) in ["x", "y", "z"].iter().enumerate() {
        if u64::from(grid[d]) * u64::from(workgroup[d]) > 1u64 << 32 {
            return invalid(format!(
                "grid {axis} {} times workgroup {axis} {} is more than 2^32 invocations: global_id.{axis} is 32 bits",
                grid[d], workgroup[d]
            ));
        }
    }

    let module = kernel.module();
    let declared = &module.buffers;
    if buffers.len() != declared.len() {
        let list = |decls: &[warpjit_ir::BufferDecl]| {
            decls
                .iter()
                .map(|b| format!("@{}[{}]", b.name, b.binding))
                .collect::<Vec<_>>()
                .join(", ")
        };
        return invalid(if buffers.len() < declared.len() {
            format!(
                "the module declares {} buffers but {} were given; missing: {}",
                declared.len(),
                buffers.len(),
                list(&declared[buffers.len()..])
            )
        } else {
            format!(
                "the module declares {} buffers ({}) but {} were given",
                declared.len(),
                list(declared),
                buffers.len()
            )
        });
    }

    let config = LaunchConfig {
        grid,
        workgroup,
        sm_count: machine.sm_count,
        warps_per_sm: machine.warps_per_sm,
        fuel: machine.fuel,
    };
    // The interpreter's own checks (parameter count and values, the kernel).
    interp::validate_launch(
        module,
        kernel.function(),
        &config,
        params,
        &SmMemory::new(buffers),
    )
    .map_err(|e| match e {
        ExecError::InvalidLaunch(reason) => LaunchError::Invalid(reason),
        other => LaunchError::Exec(other),
    })?;
    Ok((config, workgroups))
}
