//! Instructions: each one applied lane by lane to the active lanes.
//!
//! Scalar rules come from [`crate::semantics`]; this file and its siblings
//! [`super::collective`] and [`super::access`] only decide which lanes take
//! part, where operands come from and where results go.

use super::memory::FaultReport;
use super::warp::{lanes, Frame, Lanes, WarpState};
use super::{access, collective, ExecError, GlobalMemory, LaunchConfig};
use crate::module::{Function, Inst, Module};
use crate::ops::{Builtin, MemRef, Op};
use crate::semantics;
use crate::types::Type;
use crate::WARP_SIZE;
use std::sync::atomic::AtomicBool;

/// What the warp does after a statement.
pub(crate) enum Flow {
    Next,
    /// Wait at the workgroup barrier.
    Barrier,
}

/// Everything an instruction can see besides its warp.
pub(crate) struct Env<'m, 'a> {
    pub module: &'m Module,
    pub kernel: &'m Function,
    pub cfg: &'a LaunchConfig,
    pub params: &'a [u64],
    pub workgroup_id: [u32; 3],
    pub sm_id: u32,
    pub shared: Vec<Vec<u8>>,
    pub memory: &'a mut dyn GlobalMemory,
    pub faults: &'a mut FaultReport,
    /// The SM warp slot of warp 0 (`warp_id` = slot + warp index).
    pub first_warp_slot: u32,
    /// Raised by the caller to stop the workgroup before its next statement.
    pub cancel: Option<&'a AtomicBool>,
}

/// One instruction being executed in one frame under one execution mask.
pub(crate) struct InstCx<'f, 'm> {
    pub frame: &'f mut Frame<'m>,
    pub params: &'f [u64],
    pub inst: &'m Inst,
    pub mask: u32,
}

impl InstCx<'_, '_> {
    /// Operand `slot` in `lane` (0 if the instruction has no such operand).
    pub fn arg(&self, slot: usize, lane: usize) -> u64 {
        self.inst
            .args
            .get(slot)
            .map_or(0, |operand| self.frame.read(self.params, operand, lane))
    }

    /// Operand `slot` of every active lane; inactive lanes read 0.
    pub fn gather(&self, slot: usize) -> Lanes {
        let mut out = [0; WARP_SIZE as usize];
        for lane in lanes(self.mask) {
            out[lane] = self.arg(slot, lane);
        }
        out
    }

    /// The lanes of `within` where operand `slot` is non-zero (true).
    pub fn bits(&self, slot: usize, within: u32) -> u32 {
        lanes(within)
            .filter(|&lane| self.arg(slot, lane) != 0)
            .fold(0, |bits, lane| bits | 1 << lane)
    }

    pub fn has_arg(&self, slot: usize) -> bool {
        slot < self.inst.args.len()
    }

    pub fn arg_type(&self, module: &Module, slot: usize) -> Type {
        self.inst
            .args
            .get(slot)
            .map_or(Type::I32, |a| module.operand_type(self.frame.func, a))
    }

    /// Writes result `slot` of `lane` (nothing if the result was omitted).
    pub fn put(&mut self, slot: usize, lane: usize, value: u64) {
        if let Some(place) = self.inst.results.get(slot) {
            self.frame.write(*place, lane, value);
        }
    }

    /// Result 0 of every active lane from up to four operands of that lane.
    fn map(&mut self, f: impl Fn([u64; 4]) -> u64) {
        for lane in lanes(self.mask) {
            let mut args = [0u64; 4];
            for (slot, value) in args.iter_mut().enumerate() {
                *value = self.arg(slot, lane);
            }
            self.put(0, lane, f(args));
        }
    }

    /// The same value as result 0 of every active lane.
    pub fn broadcast(&mut self, value: u64) {
        for lane in lanes(self.mask) {
            self.put(0, lane, value);
        }
    }
}

pub(crate) fn is_set(mask: u32, lane: usize) -> bool {
    lane < WARP_SIZE as usize && mask & (1 << lane) != 0
}

