//! Launch checks, all done before anything runs: the buffers against the
//! module's declarations (naming what is missing), then the interpreter's
//! checks of sizes, warp slots and parameters.

use crate::config::RuntimeConfig;
use crate::error::LaunchError;
use crate::kernel::Kernel;
use crate::memory::{SmMemory, Storage};
use std::sync::Arc;
use warpjit_ir::interp::{self, ExecError, LaunchConfig};

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
        return Err(LaunchError::Invalid(if buffers.len() < declared.len() {
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
        }));
    }

    let config = LaunchConfig {
        grid,
        workgroup,
        sm_count: machine.sm_count,
        warps_per_sm: machine.warps_per_sm,
        fuel: machine.fuel,
    };
    // Every other check (sizes, warp slots, parameters, the kernel) is the
    // interpreter's, so both report a bad launch alike.
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
    // Validation bounded each dimension, so the product fits.
    let workgroups = grid.iter().map(|&d| u64::from(d)).product();
    Ok((config, workgroups))
}
