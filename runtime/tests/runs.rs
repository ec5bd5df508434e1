//! Runs of consecutive workgroups handed to a backend in one call
//! (`Backend::run_workgroups`, here its default, which loops over
//! `run_workgroup`): faults in the middle of a run, a cancellation between
//! its workgroups, and a backend that returns before finishing its run.

mod support;
use std::sync::Arc;
use support::*;
use warpjit_ir::interp::{AccessKind, ExecError};
use warpjit_runtime::{
    Backend, InterpreterBackend, LaunchError, RunProgress, Runtime, SmMemory, Workgroup,
    WorkgroupReport, WorkgroupRun,
};

/// Each of 200 workgroups writes its global ids; workgroups `%a` and `%b`
/// also read and write past the end of `@data` in lanes 30 and 31.
const FAULTS_IN_TWO_WORKGROUPS: &str = "
param %a: i32
param %b: i32
buffer @data[0]: u32
kernel @main workgroup(32) {
  %wg = workgroup_id.x
  %gid = global_id.x
  %addr = shl %gid, 2
  store.u32 @data, %addr, %gid
  %is_a = cmp.eq %wg, %a
  %is_b = cmp.eq %wg, %b
  %chosen = or %is_a, %is_b
  %lane = lane_id
  %late = cmp.ge.u %lane, 30
  %faults = and %chosen, %late
  if %faults {
    %bad = add %addr, 1000000
    %x = load.u32 @data, %bad
    store.u32 @data, %bad, 7
  }
}";

const GROUPS: u32 = 200;

#[test]
fn a_fault_in_the_middle_of_a_run_is_the_reports_first_on_any_sm_count() {
    for sms in [1, 3] {
        let runtime = runtime(sms);
        let kernel = kernel(&runtime, FAULTS_IN_TWO_WORKGROUPS);
        // 200 workgroups on one SM come in runs of 12: 37 and 150 are in
        // the middle of theirs.
        let mut buffers = vec![zeros_u32(u64::from(GROUPS) * 32)];
        let report = run(
            &runtime,
            &kernel,
            [GROUPS, 1, 1],
            [32, 1, 1],
            &[150, 37],
            &mut buffers,
        );
        assert_eq!(report.workgroups, u64::from(GROUPS));
        assert_eq!((report.faults.loads, report.faults.stores), (4, 4));
        let first = report.faults.first.expect("a first fault");
        assert_eq!(first.workgroup, [37, 0, 0], "{sms} SMs");
        assert_eq!(
            (first.access, first.lane, first.warp),
            (AccessKind::Load, 30, 0)
        );
        let expected: Vec<u32> = (0..GROUPS * 32).collect();
        assert_eq!(buffers[0].to_vec::<u32>(), expected);
    }
}

/// The interpreter, except that workgroup 40 cancels the launch as it
/// completes.
struct CancelsAfterWorkgroup40;

impl Backend for CancelsAfterWorkgroup40 {
    fn name(&self) -> &str {
        "interp"
    }

    fn run_workgroup(
        &self,
        work: &Workgroup<'_>,
        memory: &mut SmMemory<'_>,
    ) -> Result<WorkgroupReport, ExecError> {
        let report = InterpreterBackend.run_workgroup(work, memory)?;
        if work.index == 40 {
            work.cancel.cancel();
        }
        Ok(report)
    }
}

#[test]
fn a_cancellation_between_workgroups_of_a_run_stops_it_there() {
    let runtime = Runtime::with_backend(config(1, 64), Arc::new(CancelsAfterWorkgroup40))
        .expect("valid configuration");
    let kernel = kernel(&runtime, FAULTS_IN_TWO_WORKGROUPS);
    let mut buffers = vec![zeros_u32(u64::from(GROUPS) * 32)];
    let report = run(
        &runtime,
        &kernel,
        [GROUPS, 1, 1],
        [32, 1, 1],
        &[999, 999],
        &mut buffers,
    );
    // Workgroup 40 is inside the run 36..48; the rest of it never ran.
    assert_eq!(report.workgroups, 41);
    let written = buffers[0].to_vec::<u32>();
    assert!(written[..41 * 32]
        .iter()
        .enumerate()
        .all(|(i, &v)| v == i as u32));
    assert!(written[41 * 32..].iter().all(|&v| v == 0));
}

/// Runs only the first half of each run and claims success.
struct GivesUpHalfway;

impl Backend for GivesUpHalfway {
    fn name(&self) -> &str {
        "interp"
    }

    fn run_workgroup(
        &self,
        work: &Workgroup<'_>,
        memory: &mut SmMemory<'_>,
    ) -> Result<WorkgroupReport, ExecError> {
        InterpreterBackend.run_workgroup(work, memory)
    }

    fn run_workgroups(
        &self,
        run: &WorkgroupRun<'_>,
        memory: &mut SmMemory<'_>,
        progress: &mut RunProgress,
    ) -> Result<(), ExecError> {
        let mut id = run.first_workgroup_id;
        for offset in 0..run.count.div_ceil(2) {
            if offset > 0 {
                id = run.next_workgroup_id(id);
            }
            let report = self.run_workgroup(&run.workgroup(offset, id), memory)?;
            progress.complete(&report);
        }
        Ok(())
    }
}

#[test]
fn a_backend_that_returns_before_its_run_is_done_fails_the_launch() {
    let runtime = Runtime::with_backend(config(1, 64), Arc::new(GivesUpHalfway))
        .expect("valid configuration");
    let kernel = kernel(&runtime, FAULTS_IN_TWO_WORKGROUPS);
    let mut buffers = vec![zeros_u32(u64::from(GROUPS) * 32)];
    let err = runtime
        .launch(
            &kernel,
            [GROUPS, 1, 1],
            [32, 1, 1],
            &[999, 999],
            &mut buffers,
        )
        .expect_err("the backend skipped workgroups");
    match err {
        LaunchError::Panicked {
            workgroup, message, ..
        } => {
            // One SM's first run is a quarter of the grid, 0..50;
            // workgroup 25 is the first skipped.
            assert_eq!(workgroup, [25, 0, 0]);
            assert!(message.contains("after 25 of 50 workgroups"), "{message}");
        }
        other => panic!("expected a failed launch, got {other:?}"),
    }
}
