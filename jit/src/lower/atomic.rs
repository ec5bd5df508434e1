//! Atomics (`atom.OP`). The active, non-helper, in-bounds lanes act in
//! ascending lane order, each on the value the lanes below it left
//! (`docs/semantics.md`); every path here returns exactly what that order
//! gives, and 0 in the other lanes.
//!
//! - Buffers are shared with other SMs, so they take real atomic
//!   instructions: one accessing lane is one instruction; lanes that all use
//!   one address with an associative op (`add and or xor min max`) are one
//!   instruction on the op's reduction of their values; otherwise one
//!   instruction per lane, in a loop over the lane bits.
//! - A workgroup's shared memory is touched only by its own warps, which run
//!   on one thread and switch only at barriers, so a plain read-modify-write
//!   is indivisible there: plain loads and stores, one lane at a time, in
//!   straight-line code for a whole warp and a loop otherwise. Vectorizing
//!   it (`vpconflictd` for lanes on equal addresses, one gather, pointer
//!   jumping to combine equal-address lanes, one scatter of each address's
//!   highest lane) measured slower on the AVX-512 host this was written on
//!   (`jit/README.md`): its gathers and scatters cost more than 32 scalar
//!   read-modify-writes. A leaner form for constant addends (a popcount of
//!   the conflicts, no pointer jumping) measured no faster on W6 on an
//!   Intel Xeon either (`docs/performance-log.md`, "Levers measured").
//! - A buffer whose updates nothing can observe in flight (`posted.rs`)
//!   takes one accessing lane's update, or one address's reduction, into
//!   its slot on the SM instead of memory, and the updates of lanes on
//!   several addresses into the SM's private copy of the buffer when it is
//!   small (`posted_copy.rs`); its results are never read.

use super::memory::{
    access, active_lanes_equal, any_lane, count_faults, mask_without_helpers, narrow_inside, span,
};
use super::{FnLowering, RemarkKind};
use crate::abi;
use crate::emit::LANES;
use crate::JitError;
use inkwell::llvm_sys::core::LLVMBuildAtomicRMW;
use inkwell::llvm_sys::{LLVMAtomicOrdering, LLVMAtomicRMWBinOp};
use inkwell::types::VectorType;
use inkwell::values::AsValueRef;
use inkwell::values::{
    BasicValue, BasicValueEnum, IntMathValue, IntValue, PointerValue, VectorValue,
};
use inkwell::IntPredicate;
use inkwell::{AtomicOrdering, AtomicRMWBinOp};
use warpjit_ir::{AtomOp, MemRef, NumFormat, Type};

type V<'ctx> = VectorValue<'ctx>;

/// The checked lanes of one atomic: where the memory is, each lane's byte
/// offset (0 in lanes that must not touch memory) and the lanes that do.
struct Lanes<'ctx> {
    base: PointerValue<'ctx>,
    offsets: V<'ctx>,
    mask: V<'ctx>,
}

/// What an `atom` instruction is, beside its operands.
#[derive(Clone, Copy, Debug)]
pub struct Access {
    pub mem: MemRef,
    pub op: AtomOp,
    pub elem: NumFormat,
    /// The lane-shape analysis knows the address is the same in every
    /// active lane. The code is the same either way (its run-time test
    /// finds one address); only the remark says what it will do, so it is
    /// looked up only when remarks are recorded (false otherwise).
    pub one_address: bool,
}

/// `atom.OP.FMT @mem, addr, v` (`cswap`: `v` is the compared value, `v2`
/// the new one); the result is each lane's old value.
pub fn atomic<'ctx>(
    fl: &FnLowering<'ctx, '_>,
    access_kind: Access,
    addr: V<'ctx>,
    addr_ty: Type,
    v: V<'ctx>,
    v2: Option<V<'ctx>>,
) -> Result<V<'ctx>, JitError> {
    let Access { mem, op, elem, .. } = access_kind;
    let m = mask_without_helpers(fl)?;
    match mem {
        MemRef::Shared(_) => {
            let lanes = narrow_access(fl, mem, elem.bytes(), addr, addr_ty, m)?;
            let via = if plain_op(op) {
                Via::Plain
            } else {
                Via::Atomic
            };
            remark(fl, access_kind, via);
            by_shape(fl, &lanes, op, elem, v, v2, via)
        }
        MemRef::Buffer(buffer) => {
            super::memory::fence_streams(fl)?;
            let lanes = if addr_ty == Type::I32 {
                narrow_access(fl, mem, elem.bytes(), addr, addr_ty, m)?
            } else {
                let a = access(fl, mem, elem.bytes(), addr, addr_ty, m, abi::FAULT_ATOMIC)?;
                Lanes {
                    base: a.base,
                    offsets: a.offsets,
                    mask: a.mask,
                }
            };
            let via = if fl.posts_to(buffer) {
                Via::Posted(buffer)
            } else {
                Via::Atomic
            };
            remark(fl, access_kind, via);
            by_shape(fl, &lanes, op, elem, v, v2, via)
        }
        MemRef::Private(_) => Err(JitError::Internal(
            "atomics on private arrays are rejected by the verifier".into(),
        )),
    }
}

