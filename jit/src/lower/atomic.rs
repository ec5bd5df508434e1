//! Atomics (`atom.OP`): real atomic instructions on buffers, one per lane
//! in ascending lane order, except an `add` whose lanes all use one
//! address (one atomic of their sum); in shared memory, a plain load and
//! store per lane. The checked per-lane access comes from [`super::memory`].

use super::memory::{
    access, active_lanes_equal, any_lane, first_access, mask_without_helpers, Access,
};
use super::FnLowering;
use crate::abi;
use crate::emit::LANES;
use crate::JitError;
use inkwell::llvm_sys::core::LLVMBuildAtomicRMW;
use inkwell::llvm_sys::{LLVMAtomicOrdering, LLVMAtomicRMWBinOp};
use inkwell::types::VectorType;
use inkwell::values::AsValueRef;
use inkwell::values::{IntValue, PointerValue, VectorValue};
use inkwell::IntPredicate;
use inkwell::{AtomicOrdering, AtomicRMWBinOp};
use warpjit_ir::{AtomOp, MemRef, NumFormat, Type};

type V<'ctx> = VectorValue<'ctx>;

/// When some lane accesses and all accessing lanes use one offset: that
/// offset and true.
fn same_offset<'ctx>(
    fl: &FnLowering<'ctx, '_>,
    a: &Access<'ctx>,
) -> Result<(IntValue<'ctx>, IntValue<'ctx>), JitError> {
    let (bits, _, at) = first_access(fl, a)?;
    let some = any_lane(fl, bits)?;
    let equal = active_lanes_equal(fl, a.mask, fl.e.splat(at.into())?, a.offsets)?;
    Ok((at, fl.e.b.build_and(equal, some, "")?))
}

/// `atom.add` of every accessing lane to one address as one atomic add of
/// their (wrapping) sum. Lane `l` gets the old value plus the values of the
/// accessing lanes below it: what adding one lane at a time in ascending
/// order gives. Other lanes get 0.
fn aggregated_add<'ctx>(
    fl: &FnLowering<'ctx, '_>,
    a: &Access<'ctx>,
    offset: IntValue<'ctx>,
    v: V<'ctx>,
) -> Result<V<'ctx>, JitError> {
    let e = fl.e;
    let b = &e.b;
    let vt = v.get_type();
    let zero = vt.const_zero();
    let mine = b.build_select(a.mask, v, zero, "")?.into_vector_value();
    // Inclusive prefix sums in five shift-and-add steps.
    let mut scan = mine;
    for k in [1u32, 2, 4, 8, 16] {
        let idx: Vec<_> = (0..LANES)
            .map(|l| {
                // Lanes below k take zero (element 32 + l of the zero vector).
                let src = if l >= k { l - k } else { LANES + l };
                e.i32().const_int(u64::from(src), false)
            })
            .collect();
        let shifted = b.build_shuffle_vector(scan, zero, VectorType::const_vector(&idx), "")?;
        scan = b.build_int_add(scan, shifted, "")?;
    }
    let last = e.i32().const_int(u64::from(LANES - 1), false);
    let total = b.build_extract_element(scan, last, "")?.into_int_value();
    // SAFETY (for LLVM): the offset is one accessing lane's, in bounds.
    let ptr = unsafe { b.build_gep(e.cx.i8_type(), a.base, &[offset], "")? };
    let old = b.build_atomicrmw(
        AtomicRMWBinOp::Add,
        ptr,
        total,
        AtomicOrdering::SequentiallyConsistent,
    )?;
    let before = b.build_int_sub(scan, mine, "")?;
    let olds = b.build_int_add(e.splat(old.into())?, before, "")?;
    Ok(b.build_select(a.mask, olds, zero, "")?.into_vector_value())
}

/// The update of `atom.OP` (not `cswap`, `iwrap`, `dwrap`) as a plain load
/// and store of the element at `ptr`; returns the old value.
fn plain_update<'ctx>(
    fl: &FnLowering<'ctx, '_>,
    op: AtomOp,
    elem: NumFormat,
    ptr: PointerValue<'ctx>,
    val: IntValue<'ctx>,
) -> Result<IntValue<'ctx>, JitError> {
    let e = fl.e;
    let b = &e.b;
    let align = elem.bytes();
    let old = e
        .load_aligned(val.get_type().into(), ptr, align)?
        .into_int_value();
    let pick = |pred: IntPredicate| -> Result<IntValue<'ctx>, JitError> {
        let keep = b.build_int_compare(pred, old, val, "")?;
        Ok(b.build_select(keep, old, val, "")?.into_int_value())
    };
    let signed = elem.is_signed();
    let new = match op {
        AtomOp::Add => b.build_int_add(old, val, "")?,
        AtomOp::And => b.build_and(old, val, "")?,
        AtomOp::Or => b.build_or(old, val, "")?,
        AtomOp::Xor => b.build_xor(old, val, "")?,
        AtomOp::Min if signed => pick(IntPredicate::SLT)?,
        AtomOp::Min => pick(IntPredicate::ULT)?,
        AtomOp::Max if signed => pick(IntPredicate::SGT)?,
        AtomOp::Max => pick(IntPredicate::UGT)?,
        AtomOp::Exch => val,
        AtomOp::Cswap | AtomOp::Iwrap | AtomOp::Dwrap => {
            return Err(JitError::Internal(format!(
                "{op:?} has no plain shared-memory form"
            )))
        }
    };
    e.store_aligned(ptr, new.into(), align)?;
    Ok(old)
}

