//! The execution mask through structured control flow (HARDWARE.md 13:
//! activeThreadsNV tracks divergence exactly and lanes reconverge right
//! after each construct), calls, returns, kills and partial warps.

mod interp_support;
use interp_support::*;

/// `out[k * 32 + lane]` for each lane of a full warp.
fn slot(out: &[u32], k: usize, lane: u32) -> u32 {
    out[k * 32 + lane as usize]
}

#[test]
fn if_else_masks_and_reconvergence() {
    let out = run1(
        "buffer @out[0]: u32
        kernel @main workgroup(32) {
          %lane = lane_id
          %a = shl %lane, 2
          %bit = and %lane, 1
          %odd = cmp.ne %bit, 0
          if %odd {
            %m1 = active_mask
            store.u32 @out, %a, %m1
          } else {
            %m2 = active_mask
            store.u32 @out, %a, %m2
          }
          %m3 = active_mask
          %a3 = add %a, 128
          store.u32 @out, %a3, %m3
        }",
        64,
    );
    for lane in 0..32 {
        let expected = if lane % 2 == 1 {
            0xaaaa_aaaa
        } else {
            0x5555_5555
        };
        assert_eq!(slot(&out, 0, lane), expected, "lane {lane}");
        assert_eq!(slot(&out, 1, lane), u32::MAX, "reconverged, lane {lane}");
    }
}

#[test]
fn else_if_chain_gives_each_branch_its_lanes() {
    let out = run1(
        "buffer @out[0]: u32
        kernel @main workgroup(32) {
          %lane = lane_id
          %a = shl %lane, 2
          %r = rem.u %lane, 3
          %c0 = cmp.eq %r, 0
          %c1 = cmp.eq %r, 1
          if %c0 {
            %m0 = active_mask
            store.u32 @out, %a, %m0
          } else if %c1 {
            %m1 = active_mask
            store.u32 @out, %a, %m1
          } else {
            %m2 = active_mask
            store.u32 @out, %a, %m2
          }
        }",
        32,
    );
    for lane in 0..32 {
        assert_eq!(
            out[lane as usize],
            lanes_where(|l| l % 3 == lane % 3),
            "lane {lane}"
        );
    }
}

#[test]
fn branch_with_no_lanes_is_skipped() {
    // Every lane takes the then branch; the else branch must not run at all
    // (it would store 0xdead for every lane if it ran with an empty mask).
    let out = run1(
        "buffer @out[0]: u32
        kernel @main workgroup(32) {
          %lane = lane_id
          %a = shl %lane, 2
          %yes = cmp.lt.u %lane, 100
          if %yes {
            store.u32 @out, %a, 1
          } else {
            store.u32 @out, 0, 0xdead
          }
        }",
        32,
    );
    assert_eq!(out, vec![1; 32]);
}

#[test]
fn loop_with_lane_dependent_trip_count() {
    // Lane l runs l iterations: in iteration k the lanes above k are active.
    let out = run1(
        "buffer @out[0]: u32
        kernel @main workgroup(32) {
          var $i: i32
          %lane = lane_id
          loop {
            %done = cmp.ge.u $i, %lane
            if %done {
              break
            }
            %m = active_mask
            %a = shl $i, 2
            store.u32 @out, %a, %m
            $i = add $i, 1
          }
          %after = active_mask
          store.u32 @out, 128, %after
          %a2 = shl %lane, 2
          %a3 = add %a2, 132
          store.u32 @out, %a3, $i
        }",
        65,
    );
    for (k, &mask) in out[..31].iter().enumerate() {
        assert_eq!(mask, u32::MAX << (k + 1), "iteration {k}");
    }
    assert_eq!(out[31], 0, "no lane runs a 32nd iteration");
    assert_eq!(out[32], u32::MAX, "all lanes reconverge after the loop");
    for lane in 0..32 {
        assert_eq!(out[33 + lane], lane as u32, "trip count of lane {lane}");
    }
}

#[test]
fn continue_skips_the_rest_of_the_iteration_only() {
    let out = run1(
        "buffer @out[0]: u32
        kernel @main workgroup(32) {
          var $i: i32
          %lane = lane_id
          %bit = and %lane, 1
          %odd = cmp.ne %bit, 0
          loop {
            $i = add $i, 1
            %stop = cmp.gt.s $i, 4
            if %stop {
              break
            }
            %top = active_mask
            %at = add $i, 8
            %at4 = shl %at, 2
            store.u32 @out, %at4, %top
            if %odd {
              continue
            }
            %m = active_mask
            %a = shl $i, 2
            store.u32 @out, %a, %m
          }
          %after = active_mask
          store.u32 @out, 0, %after
        }",
        16,
    );
    assert_eq!(out[0], u32::MAX);
    for i in 1..=4 {
        assert_eq!(out[i], 0x5555_5555, "after continue, iteration {i}");
        assert_eq!(
            out[8 + i],
            u32::MAX,
            "continued lanes rejoin, iteration {i}"
        );
    }
}