/// The remark of an atomic that [`by_shape`] lowers with `via`.
fn remark(fl: &FnLowering<'_, '_>, access_kind: Access, via: Via) {
    if !fl.wants_remarks() {
        return;
    }
    let Access {
        mem,
        op,
        one_address: known_one,
        ..
    } = access_kind;
    let name = super::memory::memory_name(fl, mem);
    let combinable = super::posted::combinable(op);
    let one_address = if combinable {
        "lanes on one address make one with their values combined, "
    } else {
        ""
    };
    let (message, lane_by_lane) = match via {
        // by_shape's run-time test finds the one address and takes the
        // combined update: the warp never goes lane by lane.
        Via::Plain | Via::Atomic if known_one && combinable => {
            let how = if via == Via::Plain {
                "a plain load and store, as only this workgroup's warps touch shared memory"
            } else {
                "an atomic instruction"
            };
            (
                format!(
                    "{name}: one address in every active lane: one update, {how}, with the \
                     lanes' values combined"
                ),
                false,
            )
        }
        Via::Posted(_) => (
            format!(
                "{name}: results unused and nothing reads the buffer while the kernel runs: \
                 one lane's update, or the combined update of lanes on one address, is posted \
                 on the SM, lanes on several addresses update the SM's copy of a small buffer \
                 (atomic instructions one by one for a large one), and the SM applies them \
                 when its run of workgroups ends"
            ),
            false,
        ),
        Via::Plain => (
            format!(
                "{name}: plain loads and stores, as only this workgroup's warps touch shared \
                 memory: one active lane makes one update, {one_address}other lanes one each \
                 in lane order"
            ),
            true,
        ),
        Via::Atomic | Via::Copy => (
            format!(
                "{name}: atomic instructions: one active lane makes one, {one_address}other \
                 lanes one each in lane order"
            ),
            true,
        ),
    };
    fl.remark(RemarkKind::Atomic, lane_by_lane, message);
}

/// The one lane that can be active, when the conditions around the
/// access say so at compile time (`if lane_id == k`): LLVM cannot tell
/// that the lowest lane of such a mask, and-ed with run-time tests, is `k`.
fn only_lane(fl: &FnLowering<'_, '_>) -> Option<u32> {
    let bound = fl.mask.lane_bound();
    (bound.count_ones() == 1).then_some(bound.trailing_zeros())
}

/// How one update reaches memory.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Via {
    /// An atomic instruction.
    Atomic,
    /// A plain load and store (shared memory, which only this thread
    /// touches).
    Plain,
    /// The SM's posted update of this buffer (`posted.rs`); the result is
    /// never read, so it is 0.
    Posted(u32),
    /// A plain load and store in the SM's private copy of a posted buffer
    /// (`posted_copy.rs`), which only this thread touches.
    Copy,
}

/// Ops that shared memory does as a plain load and store.
fn plain_op(op: AtomOp) -> bool {
    !matches!(op, AtomOp::Cswap | AtomOp::Iwrap | AtomOp::Dwrap)
}

