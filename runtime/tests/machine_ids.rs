//! Warp ids, SM ids and partial warps on the runtime (docs/semantics.md,
//! "Workgroups, warps, lanes and IDs").

mod support;
use std::collections::BTreeSet;
use std::time::Duration;
use support::*;
use warpjit_runtime::{Runtime, RuntimeConfig};

/// Each invocation records its ids in an 8-word row of `@ids`, and counts
/// itself in `@ran`.
const RECORD_IDS: &str = "
buffer @ids[0]: u32
buffer @ran[1]: u32
kernel @main {
  %gid = global_id.x
  %row = shl %gid, 5
  %local = local_index
  %warp = warp_id
  %sm = sm_id
  %lane = lane_id
  %active = active_mask
  %slots = warps_per_sm
  %sms = sm_count
  %size = warp_size
  store.u32 @ids, %row, %local
  %a1 = add %row, 4
  store.u32 @ids, %a1, %warp
  %a2 = add %row, 8
  store.u32 @ids, %a2, %sm
  %a3 = add %row, 12
  store.u32 @ids, %a3, %lane
  %a4 = add %row, 16
  store.u32 @ids, %a4, %active
  %a5 = add %row, 20
  store.u32 @ids, %a5, %slots
  %a6 = add %row, 24
  store.u32 @ids, %a6, %sms
  %a7 = add %row, 28
  store.u32 @ids, %a7, %size
  %counted = atom.add.u32 @ran, 0, 1
}";

#[test]
fn warp_ids_are_slots_sm_ids_are_uniform_and_partial_warps_lack_lanes() {
    const GROUPS: u32 = 40;
    const THREADS: u32 = 48;
    // Two warp slots per SM: exactly a 48-invocation workgroup's warps.
    let runtime = Runtime::new(config(3, 2)).expect("valid configuration");
    let kernel = kernel(&runtime, RECORD_IDS);
    let invocations = u64::from(GROUPS * THREADS);
    let mut buffers = vec![zeros_u32(invocations * 8), zeros_u32(1)];
    let report = run(
        &runtime,
        &kernel,
        [GROUPS, 1, 1],
        [THREADS, 1, 1],
        &[],
        &mut buffers,
    );

    // The 16 missing lanes of each second warp never ran.
    assert_eq!(buffers[1].to_vec::<u32>(), [GROUPS * THREADS]);
    assert_eq!(report.workgroups, u64::from(GROUPS));
    let ids = buffers[0].to_vec::<u32>();
    let mut workgroups_seen_on = vec![0u64; 3];
    for group in 0..GROUPS {
        let rows: Vec<&[u32]> = (group * THREADS..(group + 1) * THREADS)
            .map(|gid| &ids[gid as usize * 8..gid as usize * 8 + 8])
            .collect();
        let sm = rows[0][2];
        assert!(sm < 3, "sm_id {sm} of workgroup {group}");
        workgroups_seen_on[sm as usize] += 1;
        for row in &rows {
            let [local, warp, row_sm, lane, active, slots, sms, size] =
                <[u32; 8]>::try_from(*row).expect("8 words");
            // One workgroup at a time per SM: its warps take slots 0, 1.
            assert_eq!(warp, local / 32, "warp_id of invocation {local}");
            assert_eq!(row_sm, sm, "sm_id is uniform in workgroup {group}");
            assert_eq!(lane, local % 32);
            // HARDWARE.md 13: the partial warp's mask has its 16 lanes only.
            assert_eq!(active, if warp == 0 { u32::MAX } else { 0xffff });
            assert_eq!((slots, sms, size), (2, 3, 32));
        }
    }
    // What the kernel saw agrees with what the runtime reports.
    assert_eq!(report.workgroups_per_sm, workgroups_seen_on);
}

#[test]
fn every_sm_id_occurs_when_each_sm_holds_one_workgroup() {
    // The workgroups wait for each other, so with as many workgroups as SMs
    // each SM must take one: the recorded sm_ids are exactly 0..SMS.
    const SMS: u32 = 5;
    let source = "
buffer @sm_of[0]: u32
buffer @arrived[1]: u32
kernel @main {
  %local = local_index
  %leader = cmp.eq %local, 0
  if %leader {
    %checked_in = atom.add.u32 @arrived, 0, 1
  }
  %groups = num_workgroups.x
  loop {
    %arrived_now = load.u32 @arrived, 0
    %everyone = cmp.ge.u %arrived_now, %groups
    if %everyone {
      break
    }
  }
  if %leader {
    %wg = workgroup_id.x
    %addr = shl %wg, 2
    %sm = sm_id
    store.u32 @sm_of, %addr, %sm
  }
}";
    let runtime = Runtime::new(RuntimeConfig {
        watchdog: Some(Duration::from_secs(600)),
        ..config(SMS, 64)
    })
    .expect("valid configuration");
    let kernel = kernel(&runtime, source);
    let mut buffers = vec![zeros_u32(u64::from(SMS)), zeros_u32(1)];
    let report = run(
        &runtime,
        &kernel,
        [SMS, 1, 1],
        [64, 1, 1],
        &[],
        &mut buffers,
    );
    let seen: BTreeSet<u32> = buffers[0].to_vec::<u32>().into_iter().collect();
    assert_eq!(seen, (0..SMS).collect());
    assert_eq!(report.workgroups_per_sm, vec![1; SMS as usize]);
    assert_eq!(report.sms_used(), SMS);
}

#[test]
fn a_workgroup_may_use_every_warp_slot_but_not_more() {
    let runtime = Runtime::new(config(2, 3)).expect("valid configuration");
    let kernel = kernel(&runtime, RECORD_IDS);
    // 96 invocations = 3 warps: slots 0, 1, 2.
    let mut buffers = vec![zeros_u32(96 * 8), zeros_u32(1)];
    run(&runtime, &kernel, [1, 1, 1], [96, 1, 1], &[], &mut buffers);
    let ids = buffers[0].to_vec::<u32>();
    let warps: BTreeSet<u32> = ids.chunks(8).map(|row| row[1]).collect();
    assert_eq!(warps, BTreeSet::from([0, 1, 2]));
    // 97 invocations need a fourth warp.
    let mut buffers = vec![zeros_u32(97 * 8), zeros_u32(1)];
    let err = runtime
        .launch(&kernel, [1, 1, 1], [97, 1, 1], &[], &mut buffers)
        .expect_err("4 warps do not fit 3 slots");
    assert!(
        err.to_string()
            .contains("needs 4 warps but an SM has 3 warp slots"),
        "{err}"
    );
    assert_eq!(buffers[1].to_vec::<u32>(), [0], "nothing ran");
}
