//! Everything that can go wrong in a launch gives a defined result or a
//! clear error, and the runtime keeps working afterwards: out-of-bounds
//! accesses, runaway kernels (watchdog, fuel), panics in a worker, absurd
//! sizes, missing buffers and parameters, allocations beyond memory.

mod support;
use std::sync::Arc;
use std::time::Duration;
use support::*;
use warpjit_ir::interp::{AccessKind, ExecError, FuelUnit};
use warpjit_ir::NumFormat;
use warpjit_runtime::{
    AllocError, Backend, Buffer, InterpreterBackend, LaunchError, Runtime, RuntimeConfig, SmMemory,
    Workgroup, WorkgroupReport,
};

/// Workgroups 3 and 6 access past the end of `@data` (64 bytes) in lanes
/// 5..31 of both warps: a load, a store and an atomic each. Workgroup 3
/// first spins a while, so workgroup 6 usually faults earlier in time.
const OUT_OF_BOUNDS: &str = "
buffer @data[0]: u32
kernel @main workgroup(64) {
  var $spin: i32
  %wg = workgroup_id.x
  %is3 = cmp.eq %wg, 3
  if %is3 {
    loop {
      %done = cmp.ge.u $spin, 3000
      if %done {
        break
      }
      $spin = add $spin, 1
    }
  }
  %is6 = cmp.eq %wg, 6
  %chosen = or %is3, %is6
  %lane = lane_id
  %late_lane = cmp.ge.u %lane, 5
  %faults = and %chosen, %late_lane
  if %faults {
    %local = local_index
    %offset = shl %local, 2
    %wg100 = mul %wg, 100
    %base = add %wg100, 1000
    %addr = add %base, %offset
    %x = load.u32 @data, %addr
    store.u32 @data, %addr, 7
    %old = atom.add.u32 @data, %addr, 1
  }
}";

#[test]
fn out_of_bounds_accesses_are_counted_and_the_first_is_the_lowest_workgroups() {
    let runtime = runtime(3);
    let kernel = kernel(&runtime, OUT_OF_BOUNDS);
    let canary: Vec<u32> = (0..16).map(|i| 0xc0de_0000 + i).collect();
    for _ in 0..10 {
        let mut buffers = vec![u32s(&canary)];
        let report = run(&runtime, &kernel, [8, 1, 1], [64, 1, 1], &[], &mut buffers);
        // 2 workgroups x 2 warps x 27 lanes.
        let per_kind = 2 * 2 * 27;
        let faults = &report.faults;
        assert_eq!(
            (faults.loads, faults.stores, faults.atomics),
            (per_kind, per_kind, per_kind)
        );
        let first = faults.first.as_ref().expect("a first fault");
        assert_eq!(first.kernel, "main");
        assert_eq!(first.memory, "data");
        assert_eq!(first.access, AccessKind::Load);
        assert_eq!(
            first.workgroup,
            [3, 0, 0],
            "lowest faulting workgroup, not the earliest"
        );
        assert_eq!((first.warp, first.lane), (0, 5));
        assert_eq!(first.address, 1000 + 300 + 5 * 4);
        assert!(
            faults.to_string().contains("324 out-of-bounds accesses (108 loads, 108 stores, 108 atomics); first: out-of-bounds load of @data at byte 1320 (kernel @main, workgroup (3, 0, 0), warp 0, lane 5)"),
            "{faults}"
        );
        // Stores and atomics out of bounds change nothing.
        assert_eq!(buffers[0].to_vec::<u32>(), canary);
    }
}

const SPIN_FOREVER: &str = "
kernel @main workgroup(64) {
  loop {
  }
}";

const WRITE_IDS: &str = "
param %tag: i32
buffer @out[0]: u32
kernel @main workgroup(32) {
  %gid = global_id.x
  %addr = shl %gid, 2
  %value = add %gid, %tag
  store.u32 @out, %addr, %value
}";