/// The checked access of an atomic on 32-bit offsets: with an `i32`
/// address every offset fits, so the bounds test needs no 64-bit lanes
/// (shared memory with an `i64` address is truncated after the 64-bit
/// test, as it is at most 64 KiB). Faults are recorded as [`access`]
/// records them.
fn narrow_access<'ctx>(
    fl: &FnLowering<'ctx, '_>,
    mem: MemRef,
    size: u32,
    addr: V<'ctx>,
    addr_ty: Type,
    m: V<'ctx>,
) -> Result<Lanes<'ctx>, JitError> {
    let e = fl.e;
    let b = &e.b;
    if addr_ty == Type::I64 {
        let a = access(fl, mem, size, addr, addr_ty, m, abi::FAULT_ATOMIC)?;
        let offsets = b.build_int_truncate(a.offsets, e.int_vec(32), "")?;
        return Ok(Lanes {
            base: a.base,
            offsets,
            mask: a.mask,
        });
    }
    let span = span(fl, mem)?;
    let (aligned, inside) = narrow_inside(e, span.len, size, addr)?;
    let ok = b.build_and(m, inside, "")?;
    let outside = b.build_and(m, b.build_not(inside, "")?, "")?;
    count_faults(fl, outside, addr, abi::FAULT_ATOMIC, &span)?;
    let offsets = b
        .build_select(ok, aligned, e.int_vec(32).const_zero(), "")?
        .into_vector_value();
    Ok(Lanes {
        base: span.base,
        offsets,
        mask: ok,
    })
}

/// One accessing lane: one update; lanes on one address with an
/// associative op: one update with the op's reduction of their values;
/// otherwise one update per lane in a loop, each with an atomic
/// instruction unless `via` is [`Via::Plain`].
#[allow(clippy::too_many_arguments)]
fn by_shape<'ctx>(
    fl: &FnLowering<'ctx, '_>,
    lanes: &Lanes<'ctx>,
    op: AtomOp,
    elem: NumFormat,
    v: V<'ctx>,
    v2: Option<V<'ctx>>,
    via: Via,
) -> Result<V<'ctx>, JitError> {
    let e = fl.e;
    let b = &e.b;
    let vt = e.int_vec(elem.bits());
    let bits = e.mask_to_bits(lanes.mask)?;
    let rest = b.build_and(
        bits,
        b.build_int_sub(bits, e.i32().const_int(1, false), "")?,
        "",
    )?;
    let at_most_one = b.build_int_compare(IntPredicate::EQ, rest, e.i32().const_zero(), "")?;
    let single = b.build_and(at_most_one, any_lane(fl, bits)?, "")?;
    let single_bb = e.cx.append_basic_block(fl.func, "atom.one.lane");
    let several_bb = e.cx.append_basic_block(fl.func, "atom.lanes");
    let loop_bb = e.cx.append_basic_block(fl.func, "atom.each.lane");
    let join = e.cx.append_basic_block(fl.func, "atom.joined");
    b.build_conditional_branch(single, single_bb, several_bb)?;
    let mut incoming = Vec::new();

    b.position_at_end(single_bb);
    incoming.push((
        one_lane(fl, lanes, op, elem, v, v2, via)?,
        e.current_block()?,
    ));
    b.build_unconditional_branch(join)?;

    b.position_at_end(several_bb);
    // One stack copy of the offsets serves the one-address test and the loop.
    let offsets = fl.entry_alloca(lanes.offsets.get_type(), "atom.offsets")?;
    b.build_store(offsets, lanes.offsets)?;
    if super::posted::combinable(op) {
        let one_bb = e.cx.append_basic_block(fl.func, "atom.one.address");
        // Some lanes (none or two or more) access: all the first one's
        // offset? With none, `first` is 31, a valid slot.
        let first = e.lowest_lane(bits)?;
        let off_t = lanes.offsets.get_type().get_element_type().into_int_type();
        let first64 = b.build_int_z_extend(first, e.i64(), "")?;
        // SAFETY (for LLVM): first < 32 indexes the 32-element copy.
        let slot = unsafe { b.build_gep(off_t, offsets, &[first64], "")? };
        let at = b.build_load(off_t, slot, "")?.into_int_value();
        let same = active_lanes_equal(e, lanes.mask, e.splat(at.into())?, lanes.offsets)?;
        // No lane: the loop, which touches nothing.
        let same = b.build_and(same, any_lane(fl, bits)?, "")?;
        b.build_conditional_branch(same, one_bb, loop_bb)?;
        b.position_at_end(one_bb);
        incoming.push((
            aggregated(fl, lanes, op, elem, at, v, via)?,
            e.current_block()?,
        ));
        b.build_unconditional_branch(join)?;
    } else {
        b.build_unconditional_branch(loop_bb)?;
    }

    b.position_at_end(loop_bb);
    if let Via::Posted(buffer) = via {
        // Lanes on several addresses would take turns in the posted slot:
        // the SM's copy of the buffer takes them when it has one.
        let copy_bb = e.cx.append_basic_block(fl.func, "atom.posted.copy");
        let direct_bb = e.cx.append_basic_block(fl.func, "atom.posted.direct");
        let copy = posted_copy(fl, buffer, copy_bb, direct_bb)?;
        b.position_at_end(copy_bb);
        let private = Lanes {
            base: copy,
            offsets: lanes.offsets,
            mask: lanes.mask,
        };
        lane_loop(fl, &private, offsets, op, elem, v, v2, Via::Copy)?;
        incoming.push((vt.const_zero(), e.current_block()?));
        b.build_unconditional_branch(join)?;
        b.position_at_end(direct_bb);
    }
    let each_via = if via == Via::Plain {
        Via::Plain
    } else {
        Via::Atomic
    };
    incoming.push((
        lane_loop(fl, lanes, offsets, op, elem, v, v2, each_via)?,
        e.current_block()?,
    ));
    b.build_unconditional_branch(join)?;

    b.position_at_end(join);
    let phi = b.build_phi(vt, "atom.old")?;
    for (value, block) in &incoming {
        phi.add_incoming(&[(value, *block)]);
    }
    Ok(phi.as_basic_value().into_vector_value())
}

