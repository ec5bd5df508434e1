//! Warp intrinsics under divergence: ballots, guarded votes (SASS_VOTE),
//! TGALL/TGANY/TGEQ (NV_shader_thread_group, HARDWARE.md 10-12), shuffles
//! (HARDWARE.md 1-9), quad swizzles (HARDWARE.md 15-16), derivatives and
//! helper lanes (HARDWARE.md 17).

mod interp_support;
use interp_support::*;

fn slot(out: &[u32], k: usize, lane: u32) -> u32 {
    out[k * 32 + lane as usize]
}

#[test]
fn ballot_never_has_bits_outside_the_active_mask() {
    let out = run1(
        "buffer @out[0]: u32
        kernel @main workgroup(32) {
          %lane = lane_id
          %a = shl %lane, 2
          %r = rem.u %lane, 3
          %third = cmp.eq %r, 0
          %bit = and %lane, 1
          %odd = cmp.ne %bit, 0
          if %third {
            %m = active_mask
            %t = mov true
            %all = ballot %t
            %some = ballot %odd
            store.u32 @out, %a, %m
            %a1 = add %a, 128
            store.u32 @out, %a1, %all
            %a2 = add %a, 256
            store.u32 @out, %a2, %some
          }
        }",
        96,
    );
    let third = lanes_where(|l| l % 3 == 0);
    for lane in (0..32).filter(|l| l % 3 == 0) {
        assert_eq!(slot(&out, 0, lane), third);
        assert_eq!(slot(&out, 1, lane), third);
        assert_eq!(slot(&out, 2, lane), third & 0xaaaa_aaaa);
    }
}

#[test]
fn guarded_vote_counts_only_participants() {
    // SASS_VOTE: inactive and predicated-off lanes contribute 0 to the
    // ballot; VOTE.ALL can be true while the ballot is neither 0 nor all
    // ones, and so can VOTE.EQ.
    let out = run1(
        "buffer @out[0]: u32
        kernel @main workgroup(32) {
          %lane = lane_id
          %a = shl %lane, 2
          %p = cmp.lt.u %lane, 16
          %g = cmp.lt.u %lane, 8
          %all, %ballot = vote.all %p, guard %g
          %eq = vote.eq %p, guard %g
          %any = vote.any %p, guard %g
          %all_i = select %all, 1:i32, 0:i32
          %eq_i = select %eq, 1:i32, 0:i32
          %any_i = select %any, 1:i32, 0:i32
          store.u32 @out, %a, %all_i
          %a1 = add %a, 128
          store.u32 @out, %a1, %ballot
          %a2 = add %a, 256
          store.u32 @out, %a2, %eq_i
          %a3 = add %a, 384
          store.u32 @out, %a3, %any_i
          %uall = vote.all %p
          %uall_i = select %uall, 1:i32, 0:i32
          %a4 = add %a, 512
          store.u32 @out, %a4, %uall_i
        }",
        160,
    );
    for lane in 0..32 {
        let part = lane < 8;
        // Non-participating lanes read 0 / false in SSA results.
        assert_eq!(slot(&out, 0, lane), part as u32, "vote.all, lane {lane}");
        assert_eq!(
            slot(&out, 1, lane),
            if part { 0xff } else { 0 },
            "ballot, lane {lane}"
        );
        assert_eq!(slot(&out, 2, lane), part as u32, "vote.eq, lane {lane}");
        assert_eq!(slot(&out, 3, lane), part as u32, "vote.any, lane {lane}");
        assert_eq!(slot(&out, 4, lane), 0, "unguarded vote.all, lane {lane}");
    }
}

#[test]
fn guarded_vote_keeps_variables_of_non_participants() {
    let out = run1(
        "buffer @out[0]: u32
        kernel @main workgroup(32) {
          var $v: bool
          var $b: i32
          %lane = lane_id
          %a = shl %lane, 2
          $v = mov true
          $b = mov 77
          %g = cmp.lt.u %lane, 8
          %never = cmp.eq %lane, 99
          $v, $b = vote.any %never, guard %g
          %v_i = select $v, 1:i32, 0:i32
          store.u32 @out, %a, %v_i
          %a1 = add %a, 128
          store.u32 @out, %a1, $b
        }",
        64,
    );
    for lane in 0..32 {
        let part = lane < 8;
        assert_eq!(slot(&out, 0, lane), if part { 0 } else { 1 }, "lane {lane}");
        assert_eq!(
            slot(&out, 1, lane),
            if part { 0 } else { 77 },
            "lane {lane}"
        );
    }
}

