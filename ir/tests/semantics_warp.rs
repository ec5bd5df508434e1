//! Lane masks, votes (TG* and SASS VOTE), quad swizzle and derivative
//! sources: NV_shader_thread_group, SASS_VOTE and HARDWARE.md 10-16.

use warpjit_ir::semantics::{
    derivative_lanes, lane_mask, quad_source, tg_nonzero, tg_result, tg_true, vote_result,
};
use warpjit_ir::{Axis, Builtin, QuadSel, TgOp, Type, VoteOp};

#[test]
fn lane_masks_for_every_lane() {
    for lane in 0..32u32 {
        // The spec's words, computed in 64 bits so no shift overflows.
        let below = (1u64 << lane) - 1;
        let upto = (1u64 << (lane + 1)) - 1;
        let word = 0xffff_ffffu64;
        assert_eq!(lane_mask(Builtin::LaneMaskEq, lane) as u64, 1 << lane);
        assert_eq!(lane_mask(Builtin::LaneMaskLt, lane) as u64, below);
        assert_eq!(lane_mask(Builtin::LaneMaskLe, lane) as u64, upto);
        assert_eq!(lane_mask(Builtin::LaneMaskGt, lane) as u64, word & !upto);
        assert_eq!(lane_mask(Builtin::LaneMaskGe, lane) as u64, word & !below);
    }
}

#[test]
fn lane_mask_ends_of_the_warp() {
    assert_eq!(lane_mask(Builtin::LaneMaskGt, 31), 0);
    assert_eq!(lane_mask(Builtin::LaneMaskLe, 31), 0xffff_ffff);
    assert_eq!(lane_mask(Builtin::LaneMaskGe, 31), 0x8000_0000);
    assert_eq!(lane_mask(Builtin::LaneMaskLt, 31), 0x7fff_ffff);
    assert_eq!(lane_mask(Builtin::LaneMaskGe, 0), 0xffff_ffff);
    assert_eq!(lane_mask(Builtin::LaneMaskLt, 0), 0);
    assert_eq!(lane_mask(Builtin::LaneMaskGt, 0), 0xffff_fffe);
    assert_eq!(lane_mask(Builtin::LaneMaskLe, 0), 1);
    assert_eq!(lane_mask(Builtin::LaneId, 7), 0);
}

#[test]
fn tg_true_values_hardware_10() {
    assert_eq!(tg_true(Type::Bool), 1);
    assert_eq!(tg_true(Type::I32), 0xffff_ffff);
    assert_eq!(tg_true(Type::F32), 0x3f80_0000);
    assert_eq!(tg_true(Type::F64), 1.0f64.to_bits());
    assert_eq!(tg_true(Type::I64), u64::MAX);
}

#[test]
fn f32_nan_denormal_and_zeros_are_zero_for_tg_hardware_12() {
    for zero_like in [
        0x7fc0_0000u64,
        0xffff_ffff,
        0x0000_0001,
        0x8000_0000,
        0,
        0x807f_ffff,
    ] {
        assert!(!tg_nonzero(Type::F32, zero_like), "{zero_like:#x}");
        // The same bits as an integer are non-zero (except 0).
        assert_eq!(tg_nonzero(Type::I32, zero_like), zero_like != 0);
    }
    for nonzero in [
        0x0080_0000u64,
        0x3f80_0000,
        0xbf80_0000,
        0x7f80_0000,
        0xff80_0000,
    ] {
        assert!(tg_nonzero(Type::F32, nonzero), "{nonzero:#x}");
    }
    assert!(tg_nonzero(Type::Bool, 1));
    assert!(!tg_nonzero(Type::Bool, 0));
    assert!(!tg_nonzero(Type::F64, 1));
    assert!(!tg_nonzero(Type::F64, f64::NAN.to_bits()));
    assert!(tg_nonzero(Type::F64, f64::MIN_POSITIVE.to_bits()));
}