/// The identity of an associative op on `w`-bit lanes, in every lane.
fn identity<'ctx>(fl: &FnLowering<'ctx, '_>, op: AtomOp, elem: NumFormat) -> V<'ctx> {
    fl.e.splat_int(elem.bits(), crate::posted_copy::identity(op, elem))
}

/// `a OP b` (lane by lane for vectors) for the associative ops and `exch`
/// (which gives `b`): what these ops store, which lanes and posted
/// updates combine with.
fn combine<'ctx, T>(
    fl: &FnLowering<'ctx, '_>,
    op: AtomOp,
    elem: NumFormat,
    a: T,
    b_: T,
) -> Result<T, JitError>
where
    T: IntMathValue<'ctx> + BasicValue<'ctx> + TryFrom<BasicValueEnum<'ctx>> + Copy,
{
    let b = &fl.e.b;
    let pick = |pred: IntPredicate| -> Result<T, JitError> {
        let keep = b.build_int_compare(pred, a, b_, "")?;
        T::try_from(b.build_select(keep, a, b_, "")?)
            .map_err(|_| JitError::Internal("select changed the type".into()))
    };
    let signed = elem.is_signed();
    Ok(match op {
        AtomOp::Add => b.build_int_add(a, b_, "")?,
        AtomOp::And => b.build_and(a, b_, "")?,
        AtomOp::Or => b.build_or(a, b_, "")?,
        AtomOp::Xor => b.build_xor(a, b_, "")?,
        AtomOp::Min if signed => pick(IntPredicate::SLT)?,
        AtomOp::Min => pick(IntPredicate::ULT)?,
        AtomOp::Max if signed => pick(IntPredicate::SGT)?,
        AtomOp::Max => pick(IntPredicate::UGT)?,
        AtomOp::Exch => b_,
        AtomOp::Cswap | AtomOp::Iwrap | AtomOp::Dwrap => {
            return Err(JitError::Internal(format!(
                "{op:?} needs an atomic instruction"
            )))
        }
    })
}

/// The op of an atomic instruction for `atom.OP` (not `cswap`, `iwrap`,
/// `dwrap`).
fn rmw_op(op: AtomOp, elem: NumFormat) -> AtomicRMWBinOp {
    let signed = elem.is_signed();
    match op {
        AtomOp::Add => AtomicRMWBinOp::Add,
        AtomOp::Min if signed => AtomicRMWBinOp::Min,
        AtomOp::Min => AtomicRMWBinOp::UMin,
        AtomOp::Max if signed => AtomicRMWBinOp::Max,
        AtomOp::Max => AtomicRMWBinOp::UMax,
        AtomOp::And => AtomicRMWBinOp::And,
        AtomOp::Or => AtomicRMWBinOp::Or,
        AtomOp::Xor => AtomicRMWBinOp::Xor,
        _ => AtomicRMWBinOp::Xchg,
    }
}

