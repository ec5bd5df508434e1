//! The execution mask: the one place that decides which lanes are active.
//!
//! As in Mesa's `lp_exec_mask`, the active set is the AND of independent
//! parts, each changed by one kind of construct:
//! - `returned`: lanes still in the current function (entry mask minus the
//!   lanes that executed `return`);
//! - `live`: lanes not killed (a copy of the context's live mask, written
//!   back on `kill` and re-read after calls);
//! - the condition of the innermost `if` (or `ordered` round) inside the
//!   current loop level;
//! - the innermost loop's `active` lanes (entry lanes minus `break`) and
//!   `cont` lanes (minus `continue` until the iteration ends).
//!
//! Parts that change across basic blocks live in entry-block allocas, which
//! LLVM promotes to SSA form. [`ExecMask::current`] is the only function that
//! combines the parts.

use crate::emit::{Emit, LANES};
use crate::masked_compare;
use crate::JitError;
use inkwell::values::{IntValue, PointerValue, VectorValue};

struct LoopFrame<'ctx> {
    active: PointerValue<'ctx>,
    cont: PointerValue<'ctx>,
    /// The condition stack of the enclosing loop level.
    outer_conds: Vec<Side<'ctx>>,
    /// [`ExecMask::lane_bound`] when the loop was entered.
    bound: u32,
}

/// The mask of an `if` side, and the lanes it can have at most (known at
/// compile time when its condition is a constant, as `lane_id == 0` is).
#[derive(Clone, Copy)]
struct Side<'ctx> {
    mask: VectorValue<'ctx>,
    bound: u32,
}

pub struct ExecMask<'ctx> {
    returned: PointerValue<'ctx>,
    live: PointerValue<'ctx>,
    conds: Vec<Side<'ctx>>,
    loops: Vec<LoopFrame<'ctx>>,
}