#[test]
fn tg_truth_rules() {
    let all = u32::MAX;
    // TGEQ compares zero/non-zero only: lane + 1 differs per lane but is
    // non-zero everywhere (HARDWARE.md 11).
    assert_eq!(tg_result(TgOp::Eq, Type::I32, all, all), 0xffff_ffff);
    assert_eq!(tg_result(TgOp::Eq, Type::I32, all, 0), 0xffff_ffff);
    assert_eq!(tg_result(TgOp::Eq, Type::I32, all, 1), 0);
    assert_eq!(tg_result(TgOp::All, Type::F32, all, all), 0x3f80_0000);
    assert_eq!(tg_result(TgOp::All, Type::F32, all, all >> 1), 0);
    assert_eq!(tg_result(TgOp::Any, Type::Bool, all, 0x10), 1);
    assert_eq!(tg_result(TgOp::Any, Type::Bool, all, 0), 0);
    // Only active lanes count (HARDWARE.md 10): TGEQ of lane & 1 inside
    // `if odd` is TRUE; bits outside `active` are ignored.
    let odd = 0xaaaa_aaaa;
    assert_eq!(tg_result(TgOp::Eq, Type::I32, odd, odd), 0xffff_ffff);
    assert_eq!(tg_result(TgOp::All, Type::I32, odd, odd | 1), 0xffff_ffff);
    assert_eq!(tg_result(TgOp::Any, Type::I32, odd, 0x5555_5555), 0);
    assert_eq!(
        tg_result(TgOp::Ballot, Type::F32, odd, 0xffff_0000),
        0xaaaa_0000
    );
}

#[test]
fn tg_over_nan_inputs_hardware_12() {
    // A warp where every lane holds NaN or a denormal: TGANY.F FALSE,
    // TGALL.F FALSE, TGEQ.F TRUE, TGBALLOT.F 0.
    let values = [0x7fc0_0000u64, 0xffff_ffff, 0x0000_0001, 0x8000_0000];
    let nonzero = (0..32).fold(0u32, |m, lane| {
        m | (tg_nonzero(Type::F32, values[lane % 4]) as u32) << lane
    });
    let all = u32::MAX;
    assert_eq!(tg_result(TgOp::Any, Type::F32, all, nonzero), 0);
    assert_eq!(tg_result(TgOp::All, Type::F32, all, nonzero), 0);
    assert_eq!(tg_result(TgOp::Eq, Type::F32, all, nonzero), 0x3f80_0000);
    assert_eq!(tg_result(TgOp::Ballot, Type::F32, all, nonzero), 0);
}

#[test]
fn vote_truth_rules_sass_vote() {
    let participants = 0x0000_ff00;
    // ALL ignores non-participants even when the full ballot is non-zero.
    assert!(vote_result(VoteOp::All, participants, 0xffff_ff00));
    assert!(!vote_result(VoteOp::All, participants, 0x0000_7f00));
    assert!(vote_result(VoteOp::Any, participants, 0x0000_0100));
    assert!(!vote_result(VoteOp::Any, participants, 0xffff_00ff));
    // EQ: all true or all false among participants.
    assert!(vote_result(VoteOp::Eq, participants, 0xffff_00ff));
    assert!(vote_result(VoteOp::Eq, participants, 0x0000_ff00));
    assert!(!vote_result(VoteOp::Eq, participants, 0x0000_0f00));
}

#[test]
fn quad_swizzle_sources_spec_table() {
    // NV_shader_thread_group: X swaps 0<->1 and 2<->3, Y swaps 0<->2 and 1<->3.
    let x = [1, 0, 3, 2];
    let y = [2, 3, 0, 1];
    for lane in 0..32u32 {
        let quad = lane & !3;
        let member = (lane & 3) as usize;
        for n in 0..4u8 {
            assert_eq!(quad_source(QuadSel::Member(n), lane), quad + n as u32);
        }
        assert_eq!(quad_source(QuadSel::X, lane), quad + x[member]);
        assert_eq!(quad_source(QuadSel::Y, lane), quad + y[member]);
    }
}

#[test]
fn derivative_lanes_fbo_layout() {
    // Members: 0 (x,y), 1 (x+1,y), 2 (x,y+1), 3 (x+1,y+1).
    let fine_x = [(1, 0), (1, 0), (3, 2), (3, 2)];
    let fine_y = [(2, 0), (3, 1), (2, 0), (3, 1)];
    for lane in 0..32u32 {
        let quad = lane & !3;
        let member = (lane & 3) as usize;
        let at = |(a, b): (u32, u32)| (quad + a, quad + b);
        assert_eq!(derivative_lanes(Axis::X, true, lane), at(fine_x[member]));
        assert_eq!(derivative_lanes(Axis::Y, true, lane), at(fine_y[member]));
        assert_eq!(derivative_lanes(Axis::X, false, lane), at((1, 0)));
        assert_eq!(derivative_lanes(Axis::Y, false, lane), at((2, 0)));
    }
}
