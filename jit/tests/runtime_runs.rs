//! The JIT backend's runs of consecutive workgroups: warp coroutines kept
//! on the SM thread across workgroups of different sizes, launches stopped
//! early and kernels that need larger stacks; faults, fuel and the
//! watchdog in the middle of a run, against the interpreter.

mod support;
use std::sync::Arc;
use std::time::Duration;
use support::*;
use warpjit_ir::interp::ExecError;
use warpjit_runtime::{Buffer, LaunchError, Runtime, RuntimeConfig};

fn value(gid: u32) -> u32 {
    gid.wrapping_mul(2_654_435_761).rotate_left(7)
}

/// Launches TREE_SUM on `groups` workgroups of `size` and checks the sums.
fn check_tree_sums(runtime: &Runtime, groups: u32, size: u32) {
    let kernel = kernel(runtime, TREE_SUM);
    let values: Vec<u32> = (0..groups * size).map(value).collect();
    let mut buffers = vec![u32s(&values), zeros_u32(u64::from(groups))];
    run(
        runtime,
        &kernel,
        [groups, 1, 1],
        [size, 1, 1],
        &[],
        &mut buffers,
    );
    let expected: Vec<u32> = (0..groups)
        .map(|g| {
            values[(g * size) as usize..((g + 1) * size) as usize]
                .iter()
                .fold(0u32, |a, &v| a.wrapping_add(v))
        })
        .collect();
    assert_eq!(buffers[1].to_vec::<u32>(), expected, "workgroups of {size}");
}

/// Every warp spins through a barrier until its fuel runs out.
const SPIN_THROUGH_BARRIERS: &str = "
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

/// A barrier kernel with a large private array: its warps need stacks
/// several times the smallest.
const LARGE_FRAMES: &str = "
buffer @out[0]: u32
kernel @main {
  private @table[16384]
  %local = local_index
  %gid = global_id.x
  %slot = and %gid, 4095
  %taddr = shl %slot, 2
  store.u32 @table, %taddr, %gid
  barrier
  %back = load.u32 @table, %taddr
  %twice = add %back, %local
  %addr = shl %gid, 2
  store.u32 @out, %addr, %twice
}";

#[test]
fn warp_coroutines_serve_workgroups_of_any_size_stopped_launches_and_larger_stacks() {
    let runtime = Runtime::with_backend(
        RuntimeConfig {
            fuel: Some(2000),
            ..config(1, 32)
        },
        jit(),
    )
    .expect("valid configuration");
    for size in [1024, 96, 33, 256] {
        check_tree_sums(&runtime, 40, size);
    }
    let spin = kernel(&runtime, SPIN_THROUGH_BARRIERS);
    for size in [256, 1024] {
        // Warps wait at the barrier when warp 0 runs out of fuel.
        match runtime.launch(&spin, [30, 1, 1], [size, 1, 1], &[], &mut []) {
            Err(LaunchError::Exec(ExecError::FuelExhausted {
                workgroup, warp, ..
            })) => {
                assert_eq!((workgroup, warp), ([0, 0, 0], 0));
            }
            other => panic!("expected fuel exhaustion, got {other:?}"),
        }
        check_tree_sums(&runtime, 40, 1024);
        check_tree_sums(&runtime, 40, 64);
    }
    let large = kernel(&runtime, LARGE_FRAMES);
    let mut buffers = vec![zeros_u32(20 * 96)];
    run(&runtime, &large, [20, 1, 1], [96, 1, 1], &[], &mut buffers);
    let expected: Vec<u32> = (0..20 * 96).map(|gid| gid + gid % 96).collect();
    assert_eq!(buffers[0].to_vec::<u32>(), expected);
    check_tree_sums(&runtime, 40, 512);
}

/// A kernel over workgroups of `size` in which `%faults` holds in lanes
/// 29-31 of workgroups `%a` and `%b`, `%warp` is the warp's index and
/// `%bad` an address past the end of `@data`; `faulting` uses them, then
/// every thread writes its global id.
fn faults_in_workgroups_a_and_b(size: u32, faulting: &str) -> String {
    format!(
        "
param %a: i32
param %b: i32
buffer @data[0]: u32
kernel @main workgroup({size}) {{
  %wg = workgroup_id.x
  %gid = global_id.x
  %addr = shl %gid, 2
  %is_a = cmp.eq %wg, %a
  %is_b = cmp.eq %wg, %b
  %chosen = or %is_a, %is_b
  %local = local_index
  %warp = shr.u %local, 5
  %lane = lane_id
  %late = cmp.ge.u %lane, 29
  %faults = and %chosen, %late
  %bad = add %addr, 1000000
{faulting}
  store.u32 @data, %addr, %gid
}}"
    )
}

