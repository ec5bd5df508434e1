//! Launches: validation, IDs, parameters, fuel and statement counts.

mod interp_support;
use interp_support::*;
use warpjit_ir::interp::{self, ExecError, LaunchConfig, LaunchReport};
use warpjit_ir::FuncId;

const IDS: &str = "param %tag: i32
buffer @out[0]: u32
kernel @main workgroup(4, 2) {
  %wx = workgroup_id.x
  %wy = workgroup_id.y
  %nx = num_workgroups.x
  %row = mul %wy, %nx
  %wg = add %row, %wx
  %li = local_index
  %wg8 = shl %wg, 3
  %slot = add %wg8, %li
  %base = shl %slot, 6
  %gx = global_id.x
  %gy = global_id.y
  %gz = global_id.z
  %lx = local_id.x
  %ly = local_id.y
  %ny = num_workgroups.y
  %sx = workgroup_size.x
  %sy = workgroup_size.y
  %sm = sm_id
  %smc = sm_count
  %wps = warps_per_sm
  %warp = warp_id
  %lane = lane_id
  %ws = warp_size
  store.u32 @out, %base, %gx
  %a1 = add %base, 4
  store.u32 @out, %a1, %gy
  %a2 = add %base, 8
  store.u32 @out, %a2, %gz
  %a3 = add %base, 12
  store.u32 @out, %a3, %lx
  %a4 = add %base, 16
  store.u32 @out, %a4, %ly
  %a5 = add %base, 20
  store.u32 @out, %a5, %ny
  %a6 = add %base, 24
  store.u32 @out, %a6, %sx
  %a7 = add %base, 28
  store.u32 @out, %a7, %sy
  %a8 = add %base, 32
  store.u32 @out, %a8, %sm
  %a9 = add %base, 36
  store.u32 @out, %a9, %smc
  %a10 = add %base, 40
  store.u32 @out, %a10, %wps
  %a11 = add %base, 44
  store.u32 @out, %a11, %warp
  %a12 = add %base, 48
  store.u32 @out, %a12, %lane
  %a13 = add %base, 52
  store.u32 @out, %a13, %ws
  %a14 = add %base, 56
  store.u32 @out, %a14, %tag
}";

#[test]
fn dispatch_ids_follow_the_grid_and_sm_assignment() {
    let module = compile(IDS);
    let kernel = first_kernel(&module);
    let mut cfg = LaunchConfig::for_kernel(&module, kernel, [2, 3, 1]);
    cfg.sm_count = 4;
    cfg.warps_per_sm = 7;
    let r = try_run_with(&module, kernel, &cfg, &[0xabc], vec![words(48 * 16, 0)]).expect("launch");
    assert_eq!(r.report.workgroups, 6);
    let out = r.u32s(0);
    for wy in 0..3u32 {
        for wx in 0..2u32 {
            let n = wy * 2 + wx;
            for li in 0..8u32 {
                let (lx, ly) = (li % 4, li / 4);
                let got = &out[((n * 8 + li) * 16) as usize..][..15];
                let expected = [
                    wx * 4 + lx,
                    wy * 2 + ly,
                    0,
                    lx,
                    ly,
                    3,
                    4,
                    2,
                    n % 4,
                    4,
                    7,
                    0,
                    li,
                    32,
                    0xabc,
                ];
                assert_eq!(got, &expected, "workgroup ({wx}, {wy}), local index {li}");
            }
        }
    }
}

#[test]
fn warp_and_lane_ids_follow_the_local_index() {
    let out = run1(
        "buffer @out[0]: u32
        kernel @main workgroup(8, 8) {
          %i = local_index
          %a = shl %i, 2
          %w = warp_id
          %l = lane_id
          %w32 = shl %w, 5
          %v = add %w32, %l
          store.u32 @out, %a, %v
          %y = local_id.y
          %x = local_id.x
          %y8 = shl %y, 3
          %xy = add %y8, %x
          %a2 = add %a, 256
          store.u32 @out, %a2, %xy
        }",
        128,
    );
    for i in 0..64u32 {
        assert_eq!(out[i as usize], i, "warp * 32 + lane is the local index");
        assert_eq!(out[64 + i as usize], i, "x fastest");
    }
}

