//! Kernels split into phases at their barriers.
//!
//! A warp that meets a barrier must wait until every warp of its workgroup
//! has. In general the scheduler runs each warp on a coroutine and
//! switches at the barrier (`sched.rs`), which costs four stack switches
//! per warp and barrier. When every barrier of a kernel is a statement of
//! its body itself (not inside an `if`, a loop, an `ordered` section or a
//! called function), the kernel is instead compiled as phases: phase `i`
//! runs the body's statements between barrier `i - 1` and barrier `i`, and
//! the scheduler runs phase 0 of every warp, then phase 1 of every warp,
//! and so on, which is the interpreter's schedule. What a warp carries
//! from one phase to the next lives in its phase state, a block of memory
//! per warp laid out here:
//! - the lanes that returned (a 32-bit mask), unless code for whole warps
//!   knows no lane can have returned yet ([`whole_warp_phases`]);
//! - every value defined by a statement of the body and used in a later
//!   phase (values defined in nested blocks are not visible outside them),
//!   except those a later phase recomputes: IDs, constants, parameters and
//!   cheap lane-wise arithmetic on them ([`recomputable`]);
//! - every variable a later phase reads, until the last phase reading it;
//! - every private array.
//!
//! The live and helper masks are in the warp's context already.

use super::{FnLowering, KernelStart};
use crate::abi::offsets;
use crate::emit::Emit;
use crate::JitError;
use inkwell::basic_block::BasicBlock;
use inkwell::values::{IntValue, PointerValue};
use std::ops::Range;
use warpjit_ir::{walk_stmt, BinaryOp, Builtin, Function, Op, Operand, Place, Stmt, Type, ValueId};

/// Where a phase-split kernel keeps each thing it carries across phases,
/// as byte offsets into the warp's phase state (each slot 64-byte aligned).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PhaseLayout {
    /// The statements of the body each phase runs (barriers left out).
    pub phases: Vec<Range<usize>>,
    /// Per value: its slot, if a later phase uses it.
    pub values: Vec<Option<u32>>,
    /// Per phase: the values with slots it uses (loaded when it starts)
    /// and those it defines (stored when it ends).
    pub loads: Vec<Vec<ValueId>>,
    pub saves: Vec<Vec<ValueId>>,
    /// Per phase, the body's statements (in order) it runs again first:
    /// those defining the earlier values it uses that are cheaper to
    /// recompute than to keep (see [`recomputable`]).
    pub recomputes: Vec<Vec<usize>>,
    /// Per variable, when a phase after the first reads it: its slot and
    /// the last phase that does. Phases before that one save it when they
    /// end, and phases from the second to that one load it when they start.
    pub vars: Vec<Option<CarriedVar>>,
    pub privates: Vec<u32>,
    /// The size of one warp's phase state.
    pub bytes: u32,
}

/// A variable carried from phase to phase.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CarriedVar {
    pub slot: u32,
    pub last_read: usize,
}

impl CarriedVar {
    /// Whether phase `phase` loads the variable when it starts.
    pub fn loaded_by(self, phase: usize) -> bool {
        phase > 0 && phase <= self.last_read
    }

    /// Whether phase `phase` saves the variable when it ends.
    pub fn saved_by(self, phase: usize) -> bool {
        phase < self.last_read
    }
}

/// Offset of the returned-lanes mask in the phase state.
pub const RETURNED: u32 = 0;
const SLOT_ALIGN: u32 = 64;