impl<'ctx> ExecMask<'ctx> {
    /// Starts a function whose lanes are `entry` and whose live lanes are
    /// `live`; the allocas must be in the function's entry block.
    pub fn new(
        e: &Emit<'ctx, '_>,
        returned: PointerValue<'ctx>,
        live: PointerValue<'ctx>,
        entry: VectorValue<'ctx>,
        live_now: VectorValue<'ctx>,
    ) -> Result<ExecMask<'ctx>, JitError> {
        e.b.build_store(returned, entry)?;
        e.b.build_store(live, live_now)?;
        Ok(ExecMask {
            returned,
            live,
            conds: Vec::new(),
            loops: Vec::new(),
        })
    }

    fn load(
        &self,
        e: &Emit<'ctx, '_>,
        p: PointerValue<'ctx>,
    ) -> Result<VectorValue<'ctx>, JitError> {
        Ok(e.b
            .build_load(e.i1().vec_type(LANES), p, "")?
            .into_vector_value())
    }

    /// The active lanes at the builder's position.
    pub fn current(&self, e: &Emit<'ctx, '_>) -> Result<VectorValue<'ctx>, JitError> {
        let mut m = self.load(e, self.returned)?;
        let live = self.load(e, self.live)?;
        m = e.b.build_and(m, live, "")?;
        if let Some(c) = self.conds.last() {
            m = e.b.build_and(m, c.mask, "")?;
        }
        if let Some(l) = self.loops.last() {
            let a = self.load(e, l.active)?;
            let c = self.load(e, l.cont)?;
            m = e.b.build_and(m, a, "")?;
            m = e.b.build_and(m, c, "")?;
        }
        Ok(m)
    }

    /// Enters an `if` side (or an `ordered` round): the active lanes where
    /// `cond` holds. Returns that mask.
    pub fn push_cond(
        &mut self,
        e: &Emit<'ctx, '_>,
        cond: VectorValue<'ctx>,
    ) -> Result<VectorValue<'ctx>, JitError> {
        let m = self.current(e)?;
        let side = e.b.build_and(m, cond, "")?;
        self.push_side(side, cond);
        Ok(side)
    }

    /// [`ExecMask::push_cond`], returning whether the side has a lane (on
    /// AVX-512, for a float compare, from compares under the active lanes'
    /// write mask: [`crate::masked_compare`]).
    pub fn push_cond_tested(
        &mut self,
        e: &Emit<'ctx, '_>,
        cond: VectorValue<'ctx>,
    ) -> Result<IntValue<'ctx>, JitError> {
        let m = self.current(e)?;
        let (side, taken) = match masked_compare::and_any(e, m, cond)? {
            Some(tested) => tested,
            None => {
                let side = e.b.build_and(m, cond, "")?;
                (side, e.any(side)?)
            }
        };
        self.push_side(side, cond);
        Ok(taken)
    }

    /// Pushes `mask`, whose lanes are among those of `within`.
    fn push_side(&mut self, mask: VectorValue<'ctx>, within: VectorValue<'ctx>) {
        let bound = self.lane_bound() & constant_lanes(within).unwrap_or(u32::MAX);
        self.conds.push(Side { mask, bound });
    }

    /// A constant set of lanes that holds every active lane: all 32 but
    /// under an `if` on a constant condition.
    pub fn lane_bound(&self) -> u32 {
        match (self.conds.last(), self.loops.last()) {
            (Some(c), _) => c.bound,
            (None, Some(l)) => l.bound,
            (None, None) => u32::MAX,
        }
    }

    /// `active & !cond`: the else side of the condition `cond` as seen now.
    pub fn without(
        &self,
        e: &Emit<'ctx, '_>,
        mask: VectorValue<'ctx>,
        cond: VectorValue<'ctx>,
    ) -> Result<VectorValue<'ctx>, JitError> {
        let not = e.b.build_not(cond, "")?;
        Ok(e.b.build_and(mask, not, "")?)
    }

    /// Enters an `if` side whose mask was computed before (`else`).
    pub fn push_mask(&mut self, side: VectorValue<'ctx>) {
        self.push_side(side, side);
    }

    pub fn pop_cond(&mut self) {
        self.conds.pop();
    }

    /// Enters a loop with the current lanes.
    pub fn push_loop(
        &mut self,
        e: &Emit<'ctx, '_>,
        active: PointerValue<'ctx>,
        cont: PointerValue<'ctx>,
    ) -> Result<(), JitError> {
        let m = self.current(e)?;
        e.b.build_store(active, m)?;
        e.b.build_store(cont, e.all_lanes())?;
        let bound = self.lane_bound();
        let outer_conds = std::mem::take(&mut self.conds);
        self.loops.push(LoopFrame {
            active,
            cont,
            outer_conds,
            bound,
        });
        Ok(())
    }

    /// At the end of an iteration: lanes that executed `continue` return.
    pub fn end_iteration(&self, e: &Emit<'ctx, '_>) -> Result<(), JitError> {
        if let Some(l) = self.loops.last() {
            e.b.build_store(l.cont, e.all_lanes())?;
        }
        Ok(())
    }

    pub fn pop_loop(&mut self) {
        if let Some(l) = self.loops.pop() {
            self.conds = l.outer_conds;
        }
    }

    fn remove_current(&self, e: &Emit<'ctx, '_>, from: PointerValue<'ctx>) -> Result<(), JitError> {
        let m = self.current(e)?;
        let old = self.load(e, from)?;
        let new = self.without(e, old, m)?;
        e.b.build_store(from, new)?;
        Ok(())
    }

    pub fn break_loop(&self, e: &Emit<'ctx, '_>) -> Result<(), JitError> {
        match self.loops.last() {
            Some(l) => self.remove_current(e, l.active),
            None => Err(JitError::Internal("break outside a loop".into())),
        }
    }

    pub fn continue_loop(&self, e: &Emit<'ctx, '_>) -> Result<(), JitError> {
        match self.loops.last() {
            Some(l) => self.remove_current(e, l.cont),
            None => Err(JitError::Internal("continue outside a loop".into())),
        }
    }

    pub fn return_lanes(&self, e: &Emit<'ctx, '_>) -> Result<(), JitError> {
        self.remove_current(e, self.returned)
    }

    /// `kill`: returns the new live mask (to be written to the context).
    pub fn kill_lanes(&self, e: &Emit<'ctx, '_>) -> Result<VectorValue<'ctx>, JitError> {
        self.remove_current(e, self.live)?;
        self.load(e, self.live)
    }

    /// The lanes still in the function (not returned), which a kernel
    /// split into phases keeps from one phase to the next.
    pub fn remaining(&self, e: &Emit<'ctx, '_>) -> Result<VectorValue<'ctx>, JitError> {
        self.load(e, self.returned)
    }

    /// Restores [`ExecMask::remaining`] at the start of a later phase.
    pub fn set_remaining(
        &self,
        e: &Emit<'ctx, '_>,
        lanes: VectorValue<'ctx>,
    ) -> Result<(), JitError> {
        e.b.build_store(self.returned, lanes)?;
        Ok(())
    }

    /// After a call: the callee may have killed lanes.
    pub fn set_live(&self, e: &Emit<'ctx, '_>, live: VectorValue<'ctx>) -> Result<(), JitError> {
        e.b.build_store(self.live, live)?;
        Ok(())
    }
}

/// The lanes of `mask` when it is a constant.
fn constant_lanes(mask: VectorValue<'_>) -> Option<u32> {
    let mut bits = 0;
    for lane in 0..LANES {
        let set = crate::emit::constant_int_lane(mask, lane)? != 0;
        bits |= u32::from(set) << lane;
    }
    Some(bits)
}