#[test]
fn run_workgroup_runs_one_workgroup_on_the_given_sm() {
    let module = compile(IDS);
    let kernel = first_kernel(&module);
    let cfg = LaunchConfig::for_kernel(&module, kernel, [2, 3, 1]);
    let mut buffers = vec![words(48 * 16, 0)];
    let mut report = LaunchReport::default();
    interp::run_workgroup(
        &module,
        kernel,
        &cfg,
        [1, 2, 0],
        0,
        &[5],
        &mut buffers,
        &mut report,
    )
    .expect("run");
    assert_eq!(report.workgroups, 1);
    let out = u32s(&buffers[0]);
    let n = 5;
    for li in 0..8 {
        let got = &out[((n * 8 + li) * 16) as usize..][..15];
        assert_eq!(got[0], 4 + li % 4);
        assert_eq!(got[8], 0, "sm id as given");
        assert_eq!(got[14], 5);
    }
    // Every other workgroup's slots are untouched.
    assert!(out[..n as usize * 8 * 16].iter().all(|&w| w == 0));

    let err = interp::run_workgroup(
        &module,
        kernel,
        &cfg,
        [2, 0, 0],
        0,
        &[5],
        &mut buffers,
        &mut report,
    )
    .expect_err("outside the grid");
    assert!(matches!(err, ExecError::InvalidLaunch(_)), "{err}");
    let err = interp::run_workgroup(
        &module,
        kernel,
        &cfg,
        [0, 0, 0],
        cfg.sm_count,
        &[5],
        &mut buffers,
        &mut report,
    )
    .expect_err("no such SM");
    assert!(matches!(err, ExecError::InvalidLaunch(_)), "{err}");
}

fn invalid_launch(
    src: &str,
    cfg: impl FnOnce(&mut LaunchConfig),
    params: &[u64],
    buffers: usize,
) -> String {
    let module = compile(src);
    let kernel = first_kernel(&module);
    let mut c = LaunchConfig::for_kernel(&module, kernel, [1, 1, 1]);
    cfg(&mut c);
    let mut mem = vec![vec![0u8; 16]; buffers];
    match interp::launch(&module, kernel, &c, params, &mut mem) {
        Err(e @ ExecError::InvalidLaunch(_)) => {
            assert!(mem.iter().all(|b| b.iter().all(|&x| x == 0)), "nothing ran");
            e.to_string()
        }
        other => panic!("expected an invalid launch, got {other:?}"),
    }
}

const STORE_ONE: &str = "param %p: i32
buffer @out[0]: u32
kernel @main workgroup(64) {
  store.u32 @out, 0, 1
}";

#[test]
fn launch_validation_rejects_bad_configurations_before_running() {
    let msg = invalid_launch(STORE_ONE, |c| c.workgroup = [0, 4, 4], &[0], 1);
    assert!(msg.contains("workgroup size"), "{msg}");
    let msg = invalid_launch(STORE_ONE, |c| c.workgroup = [1025, 1, 1], &[0], 1);
    assert!(msg.contains("1 to 1024"), "{msg}");
    let msg = invalid_launch(STORE_ONE, |c| c.warps_per_sm = 1, &[0], 1);
    assert!(msg.contains("warp slots"), "{msg}");
    let msg = invalid_launch(STORE_ONE, |c| c.sm_count = 0, &[0], 1);
    assert!(msg.contains("SM count"), "{msg}");
    let msg = invalid_launch(STORE_ONE, |c| c.grid = [u32::MAX; 3], &[0], 1);
    assert!(msg.contains("2^64"), "{msg}");
    let msg = invalid_launch(STORE_ONE, |c| c.grid = [1 << 31, 1, 1], &[0], 1);
    assert!(msg.contains("global_id.x"), "{msg}");
    let msg = invalid_launch(STORE_ONE, |_| {}, &[], 1);
    assert!(msg.contains("1 parameters but 0"), "{msg}");
    let msg = invalid_launch(STORE_ONE, |_| {}, &[1 << 32], 1);
    assert!(msg.contains("%p"), "{msg}");
    let msg = invalid_launch(STORE_ONE, |_| {}, &[0], 2);
    assert!(msg.contains("1 buffers but 2"), "{msg}");
}

#[test]
fn launching_a_function_that_is_not_a_kernel_is_rejected() {
    let module = compile(
        "func @f() {
          return
        }
        kernel @main workgroup(1) {
          call @f()
        }",
    );
    let f = module.find_function("f").expect("f");
    let mut mem: Vec<Vec<u8>> = Vec::new();
    let err = interp::launch(&module, f, &LaunchConfig::default(), &[], &mut mem)
        .expect_err("not a kernel");
    assert!(err.to_string().contains("@f is not a kernel"), "{err}");
    let err = interp::launch(&module, FuncId(99), &LaunchConfig::default(), &[], &mut mem)
        .expect_err("no function");
    assert!(matches!(err, ExecError::InvalidLaunch(_)));
}

#[test]
fn largest_valid_sizes_validate_without_running() {
    let module = compile(STORE_ONE);
    let kernel = first_kernel(&module);
    let mem = vec![vec![0u8; 4]];
    let mut cfg = LaunchConfig::new([u32::MAX, 1, 1], [1, 1, 1]);
    interp::validate_launch(&module, kernel, &cfg, &[0], &mem).expect("u32::MAX workgroups of 1");
    cfg.workgroup = [1024, 1, 1];
    cfg.grid = [1 << 22, 1, 1];
    interp::validate_launch(&module, kernel, &cfg, &[0], &mem).expect("global ids up to 2^32 - 1");
    cfg.grid = [(1 << 22) + 1, 1, 1];
    assert!(interp::validate_launch(&module, kernel, &cfg, &[0], &mem).is_err());
}