/// The phases of kernel `f`, or `None` when it has no barrier in its body,
/// or one somewhere else (nested, or in a function it can call:
/// `calls_barrier` says whether a function index can reach one).
pub fn layout(f: &Function, calls_barrier: &dyn Fn(u32) -> bool) -> Option<PhaseLayout> {
    let stmts = &f.body.stmts;
    let is_barrier = |s: &Stmt| matches!(s, Stmt::Inst(i) if i.op == Op::Barrier);
    let mut phases = Vec::new();
    let mut start = 0;
    for (index, s) in stmts.iter().enumerate() {
        if is_barrier(s) {
            phases.push(start..index);
            start = index + 1;
        }
    }
    if phases.is_empty() {
        return None;
    }
    phases.push(start..stmts.len());
    // No barrier anywhere else: nested, or reached through a call.
    let mut elsewhere = false;
    for s in stmts {
        walk_stmt(s, &mut |inner| {
            if let Stmt::Inst(i) = inner {
                match i.op {
                    Op::Barrier => elsewhere |= !std::ptr::eq(inner, s),
                    Op::Call(c) => elsewhere |= calls_barrier(c),
                    _ => {}
                }
            }
        });
    }
    if elsewhere {
        return None;
    }

    let mut bytes = SLOT_ALIGN;
    let mut slot = |size: u64| -> Option<u32> {
        let at = bytes;
        let size = u32::try_from(size.next_multiple_of(u64::from(SLOT_ALIGN))).ok()?;
        bytes = bytes.checked_add(size)?;
        Some(at)
    };
    let lanes = u64::from(warpjit_ir::WARP_SIZE);
    let vector = |ty: Type| lanes * u64::from(ty.bits().div_ceil(8));
    // Per phase, the values and the variables its statements (nested ones
    // included) read.
    let (used, vars_used): (Vec<Vec<bool>>, Vec<Vec<bool>>) = phases
        .iter()
        .map(|r| {
            let mut read = vec![false; f.values.len()];
            let mut vars_read = vec![false; f.vars.len()];
            for s in &stmts[r.clone()] {
                walk_stmt(s, &mut |inner| {
                    for o in inner.operands() {
                        match o {
                            Operand::Value(v) => read[v.0 as usize] = true,
                            Operand::Var(v) => vars_read[v.0 as usize] = true,
                            _ => {}
                        }
                    }
                });
            }
            (read, vars_read)
        })
        .unzip();
    let recomputed_by = recomputable(stmts, f.values.len());
    let mut values = vec![None; f.values.len()];
    let mut defined_in = vec![usize::MAX; f.values.len()];
    let mut saves = vec![Vec::new(); phases.len()];
    for (defining, range) in phases.iter().enumerate() {
        for s in &stmts[range.clone()] {
            let Stmt::Inst(i) = s else { continue };
            for place in &i.results {
                let Place::Value(v) = place else { continue };
                defined_in[v.0 as usize] = defining;
                let later = used[defining + 1..].iter().any(|read| read[v.0 as usize]);
                if later && recomputed_by[v.0 as usize].is_none() {
                    values[v.0 as usize] = Some(slot(vector(f.value_type(*v)))?);
                    saves[defining].push(*v);
                }
            }
        }
    }
    let loads = used
        .iter()
        .enumerate()
        .map(|(phase, read)| {
            (0..f.values.len())
                .filter(|&v| read[v] && values[v].is_some() && defined_in[v] < phase)
                .map(|v| ValueId(v as u32))
                .collect()
        })
        .collect();
    // Per phase, the statements that recompute what it reads of earlier
    // phases' recomputable values, with the values those read in turn.
    let recomputes = used
        .iter()
        .enumerate()
        .map(|(phase, read)| {
            let mut needed = vec![false; stmts.len()];
            let mut pending: Vec<usize> = (0..f.values.len())
                .filter(|&v| read[v] && defined_in[v] < phase)
                .collect();
            while let Some(v) = pending.pop() {
                let Some(at) = recomputed_by[v] else { continue };
                if std::mem::replace(&mut needed[at], true) {
                    continue;
                }
                for o in stmts[at].operands() {
                    if let Operand::Value(u) = o {
                        pending.push(u.0 as usize);
                    }
                }
            }
            (0..stmts.len()).filter(|&at| needed[at]).collect()
        })
        .collect();
    // A variable no later phase reads needs no slot: what a phase assigns
    // to it only matters to reads in that phase. (An assignment in some
    // lanes keeps the others' values, so it counts as a read of the old
    // value only if the variable is read afterwards, and then that read
    // carries it.)
    let mut vars = Vec::with_capacity(f.vars.len());
    for (v, var) in f.vars.iter().enumerate() {
        let last_read = (1..phases.len()).rev().find(|&p| vars_used[p][v]);
        vars.push(match last_read {
            Some(last_read) => Some(CarriedVar {
                slot: slot(vector(var.ty))?,
                last_read,
            }),
            None => None,
        });
    }
    let privates = f
        .privates
        .iter()
        .map(|p| slot(u64::from(p.size).div_ceil(8) * 8 * lanes))
        .collect::<Option<Vec<_>>>()?;
    Some(PhaseLayout {
        phases,
        values,
        loads,
        saves,
        recomputes,
        vars,
        privates,
        bytes,
    })
}