#[test]
fn vote_in_divergent_code_ignores_inactive_lanes() {
    let out = run1(
        "buffer @out[0]: u32
        kernel @main workgroup(32) {
          %lane = lane_id
          %a = shl %lane, 2
          %inside = cmp.lt.u %lane, 20
          %p = cmp.ge.u %lane, 20
          %q = cmp.ge.u %lane, 16
          if %inside {
            %any, %ballot = vote.any %p
            %eq = vote.eq %p
            %qall, %qballot = vote.all %q
            %any_i = select %any, 1:i32, 0:i32
            %eq_i = select %eq, 1:i32, 0:i32
            %qall_i = select %qall, 1:i32, 0:i32
            store.u32 @out, %a, %any_i
            %a1 = add %a, 128
            store.u32 @out, %a1, %ballot
            %a2 = add %a, 256
            store.u32 @out, %a2, %eq_i
            %a3 = add %a, 384
            store.u32 @out, %a3, %qall_i
            %a4 = add %a, 512
            store.u32 @out, %a4, %qballot
          }
        }",
        160,
    );
    for lane in 0..20 {
        assert_eq!(slot(&out, 0, lane), 0, "no active lane has p");
        assert_eq!(slot(&out, 1, lane), 0, "inactive lanes contribute 0");
        assert_eq!(slot(&out, 2, lane), 1, "all active lanes agree");
        assert_eq!(slot(&out, 3, lane), 0);
        assert_eq!(slot(&out, 4, lane), 0x000f_0000);
    }
}

#[test]
fn thread_group_votes_in_divergent_code() {
    // HARDWARE.md 10-11: TRUE is -1 for integers, only active lanes count,
    // TGEQ compares zero/non-zero only.
    let out = run1(
        "buffer @out[0]: u32
        kernel @main workgroup(32) {
          %lane = lane_id
          %a = shl %lane, 2
          %bit = and %lane, 1
          %odd = cmp.ne %bit, 0
          if %odd {
            %eq = tgeq %bit
            %all = tgall %bit
            %tb = tgballot %bit
            store.u32 @out, %a, %eq
            %a1 = add %a, 128
            store.u32 @out, %a1, %all
            %a2 = add %a, 256
            store.u32 @out, %a2, %tb
          }
          %eq_mixed = tgeq %bit
          %all_mixed = tgall %bit
          %any_mixed = tgany %bit
          %distinct = add %lane, 1
          %eq_distinct = tgeq %distinct
          %a3 = add %a, 384
          store.u32 @out, %a3, %eq_mixed
          %a4 = add %a, 512
          store.u32 @out, %a4, %all_mixed
          %a5 = add %a, 640
          store.u32 @out, %a5, %any_mixed
          %a6 = add %a, 768
          store.u32 @out, %a6, %eq_distinct
        }",
        224,
    );
    for lane in 0..32 {
        if lane % 2 == 1 {
            assert_eq!(slot(&out, 0, lane), u32::MAX, "TGEQ inside IF odd");
            assert_eq!(slot(&out, 1, lane), u32::MAX, "TGALL inside IF odd");
            assert_eq!(slot(&out, 2, lane), 0xaaaa_aaaa);
        } else {
            assert_eq!(slot(&out, 0, lane), 0, "even lanes did not run");
        }
        assert_eq!(slot(&out, 3, lane), 0, "TGEQ on mixed lanes");
        assert_eq!(slot(&out, 4, lane), 0);
        assert_eq!(slot(&out, 5, lane), u32::MAX);
        assert_eq!(
            slot(&out, 6, lane),
            u32::MAX,
            "HARDWARE.md 11: lane+1 all non-zero"
        );
    }
}