pub(crate) fn exec_inst<'m>(
    warp: &mut WarpState<'m>,
    env: &mut Env<'m, '_>,
    inst: &'m Inst,
    mask: u32,
) -> Result<Flow, ExecError> {
    let module = env.module;
    let warp_index = warp.index;
    let helpers = warp.helpers;
    match &inst.op {
        Op::Demote => {
            warp.helpers |= mask;
            return Ok(Flow::Next);
        }
        Op::Barrier => return Ok(Flow::Barrier),
        Op::Call(f) => {
            let callee = &module.functions[*f as usize];
            warp.call(callee, inst, mask, env.params)?;
            return Ok(Flow::Next);
        }
        _ => {}
    }
    let mut cx = InstCx {
        frame: warp.frame_mut(),
        params: env.params,
        inst,
        mask,
    };
    let ty = cx.arg_type(module, 0);
    match &inst.op {
        Op::Mov => cx.map(|a| a[0]),
        Op::Select => cx.map(|a| if a[0] != 0 { a[1] } else { a[2] }),
        Op::Unary(op) => cx.map(|a| semantics::unary(*op, ty, a[0])),
        Op::Binary(op) => cx.map(|a| semantics::binary(*op, ty, a[0], a[1])),
        Op::Fma => cx.map(|a| semantics::fma(ty, a[0], a[1], a[2])),
        Op::Cmp(op) => cx.map(|a| u64::from(semantics::compare(*op, ty, a[0], a[1]))),
        Op::Bfe { signed } => {
            cx.map(|a| semantics::bfe(*signed, ty, a[0], a[1] as u32, a[2] as u32))
        }
        Op::Bfi => cx.map(|a| semantics::bfi(ty, a[0], a[1], a[2] as u32, a[3] as u32)),
        Op::Cvt { dst, src, round } => cx.map(|a| semantics::cvt(*dst, *src, *round, a[0])),
        Op::Bitcast(to) => cx.map(|a| semantics::bitcast(ty, *to, a[0])),
        Op::Pk64 => cx.map(|a| semantics::pk64(a[0], a[1])),
        Op::Up64 => {
            for lane in lanes(mask) {
                let (lo, hi) = semantics::up64(cx.arg(0, lane));
                cx.put(0, lane, lo);
                cx.put(1, lane, hi);
            }
        }
        Op::Builtin(b) => {
            for lane in lanes(mask) {
                let v = builtin_value(*b, env, warp_index, helpers, lane as u32);
                cx.put(0, lane, v);
            }
        }
        Op::ActiveMask => cx.broadcast(u64::from(mask)),
        Op::Ballot => {
            let ballot = cx.bits(0, mask);
            cx.broadcast(u64::from(ballot));
        }
        Op::Vote { op, guarded } => collective::vote(&mut cx, *op, *guarded),
        Op::Tg(op) => collective::thread_group(&mut cx, *op, ty),
        Op::Shuffle { mode, form } => collective::shuffle(&mut cx, *mode, *form),
        Op::Quad(sel) => collective::quad(&mut cx, *sel),
        Op::Deriv { axis, fine } => collective::derivative(&mut cx, *axis, *fine),
        Op::Load { mem, format } => access::load(&mut cx, env, warp_index, *mem, *format),
        Op::Store { mem, format } => {
            // Helper lanes write only their own private arrays: what they
            // compute must still reach their neighbours' quad swizzles
            // and derivatives.
            if !matches!(mem, MemRef::Private(_)) {
                cx.mask &= !helpers;
            }
            access::store(&mut cx, env, warp_index, *mem, *format)
        }
        Op::Atom { mem, op, format } => {
            access::atomic(&mut cx, env, warp_index, helpers, *mem, *op, *format)
        }
        Op::MemBar => env.memory.fence(),
        Op::Demote | Op::Barrier | Op::Call(_) => {}
    }
    Ok(Flow::Next)
}

fn builtin_value(b: Builtin, env: &Env<'_, '_>, warp_index: u32, helpers: u32, lane: u32) -> u64 {
    let size = env.cfg.workgroup;
    let local_index = warp_index.wrapping_mul(WARP_SIZE).wrapping_add(lane);
    // Launch validation guarantees non-zero sizes; max(1) keeps this total.
    let (sx, sy) = (size[0].max(1), size[1].max(1));
    let local_id = [
        local_index % sx,
        (local_index / sx) % sy,
        local_index / sx.wrapping_mul(sy).max(1),
    ];
    let v: u32 = match b {
        Builtin::GlobalId(d) => {
            let d = d.index();
            env.workgroup_id[d]
                .wrapping_mul(size[d])
                .wrapping_add(local_id[d])
        }
        Builtin::LocalId(d) => local_id[d.index()],
        Builtin::WorkgroupId(d) => env.workgroup_id[d.index()],
        Builtin::NumWorkgroups(d) => env.cfg.grid[d.index()],
        Builtin::WorkgroupSize(d) => size[d.index()],
        Builtin::LocalIndex => local_index,
        Builtin::LaneId => lane,
        Builtin::LaneMaskEq
        | Builtin::LaneMaskGe
        | Builtin::LaneMaskGt
        | Builtin::LaneMaskLe
        | Builtin::LaneMaskLt => semantics::lane_mask(b, lane),
        Builtin::WarpId => env.first_warp_slot.wrapping_add(warp_index),
        Builtin::SmId => env.sm_id,
        Builtin::WarpSize => WARP_SIZE,
        Builtin::WarpsPerSm => env.cfg.warps_per_sm,
        Builtin::SmCount => env.cfg.sm_count,
        Builtin::IsHelper => u32::from(is_set(helpers, lane as usize)),
    };
    u64::from(v)
}