/// A launch of WRITE_IDS that must succeed with the right results.
fn check_good_launch(runtime: &Runtime, groups: u32, tag: u32) {
    let kernel = kernel(runtime, WRITE_IDS);
    let mut buffers = vec![zeros_u32(u64::from(groups) * 32)];
    let report = run(
        runtime,
        &kernel,
        [groups, 1, 1],
        [32, 1, 1],
        &[u64::from(tag)],
        &mut buffers,
    );
    assert_eq!(report.workgroups, u64::from(groups));
    let expected: Vec<u32> = (0..groups * 32).map(|g| g + tag).collect();
    assert_eq!(buffers[0].to_vec::<u32>(), expected);
}

#[test]
fn the_watchdog_stops_an_infinite_loop_on_every_sm_and_the_runtime_carries_on() {
    let runtime = Runtime::new(RuntimeConfig {
        watchdog: Some(Duration::from_millis(200)),
        ..config(2, 64)
    })
    .expect("valid configuration");
    let spin = kernel(&runtime, SPIN_FOREVER);
    let err = runtime
        .launch(&spin, [4, 1, 1], [64, 1, 1], &[], &mut [])
        .expect_err("an infinite loop cannot finish");
    match &err {
        LaunchError::Watchdog {
            kernel,
            budget,
            finished,
            workgroups,
        } => {
            assert_eq!(kernel, "main");
            assert_eq!(*budget, Duration::from_millis(200));
            assert_eq!((*finished, *workgroups), (0, 4));
        }
        other => panic!("expected the watchdog, got {other:?}"),
    }
    assert!(
        err.to_string()
            .contains("stopped by the watchdog after 0.2 s"),
        "{err}"
    );
    // The same SM threads run the next launch, and again the watchdog.
    check_good_launch(&runtime, 9, 5);
    assert!(matches!(
        runtime.launch(&spin, [1, 1, 1], [64, 1, 1], &[], &mut []),
        Err(LaunchError::Watchdog { .. })
    ));
    check_good_launch(&runtime, 3, 1);
}

#[test]
fn fuel_stops_a_runaway_kernel_deterministically_per_warp() {
    let runtime = Runtime::new(RuntimeConfig {
        fuel: Some(1000),
        ..config(2, 64)
    })
    .expect("valid configuration");
    let spin = kernel(&runtime, SPIN_FOREVER);
    match runtime.launch(&spin, [3, 1, 1], [64, 1, 1], &[], &mut []) {
        Err(LaunchError::Exec(ExecError::FuelExhausted {
            kernel, fuel, unit, ..
        })) => {
            assert_eq!(kernel, "main");
            assert_eq!(fuel, 1000);
            assert_eq!(unit, FuelUnit::Statements);
        }
        other => panic!("expected fuel exhaustion, got {other:?}"),
    }
    check_good_launch(&runtime, 2, 0);
}

/// The interpreter, except that workgroup 5 panics when the kernel's first
/// parameter is 1.
struct PanicsInWorkgroup5;

impl Backend for PanicsInWorkgroup5 {
    fn name(&self) -> &str {
        "interp"
    }

    fn run_workgroup(
        &self,
        work: &Workgroup<'_>,
        memory: &mut SmMemory<'_>,
    ) -> Result<WorkgroupReport, ExecError> {
        if work.params.first() == Some(&1) && work.index == 5 {
            panic!("injected panic in workgroup 5");
        }
        InterpreterBackend.run_workgroup(work, memory)
    }
}

