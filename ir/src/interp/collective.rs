//! Warp intrinsics that read other lanes: votes, thread-group votes,
//! shuffles, quad swizzles and derivatives.
//!
//! Each gathers its inputs from all active lanes before writing any result,
//! so a result may overwrite one of its own operands. A lane that reads an
//! inactive (or missing, or killed) lane gets 0 (HARDWARE.md 7, 9, 16).

use super::exec::{is_set, InstCx};
use super::warp::lanes;
use crate::module::Place;
use crate::ops::{Axis, BinaryOp, QuadSel, ShuffleForm, ShuffleMode, TgOp, VoteOp};
use crate::semantics;
use crate::types::Type;

/// SASS VOTE: the participants are the active lanes where the guard holds.
/// Non-participating lanes get 0/false in SSA results and keep their
/// variables' values.
pub(crate) fn vote(cx: &mut InstCx<'_, '_>, op: VoteOp, guarded: bool) {
    let participants = if guarded {
        cx.bits(1, cx.mask)
    } else {
        cx.mask
    };
    let ballot = cx.bits(0, participants);
    let result = semantics::vote_result(op, participants, ballot);
    for lane in lanes(cx.mask) {
        if is_set(participants, lane) {
            cx.put(0, lane, u64::from(result));
            cx.put(1, lane, u64::from(ballot));
        } else {
            for place in &cx.inst.results {
                if let Place::Value(_) = place {
                    cx.frame.write(*place, lane, 0);
                }
            }
        }
    }
}

/// TGALL/TGANY/TGEQ/TGBALLOT over the active lanes.
pub(crate) fn thread_group(cx: &mut InstCx<'_, '_>, op: TgOp, ty: Type) {
    let nonzero = lanes(cx.mask)
        .filter(|&lane| semantics::tg_nonzero(ty, cx.arg(0, lane)))
        .fold(0u32, |bits, lane| bits | 1 << lane);
    let result = semantics::tg_result(op, ty, cx.mask, nonzero);
    cx.broadcast(result);
}

pub(crate) fn shuffle(cx: &mut InstCx<'_, '_>, mode: ShuffleMode, form: ShuffleForm) {
    let data = cx.gather(0);
    let index = cx.gather(1);
    let bound = cx.gather(2);
    for lane in lanes(cx.mask) {
        let mask = match form {
            ShuffleForm::Width => semantics::shuffle_mask_from_width(mode, bound[lane] as u32),
            ShuffleForm::Mask => bound[lane] as u32,
        };
        let (source, valid) =
            semantics::shuffle_source(mode, lane as u32, index[lane] as u32, mask);
        let source = source as usize;
        let value = if !valid {
            data[lane]
        } else if is_set(cx.mask, source) {
            data[source]
        } else {
            0
        };
        cx.put(0, lane, value);
        cx.put(1, lane, u64::from(valid));
    }
}

/// `quad.N v[, add]`: the source member's value plus the lane's own `add`;
/// exactly 0.0 (add not applied) when the source member is inactive.
pub(crate) fn quad(cx: &mut InstCx<'_, '_>, sel: QuadSel) {
    let value = cx.gather(0);
    let add = cx.has_arg(1).then(|| cx.gather(1));
    for lane in lanes(cx.mask) {
        let source = semantics::quad_source(sel, lane as u32) as usize;
        let result = if !is_set(cx.mask, source) {
            0
        } else if let Some(add) = &add {
            semantics::binary(BinaryOp::Add, Type::F32, value[source], add[lane])
        } else {
            value[source]
        };
        cx.put(0, lane, result);
    }
}

/// `ddx`/`ddy`: 0.0 when either quad member read is inactive.
pub(crate) fn derivative(cx: &mut InstCx<'_, '_>, axis: Axis, fine: bool) {
    let value = cx.gather(0);
    for lane in lanes(cx.mask) {
        let (minuend, subtrahend) = semantics::derivative_lanes(axis, fine, lane as u32);
        let (minuend, subtrahend) = (minuend as usize, subtrahend as usize);
        let result = if is_set(cx.mask, minuend) && is_set(cx.mask, subtrahend) {
            semantics::binary(BinaryOp::Sub, Type::F32, value[minuend], value[subtrahend])
        } else {
            0
        };
        cx.put(0, lane, result);
    }
}