/// Per value of the body, the statement that defines it when a later phase
/// may run that statement again instead of keeping the value: a pure,
/// lane-wise operation without division (IDs, constants, address
/// arithmetic, compares) on constants, parameters and other such values.
/// Recomputed, it stays visible to LLVM as what it is (a lane's id, a
/// uniform value) rather than a load from the phase state.
fn recomputable(stmts: &[Stmt], values: usize) -> Vec<Option<usize>> {
    let mut by = vec![None; values];
    for (at, s) in stmts.iter().enumerate() {
        let Stmt::Inst(i) = s else { continue };
        let pure = match &i.op {
            Op::Mov | Op::Select | Op::Cmp(_) | Op::Bitcast(_) => true,
            Op::Binary(op) => !matches!(
                op,
                BinaryOp::Div
                    | BinaryOp::DivS
                    | BinaryOp::DivU
                    | BinaryOp::RemS
                    | BinaryOp::RemU
                    | BinaryOp::Pow
            ),
            Op::Builtin(b) => *b != Builtin::IsHelper,
            _ => false,
        };
        let inputs_known = i.args.iter().all(|o| match o {
            Operand::Const(_) | Operand::Param(_) => true,
            Operand::Value(v) => by.get(v.0 as usize).is_some_and(Option::is_some),
            Operand::Var(_) => false,
        });
        if let ([Place::Value(v)], true, true) = (i.results.as_slice(), pure, inputs_known) {
            by[v.0 as usize] = Some(at);
        }
    }
    by
}

/// Branches on `phase` to `blocks[phase]`, or to `other` past them.
pub(super) fn switch_to_phase<'ctx>(
    e: &Emit<'ctx, '_>,
    phase: IntValue<'ctx>,
    blocks: &[BasicBlock<'ctx>],
    other: BasicBlock<'ctx>,
) -> Result<(), JitError> {
    let cases: Vec<_> = blocks
        .iter()
        .enumerate()
        .map(|(i, bb)| (e.i32().const_int(i as u64, false), *bb))
        .collect();
    e.b.build_switch(phase, other, &cases)?;
    Ok(())
}