/// Workgroups of 64: warp 1 reads past the end of `@data` before the
/// barrier and warp 0 writes past it after, so warp 1's access is the
/// workgroup's first.
const FAULTS_AROUND_A_BARRIER: &str = "
  %warp1 = cmp.eq %warp, 1
  %early = and %faults, %warp1
  if %early {
    %x = load.u32 @data, %bad
  }
  barrier
  %warp0 = cmp.eq %warp, 0
  %later = and %faults, %warp0
  if %later {
    store.u32 @data, %bad, 7
  }";

/// Runs `source` (which faults in workgroups `a` and `b` and has every
/// thread write its global id) over `groups` workgroups of `size` on the
/// JIT with 1 and 2 SMs and on the interpreter; checks the writes, that
/// both report the same faults, six loads and six stores, and that the
/// first names workgroup `min(a, b)` and warp `first_warp`.
fn check_faults_against_the_interpreter(
    source: &str,
    groups: u32,
    size: u32,
    workgroup_pairs: &[(u32, u32)],
    first_warp: u32,
) {
    let reference = runtime_on(support::backends()[1].clone(), 1, 64);
    for sms in [1, 2] {
        let on_jit = runtime_on(jit(), sms, 64);
        for &(a, b) in workgroup_pairs {
            let mut reports = Vec::new();
            for runtime in [&on_jit, &reference] {
                let kernel = kernel(runtime, source);
                let mut buffers = vec![zeros_u32(u64::from(groups * size))];
                let report = run(
                    runtime,
                    &kernel,
                    [groups, 1, 1],
                    [size, 1, 1],
                    &[u64::from(a), u64::from(b)],
                    &mut buffers,
                );
                let expected: Vec<u32> = (0..groups * size).collect();
                assert_eq!(buffers[0].to_vec::<u32>(), expected);
                reports.push(report.faults);
            }
            assert_eq!(reports[0], reports[1], "workgroups {a} and {b}, {sms} SMs");
            let first = reports[0].first.as_ref().expect("a first fault");
            assert_eq!((first.workgroup[0], first.warp), (a.min(b), first_warp));
            assert_eq!((reports[0].loads, reports[0].stores), (6, 6));
        }
    }
}

#[test]
fn faults_in_the_middle_of_runs_are_reported_as_the_interpreter_does() {
    let pairs = [(150, 37), (12, 13), (0, 199)];
    let source = faults_in_workgroups_a_and_b(64, FAULTS_AROUND_A_BARRIER);
    check_faults_against_the_interpreter(&source, 200, 64, &pairs, 1);
}

/// Workgroups of 256, no barrier and no loop, so the JIT runs a
/// workgroup's eight warps in one call of its entry: warp 5 stores past
/// the end of `@data` and warp 2 then loads past it, and the warps after
/// them still write their global ids.
const FAULTING_WARPS_IN_ONE_CALL: &str = "
  %warp5 = cmp.eq %warp, 5
  %stores = and %faults, %warp5
  if %stores {
    store.u32 @data, %bad, 7
  }
  %warp2 = cmp.eq %warp, 2
  %loads = and %faults, %warp2
  if %loads {
    %x = load.u32 @data, %bad
  }";

#[test]
fn warps_after_a_faulting_warp_of_the_same_call_still_run() {
    // Warps run in order, so warp 2's load comes before warp 5's store.
    let pairs = [(30, 7), (0, 49)];
    let source = faults_in_workgroups_a_and_b(256, FAULTING_WARPS_IN_ONE_CALL);
    check_faults_against_the_interpreter(&source, 50, 256, &pairs, 2);
}

