//! Runaway compiled kernels on the runtime: the watchdog (through the
//! launch's cancel flag) and fuel stop them, including warps waiting at a
//! barrier, and the runtime keeps working afterwards on the same threads
//! and reused warp stacks.

mod support;
use std::time::{Duration, Instant};
use support::*;
use warpjit_ir::interp::{ExecError, FuelUnit};
use warpjit_runtime::{LaunchError, Runtime, RuntimeConfig};

const SPIN_FOREVER: &str = "
kernel @main {
  loop {
  }
}";

/// Every warp spins through a barrier forever, so warps are suspended at
/// the barrier whenever the launch stops.
const SPIN_THROUGH_BARRIERS: &str = "
buffer @out[0]: u32
shared @scratch[4096]
kernel @main {
  var $n: i32
  %local = local_index
  %addr = shl %local, 2
  loop {
    store.u32 @scratch, %addr, $n
    barrier
    $n = add $n, 1
  }
}";

const WRITE_IDS: &str = "
param %tag: i32
buffer @out[0]: u32
shared @partial[4096]
kernel @main {
  %gid = global_id.x
  %local = local_index
  %laddr = shl %local, 2
  %value = add %gid, %tag
  store.u32 @partial, %laddr, %value
  barrier
  %size = workgroup_size.x
  %last = sub %size, 1
  %mirror = sub %last, %local
  %maddr = shl %mirror, 2
  %theirs = load.u32 @partial, %maddr
  %addr = shl %gid, 2
  store.u32 @out, %addr, %theirs
}";

/// A launch of WRITE_IDS (workgroups of 96 exchanging values across a
/// barrier) that must succeed with the right results.
fn check_good_launch(runtime: &Runtime, groups: u32, tag: u32) {
    let kernel = kernel(runtime, WRITE_IDS);
    let mut buffers = vec![zeros_u32(u64::from(groups) * 96)];
    let report = run(
        runtime,
        &kernel,
        [groups, 1, 1],
        [96, 1, 1],
        &[u64::from(tag)],
        &mut buffers,
    );
    assert_eq!(report.workgroups, u64::from(groups));
    let expected: Vec<u32> = (0..groups * 96)
        .map(|g| (g / 96) * 96 + (95 - g % 96) + tag)
        .collect();
    assert_eq!(buffers[0].to_vec::<u32>(), expected);
}

#[test]
fn the_watchdog_stops_spinning_compiled_warps_and_the_runtime_carries_on() {
    let runtime = Runtime::with_backend(
        RuntimeConfig {
            watchdog: Some(Duration::from_millis(200)),
            ..RuntimeConfig {
                sm_count: 2,
                warps_per_sm: 32,
                ..RuntimeConfig::default()
            }
        },
        jit(),
    )
    .expect("valid configuration");
    check_good_launch(&runtime, 5, 3);
    for source in [SPIN_FOREVER, SPIN_THROUGH_BARRIERS] {
        let spin = kernel(&runtime, source);
        for workgroup in [64, 1024] {
            let mut buffers = vec![zeros_u32(1)];
            let buffers: &mut [_] = if source == SPIN_FOREVER {
                &mut []
            } else {
                &mut buffers
            };
            let started = Instant::now();
            let err = runtime
                .launch(&spin, [4, 1, 1], [workgroup, 1, 1], &[], buffers)
                .expect_err("an infinite loop cannot finish");
            match &err {
                LaunchError::Watchdog {
                    kernel,
                    finished,
                    workgroups,
                    ..
                } => {
                    assert_eq!(kernel, "main");
                    assert_eq!((*finished, *workgroups), (0, 4));
                }
                other => panic!("expected the watchdog, got {other:?}"),
            }
            // Stopped promptly: long before the 2 s after which the runtime
            // gives an SM up as unresponsive.
            assert!(started.elapsed() < Duration::from_millis(1500));
            check_good_launch(&runtime, 7, workgroup);
        }
    }
}

#[test]
fn fuel_stops_a_runaway_compiled_kernel_and_the_runtime_carries_on() {
    let runtime = Runtime::with_backend(
        RuntimeConfig {
            fuel: Some(1000),
            sm_count: 2,
            warps_per_sm: 32,
            ..RuntimeConfig::default()
        },
        jit(),
    )
    .expect("valid configuration");
    for source in [SPIN_FOREVER, SPIN_THROUGH_BARRIERS] {
        let spin = kernel(&runtime, source);
        let mut buffers = vec![zeros_u32(1)];
        let buffers: &mut [_] = if source == SPIN_FOREVER {
            &mut []
        } else {
            &mut buffers
        };
        match runtime.launch(&spin, [3, 1, 1], [256, 1, 1], &[], buffers) {
            Err(LaunchError::Exec(ExecError::FuelExhausted {
                kernel,
                fuel,
                unit,
                workgroup,
                ..
            })) => {
                assert_eq!(kernel, "main");
                assert_eq!(fuel, 1000);
                assert_eq!(unit, FuelUnit::LoopTests);
                assert!(workgroup[0] < 3);
            }
            other => panic!("expected fuel exhaustion, got {other:?}"),
        }
        // Fuel is per warp, so the same limit lets a kernel with bounded
        // loops run.
        check_good_launch(&runtime, 4, 1);
    }
}