#[test]
fn break_in_inner_loop_leaves_only_the_inner_loop() {
    // The inner loop runs `lane % 4` times; the outer loop 3 times.
    let out = run1(
        "buffer @out[0]: u32
        kernel @main workgroup(32) {
          var $outer: i32
          var $total: i32
          %lane = lane_id
          %limit = and %lane, 3
          loop {
            %o_done = cmp.ge.s $outer, 3
            if %o_done {
              break
            }
            var $inner: i32
            $inner = mov 0
            loop {
              %i_done = cmp.ge.s $inner, %limit
              if %i_done {
                break
              }
              $inner = add $inner, 1
              $total = add $total, 1
            }
            %m = active_mask
            %a = shl $outer, 2
            store.u32 @out, %a, %m
            $outer = add $outer, 1
          }
          %a2 = shl %lane, 2
          %a3 = add %a2, 64
          store.u32 @out, %a3, $total
        }",
        48,
    );
    assert_eq!(
        &out[..3],
        &[u32::MAX; 3],
        "every outer iteration has every lane"
    );
    for lane in 0..32u32 {
        assert_eq!(out[16 + lane as usize], 3 * (lane % 4), "lane {lane}");
    }
}

#[test]
fn early_return_and_calls_inherit_the_callers_mask() {
    let out = run1(
        "buffer @out[0]: u32
        func @probe(%lane: i32) {
          %a = shl %lane, 2
          %in = active_mask
          store.u32 @out, %a, %in
          %small = cmp.lt.u %lane, 8
          if %small {
            return
          }
          %rest = active_mask
          %a2 = add %a, 128
          store.u32 @out, %a2, %rest
        }
        kernel @main workgroup(32) {
          %lane = lane_id
          %a = shl %lane, 2
          %low = cmp.lt.u %lane, 16
          if %low {
            call @probe(%lane)
            %back = active_mask
            %a3 = add %a, 256
            store.u32 @out, %a3, %back
          }
          %high = cmp.ge.u %lane, 24
          if %high {
            return
          }
          %m = active_mask
          %a4 = add %a, 384
          store.u32 @out, %a4, %m
        }",
        128,
    );
    for lane in 0..32 {
        let low = lane < 16;
        assert_eq!(
            slot(&out, 0, lane),
            if low { 0xffff } else { 0 },
            "call entry, lane {lane}"
        );
        let rest = (8..16).contains(&lane);
        assert_eq!(
            slot(&out, 1, lane),
            if rest { 0xff00 } else { 0 },
            "after return, lane {lane}"
        );
        assert_eq!(
            slot(&out, 2, lane),
            if low { 0xffff } else { 0 },
            "back in caller, lane {lane}"
        );
        assert_eq!(
            slot(&out, 3, lane),
            if lane < 24 { 0x00ff_ffff } else { 0 },
            "kernel return, lane {lane}"
        );
    }
}

#[test]
fn call_results_reach_every_lane_that_comes_back() {
    let out = run1(
        "buffer @out[0]: u32
        func @pick(%lane: i32) -> i32 {
          %small = cmp.lt.u %lane, 10
          if %small {
            %v = add %lane, 100
            return %v
          }
          %m = active_mask
          return %m
        }
        kernel @main workgroup(32) {
          %lane = lane_id
          %a = shl %lane, 2
          %r = call @pick(%lane)
          store.u32 @out, %a, %r
        }",
        32,
    );
    for lane in 0..32u32 {
        let expected = if lane < 10 { lane + 100 } else { 0xffff_fc00 };
        assert_eq!(out[lane as usize], expected, "lane {lane}");
    }
}

#[test]
fn call_result_assigned_to_a_variable_keeps_it_in_lanes_not_calling() {
    let out = run1(
        "buffer @out[0]: u32
        func @seven() -> i32 {
          return 7
        }
        kernel @main workgroup(32) {
          var $r: i32
          %lane = lane_id
          %a = shl %lane, 2
          $r = mov 3
          %even_bit = and %lane, 1
          %even = cmp.eq %even_bit, 0
          if %even {
            $r = call @seven()
          }
          store.u32 @out, %a, $r
        }",
        32,
    );
    for lane in 0..32u32 {
        assert_eq!(
            out[lane as usize],
            if lane % 2 == 0 { 7 } else { 3 },
            "lane {lane}"
        );
    }
}

#[test]
fn variables_and_private_arrays_are_zero_at_every_function_entry() {
    let out = run1(
        "buffer @out[0]: u32
        func @fresh(%lane: i32) -> (i32, i32) {
          var $c: i32
          private @p[16]
          $c = add $c, 1
          %old = load.u32 @p, 4
          %v = add %lane, 1
          store.u32 @p, 4, %v
          %again = load.u32 @p, 4
          %sum = add %old, %again
          return $c, %sum
        }
        kernel @main workgroup(32) {
          %lane = lane_id
          %a = shl %lane, 2
          %c1, %s1 = call @fresh(%lane)
          %c2, %s2 = call @fresh(%lane)
          %c = add %c1, %c2
          store.u32 @out, %a, %c
          %a2 = add %a, 128
          store.u32 @out, %a2, %s2
        }",
        64,
    );
    for lane in 0..32u32 {
        assert_eq!(
            slot(&out, 0, lane),
            2,
            "each call sees $c = 0 first, lane {lane}"
        );
        assert_eq!(
            slot(&out, 1, lane),
            lane + 1,
            "private array zero at entry and per lane, lane {lane}"
        );
    }
}