/// Every accessing lane on one address (`offset`), associative op: one
/// atomic instruction on the op's reduction of their values. Lane `l` gets
/// the old value combined with the values of the accessing lanes below it,
/// what one lane at a time in ascending order gives (an inclusive scan
/// shifted by one lane, which LLVM drops when the result is unused).
fn aggregated<'ctx>(
    fl: &FnLowering<'ctx, '_>,
    lanes: &Lanes<'ctx>,
    op: AtomOp,
    elem: NumFormat,
    offset: IntValue<'ctx>,
    v: V<'ctx>,
    via: Via,
) -> Result<V<'ctx>, JitError> {
    let e = fl.e;
    let b = &e.b;
    let vt = v.get_type();
    let ident = identity(fl, op, elem);
    let mine = b
        .build_select(lanes.mask, v, ident, "")?
        .into_vector_value();
    let signed = elem.is_signed();
    let reduce = match op {
        AtomOp::Add => "llvm.vector.reduce.add",
        AtomOp::And => "llvm.vector.reduce.and",
        AtomOp::Or => "llvm.vector.reduce.or",
        AtomOp::Xor => "llvm.vector.reduce.xor",
        AtomOp::Min if signed => "llvm.vector.reduce.smin",
        AtomOp::Min => "llvm.vector.reduce.umin",
        AtomOp::Max if signed => "llvm.vector.reduce.smax",
        _ => "llvm.vector.reduce.umax",
    };
    let total = e
        .call_intrinsic(reduce, &[vt.into()], &[mine.into()])?
        .into_int_value();
    let ptr = lane_pointer(fl, lanes.base, offset)?;
    let old = lane_update(fl, op, elem, ptr, total, None, via)?;
    if let Via::Posted(_) = via {
        return Ok(vt.const_zero());
    }
    // Inclusive scan in five shift-and-combine steps, then one more shift
    // for the lanes strictly below.
    let shifted = |x: V<'ctx>, k: u32| -> Result<V<'ctx>, JitError> {
        let idx: Vec<_> = (0..LANES)
            .map(|l| {
                // Lanes below k take the identity (element 32 + l of `ident`).
                let src = if l >= k { l - k } else { LANES + l };
                e.i32().const_int(u64::from(src), false)
            })
            .collect();
        Ok(b.build_shuffle_vector(x, ident, VectorType::const_vector(&idx), "")?)
    };
    let mut scan = mine;
    for k in [1u32, 2, 4, 8, 16] {
        scan = combine(fl, op, elem, scan, shifted(scan, k)?)?;
    }
    let below = shifted(scan, 1)?;
    let olds = combine(fl, op, elem, e.splat(old.into())?, below)?;
    Ok(b.build_select(lanes.mask, olds, vt.const_zero(), "")?
        .into_vector_value())
}

/// One lane's update at `ptr` as `via` says; returns the old value (0 when
/// posted).
fn lane_update<'ctx>(
    fl: &FnLowering<'ctx, '_>,
    op: AtomOp,
    elem: NumFormat,
    ptr: PointerValue<'ctx>,
    val: IntValue<'ctx>,
    new: Option<IntValue<'ctx>>,
    via: Via,
) -> Result<IntValue<'ctx>, JitError> {
    let e = fl.e;
    let b = &e.b;
    let order = AtomicOrdering::SequentiallyConsistent;
    match via {
        Via::Atomic => {}
        Via::Plain | Via::Copy => {
            let align = elem.bytes();
            let old = e
                .load_aligned(val.get_type().into(), ptr, align)?
                .into_int_value();
            let updated = combine(fl, op, elem, old, val)?;
            e.store_aligned(ptr, updated.into(), align)?;
            return Ok(old);
        }
        Via::Posted(buffer) => {
            post(fl, buffer, op, elem, ptr, val)?;
            return Ok(val.get_type().const_zero());
        }
    }
    Ok(match op {
        AtomOp::Cswap => {
            let new = new.ok_or_else(|| JitError::Internal("cswap without a new value".into()))?;
            let pair = b.build_cmpxchg(ptr, val, new, order, order)?;
            b.build_extract_value(pair, 0, "")?.into_int_value()
        }
        AtomOp::Iwrap | AtomOp::Dwrap => {
            let kind = if op == AtomOp::Iwrap {
                LLVMAtomicRMWBinOp::LLVMAtomicRMWBinOpUIncWrap
            } else {
                LLVMAtomicRMWBinOp::LLVMAtomicRMWBinOpUDecWrap
            };
            // inkwell has no uinc_wrap/udec_wrap; they are exactly IWRAP/DWRAP.
            // SAFETY: valid builder, pointer and integer value of one context.
            unsafe {
                let raw = LLVMBuildAtomicRMW(
                    b.as_mut_ptr(),
                    kind,
                    ptr.as_value_ref(),
                    val.as_value_ref(),
                    LLVMAtomicOrdering::LLVMAtomicOrderingSequentiallyConsistent,
                    0,
                );
                IntValue::new(raw)
            }
        }
        _ => b.build_atomicrmw(rmw_op(op, elem), ptr, val, order)?,
    })
}