#[test]
fn a_panic_in_a_worker_fails_its_launch_and_the_next_100_launches_work() {
    let runtime = Runtime::with_backend(config(3, 64), Arc::new(PanicsInWorkgroup5))
        .expect("valid configuration");
    let kernel = kernel(&runtime, WRITE_IDS);
    let mut buffers = vec![zeros_u32(16 * 32)];
    let err = runtime
        .launch(&kernel, [16, 1, 1], [32, 1, 1], &[1], &mut buffers)
        .expect_err("workgroup 5 panics");
    match &err {
        LaunchError::Panicked {
            kernel,
            workgroup,
            sm,
            message,
        } => {
            assert_eq!(kernel, "main");
            assert_eq!(*workgroup, [5, 0, 0]);
            assert!(*sm < 3);
            assert_eq!(message, "injected panic in workgroup 5");
        }
        other => panic!("expected a caught panic, got {other:?}"),
    }
    for round in 0..100 {
        check_good_launch(&runtime, 16, 2 + round);
    }
}

#[test]
fn absurd_sizes_are_rejected_before_anything_runs_and_large_ones_are_stopped() {
    const SIZES: [u32; 8] = [0, 1, 31, 32, 33, 65535, 1 << 31, u32::MAX];
    // SM counts: 1..=1024 work, the rest are refused.
    for sms in SIZES {
        match Runtime::new(config(sms, 64)) {
            Ok(runtime) => {
                assert!((1..=1024).contains(&sms), "{sms} SMs accepted");
                check_good_launch(&runtime, 40, 0);
            }
            Err(e) => {
                assert!(!(1..=1024).contains(&sms), "{sms} SMs refused: {e}");
                assert!(e.to_string().contains("it must be 1 to 1024"), "{e}");
            }
        }
        let slots = Runtime::new(config(1, sms));
        assert_eq!(slots.is_ok(), sms > 0, "{sms} warp slots");
    }

    let patient = runtime(2);
    let hasty = Runtime::new(RuntimeConfig {
        watchdog: Some(Duration::from_millis(100)),
        ..config(2, 64)
    })
    .expect("valid configuration");
    let source = "kernel @main {\n  %g = global_id.x\n}";
    let (patient_kernel, hasty_kernel) = (kernel(&patient, source), kernel(&hasty, source));
    let mut shapes = Vec::new();
    for s in SIZES {
        for axis in 0..3 {
            let mut one = [1u32; 3];
            one[axis] = s;
            shapes.push((one, [1, 1, 1]));
            shapes.push(([1, 1, 1], one));
            shapes.push((one, [33, 1, 1]));
        }
        shapes.push(([s, s, s], [1, 1, 1]));
    }
    // Refused, run, stopped by the watchdog.
    let mut outcomes = [0; 3];
    for (grid, workgroup) in shapes {
        let threads: u64 = workgroup.iter().map(|&d| u64::from(d)).product();
        let groups: u128 = grid.iter().map(|&d| u128::from(d)).product();
        let ids_fit = (0..3).all(|d| u64::from(grid[d]) * u64::from(workgroup[d]) <= 1 << 32);
        let valid = (1..=1024).contains(&threads) && groups < 1 << 64 && ids_fit;
        let what = format!("grid {grid:?}, workgroup {workgroup:?}");
        if !valid {
            let err = patient
                .launch(&patient_kernel, grid, workgroup, &[], &mut [])
                .expect_err(&what);
            assert!(matches!(err, LaunchError::Invalid(_)), "{what}: {err:?}");
            outcomes[0] += 1;
        } else if groups <= 1 << 20 {
            let report = run(&patient, &patient_kernel, grid, workgroup, &[], &mut []);
            assert_eq!(u128::from(report.workgroups), groups, "{what}");
            outcomes[1] += 1;
        } else {
            // Valid but far too big to finish: the watchdog ends it.
            let err = hasty
                .launch(&hasty_kernel, grid, workgroup, &[], &mut [])
                .expect_err(&what);
            assert!(
                matches!(err, LaunchError::Watchdog { .. }),
                "{what}: {err:?}"
            );
            outcomes[2] += 1;
        }
    }
    assert_eq!(outcomes, [16, 53, 11]);
    check_good_launch(&patient, 3, 0);
    check_good_launch(&hasty, 3, 0);
}