#[test]
fn float_thread_group_votes_treat_nan_zero_and_denormals_as_zero() {
    // HARDWARE.md 12: with .F, NaN, +-0 and denormals count as zero; TRUE is 1.0.
    let out = run1(
        "buffer @out[0]: u32
        kernel @main workgroup(32) {
          %lane = lane_id
          %a = shl %lane, 2
          %r = rem.u %lane, 3
          %is0 = cmp.eq %r, 0
          %is1 = cmp.eq %r, 1
          %nan = mov 0x7fc00000:f32
          %den = mov 0x00000001:f32
          %nzero = mov -0.0:f32
          %zs = select %is0, %nan, %den
          %z = select %is1, %nzero, %zs
          %any = tgany %z
          %eq = tgeq %z
          %tb = tgballot %z
          %two = mov 2.5:f32
          %all = tgall %two
          store.f32 @out, %a, %any
          %a1 = add %a, 128
          store.f32 @out, %a1, %eq
          %a2 = add %a, 256
          store.u32 @out, %a2, %tb
          %a3 = add %a, 384
          store.f32 @out, %a3, %all
          %ibits = bitcast.i32 %z
          %iany = tgany %ibits
          %a4 = add %a, 512
          store.u32 @out, %a4, %iany
        }",
        160,
    );
    for lane in 0..32 {
        assert_eq!(slot(&out, 0, lane), 0, "TGANY.F sees only zeros");
        assert_eq!(slot(&out, 1, lane), 0x3f80_0000, "TGEQ.F is 1.0");
        assert_eq!(slot(&out, 2, lane), 0);
        assert_eq!(slot(&out, 3, lane), 0x3f80_0000, "TGALL.F of 2.5 is 1.0");
        assert_eq!(
            slot(&out, 4, lane),
            u32::MAX,
            "the same bits are non-zero as integers"
        );
    }
}

#[test]
fn shuffle_basics_full_warp() {
    let out = run1(
        "buffer @out[0]: u32
        kernel @main workgroup(32) {
          %lane = lane_id
          %a = shl %lane, 2
          %m10 = mul %lane, 10
          %v = add %m10, 1000
          %bcast = shuffle.idx %v, 2, width 32
          %up, %up_ok = shuffle.up %v, 1, width 32
          %x, %x_ok = shuffle.xor %v, 1, mask 0x1f
          %d, %d_ok = shuffle.down %v, 4, width 8
          %up_i = select %up_ok, 1:i32, 0:i32
          %d_i = select %d_ok, 1:i32, 0:i32
          store.u32 @out, %a, %bcast
          %a1 = add %a, 128
          store.u32 @out, %a1, %up
          %a2 = add %a, 256
          store.u32 @out, %a2, %up_i
          %a3 = add %a, 384
          store.u32 @out, %a3, %x
          %a4 = add %a, 512
          store.u32 @out, %a4, %d
          %a5 = add %a, 640
          store.u32 @out, %a5, %d_i
        }",
        192,
    );
    let v = |l: u32| l * 10 + 1000;
    for lane in 0..32 {
        assert_eq!(slot(&out, 0, lane), v(2));
        // HARDWARE.md 1: not valid = own value, valid = 0.
        assert_eq!(
            slot(&out, 1, lane),
            if lane == 0 { v(0) } else { v(lane - 1) }
        );
        assert_eq!(slot(&out, 2, lane), (lane != 0) as u32);
        assert_eq!(slot(&out, 3, lane), v(lane ^ 1));
        let in_segment = lane % 8 + 4 < 8;
        assert_eq!(
            slot(&out, 4, lane),
            if in_segment { v(lane + 4) } else { v(lane) }
        );
        assert_eq!(slot(&out, 5, lane), in_segment as u32);
    }
}

#[test]
fn shuffle_from_inactive_lane_gives_zero_and_valid() {
    // HARDWARE.md 7: a valid source lane that is inactive reads 0, valid = 1.
    let out = run1(
        "buffer @out[0]: u32
        kernel @main workgroup(32) {
          %lane = lane_id
          %a = shl %lane, 2
          %m10 = mul %lane, 10
          %v = add %m10, 1000
          %low = cmp.lt.u %lane, 16
          if %low {
            %d, %ok = shuffle.down %v, 8, width 32
            %ok_i = select %ok, 1:i32, 0:i32
            store.u32 @out, %a, %d
            %a1 = add %a, 128
            store.u32 @out, %a1, %ok_i
          }
        }",
        64,
    );
    for lane in 0..16 {
        let expected = if lane < 8 { (lane + 8) * 10 + 1000 } else { 0 };
        assert_eq!(slot(&out, 0, lane), expected, "lane {lane}");
        assert_eq!(slot(&out, 1, lane), 1, "lane {lane}");
    }
}