/// Workgroup 37 (of 64 threads) loops forever; the others write their
/// global ids. With a barrier in the loop its other warps wait there.
fn stuck_in_workgroup_37(with_barrier: bool) -> String {
    format!(
        "
buffer @out[0]: u32
kernel @main workgroup(64) {{
  %wg = workgroup_id.x
  %stuck = cmp.eq %wg, 37
  if %stuck {{
    loop {{
      {}
    }}
  }}
  %gid = global_id.x
  %addr = shl %gid, 2
  store.u32 @out, %addr, %gid
}}",
        if with_barrier { "barrier" } else { "" }
    )
}

fn written_before_37(out: &Buffer) {
    let out = out.to_vec::<u32>();
    assert!(out[..37 * 64]
        .iter()
        .enumerate()
        .all(|(i, &v)| v == i as u32));
    assert!(
        out[37 * 64..].iter().all(|&v| v == 0),
        "nothing after it ran"
    );
}

#[test]
fn fuel_running_out_in_the_middle_of_a_run_names_that_workgroup_on_both_backends() {
    for backend in support::backends() {
        let runtime = Runtime::with_backend(
            RuntimeConfig {
                fuel: Some(1000),
                ..config(1, 64)
            },
            backend,
        )
        .expect("valid configuration");
        for with_barrier in [false, true] {
            let kernel = kernel(&runtime, &stuck_in_workgroup_37(with_barrier));
            let mut buffers = vec![zeros_u32(100 * 64)];
            match runtime.launch(&kernel, [100, 1, 1], [64, 1, 1], &[], &mut buffers) {
                Err(LaunchError::Exec(ExecError::FuelExhausted {
                    workgroup, warp, ..
                })) => assert_eq!((workgroup, warp), ([37, 0, 0], 0)),
                other => panic!("expected fuel exhaustion, got {other:?}"),
            }
            written_before_37(&buffers[0]);
        }
    }
}

/// Workgroups 0-9 each spend 20000 loop iterations and then write their
/// global ids; every workgroup from 10 on loops forever. So on several SMs
/// the high workgroups run out of fuel long before the lowest failing
/// one, 10, is reached.
const LOWEST_FAILS_LAST: &str = "
buffer @out[0]: u32
kernel @main workgroup(64) {
  var $i: i32
  %wg = workgroup_id.x
  %finite = cmp.lt.u %wg, 10
  loop {
    %done = cmp.ge.u $i, 20000
    %leave = and %done, %finite
    if %leave {
      break
    }
    $i = add $i, 1
  }
  %gid = global_id.x
  %addr = shl %gid, 2
  store.u32 @out, %addr, %gid
}";

#[test]
fn the_lowest_failing_workgroup_is_named_whichever_sm_fails_first() {
    for backend in support::backends() {
        let name = backend.name().to_string();
        for sms in [2, 3] {
            let runtime = Runtime::with_backend(
                RuntimeConfig {
                    fuel: Some(1_000_000),
                    ..config(sms, 64)
                },
                Arc::clone(&backend),
            )
            .expect("valid configuration");
            let kernel = kernel(&runtime, LOWEST_FAILS_LAST);
            for grid in [100, 2000] {
                let mut buffers = vec![zeros_u32(u64::from(grid) * 64)];
                match runtime.launch(&kernel, [grid, 1, 1], [64, 1, 1], &[], &mut buffers) {
                    Err(LaunchError::Exec(ExecError::FuelExhausted {
                        workgroup, warp, ..
                    })) => assert_eq!(
                        (workgroup, warp),
                        ([10, 0, 0], 0),
                        "{name}, {sms} SMs, grid {grid}"
                    ),
                    other => panic!("{name}, {sms} SMs: expected fuel exhaustion, got {other:?}"),
                }
                let out = buffers[0].to_vec::<u32>();
                assert!(
                    out[..640].iter().enumerate().all(|(i, &v)| v == i as u32),
                    "{name}, {sms} SMs, grid {grid}: the workgroups below 10 completed"
                );
            }
        }
    }
}

#[test]
fn the_watchdog_stops_a_run_in_the_middle_and_the_next_launch_runs() {
    let runtime = Runtime::with_backend(
        RuntimeConfig {
            watchdog: Some(Duration::from_millis(150)),
            ..config(1, 64)
        },
        jit(),
    )
    .expect("valid configuration");
    for with_barrier in [false, true] {
        let kernel = kernel(&runtime, &stuck_in_workgroup_37(with_barrier));
        let mut buffers = vec![zeros_u32(100 * 64)];
        match runtime.launch(&kernel, [100, 1, 1], [64, 1, 1], &[], &mut buffers) {
            Err(LaunchError::Watchdog {
                finished,
                workgroups,
                ..
            }) => assert_eq!((finished, workgroups), (37, 100)),
            other => panic!("expected the watchdog, got {other:?}"),
        }
        written_before_37(&buffers[0]);
        check_tree_sums(&runtime, 30, 128);
    }
}