#[test]
fn missing_or_extra_buffers_and_bad_parameters_are_refused_before_anything_runs() {
    let source = "
param %n: i32
buffer @a[0]: u32
buffer @b[1]: u32
buffer @c[5]: u32
kernel @main workgroup(32) {
  %gid = global_id.x
  %addr = shl %gid, 2
  store.u32 @a, %addr, %n
  store.u32 @b, %addr, %n
  store.u32 @c, %addr, %n
}";
    let runtime = runtime(2);
    let kernel = kernel(&runtime, source);
    let launch = |buffers: &mut [Buffer], params: &[u64]| {
        runtime
            .launch(&kernel, [1, 1, 1], [32, 1, 1], params, buffers)
            .expect_err("refused")
            .to_string()
    };
    let mut two = vec![zeros_u32(32), zeros_u32(32)];
    let err = launch(&mut two, &[1]);
    assert!(
        err.contains("the module declares 3 buffers but 2 were given; missing: @c[5]"),
        "{err}"
    );
    assert_eq!(two[0].to_vec::<u32>(), vec![0; 32], "nothing ran");
    let err = launch(&mut [], &[1]);
    assert!(err.contains("missing: @a[0], @b[1], @c[5]"), "{err}");
    let mut four: Vec<Buffer> = (0..4).map(|_| zeros_u32(32)).collect();
    let err = launch(&mut four, &[1]);
    assert!(
        err.contains("declares 3 buffers (@a[0], @b[1], @c[5]) but 4 were given"),
        "{err}"
    );

    let mut three: Vec<Buffer> = (0..3).map(|_| zeros_u32(32)).collect();
    let err = launch(&mut three, &[]);
    assert!(err.contains("1 parameters but 0 values"), "{err}");
    let err = launch(&mut three, &[1 << 40]);
    assert!(err.contains("does not fit"), "{err}");
    assert_eq!(three[0].to_vec::<u32>(), vec![0; 32], "nothing ran");
}

#[test]
fn allocations_beyond_memory_are_errors_not_aborts() {
    // 2^50 bytes is past any machine's address space; 2^63 past Rust's
    // largest allocation; 2^64 does not even have a size.
    assert_eq!(
        Buffer::zeroed(1 << 50).expect_err("2^50 bytes"),
        AllocError { bytes: 1 << 50 }
    );
    assert_eq!(
        Buffer::zeros(NumFormat::U64, 1 << 60).expect_err("2^63 bytes"),
        AllocError { bytes: 1 << 63 }
    );
    let overflow = Buffer::zeros(NumFormat::U32, u64::MAX).expect_err("2^66 bytes");
    assert_eq!(overflow.bytes, u64::MAX);
    let err = LaunchError::from(AllocError { bytes: 1 << 50 });
    assert_eq!(
        err.to_string(),
        "out of memory: cannot allocate a buffer of 1125899906842624 bytes"
    );
    // The runtime still works.
    check_good_launch(&runtime(2), 2, 0);
}

#[test]
fn kernels_are_found_by_name_and_tied_to_their_backend() {
    let runtime = runtime(1);
    let source = "
func @helper() {
}
kernel @first {
}
kernel @second {
}";
    let module = module(source);
    let err = runtime
        .prepare(Arc::clone(&module), "third")
        .expect_err("no such kernel");
    assert_eq!(
        err.to_string(),
        "kernel @third could not be prepared: the module has no such kernel \
         (kernels: @first, @second)"
    );
    let helper = module.find_function("helper").expect("declared");
    let err = runtime
        .prepare_function(Arc::clone(&module), helper)
        .expect_err("not a kernel");
    assert_eq!(
        err.to_string(),
        "kernel @helper could not be prepared: it is a function, not a kernel"
    );
    let second = runtime
        .prepare(Arc::clone(&module), "@second")
        .expect("a kernel");
    assert_eq!(second.name(), "second");

    struct Other;
    impl Backend for Other {
        fn name(&self) -> &str {
            "other"
        }
        fn run_workgroup(
            &self,
            work: &Workgroup<'_>,
            memory: &mut SmMemory<'_>,
        ) -> Result<WorkgroupReport, ExecError> {
            InterpreterBackend.run_workgroup(work, memory)
        }
    }
    let other = Runtime::with_backend(config(1, 64), Arc::new(Other)).expect("valid");
    let err = other
        .launch(&second, [1, 1, 1], [1, 1, 1], &[], &mut [])
        .expect_err("prepared by the interpreter");
    assert!(
        err.to_string().contains("prepared by the interp backend"),
        "{err}"
    );
}