/// Branches to `copy_bb` when the SM has a private copy of `buffer`
/// (`posted_copy.rs`), which it returns, and to `direct_bb` otherwise.
fn posted_copy<'ctx>(
    fl: &FnLowering<'ctx, '_>,
    buffer: u32,
    copy_bb: inkwell::basic_block::BasicBlock<'ctx>,
    direct_bb: inkwell::basic_block::BasicBlock<'ctx>,
) -> Result<PointerValue<'ctx>, JitError> {
    let e = fl.e;
    let b = &e.b;
    let table = posted_table(fl)?;
    let slot_bb = e.cx.append_basic_block(fl.func, "atom.posted.slot");
    b.build_conditional_branch(b.build_is_null(table, "")?, direct_bb, slot_bb)?;
    b.position_at_end(slot_bb);
    let field = posted_field(fl, table, buffer, abi::offsets::POSTED_COPY)?;
    let copy = e
        .load_aligned(e.cx.ptr_type(Default::default()).into(), field, 8)?
        .into_pointer_value();
    b.build_conditional_branch(b.build_is_null(copy, "")?, direct_bb, copy_bb)?;
    Ok(copy)
}

/// The SM's table of posted slots, one per buffer binding (null when the
/// runtime posts nothing in this launch).
fn posted_table<'ctx>(fl: &FnLowering<'ctx, '_>) -> Result<PointerValue<'ctx>, JitError> {
    let ptr_t = fl.e.cx.ptr_type(Default::default());
    Ok(fl
        .e
        .load_field(fl.ctxp, abi::offsets::POSTED, ptr_t.into(), 8)?
        .into_pointer_value())
}

/// The field at byte `offset` of `buffer`'s slot in the posted `table`.
fn posted_field<'ctx>(
    fl: &FnLowering<'ctx, '_>,
    table: PointerValue<'ctx>,
    buffer: u32,
    offset: u64,
) -> Result<PointerValue<'ctx>, JitError> {
    let e = fl.e;
    let offset = u64::from(buffer) * abi::offsets::POSTED_SIZE + offset;
    let offset = e.i64().const_int(offset, false);
    // SAFETY (for LLVM): the table has a slot per buffer binding.
    Ok(unsafe { e.b.build_gep(e.cx.i8_type(), table, &[offset], "")? })
}

/// Posts the update `val` at `ptr` to the SM's slot of `buffer`: combined
/// into the slot when it holds `ptr`, else the slot's update (if any) goes
/// to memory with an atomic instruction and `val` takes its place. Without
/// a slot table (the runtime posts nothing in this launch) the update is
/// an atomic instruction.
fn post<'ctx>(
    fl: &FnLowering<'ctx, '_>,
    buffer: u32,
    op: AtomOp,
    elem: NumFormat,
    ptr: PointerValue<'ctx>,
    val: IntValue<'ctx>,
) -> Result<(), JitError> {
    let e = fl.e;
    let b = &e.b;
    let ptr_t = e.cx.ptr_type(inkwell::AddressSpace::default());
    let table = posted_table(fl)?;
    let direct_bb = e.cx.append_basic_block(fl.func, "post.direct");
    let slot_bb = e.cx.append_basic_block(fl.func, "post.slot");
    let combine_bb = e.cx.append_basic_block(fl.func, "post.combine");
    let evict_bb = e.cx.append_basic_block(fl.func, "post.evict");
    let take_bb = e.cx.append_basic_block(fl.func, "post.take");
    let done = e.cx.append_basic_block(fl.func, "post.done");
    b.build_conditional_branch(b.build_is_null(table, "")?, direct_bb, slot_bb)?;

    b.position_at_end(direct_bb);
    lane_update(fl, op, elem, ptr, val, None, Via::Atomic)?;
    b.build_unconditional_branch(done)?;

    b.position_at_end(slot_bb);
    let target_ptr = posted_field(fl, table, buffer, 0)?;
    let value_ptr = posted_field(fl, table, buffer, abi::offsets::POSTED_VALUE)?;
    let target = e
        .load_aligned(ptr_t.into(), target_ptr, 8)?
        .into_pointer_value();
    let slot_value = |name: &str| -> Result<IntValue<'ctx>, JitError> {
        let whole = e
            .load_aligned(e.i64().into(), value_ptr, 8)?
            .into_int_value();
        Ok(b.build_int_truncate_or_bit_cast(whole, val.get_type(), name)?)
    };
    let store_value = |x: IntValue<'ctx>| -> Result<(), JitError> {
        let whole = b.build_int_z_extend_or_bit_cast(x, e.i64(), "")?;
        e.store_aligned(value_ptr, whole.into(), 8)
    };
    let same = b.build_int_compare(
        IntPredicate::EQ,
        b.build_ptr_to_int(target, e.i64(), "")?,
        b.build_ptr_to_int(ptr, e.i64(), "")?,
        "",
    )?;
    b.build_conditional_branch(same, combine_bb, evict_bb)?;

    b.position_at_end(combine_bb);
    store_value(combine(fl, op, elem, slot_value("posted")?, val)?)?;
    b.build_unconditional_branch(done)?;

    b.position_at_end(evict_bb);
    let empty = b.build_is_null(target, "")?;
    let apply_bb = e.cx.append_basic_block(fl.func, "post.apply");
    b.build_conditional_branch(empty, take_bb, apply_bb)?;
    b.position_at_end(apply_bb);
    lane_update(
        fl,
        op,
        elem,
        target,
        slot_value("evicted")?,
        None,
        Via::Atomic,
    )?;
    b.build_unconditional_branch(take_bb)?;

    b.position_at_end(take_bb);
    e.store_aligned(target_ptr, ptr.into(), 8)?;
    store_value(val)?;
    b.build_unconditional_branch(done)?;

    b.position_at_end(done);
    Ok(())
}

