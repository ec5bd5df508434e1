//! The simulated machine and the limits of a launch.

use crate::error::ConfigError;
use std::time::Duration;

/// Most SMs (worker threads) a runtime may have.
pub const MAX_SM_COUNT: u32 = 1024;
/// Most threads a workgroup may have.
pub const MAX_WORKGROUP_THREADS: u32 = warpjit_ir::verify::MAX_WORKGROUP_INVOCATIONS as u32;
/// Warp slots per SM unless configured.
pub const DEFAULT_WARPS_PER_SM: u32 = 64;

/// The machine a [`crate::Runtime`] simulates and how launches are bounded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RuntimeConfig {
    /// SMs, one worker thread each (1..=[`MAX_SM_COUNT`]); `sm_count` in
    /// kernels. Default: the available cores.
    pub sm_count: u32,
    /// Warp slots per SM; a workgroup may not have more warps. Default 64.
    pub warps_per_sm: u32,
    /// Statements each warp may execute before its launch fails (None: no
    /// limit). Deterministic per warp: a workgroup that runs out always
    /// stops at the same point, and when several would run out the launch
    /// names the lowest, on any number of SMs (see the README).
    pub fuel: Option<u64>,
    /// Wall-clock budget of a launch; when it runs out every SM stops and
    /// the launch fails (None: no limit, the default; `Some(ZERO)` stops
    /// every launch at once, which then fails unless its workgroups had all
    /// finished, unlike the command line's `--watchdog 0`, which means no
    /// limit). An embedder whose kernels may not end sets one:
    /// launches take turns, so a runaway one also holds up the others.
    pub watchdog: Option<Duration>,
}

impl Default for RuntimeConfig {
    fn default() -> RuntimeConfig {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        RuntimeConfig {
            sm_count: u32::try_from(cores)
                .unwrap_or(MAX_SM_COUNT)
                .clamp(1, MAX_SM_COUNT),
            warps_per_sm: DEFAULT_WARPS_PER_SM,
            fuel: None,
            watchdog: None,
        }
    }
}

impl RuntimeConfig {
    pub(crate) fn check(&self) -> Result<(), ConfigError> {
        if self.sm_count == 0 || self.sm_count > MAX_SM_COUNT {
            return Err(ConfigError(format!(
                "SM count {}: it must be 1 to {MAX_SM_COUNT}",
                self.sm_count
            )));
        }
        if self.warps_per_sm == 0 {
            return Err(ConfigError(
                "warps per SM 0: an SM needs at least one warp slot".into(),
            ));
        }
        Ok(())
    }
}