/// The interpreter, except that it returns from each workgroup only some
/// time after finishing it.
struct SlowToReturn(Duration);

impl Backend for SlowToReturn {
    fn name(&self) -> &str {
        "interp"
    }

    fn run_workgroup(
        &self,
        work: &Workgroup<'_>,
        memory: &mut SmMemory<'_>,
    ) -> Result<WorkgroupReport, ExecError> {
        let report = InterpreterBackend.run_workgroup(work, memory);
        std::thread::sleep(self.0);
        report
    }
}

#[test]
fn a_budget_that_runs_out_after_the_last_workgroup_stops_nothing() {
    let runtime = Runtime::with_backend(
        RuntimeConfig {
            watchdog: Some(Duration::from_millis(20)),
            ..config(2, 64)
        },
        Arc::new(SlowToReturn(Duration::from_millis(150))),
    )
    .expect("valid configuration");
    // One workgroup per SM: both finish at once, then report well after
    // the budget, within the grace the SMs get to stop.
    check_good_launch(&runtime, 2, 5);
    // With more workgroups than SMs, a cancelled SM stops before its next.
    let kernel = kernel(&runtime, WRITE_IDS);
    let mut buffers = vec![zeros_u32(4 * 32)];
    let err = runtime
        .launch(&kernel, [4, 1, 1], [32, 1, 1], &[5], &mut buffers)
        .expect_err("two workgroups per SM take twice the budget");
    assert!(
        matches!(err, LaunchError::Watchdog { finished, workgroups: 4, .. } if finished < 4),
        "{err:?}"
    );
}

/// The interpreter, except that with a first parameter of 1 it ignores the
/// cancellation and waits until the test lets it go.
struct Stubborn {
    release: Arc<std::sync::atomic::AtomicBool>,
}

impl Backend for Stubborn {
    fn name(&self) -> &str {
        "interp"
    }

    fn run_workgroup(
        &self,
        work: &Workgroup<'_>,
        memory: &mut SmMemory<'_>,
    ) -> Result<WorkgroupReport, ExecError> {
        if work.params.first() == Some(&1) {
            while !self.release.load(std::sync::atomic::Ordering::Relaxed) {
                std::thread::sleep(Duration::from_millis(1));
            }
        }
        InterpreterBackend.run_workgroup(work, memory)
    }
}

#[test]
fn an_sm_that_ignores_the_watchdog_is_replaced_and_the_runtime_carries_on() {
    let release = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let runtime = Runtime::with_backend(
        RuntimeConfig {
            watchdog: Some(Duration::from_millis(200)),
            ..config(2, 64)
        },
        Arc::new(Stubborn {
            release: Arc::clone(&release),
        }),
    )
    .expect("valid configuration");
    let kernel = kernel(&runtime, WRITE_IDS);
    let mut buffers = vec![zeros_u32(32)];
    let err = runtime
        .launch(&kernel, [1, 1, 1], [32, 1, 1], &[1], &mut buffers)
        .expect_err("the SM never stops");
    assert_eq!(
        err,
        LaunchError::Unresponsive {
            kernel: "main".into(),
            sms: vec![0]
        }
    );
    // The abandoned thread finishes when let go; a fresh one serves SM 0.
    release.store(true, std::sync::atomic::Ordering::Relaxed);
    for round in 0..5 {
        check_good_launch(&runtime, 6, round);
    }
}