/// Lowers the body of a kernel split into phases: a switch on `phase`
/// (the kernel's argument) to that phase's statements. A later phase first takes
/// back what earlier ones left in `state` (the lanes still in the kernel,
/// the variables, the values it uses); each phase but the last leaves
/// there what later ones need. The builder ends where the function returns.
pub(super) fn lower_phases<'ctx>(
    fl: &mut FnLowering<'ctx, '_>,
    layout: &PhaseLayout,
    state: PointerValue<'ctx>,
    phase: IntValue<'ctx>,
) -> Result<(), JitError> {
    let e = fl.e;
    let b = &e.b;
    let f = fl.f;
    let stmts = &f.body.stmts;
    let at = |offset: u32| -> Result<PointerValue<'ctx>, JitError> {
        let offset = e.i64().const_int(u64::from(offset), false);
        // SAFETY (for LLVM): the layout keeps every slot inside the state.
        Ok(unsafe { b.build_gep(e.cx.i8_type(), state, &[offset], "")? })
    };
    let done = fl.new_block("phases.done");
    let blocks: Vec<_> = (0..layout.phases.len())
        .map(|i| fl.new_block(&format!("phase{i}")))
        .collect();
    switch_to_phase(e, phase, &blocks, done)?;
    let slot_of = |v: usize| layout.values.get(v).copied().flatten();
    // Which phases start with every lane still in the kernel, known when
    // compiling: code for whole warps where no earlier phase can return.
    let whole = matches!(fl.start, KernelStart::WholeWarp { .. });
    let all_remain = whole_warp_phases(stmts, &layout.phases, whole);
    for (index, range) in layout.phases.iter().enumerate() {
        b.position_at_end(blocks[index]);
        let own = &stmts[range.clone()];
        if index == 0 {
            fl.zero_privates()?;
        } else {
            let bits = if all_remain[index] {
                e.i32().const_all_ones()
            } else {
                e.load_aligned(e.i32().into(), at(RETURNED)?, 4)?
                    .into_int_value()
            };
            fl.mask.set_remaining(e, e.bits_to_mask(bits)?)?;
            if fl.start == (KernelStart::WholeWarp { may_kill: true }) {
                let live = e
                    .load_field(fl.ctxp, offsets::LIVE_MASK, e.i32().into(), 4)?
                    .into_int_value();
                fl.mask.set_live(e, e.bits_to_mask(live)?)?;
            }
            for (v, (var, carried)) in f.vars.iter().zip(&layout.vars).enumerate() {
                let Some(carried) = carried.filter(|c| c.loaded_by(index)) else {
                    continue;
                };
                let ty = e.vec_type(var.ty).into();
                let value = e.load_aligned(ty, at(carried.slot)?, SLOT_ALIGN)?;
                b.build_store(fl.vars[v], value)?;
            }
            // Earlier phases' code does not reach here: only what the
            // state holds is defined.
            for (v, value) in fl.values.iter_mut().enumerate() {
                if !f.params.iter().any(|p| p.0 as usize == v) {
                    *value = None;
                }
            }
            // A phase loads only values defined in earlier ones: those it
            // defines itself are assigned before they are read.
            for v in &layout.loads[index] {
                let Some(offset) = slot_of(v.0 as usize) else {
                    continue;
                };
                let ty = e.vec_type(f.value_type(*v));
                let value = e.load_aligned(ty.into(), at(offset)?, SLOT_ALIGN)?;
                fl.values[v.0 as usize] = Some(value.into_vector_value());
            }
            for &again in &layout.recomputes[index] {
                fl.stmt(&stmts[again])?;
            }
        }
        for s in own {
            fl.stmt(s)?;
        }
        if index + 1 < layout.phases.len() {
            if !all_remain[index + 1] {
                let bits = e.mask_to_bits(fl.mask.remaining(e)?)?;
                e.store_aligned(at(RETURNED)?, bits.into(), 4)?;
            }
            for (v, carried) in layout.vars.iter().enumerate() {
                let Some(carried) = carried.filter(|c| c.saved_by(index)) else {
                    continue;
                };
                let ty = e.vec_type(f.vars[v].ty);
                let value = b.build_load(ty, fl.vars[v], "")?;
                e.store_aligned(at(carried.slot)?, value, SLOT_ALIGN)?;
            }
            for v in &layout.saves[index] {
                let (Some(offset), Some(value)) = (slot_of(v.0 as usize), fl.values[v.0 as usize])
                else {
                    continue;
                };
                e.store_aligned(at(offset)?, value.into(), SLOT_ALIGN)?;
            }
        }
        b.build_unconditional_branch(done)?;
    }
    b.position_at_end(done);
    Ok(())
}