/// The pointer of lane `lane`'s element: `base + offset` (offsets are
/// unsigned, 32 or 64 bits).
fn lane_pointer<'ctx>(
    fl: &FnLowering<'ctx, '_>,
    base: PointerValue<'ctx>,
    off: IntValue<'ctx>,
) -> Result<PointerValue<'ctx>, JitError> {
    let e = fl.e;
    let off = e.b.build_int_z_extend_or_bit_cast(off, e.i64(), "")?;
    // SAFETY (for LLVM): the offset is an accessing lane's, in bounds.
    Ok(unsafe { e.b.build_gep(e.cx.i8_type(), base, &[off], "")? })
}

/// The only accessing lane (there is exactly one): one update, its old
/// value in that lane and 0 elsewhere.
fn one_lane<'ctx>(
    fl: &FnLowering<'ctx, '_>,
    lanes: &Lanes<'ctx>,
    op: AtomOp,
    elem: NumFormat,
    v: V<'ctx>,
    v2: Option<V<'ctx>>,
    via: Via,
) -> Result<V<'ctx>, JitError> {
    let e = fl.e;
    let b = &e.b;
    let lane = match only_lane(fl) {
        Some(k) => e.i32().const_int(k.into(), false),
        // Not `lowest_lane_in`: these extracts may be hoisted above the
        // test that one lane is active (`Emit::lowest_lane`).
        None => e.lowest_lane(e.mask_to_bits(lanes.mask)?)?,
    };
    let off = b
        .build_extract_element(lanes.offsets, lane, "")?
        .into_int_value();
    let ptr = lane_pointer(fl, lanes.base, off)?;
    let val = b.build_extract_element(v, lane, "")?.into_int_value();
    let new = match v2 {
        Some(n) => Some(b.build_extract_element(n, lane, "")?.into_int_value()),
        None => None,
    };
    let old = lane_update(fl, op, elem, ptr, val, new, via)?;
    // The mask has just that lane: a select, not an insert at a variable
    // lane (which goes through the stack).
    let zero = v.get_type().const_zero();
    Ok(b.build_select(lanes.mask, e.splat(old.into())?, zero, "")?
        .into_vector_value())
}