#[test]
fn kill_ends_lanes_for_the_rest_of_the_program() {
    let out = run1(
        "buffer @out[0]: u32
        func @maybe_kill(%lane: i32) -> i32 {
          %b = and %lane, 3
          %k = cmp.eq %b, 3
          if %k {
            kill
          }
          %m = active_mask
          return %m
        }
        kernel @main workgroup(32) {
          %lane = lane_id
          %a = shl %lane, 2
          %inner = call @maybe_kill(%lane)
          %outer = active_mask
          store.u32 @out, %a, %outer
          %a2 = add %a, 128
          store.u32 @out, %a2, %inner
        }",
        64,
    );
    for lane in 0..32u32 {
        let alive = lane % 4 != 3;
        assert_eq!(
            slot(&out, 0, lane),
            if alive { 0x7777_7777 } else { 0 },
            "lane {lane}"
        );
        assert_eq!(
            slot(&out, 1, lane),
            if alive { 0x7777_7777 } else { 0 },
            "lane {lane}"
        );
    }
}

#[test]
fn kill_inside_a_loop_ends_the_loop_for_those_lanes() {
    let out = run1(
        "buffer @out[0]: u32
        kernel @main workgroup(32) {
          var $i: i32
          %lane = lane_id
          loop {
            %gone = cmp.eq $i, %lane
            if %gone {
              kill
            }
            %m = active_mask
            %a = shl $i, 2
            store.u32 @out, %a, %m
            $i = add $i, 1
            %stop = cmp.ge.s $i, 4
            if %stop {
              break
            }
          }
          %after = active_mask
          store.u32 @out, 64, %after
        }",
        17,
    );
    for (k, &mask) in out[..4].iter().enumerate() {
        assert_eq!(mask, u32::MAX << (k + 1), "iteration {k}");
    }
    assert_eq!(out[16], u32::MAX << 4);
}

#[test]
fn partial_warps_report_only_existing_lanes() {
    // HARDWARE.md 13: 0x0000ffff for the second warp of a 48-wide group,
    // 0x000000ff for 40.
    for (size, second) in [(48u32, 0x0000_ffffu32), (40, 0x0000_00ff)] {
        let src = format!(
            "buffer @out[0]: u32
            kernel @main workgroup({size}) {{
              %i = local_index
              %a = shl %i, 2
              %m = active_mask
              store.u32 @out, %a, %m
              %t = mov true
              %b = ballot %t
              %a2 = add %a, 256
              store.u32 @out, %a2, %b
            }}"
        );
        let out = run1(&src, 128);
        for i in 0..size as usize {
            let expected = if i < 32 { u32::MAX } else { second };
            assert_eq!(out[i], expected, "size {size}, index {i}");
            assert_eq!(out[64 + i], expected, "ballot, size {size}, index {i}");
        }
        assert!(
            out[size as usize..64].iter().all(|&w| w == 0),
            "missing lanes never run, size {size}"
        );
    }
}

#[test]
fn ordered_section_runs_equal_keys_in_lane_order() {
    // Each lane appends its lane id to the list of its key (lane % 4) with a
    // plain load/add/store: correct only if equal keys run one at a time in
    // ascending lane order.
    let out = run1(
        "buffer @out[0]: u32
        kernel @main workgroup(32) {
          %lane = lane_id
          %key = and %lane, 3
          %count_at = shl %key, 2
          ordered %key {
            %n = load.u32 @out, %count_at
            %n1 = add %n, 1
            store.u32 @out, %count_at, %n1
            %row = shl %key, 3
            %idx = add %row, %n
            %idx16 = add %idx, 16
            %slot = shl %idx16, 2
            store.u32 @out, %slot, %lane
            %m = active_mask
            %m_at = add %n, 64
            %m_slot = shl %m_at, 2
            store.u32 @out, %m_slot, %m
          }
          %after = active_mask
          store.u32 @out, 16, %after
        }",
        80,
    );
    assert_eq!(&out[0..4], &[8, 8, 8, 8]);
    assert_eq!(out[4], u32::MAX, "all lanes continue together");
    for key in 0..4u32 {
        for n in 0..8u32 {
            assert_eq!(
                out[(16 + key * 8 + n) as usize],
                key + 4 * n,
                "key {key}, position {n}"
            );
        }
    }
    for round in 0..8 {
        assert_eq!(
            out[64 + round],
            0xf << (4 * round),
            "round {round} has one lane per key"
        );
    }
}

#[test]
fn ordered_section_with_distinct_keys_runs_once() {
    let out = run1(
        "buffer @out[0]: u32
        kernel @main workgroup(32) {
          %lane = lane_id
          ordered %lane {
            %n = load.u32 @out, 0
            %n1 = add %n, 1
            store.u32 @out, 0, %n1
          }
        }",
        1,
    );
    // One round: all 32 lanes load 0 and store 1.
    assert_eq!(out[0], 1);
}