/// Reads shared memory before writing it, spends 600 loop iterations of
/// fuel per warp, kills lane 0 in workgroups whose id is odd and demotes
/// lane 5 in those whose id is 2 mod 4: each workgroup's result depends on
/// starting with zeroed shared memory, full fuel, every lane live and no
/// helper lanes, also when it follows others in a run. With
/// `barrier` true, the kernel is split into phases around one.
fn fresh_start(barrier: bool) -> String {
    format!(
        "
buffer @out[0]: u32
shared @acc[8]
kernel @main workgroup(64) {{
  var $i: i32
  %wg = workgroup_id.x
  %local = local_index
  %lane = lane_id
  %odd = and %wg, 1
  %killed = cmp.lt.u %lane, %odd
  if %killed {{
    kill
  }}
  %quarter = and %wg, 3
  %second = cmp.eq %quarter, 2
  %fifth = cmp.eq %lane, 5
  %demoted = and %second, %fifth
  if %demoted {{
    demote
  }}
  loop {{
    %done = cmp.ge.u $i, 600
    if %done {{
      break
    }}
    $i = add $i, 1
  }}
  %first = cmp.eq %local, 0
  if %first {{
    %before = load.u32 @acc, 0
    %mark = add %wg, 1
    store.u32 @acc, 0, %mark
    %slot = shl %wg, 2
    store.u32 @out, %slot, %before
  }}
  {}
  %active = active_mask
  %helper = is_helper
  %helpers = ballot %helper
  %live = xor %active, %helpers
  %gid = global_id.x
  %at = add %gid, 1024
  %addr = shl %at, 2
  store.u32 @out, %addr, %live
}}",
        if barrier { "barrier" } else { "" }
    )
}

#[test]
fn every_workgroup_of_a_run_starts_with_zeroed_shared_memory_full_fuel_and_live_lanes() {
    // 256 workgroups on one SM: runs of 16 (`chunk` is a sixteenth of an
    // SM's share), so most workgroups follow another in their run.
    const GROUPS: u32 = 256;
    for barrier in [false, true] {
        let mut outputs = Vec::new();
        // Fuel is loop tests on the JIT, statements on the interpreter.
        for (backend, fuel) in support::backends().into_iter().zip([Some(1000), None]) {
            let runtime = Runtime::with_backend(
                RuntimeConfig {
                    fuel,
                    ..config(1, 64)
                },
                backend,
            )
            .expect("valid configuration");
            let kernel = kernel(&runtime, &fresh_start(barrier));
            let mut buffers = vec![zeros_u32(u64::from(1024 + GROUPS * 64))];
            let report = run(
                &runtime,
                &kernel,
                [GROUPS, 1, 1],
                [64, 1, 1],
                &[],
                &mut buffers,
            );
            assert_eq!(report.faults.total(), 0);
            outputs.push(buffers[0].to_vec::<u32>());
        }
        // A killed or demoted lane stores nothing; the others see it
        // missing from the active lanes or among the helpers.
        let live = |gid: u32| match ((gid / 64) % 4, gid % 32) {
            (0, _) => !0,
            (2, 5) => 0,
            (2, _) => !(1 << 5),
            (_, 0) => 0,
            _ => !1,
        };
        let expected: Vec<u32> = (0..1024 + GROUPS * 64)
            .map(|i| if i < 1024 { 0 } else { live(i - 1024) })
            .collect();
        for out in &outputs {
            let wrong = out.iter().zip(&expected).position(|(a, b)| a != b);
            assert_eq!(wrong, None, "first wrong word, barrier: {barrier}");
        }
    }
}