/// Where the loop reads a lane's operand.
enum LaneSource<'ctx> {
    /// The same constant in every lane.
    Constant(IntValue<'ctx>),
    /// A stack copy of the vector.
    Array(PointerValue<'ctx>),
}

/// One update per accessing lane in ascending lane order (a loop over the
/// mask's set bits, or for plain updates of all 32 lanes straight-line
/// code). Offsets (`offsets`, a stack copy of the lanes'),
/// values and results go through stack arrays indexed by the lane, so no
/// 32-lane vector is rebuilt per iteration.
#[allow(clippy::too_many_arguments)]
fn lane_loop<'ctx>(
    fl: &FnLowering<'ctx, '_>,
    lanes: &Lanes<'ctx>,
    offsets: PointerValue<'ctx>,
    op: AtomOp,
    elem: NumFormat,
    v: V<'ctx>,
    v2: Option<V<'ctx>>,
    via: Via,
) -> Result<V<'ctx>, JitError> {
    let e = fl.e;
    let b = &e.b;
    let vt = v.get_type();
    let elem_t = vt.get_element_type().into_int_type();
    let off_vt = lanes.offsets.get_type();
    let off_t = off_vt.get_element_type().into_int_type();
    let spill = |x: V<'ctx>, name: &str| -> Result<PointerValue<'ctx>, JitError> {
        let slot = fl.entry_alloca(x.get_type(), name)?;
        b.build_store(slot, x)?;
        Ok(slot)
    };
    // Constant operands (a histogram's 1) need no array.
    let source = |x: V<'ctx>, name: &str| -> Result<LaneSource<'ctx>, JitError> {
        Ok(match fl.e.constant_splat(x) {
            Some(c) => LaneSource::Constant(c),
            None => LaneSource::Array(spill(x, name)?),
        })
    };
    let values = source(v, "atom.values")?;
    let news = match v2 {
        Some(n) => Some(source(n, "atom.new")?),
        None => None,
    };
    let results = spill(vt.const_zero(), "atom.old")?;
    let entry_bits = e.mask_to_bits(lanes.mask)?;
    let body = e.cx.append_basic_block(fl.func, "atom.lane");
    let exit = e.cx.append_basic_block(fl.func, "atom.done");
    let update = |lane: IntValue<'ctx>| -> Result<(), JitError> {
        let lane64 = b.build_int_z_extend(lane, e.i64(), "")?;
        // SAFETY (for LLVM): lane < 32 indexes the 32-element stack arrays.
        let slot = |array: PointerValue<'ctx>, t| unsafe { b.build_gep(t, array, &[lane64], "") };
        let off = b
            .build_load(off_t, slot(offsets, off_t)?, "")?
            .into_int_value();
        let ptr = lane_pointer(fl, lanes.base, off)?;
        let read = |source: &LaneSource<'ctx>| -> Result<IntValue<'ctx>, JitError> {
            Ok(match source {
                LaneSource::Constant(c) => *c,
                LaneSource::Array(array) => b
                    .build_load(elem_t, slot(*array, elem_t)?, "")?
                    .into_int_value(),
            })
        };
        let val = read(&values)?;
        let new = match &news {
            Some(n) => Some(read(n)?),
            None => None,
        };
        let old = lane_update(fl, op, elem, ptr, val, new, via)?;
        b.build_store(slot(results, elem_t)?, old)?;
        Ok(())
    };
    if via == Via::Plain {
        // A whole warp's plain updates as straight-line code: on the Intel
        // Xeon this was measured on, the loop over the mask's bits ran at
        // half the speed of 32 updates that read fixed stack slots (on an
        // AMD Zen 4 the loop was a little faster; `docs/performance-log.md`,
        // "Straight-line updates of shared memory").
        let straight = e.cx.append_basic_block(fl.func, "atom.every.lane");
        let some = e.cx.append_basic_block(fl.func, "atom.some.lanes");
        let all =
            b.build_int_compare(IntPredicate::EQ, entry_bits, e.i32().const_all_ones(), "")?;
        b.build_conditional_branch(all, straight, some)?;
        b.position_at_end(straight);
        for lane in 0..LANES {
            update(e.i32().const_int(lane.into(), false))?;
        }
        b.build_unconditional_branch(exit)?;
        b.position_at_end(some);
    }
    // Rotated (the test at the bottom) so each lane costs one branch.
    let entry = e.current_block()?;
    b.build_conditional_branch(any_lane(fl, entry_bits)?, body, exit)?;
    b.position_at_end(body);
    let bits_phi = b.build_phi(e.i32(), "atom.lanes")?;
    let bits = bits_phi.as_basic_value().into_int_value();
    update(e.lowest_lane_in(bits)?)?;
    let rest = b.build_and(
        bits,
        b.build_int_sub(bits, e.i32().const_int(1, false), "")?,
        "",
    )?;
    let latch = e.current_block()?;
    bits_phi.add_incoming(&[(&entry_bits, entry), (&rest, latch)]);
    b.build_conditional_branch(any_lane(fl, rest)?, body, exit)?;
    b.position_at_end(exit);
    Ok(b.build_load(vt, results, "")?.into_vector_value())
}