#[test]
fn shuffle_in_partial_warp() {
    // HARDWARE.md 9: 48-wide group; in the half-full warp, shuffle down by
    // 16 reads missing lanes (0, valid), and index 35 acts as 3.
    let r = run(
        "buffer @out[0]: u32
        kernel @main workgroup(48) {
          %i = local_index
          %a = shl %i, 2
          %m10 = mul %i, 10
          %v = add %m10, 1000
          %d, %ok = shuffle.down %v, 16, width 32
          %ok_i = select %ok, 1:i32, 0:i32
          %s = shuffle.idx %v, 35, width 32
          store.u32 @out, %a, %d
          %a1 = add %a, 256
          store.u32 @out, %a1, %ok_i
          %a2 = add %a, 512
          store.u32 @out, %a2, %s
        }",
        [1, 1, 1],
        &[],
        vec![words(192, 0)],
    );
    let out = r.u32s(0);
    let v = |i: u32| i * 10 + 1000;
    for i in 32..48u32 {
        assert_eq!(out[i as usize], 0, "index {i}");
        assert_eq!(out[64 + i as usize], 1, "index {i}");
        assert_eq!(out[128 + i as usize], v(35), "index {i}: lane 3 of warp 1");
    }
    for i in 0..32u32 {
        let d = if i < 16 { v(i + 16) } else { v(i) };
        assert_eq!(out[i as usize], d, "index {i}");
        assert_eq!(out[128 + i as usize], v(3), "index {i}");
    }
}

#[test]
fn shuffle_moves_bool_and_float_data() {
    let out = run1(
        "buffer @out[0]: u32
        kernel @main workgroup(32) {
          %lane = lane_id
          %a = shl %lane, 2
          %bit = and %lane, 1
          %odd = cmp.ne %bit, 0
          %b = shuffle.xor %odd, 1, width 32
          %b_i = select %b, 1:i32, 0:i32
          store.u32 @out, %a, %b_i
          %f = cvt.f32.u32 %lane
          %g = shuffle.idx %f, 31, width 32
          %a1 = add %a, 128
          store.f32 @out, %a1, %g
        }",
        64,
    );
    for lane in 0..32 {
        assert_eq!(slot(&out, 0, lane), ((lane ^ 1) & 1));
        assert_eq!(slot(&out, 1, lane), 31.0f32.to_bits());
    }
}

#[test]
fn quad_swizzles_in_partial_quads() {
    // HARDWARE.md 16: members 0 and 3 active: quad.0 gives member 0's value
    // to both, quad.x/quad.y give 0, and that 0 is exactly 0.0 even with an
    // add operand.
    let out = run1(
        "buffer @out[0]: u32
        kernel @main workgroup(32) {
          %lane = lane_id
          %a = shl %lane, 2
          %member = and %lane, 3
          %e0 = cmp.eq %member, 0
          %e3 = cmp.eq %member, 3
          %sel = or %e0, %e3
          %fl = cvt.f32.u32 %lane
          %v = add %fl, 1.0
          %five = mov 5.0:f32
          if %sel {
            %q0 = quad.0 %v
            %qx = quad.x %v
            %qy = quad.y %v, %five
            %q3a = quad.3 %v, %five
            store.f32 @out, %a, %q0
            %a1 = add %a, 128
            store.f32 @out, %a1, %qx
            %a2 = add %a, 256
            store.f32 @out, %a2, %qy
            %a3 = add %a, 384
            store.f32 @out, %a3, %q3a
          }
          %f1 = quad.1 %v
          %fx = quad.x %v, %five
          %a4 = add %a, 512
          store.f32 @out, %a4, %f1
          %a5 = add %a, 640
          store.f32 @out, %a5, %fx
        }",
        192,
    );
    let v = |l: u32| l as f32 + 1.0;
    for lane in 0..32 {
        let base = lane & !3;
        if lane % 4 == 0 || lane % 4 == 3 {
            assert_eq!(slot(&out, 0, lane), v(base).to_bits(), "lane {lane}");
            assert_eq!(slot(&out, 1, lane), 0, "lane {lane}");
            assert_eq!(
                slot(&out, 2, lane),
                0,
                "exactly 0.0, add not applied, lane {lane}"
            );
            assert_eq!(
                slot(&out, 3, lane),
                (v(base + 3) + 5.0).to_bits(),
                "lane {lane}"
            );
        }
        assert_eq!(slot(&out, 4, lane), v(base + 1).to_bits(), "lane {lane}");
        assert_eq!(
            slot(&out, 5, lane),
            (v(lane ^ 1) + 5.0).to_bits(),
            "lane {lane}"
        );
    }
}

