//! The per-lane rules of the warp intrinsics: which lane a shuffle, quad
//! swizzle or derivative reads, lane masks, and the truth rules of votes.
//! Gathering the values across the warp is the backends' part.

use super::ieee::FloatFormat;
use crate::ops::{Axis, Builtin, QuadSel, ShuffleMode, TgOp, VoteOp};
use crate::types::Type;
use crate::WARP_SIZE;

/// The mask built-ins (`lane_mask.eq/.ge/.gt/.le/.lt`) of lane `lane` (0..31);
/// 0 for any other built-in.
pub fn lane_mask(b: Builtin, lane: u32) -> u32 {
    let lane = lane % WARP_SIZE;
    match b {
        Builtin::LaneMaskEq => 1 << lane,
        Builtin::LaneMaskGe => u32::MAX << lane,
        // Two steps so that lane 31 gives 0 instead of an oversized shift.
        Builtin::LaneMaskGt => (u32::MAX << lane) << 1,
        Builtin::LaneMaskLe => u32::MAX >> (31 - lane),
        Builtin::LaneMaskLt => (1 << lane) - 1,
        _ => 0,
    }
}

/// The SHF* mask the GLSL `width` form stands for (HARDWARE.md 2, 6):
/// segment mask `(32 - width) & 31` in bits 8..12, clamp 31 (0 for `up`).
/// Widths 0, 32, 64, 96 all give one 32-lane segment.
pub fn shuffle_mask_from_width(mode: ShuffleMode, width: u32) -> u32 {
    let segment_mask = 32u32.wrapping_sub(width) & 31;
    let clamp = match mode {
        ShuffleMode::Up => 0,
        ShuffleMode::Idx | ShuffleMode::Down | ShuffleMode::Xor => 31,
    };
    (segment_mask << 8) | clamp
}

/// The lane a shuffle in lane `lane` reads, and whether that source is valid
/// (HARDWARE.md 1: the PTX `shfl` model, bounds inclusive). Only bits 0..4
/// of `index` and of the clamp, and bits 8..12 of `mask`, are used.
///
/// When not valid the returned lane is `lane` itself: the result is the
/// lane's own value. A valid source that is inactive (or missing from a
/// partial warp) gives 0, still valid (HARDWARE.md 7, 9); that is decided by
/// the caller, which knows the active lanes.
pub fn shuffle_source(mode: ShuffleMode, lane: u32, index: u32, mask: u32) -> (u32, bool) {
    let lane = lane % WARP_SIZE;
    let b = index & 31;
    let clamp = mask & 31;
    let segment_mask = (mask >> 8) & 31;
    let min_lane = lane & segment_mask;
    let max_lane = min_lane | (clamp & !segment_mask);
    let (source, valid) = match mode {
        ShuffleMode::Idx => {
            let source = min_lane | (b & !segment_mask);
            (source as i32, source <= max_lane)
        }
        ShuffleMode::Up => {
            let source = lane as i32 - b as i32;
            (source, source >= max_lane as i32)
        }
        ShuffleMode::Down => {
            let source = lane + b;
            (source as i32, source <= max_lane)
        }
        ShuffleMode::Xor => {
            let source = lane ^ b;
            (source as i32, source <= max_lane)
        }
    };
    if valid {
        (source as u32, true)
    } else {
        (lane, false)
    }
}

/// The lane a quad swizzle in lane `lane` reads: member `sel.source(member)`
/// of the lane's own quad (lanes 4N..4N+3).
pub fn quad_source(sel: QuadSel, lane: u32) -> u32 {
    (lane & !3) | sel.source(lane & 3)
}

/// The two lanes a derivative in lane `lane` subtracts: `(minuend,
/// subtrahend)`, result = `v[minuend] - v[subtrahend]`. Quad members are laid
/// out as in a framebuffer object (HARDWARE.md 14): 0 (x,y), 1 (x+1,y),
/// 2 (x,y+1), 3 (x+1,y+1). Fine derivatives stay in the lane's row
/// (`ddx`) or column (`ddy`); coarse ones use members 1-0 and 2-0.
pub fn derivative_lanes(axis: Axis, fine: bool, lane: u32) -> (u32, u32) {
    let quad = lane & !3;
    let member = lane & 3;
    let step = match axis {
        Axis::X => 1,
        Axis::Y => 2,
    };
    let (minuend, subtrahend) = if fine {
        (member | step, member & !step)
    } else {
        (step, 0)
    };
    (quad | minuend, quad | subtrahend)
}

/// Whether a TGALL/TGANY/TGEQ/TGBALLOT operand counts as non-zero
/// (HARDWARE.md 12): bool true; integers any set bit; floats an ordered
/// `!= 0.0` after flushing denormals, so NaN, +-0 and denormals are zero.
pub fn tg_nonzero(ty: Type, a: u64) -> bool {
    let a = a & ty.bit_mask();
    let fmt = match ty {
        Type::F16 => FloatFormat::F16,
        Type::F32 => FloatFormat::F32,
        Type::F64 => FloatFormat::F64,
        _ => return a != 0,
    };
    let smallest_normal = 1u64 << fmt.frac_bits;
    let magnitude = a & !fmt.sign_bit();
    magnitude >= smallest_normal && !fmt.is_nan(a)
}

/// The TRUE value of TGALL/TGANY/TGEQ for type `ty` (HARDWARE.md 10):
/// bool true, integers -1 (all ones), floats 1.0. FALSE is 0.
pub fn tg_true(ty: Type) -> u64 {
    match ty {
        Type::Bool => 1,
        Type::F16 => 0x3c00,
        Type::F32 => 0x3f80_0000,
        Type::F64 => 0x3ff0_0000_0000_0000,
        Type::I8 | Type::I16 | Type::I32 | Type::I64 => ty.bit_mask(),
    }
}

/// A TG* result from the bitmask of active lanes and the bitmask of lanes
/// whose operand is non-zero (only bits inside `active` count). TGEQ is TRUE
/// when all active lanes agree on being non-zero (the spec pseudo-code,
/// HARDWARE.md 11); TGBALLOT gives the i32 bitmask.
pub fn tg_result(op: TgOp, ty: Type, active: u32, nonzero: u32) -> u64 {
    let nonzero = nonzero & active;
    let truth = match op {
        TgOp::All => nonzero == active,
        TgOp::Any => nonzero != 0,
        TgOp::Eq => nonzero == 0 || nonzero == active,
        TgOp::Ballot => return nonzero as u64,
    };
    if truth {
        tg_true(ty)
    } else {
        0
    }
}

/// A SASS VOTE predicate from the bitmask of participating lanes and the
/// bitmask of lanes whose predicate is true (only bits inside
/// `participants` count).
pub fn vote_result(op: VoteOp, participants: u32, predicate: u32) -> bool {
    let ballot = predicate & participants;
    match op {
        VoteOp::All => ballot == participants,
        VoteOp::Any => ballot != 0,
        VoteOp::Eq => ballot == 0 || ballot == participants,
    }
}