#[test]
fn zero_sized_grid_runs_nothing_and_succeeds() {
    let module = compile(STORE_ONE);
    let kernel = first_kernel(&module);
    for grid in [[0, 1, 1], [5, 0, 1], [1, 1, 0]] {
        let cfg = LaunchConfig::for_kernel(&module, kernel, grid);
        let r = try_run_with(&module, kernel, &cfg, &[0], vec![words(1, 0)]).expect("empty grid");
        assert_eq!(r.report.workgroups, 0);
        assert_eq!(r.report.statements, 0);
        assert_eq!(r.u32s(0), vec![0]);
    }
}

#[test]
fn fuel_stops_an_infinite_loop_with_a_clear_error() {
    let module = compile(
        "buffer @out[0]: u32
        kernel @spin workgroup(64) {
          %g = workgroup_id.x
          %w = warp_id
          %gw = and %g, %w
          %stuck = cmp.eq %gw, 1
          if %stuck {
            loop {
            }
          }
          store.u32 @out, 0, 1
        }",
    );
    let kernel = first_kernel(&module);
    let cfg = LaunchConfig::for_kernel(&module, kernel, [2, 1, 1]).with_fuel(1000);
    let mut mem = vec![words(1, 0)];
    let err = interp::launch(&module, kernel, &cfg, &[], &mut mem).expect_err("runaway");
    match &err {
        ExecError::FuelExhausted {
            kernel,
            workgroup,
            warp,
            fuel,
            unit,
        } => {
            assert_eq!(kernel, "spin");
            assert_eq!(*workgroup, [1, 0, 0]);
            assert_eq!(*warp, 1);
            assert_eq!(*fuel, 1000);
            assert_eq!(*unit, interp::FuelUnit::Statements);
        }
        other => panic!("expected fuel exhaustion, got {other:?}"),
    }
    let msg = err.to_string();
    assert!(
        msg.contains("@spin") && msg.contains("runaway kernel?") && msg.contains("warp 1"),
        "{msg}"
    );
    let as_error: Box<dyn std::error::Error> = Box::new(err);
    assert!(!as_error.to_string().contains('\n'));
}

#[test]
fn fuel_counts_statements_and_loop_iterations_exactly() {
    // loop (1) + 3 iterations of add, cmp, if (9) + break (1) + 2 back edges = 13.
    let src = "buffer @out[0]: u32
        kernel @main workgroup(32) {
          var $i: i32
          loop {
            $i = add $i, 1
            %d = cmp.ge.s $i, 3
            if %d {
              break
            }
          }
        }";
    let module = compile(src);
    let kernel = first_kernel(&module);
    let cfg = LaunchConfig::for_kernel(&module, kernel, [1, 1, 1]);
    let r = try_run_with(&module, kernel, &cfg, &[], vec![words(1, 0)]).expect("no fuel limit");
    assert_eq!(r.report.statements, 13);
    let enough = cfg.clone().with_fuel(13);
    assert!(try_run_with(&module, kernel, &enough, &[], vec![words(1, 0)]).is_ok());
    let short = cfg.with_fuel(12);
    assert!(matches!(
        try_run_with(&module, kernel, &short, &[], vec![words(1, 0)]),
        Err(ExecError::FuelExhausted { .. })
    ));
}

#[test]
fn statements_are_summed_over_warps_and_workgroups() {
    let r = run(
        "buffer @out[0]: u32
        kernel @main workgroup(64) {
          %a = lane_id
          %b = add %a, 1
        }",
        [3, 1, 1],
        &[],
        vec![words(1, 0)],
    );
    assert_eq!(r.report.statements, 2 * 2 * 3);
    assert_eq!(r.report.workgroups, 3);
}

#[test]
fn parameters_are_read_as_given() {
    let r = run(
        "param %small: i32
        param %big: i64
        param %f: f32
        buffer @out[0]: u32
        kernel @main workgroup(1) {
          store.u32 @out, 0, %small
          store.u64 @out, 8, %big
          store.f32 @out, 16, %f
        }",
        [1, 1, 1],
        &[0xffff_fff0, 0x1234_5678_9abc_def0, 2.5f32.to_bits() as u64],
        vec![words(5, 0)],
    );
    assert_eq!(
        r.u32s(0),
        vec![0xffff_fff0, 0, 0x9abc_def0, 0x1234_5678, 2.5f32.to_bits()]
    );
}

#[test]
fn launches_are_deterministic() {
    let src = "buffer @out[0]: u32
        shared @s[256]
        kernel @main workgroup(64) {
          %i = local_index
          %k = and %i, 7
          %a = shl %k, 2
          %old = atom.add.u32 @s, %a, %i
          %j = shl %i, 2
          store.u32 @out, %j, %old
        }";
    let first = run(src, [4, 1, 1], &[], vec![words(64, 0)]);
    let second = run(src, [4, 1, 1], &[], vec![words(64, 0)]);
    assert_eq!(first.buffers, second.buffers);
    assert_eq!(first.report, second.report);
}