/// `atom.OP.FMT`: real atomic instructions, one per active non-helper
/// in-bounds lane, in ascending lane order (a loop over the mask's set bits).
/// Other lanes get 0.
#[allow(clippy::too_many_arguments)]
pub fn atomic<'ctx>(
    fl: &FnLowering<'ctx, '_>,
    mem: MemRef,
    op: AtomOp,
    elem: NumFormat,
    addr: V<'ctx>,
    addr_ty: Type,
    v: V<'ctx>,
    v2: Option<V<'ctx>>,
) -> Result<V<'ctx>, JitError> {
    let e = fl.e;
    let b = &e.b;
    let m = mask_without_helpers(fl)?;
    let a = access(fl, mem, elem.bytes(), addr, addr_ty, m, abi::FAULT_ATOMIC)?;
    let w = elem.bits();
    let vt = e.int_vec(w);
    let results = fl.entry_alloca(vt, "atom.old")?;
    b.build_store(results, vt.const_zero())?;
    let pending = fl.entry_alloca(e.i32(), "atom.lanes")?;
    b.build_store(pending, e.mask_to_bits(a.mask)?)?;
    let header = e.cx.append_basic_block(fl.func, "atom.next");
    let body = e.cx.append_basic_block(fl.func, "atom.lane");
    let exit = e.cx.append_basic_block(fl.func, "atom.done");
    if op == AtomOp::Add && a.lane_stride == 0 {
        let one_bb = e.cx.append_basic_block(fl.func, "atom.one.address");
        let one_address = same_offset(fl, &a)?;
        b.build_conditional_branch(one_address.1, one_bb, header)?;
        b.position_at_end(one_bb);
        let olds = aggregated_add(fl, &a, one_address.0, v)?;
        b.build_store(results, olds)?;
        b.build_unconditional_branch(exit)?;
    } else {
        b.build_unconditional_branch(header)?;
    }
    b.position_at_end(header);
    let bits = b.build_load(e.i32(), pending, "")?.into_int_value();
    let more = any_lane(fl, bits)?;
    b.build_conditional_branch(more, body, exit)?;
    b.position_at_end(body);
    let lane: IntValue = e
        .call_intrinsic(
            "llvm.cttz",
            &[e.i32().into()],
            &[bits.into(), e.i1().const_int(1, false).into()],
        )?
        .into_int_value();
    let off = b
        .build_extract_element(a.offsets, lane, "")?
        .into_int_value();
    let off = if a.lane_stride == 0 {
        off
    } else {
        let lane64 = b.build_int_z_extend(lane, e.i64(), "")?;
        let base = b.build_int_mul(lane64, e.i64().const_int(a.lane_stride, false), "")?;
        b.build_int_add(off, base, "")?
    };
    // SAFETY (for LLVM): the offset is in bounds; the lane's bit is in the mask.
    let ptr = unsafe { b.build_gep(e.cx.i8_type(), a.base, &[off], "")? };
    let val = b.build_extract_element(v, lane, "")?.into_int_value();
    let order = AtomicOrdering::SequentiallyConsistent;
    let plain = matches!(mem, MemRef::Shared(_))
        && matches!(
            op,
            AtomOp::Add
                | AtomOp::Min
                | AtomOp::Max
                | AtomOp::And
                | AtomOp::Or
                | AtomOp::Xor
                | AtomOp::Exch
        );
    let old = match op {
        // A workgroup's shared memory is touched only by its own warps,
        // which run on one thread and switch only at barriers: a plain
        // read-modify-write per lane, in lane order, is indivisible there
        // and far cheaper than a locked instruction.
        _ if plain => plain_update(fl, op, elem, ptr, val)?,
        AtomOp::Cswap => {
            let new = v2.ok_or_else(|| JitError::Internal("cswap without a new value".into()))?;
            let new = b.build_extract_element(new, lane, "")?.into_int_value();
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
        _ => {
            let signed = elem.is_signed();
            let rmw = match op {
                AtomOp::Add => AtomicRMWBinOp::Add,
                AtomOp::Min if signed => AtomicRMWBinOp::Min,
                AtomOp::Min => AtomicRMWBinOp::UMin,
                AtomOp::Max if signed => AtomicRMWBinOp::Max,
                AtomOp::Max => AtomicRMWBinOp::UMax,
                AtomOp::And => AtomicRMWBinOp::And,
                AtomOp::Or => AtomicRMWBinOp::Or,
                AtomOp::Xor => AtomicRMWBinOp::Xor,
                _ => AtomicRMWBinOp::Xchg,
            };
            b.build_atomicrmw(rmw, ptr, val, order)?
        }
    };
    let cur = b.build_load(vt, results, "")?.into_vector_value();
    let cur = b.build_insert_element(cur, old, lane, "")?;
    b.build_store(results, cur)?;
    let rest = b.build_and(
        bits,
        b.build_int_sub(bits, e.i32().const_int(1, false), "")?,
        "",
    )?;
    b.build_store(pending, rest)?;
    b.build_unconditional_branch(header)?;
    b.position_at_end(exit);
    Ok(b.build_load(vt, results, "")?.into_vector_value())
}