/// Per phase: whether all 32 lanes are known to be in the kernel when it
/// starts. Code for whole warps starts with every lane, and only a
/// `return` (in any block of an earlier phase) takes lanes out; `kill`
/// changes the live lanes, which the context holds.
fn whole_warp_phases(stmts: &[Stmt], phases: &[Range<usize>], whole: bool) -> Vec<bool> {
    let mut returned = !whole;
    phases
        .iter()
        .map(|range| {
            let starts_whole = !returned;
            for s in &stmts[range.clone()] {
                walk_stmt(s, &mut |s| returned |= matches!(s, Stmt::Return { .. }));
            }
            starts_whole
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kernel(body: &str) -> Function {
        let src = format!("buffer @out[0]: u32\nshared @s[256]\nfunc @wait() {{\n  barrier\n}}\nkernel @main workgroup(64) {{\n{body}\n}}\n");
        let module = warpjit_ir::text::parse(&src).expect("parses");
        let main = module.find_function("main").expect("@main");
        module.function(main).clone()
    }

    /// `@wait` (function 0) reaches a barrier.
    fn calls_barrier(f: u32) -> bool {
        f == 0
    }

    #[test]
    fn barriers_in_the_body_split_it_and_values_used_later_get_slots() {
        let f = kernel(
            "var $v: i32\n%a = load.u32 @out, 0\n%b = add %a, 1\nbarrier\n%c = add %a, 2\nstore.u32 @out, 4, %c\nbarrier\nstore.u32 @out, 0, %b",
        );
        let layout = layout(&f, &calls_barrier).expect("phased");
        assert_eq!(layout.phases, vec![0..2, 3..5, 6..7]);
        // %a and %b are used after a barrier, %c only in its own phase.
        let slots: Vec<bool> = layout.values.iter().map(Option::is_some).collect();
        assert_eq!(&slots[..3], &[true, true, false]);
        // Phase 1 loads %a; phase 2 loads %b; phase 0 stores both.
        assert_eq!(
            layout.loads,
            vec![vec![], vec![ValueId(0)], vec![ValueId(1)]]
        );
        assert_eq!(
            layout.saves,
            vec![vec![ValueId(0), ValueId(1)], vec![], vec![]]
        );
        assert_eq!(layout.recomputes, vec![Vec::<usize>::new(); 3]);
        // No phase reads $v: the mask's 64 bytes, then %a and %b, 128
        // bytes each.
        assert_eq!(layout.vars, vec![None]);
        assert_eq!(layout.bytes, 64 + 2 * 128);
    }

    #[test]
    fn variables_are_kept_until_the_last_phase_that_reads_them() {
        let f = kernel(
            "var $a: i32\nvar $b: i32\nvar $c: i32\n$a = mov 1\n$b = mov 2\nbarrier\n$c = mov $b\nbarrier\n%x = add $a, $c\nstore.u32 @out, 0, %x\nbarrier\n$b = mov 3",
        );
        let layout = layout(&f, &calls_barrier).expect("phased");
        let carried = |v: usize| layout.vars[v].map(|c| c.last_read);
        // $a: read in phase 2; $b: in phase 1 ($b's write in phase 3 is
        // not a read); $c: in phase 2.
        assert_eq!(
            (carried(0), carried(1), carried(2)),
            (Some(2), Some(1), Some(2))
        );
        let a = layout.vars[0].unwrap();
        let saved: Vec<usize> = (0..4).filter(|&p| a.saved_by(p)).collect();
        let loaded: Vec<usize> = (0..4).filter(|&p| a.loaded_by(p)).collect();
        assert_eq!((saved, loaded), (vec![0, 1], vec![1, 2]));
        assert_eq!(layout.bytes, 64 + 3 * 128);
    }

    #[test]
    fn phases_start_whole_until_a_lane_can_have_returned() {
        let f = kernel(
            "%lane = lane_id\nbarrier\n%q = cmp.eq %lane, 3\nif %q {\n  return\n}\nbarrier\nstore.u32 @out, 0, %lane\nbarrier\nstore.u32 @out, 4, %lane",
        );
        let layout = layout(&f, &calls_barrier).expect("phased");
        let stmts = &f.body.stmts;
        // The `return` nested in phase 1's `if` takes lanes out for
        // phases 2 and 3; code for any warp knows no phase whole.
        assert_eq!(
            whole_warp_phases(stmts, &layout.phases, true),
            vec![true, true, false, false]
        );
        assert_eq!(
            whole_warp_phases(stmts, &layout.phases, false),
            vec![false; 4]
        );
    }

    #[test]
    fn ids_and_arithmetic_on_them_are_recomputed_not_kept() {
        let f = kernel(
            "%lane = lane_id\n%x = load.u32 @out, 0\n%at = shl %lane, 2\n%far = add %at, 64\n%q = div.u %lane, 3\nbarrier\nstore.u32 @out, %far, %x\nstore.u32 @out, %q, %x",
        );
        let layout = layout(&f, &calls_barrier).expect("phased");
        // %x is loaded and %q divides: kept. %far is recomputed after
        // %at and %lane, which it reads (statements 0, 2 and 3).
        let slots: Vec<bool> = layout.values.iter().map(Option::is_some).collect();
        assert_eq!(&slots[..5], &[false, true, false, false, true]);
        assert_eq!(layout.recomputes, vec![vec![], vec![0, 2, 3]]);
        assert_eq!(layout.loads, vec![vec![], vec![ValueId(1), ValueId(4)]]);
    }

    #[test]
    fn kernels_with_nested_or_called_barriers_are_not_phased() {
        for body in [
            "%a = lane_id\n%c = cmp.eq %a, 0\nif %c {\n  barrier\n}",
            "loop {\n  barrier\n  break\n}",
            "barrier\ncall @wait()",
            "%a = lane_id",
        ] {
            assert_eq!(layout(&kernel(body), &calls_barrier), None, "{body}");
        }
    }
}