/// A short kernel without a loop, barrier or shared memory, so the JIT's
/// entry runs the rest of an SM's run of workgroups in one call and counts
/// their ids itself: every thread writes its workgroup's id and its global
/// ids.
const IDS: &str = "
buffer @out[0]: u32
kernel @main {
  %index = local_index
  %wx = workgroup_id.x
  %wy = workgroup_id.y
  %wz = workgroup_id.z
  %nx = num_workgroups.x
  %ny = num_workgroups.y
  %plane = mul %nx, %ny
  %zpart = mul %wz, %plane
  %ypart = mul %wy, %nx
  %rows = add %zpart, %ypart
  %group = add %rows, %wx
  %size = mul %group, 64
  %gx = global_id.x
  %gy = global_id.y
  %packed_x = shl %gx, 12
  %packed = or %packed_x, %gy
  %slot = add %size, %index
  %addr = shl %slot, 2
  %tagged = shl %wz, 28
  %value = or %packed, %tagged
  store.u32 @out, %addr, %value
}";

#[test]
fn ids_counted_by_the_entry_across_rows_and_planes_of_the_grid_match_the_interpreter() {
    // Whole and partial warps, one and several warps per workgroup, grids
    // whose rows and planes end inside a run.
    let shapes = [
        ([5, 3, 2], [64, 1, 1]),
        ([3, 4, 3], [48, 1, 1]),
        ([7, 2, 2], [16, 2, 1]),
        ([1, 9, 2], [8, 2, 4]),
    ];
    for sms in [1, 2] {
        for (grid, workgroup) in shapes {
            let [on_jit, expected] = out_on_jit_and_interpreter(IDS, sms, grid, workgroup, 64);
            assert_eq!(
                on_jit, expected,
                "grid {grid:?} workgroup {workgroup:?}, {sms} SMs"
            );
            assert!(
                expected.iter().any(|&v| v >> 28 == 1),
                "the last plane is written"
            );
        }
    }
}

/// `@out` (`per_workgroup` words for each workgroup, zero at first) after
/// a launch of `source` on the JIT with `sms` SMs and on the interpreter.
fn out_on_jit_and_interpreter(
    source: &str,
    sms: u32,
    grid: [u32; 3],
    workgroup: [u32; 3],
    per_workgroup: u32,
) -> [Vec<u32>; 2] {
    let runtimes = [
        runtime_on(jit(), sms, 64),
        runtime_on(support::backends()[1].clone(), 1, 64),
    ];
    runtimes.map(|runtime| {
        let kernel = kernel(&runtime, source);
        let groups = grid.iter().product::<u32>();
        let mut buffers = vec![zeros_u32(u64::from(groups * per_workgroup))];
        run(&runtime, &kernel, grid, workgroup, &[], &mut buffers);
        buffers[0].to_vec::<u32>()
    })
}

/// A short kernel with shared memory and a barrier (two phases), so the
/// JIT's entry runs many workgroups per call, each phase in turn, and
/// zeroes the shared memory between them: each warp first reads its slot
/// (0 in every workgroup), adds its workgroup's id, and after the barrier
/// every thread reads the slot of the next warp.
const PHASES_AND_SHARED: &str = "
buffer @out[0]: u32
shared @slots[64]
kernel @main workgroup(128) {
  %local = local_index
  %warp = shr.u %local, 5
  %slot = shl %warp, 2
  %old = load.u32 @slots, %slot
  %wg = workgroup_id.x
  %wy = workgroup_id.y
  %tag = shl %wy, 8
  %id = or %wg, %tag
  %new = add %old, %id
  store.u32 @slots, %slot, %new
  barrier
  %next = add %warp, 1
  %wrapped = and %next, 3
  %other = shl %wrapped, 2
  %seen = load.u32 @slots, %other
  %gid = global_id.x
  %gy = global_id.y
  %nx = num_workgroups.x
  %row = mul %gy, %nx
  %rows = mul %row, 128
  %flat = add %rows, %gid
  %addr = shl %flat, 2
  store.u32 @out, %addr, %seen
}";

#[test]
fn phases_and_zeroed_shared_memory_of_many_workgroups_per_call_match_the_interpreter() {
    for sms in [1, 2] {
        for grid in [[40, 1, 1], [7, 6, 1]] {
            let [on_jit, expected] =
                out_on_jit_and_interpreter(PHASES_AND_SHARED, sms, grid, [128, 1, 1], 128);
            assert_eq!(on_jit, expected, "grid {grid:?}, {sms} SMs");
            let last = *expected.last().expect("written");
            assert_eq!(last, (grid[0] - 1) | ((grid[1] - 1) << 8));
        }
    }
}