#[test]
fn derivatives_fine_coarse_and_partial_quads() {
    let out = run1(
        "buffer @out[0]: u32
        kernel @main workgroup(32) {
          %lane = lane_id
          %a = shl %lane, 2
          %sq = mul %lane, %lane
          %v = cvt.f32.u32 %sq
          %dxf = ddx.fine %v
          %dyf = ddy.fine %v
          %dxc = ddx.coarse %v
          %dyc = ddy.coarse %v
          store.f32 @out, %a, %dxf
          %a1 = add %a, 128
          store.f32 @out, %a1, %dyf
          %a2 = add %a, 256
          store.f32 @out, %a2, %dxc
          %a3 = add %a, 384
          store.f32 @out, %a3, %dyc
          %member = and %lane, 3
          %top = cmp.lt.u %member, 2
          if %top {
            %pxf = ddx.fine %v
            %pyf = ddy.fine %v
            %pyc = ddy.coarse %v
            %a4 = add %a, 512
            store.f32 @out, %a4, %pxf
            %a5 = add %a, 640
            store.f32 @out, %a5, %pyf
            %a6 = add %a, 768
            store.f32 @out, %a6, %pyc
          }
        }",
        224,
    );
    let v = |l: u32| (l * l) as f32;
    for lane in 0..32 {
        let q = lane & !3;
        let m = lane & 3;
        let dxf = v(q | m | 1) - v(q | (m & !1));
        let dyf = v(q | m | 2) - v(q | (m & !2));
        assert_eq!(slot(&out, 0, lane), dxf.to_bits(), "ddx.fine lane {lane}");
        assert_eq!(slot(&out, 1, lane), dyf.to_bits(), "ddy.fine lane {lane}");
        assert_eq!(
            slot(&out, 2, lane),
            (v(q + 1) - v(q)).to_bits(),
            "ddx.coarse lane {lane}"
        );
        assert_eq!(
            slot(&out, 3, lane),
            (v(q + 2) - v(q)).to_bits(),
            "ddy.coarse lane {lane}"
        );
        if m < 2 {
            assert_eq!(
                slot(&out, 4, lane),
                (v(q + 1) - v(q)).to_bits(),
                "row complete, lane {lane}"
            );
            assert_eq!(slot(&out, 5, lane), 0, "column incomplete, lane {lane}");
            assert_eq!(slot(&out, 6, lane), 0, "member 2 inactive, lane {lane}");
        }
    }
}

#[test]
fn demoted_lanes_stay_active_but_do_not_store_or_update() {
    // HARDWARE.md 17: helpers are counted by activeThreadsNV/ballot, report
    // is_helper, and are read by neighbours; their stores and atomics are dropped.
    let r = run(
        "buffer @out[0]: u32
        buffer @count[1]: u32
        kernel @main workgroup(32) {
          %lane = lane_id
          %a = shl %lane, 2
          %bit = and %lane, 1
          %odd = cmp.ne %bit, 0
          if %odd {
            demote
          }
          %m = active_mask
          %h = is_helper
          %hb = ballot %h
          %loaded = load.u32 @out, %a
          %from_neighbour = shuffle.xor %loaded, 1, width 32
          %old = atom.add.u32 @count, 0, 1
          store.u32 @out, %a, %m
          %a1 = add %a, 128
          store.u32 @out, %a1, %hb
          %a2 = add %a, 256
          store.u32 @out, %a2, %from_neighbour
          %a3 = add %a, 384
          store.u32 @out, %a3, %old
        }",
        [1, 1, 1],
        &[],
        vec![
            bytes_of_u32s(&(0..128).map(|i| 0xdead_0000 | i).collect::<Vec<u32>>()),
            words(1, 0),
        ],
    );
    let out = r.u32s(0);
    for lane in 0..32u32 {
        let l = lane as usize;
        if lane % 2 == 0 {
            assert_eq!(out[l], u32::MAX, "helpers are active");
            assert_eq!(out[32 + l], 0xaaaa_aaaa, "ballot of is_helper");
            assert_eq!(out[64 + l], 0xdead_0000 | (lane + 1), "helper loads happen");
            assert_eq!(
                out[96 + l],
                lane / 2,
                "atomics in lane order, helpers skipped"
            );
        } else {
            for k in 0..4 {
                let i = k * 32 + l;
                assert_eq!(
                    out[i],
                    0xdead_0000 | i as u32,
                    "helper store dropped at {i}"
                );
            }
        }
    }
    assert_eq!(r.u32s(1), vec![16]);
}
