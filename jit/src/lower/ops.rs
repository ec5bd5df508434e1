//! Instructions other than calls: each computes its results in all 32
//! lanes, with every operand made safe first (inactive lanes execute too).

use super::{memory, uniform_divisor, FnLowering};
use crate::abi::offsets;
use crate::emit::LANES;
use crate::JitError;
use inkwell::values::{BasicValueEnum, FloatValue, IntMathValue, IntValue, VectorValue};
use inkwell::{FloatPredicate, IntPredicate};
use warpjit_ir::semantics::lane_mask;
use warpjit_ir::{BinaryOp, Builtin, CmpOp, Dim, Inst, Op, Type, UnaryOp};

type V<'ctx> = VectorValue<'ctx>;

pub fn lower_inst<'ctx>(fl: &mut FnLowering<'ctx, '_>, i: &Inst) -> Result<Vec<V<'ctx>>, JitError> {
    let e = fl.e;
    let arg = |n: usize| -> Result<V<'ctx>, JitError> {
        let o = i
            .args
            .get(n)
            .ok_or_else(|| JitError::Internal(format!("{:?} lacks operand {n}", i.op)))?;
        fl.operand(o)
    };
    let ty0 = i.args.first().map(|o| fl.operand_type(o));
    let one = |v: V<'ctx>| Ok(vec![v]);
    match &i.op {
        Op::Mov => one(arg(0)?),
        Op::Select => {
            let (c, a, b) = (arg(0)?, arg(1)?, arg(2)?);
            if let Some([c, a, b]) = scalars(fl, [c, a, b]) {
                return one(e.splat(e.b.build_select(c.into_int_value(), a, b, "")?)?);
            }
            one(e.b.build_select(c, a, b, "")?.into_vector_value())
        }
        Op::Unary(u) => one(unary(fl, *u, arg(0)?, ty0.unwrap_or(Type::I32))?),
        Op::Binary(b) => one(binary(fl, *b, arg(0)?, arg(1)?, ty0.unwrap_or(Type::I32))?),
        Op::Fma => {
            let t = arg(0)?.get_type();
            let v = e.call_intrinsic(
                "llvm.fma",
                &[t.into()],
                &[arg(0)?.into(), arg(1)?.into(), arg(2)?.into()],
            )?;
            one(v.into_vector_value())
        }
        Op::Cmp(c) => one(compare(fl, *c, arg(0)?, arg(1)?, ty0.unwrap_or(Type::I32))?),
        Op::Bitcast(to) => {
            let from = ty0.unwrap_or(*to);
            let x = arg(0)?;
            let bits = to_bits(fl, x, from)?;
            let bits = if from.is_float() {
                canonical_nan(fl, x, bits, from)?
            } else {
                bits
            };
            one(from_bits(fl, bits, *to)?)
        }
        Op::Pk64 => {
            let lo = e.b.build_int_z_extend(arg(0)?, e.int_vec(64), "")?;
            let hi = e.b.build_int_z_extend(arg(1)?, e.int_vec(64), "")?;
            let hi = e.b.build_left_shift(hi, e.splat_int(64, 32), "")?;
            one(e.b.build_or(lo, hi, "")?)
        }
        Op::Up64 => {
            let x = arg(0)?;
            let lo = e.b.build_int_truncate(x, e.int_vec(32), "")?;
            let hi = e.b.build_right_shift(x, e.splat_int(64, 32), false, "")?;
            let hi = e.b.build_int_truncate(hi, e.int_vec(32), "")?;
            Ok(vec![lo, hi])
        }
        Op::Builtin(b) => one(builtin(fl, *b)?),
        Op::ActiveMask => {
            let m = fl.mask.current(e)?;
            one(e.splat(e.mask_to_bits(m)?.into())?)
        }
        Op::Ballot => {
            let m = fl.mask.current(e)?;
            let p = e.b.build_and(m, arg(0)?, "")?;
            one(e.splat(e.mask_to_bits(p)?.into())?)
        }
        Op::Demote => {
            let m = fl.mask.current(e)?;
            let bits = e.mask_to_bits(m)?;
            let old = e
                .load_field(fl.ctxp, offsets::HELPER_MASK, e.i32().into(), 4)?
                .into_int_value();
            let new = e.b.build_or(old, bits, "")?;
            e.store_field(fl.ctxp, offsets::HELPER_MASK, new.into(), 4)?;
            Ok(vec![])
        }
        // Other SMs see global memory: a sequentially consistent fence, as
        // the runtime's interpreter gives `membar`.
        Op::MemBar => {
            e.b.build_fence(inkwell::AtomicOrdering::SequentiallyConsistent, false, "")?;
            Ok(vec![])
        }
        Op::Atom { mem, op, format } => {
            let v2 = if i.args.len() > 2 {
                Some(arg(2)?)
            } else {
                None
            };
            // Only the remark uses it.
            let one_address = fl.wants_remarks()
                && fl
                    .shapes
                    .address(i)
                    .is_some_and(|a| a.lanes == super::shape::LaneShape::Uniform);
            let old = super::atomic::atomic(
                fl,
                super::atomic::Access {
                    mem: *mem,
                    op: *op,
                    elem: *format,
                    one_address,
                },
                arg(0)?,
                ty0.unwrap_or(Type::I32),
                arg(1)?,
                v2,
            )?;
            one(old)
        }
        Op::Vote { op, guarded } => {
            let guard = if *guarded { Some(arg(1)?) } else { None };
            let (r, ballot, part) = super::warp::vote(fl, *op, arg(0)?, guard)?;
            for (place, v) in i.results.iter().zip([r, ballot]) {
                fl.write_masked(place, v, part)?;
            }
            Ok(vec![])
        }
        Op::Tg(op) => one(super::warp::thread_group(
            fl,
            *op,
            arg(0)?,
            ty0.unwrap_or(Type::I32),
        )?),
        Op::Shuffle { mode, form } => {
            let (v, valid) = super::warp::shuffle(
                fl,
                *mode,
                *form,
                arg(0)?,
                arg(1)?,
                arg(2)?,
                ty0.unwrap_or(Type::I32),
            )?;
            Ok(vec![v, valid])
        }
        Op::Quad(q) => {
            let add = if i.args.len() > 1 {
                Some(arg(1)?)
            } else {
                None
            };
            one(super::warp::quad(fl, *q, arg(0)?, add)?)
        }
        Op::Deriv { axis, fine } => one(super::warp::derivative(fl, *axis, *fine, arg(0)?)?),
        Op::Cvt { dst, src, round } => one(super::convert::cvt(fl, *dst, *src, *round, arg(0)?)?),
        Op::Bfe { signed } => one(bfe(
            fl,
            *signed,
            arg(0)?,
            arg(1)?,
            arg(2)?,
            ty0.unwrap_or(Type::I32),
        )?),
        Op::Bfi => one(bfi(
            fl,
            arg(0)?,
            arg(1)?,
            arg(2)?,
            arg(3)?,
            ty0.unwrap_or(Type::I32),
        )?),
        Op::Load { mem, format } => {
            let addr_ty = ty0.unwrap_or(Type::I32);
            let facts = fl.address_facts(i, format.bytes(), addr_ty);
            memory::load(fl, *mem, *format, arg(0)?, addr_ty, facts)
        }
        Op::Store { mem, format } => {
            let mut values = Vec::new();
            for n in 1..i.args.len() {
                values.push((arg(n)?, fl.operand_type(&i.args[n])));
            }
            let addr_ty = ty0.unwrap_or(Type::I32);
            let facts = fl.address_facts(i, format.bytes(), addr_ty);
            memory::store(fl, *mem, *format, arg(0)?, addr_ty, &values, facts)?;
            Ok(vec![])
        }
        // Calls and barriers are statements of the function lowering.
        other => Err(JitError::Internal(format!(
            "{other:?} reached the instruction lowering"
        ))),
    }
}

/// The bits of a value as an integer vector of its width.
pub fn to_bits<'ctx>(fl: &FnLowering<'ctx, '_>, x: V<'ctx>, ty: Type) -> Result<V<'ctx>, JitError> {
    let e = fl.e;
    Ok(match ty {
        Type::F32 | Type::F64 => {
            e.b.build_bit_cast(x, e.int_vec(ty.bits()), "")?
                .into_vector_value()
        }
        _ => x,
    })
}

pub fn from_bits<'ctx>(
    fl: &FnLowering<'ctx, '_>,
    bits: V<'ctx>,
    ty: Type,
) -> Result<V<'ctx>, JitError> {
    let e = fl.e;
    Ok(match ty {
        Type::F32 | Type::F64 => {
            e.b.build_bit_cast(bits, e.vec_type(ty), "")?
                .into_vector_value()
        }
        _ => bits,
    })
}

/// `bits` with every NaN lane of `x` (type `ty`) replaced by the canonical NaN.
pub fn canonical_nan<'ctx>(
    fl: &FnLowering<'ctx, '_>,
    x: V<'ctx>,
    bits: V<'ctx>,
    ty: Type,
) -> Result<V<'ctx>, JitError> {
    let e = fl.e;
    let (is_nan, canon) = match ty {
        Type::F16 => {
            let mag = e.b.build_and(x, e.splat_int(16, 0x7fff), "")?;
            let nan =
                e.b.build_int_compare(IntPredicate::UGT, mag, e.splat_int(16, 0x7c00), "")?;
            (nan, e.splat_int(16, 0x7fff))
        }
        Type::F32 => (
            e.b.build_float_compare(FloatPredicate::UNO, x, x, "")?,
            e.splat_int(32, 0x7fff_ffff),
        ),
        _ => (
            e.b.build_float_compare(FloatPredicate::UNO, x, x, "")?,
            e.splat_int(64, 0x7fff_ffff_ffff_ffff),
        ),
    };
    Ok(e.b
        .build_select(is_nan, canon, bits, "")?
        .into_vector_value())
}

fn lane_ids<'ctx>(fl: &FnLowering<'ctx, '_>) -> V<'ctx> {
    fl.e.lanes_const(32, u64::from)
}

/// Launch validation bounds a workgroup's invocations, so IDs within one
/// are below this in every dimension.
const MAX_INVOCATIONS: u32 = warpjit_ir::verify::MAX_WORKGROUP_INVOCATIONS as u32;

/// The warp's index in its workgroup, ranged: below the workgroup's warp
/// count when the code is compiled for one size, else below 32.
fn warp_index<'ctx>(fl: &FnLowering<'ctx, '_>) -> Result<IntValue<'ctx>, JitError> {
    let invocations =
        fl.e.workgroup
            .map_or(MAX_INVOCATIONS, |s| s.iter().product());
    let warps = invocations.div_ceil(32);
    fl.e.load_below_u32(fl.ctxp, offsets::WARP_INDEX, warps)
}

/// `local_id.d` of the warp's lane 0, ranged below the workgroup's size.
fn first_local<'ctx>(fl: &FnLowering<'ctx, '_>, d: Dim) -> Result<IntValue<'ctx>, JitError> {
    let size = fl.e.workgroup.map_or(MAX_INVOCATIONS, |s| s[d.index()]);
    let offset = offsets::FIRST_LOCAL + 4 * d.index() as u64;
    fl.e.load_below_u32(fl.ctxp, offset, size)
}

fn ctx_u32<'ctx>(fl: &FnLowering<'ctx, '_>, offset: u64) -> Result<V<'ctx>, JitError> {
    let e = fl.e;
    let v = e.load_field(fl.ctxp, offset, e.i32().into(), 4)?;
    e.splat(v)
}

/// A field every warp of the workgroup shares, read from the call's first
/// context so LLVM can hoist it out of the loop over the warps.
fn group_u32<'ctx>(fl: &FnLowering<'ctx, '_>, offset: u64) -> Result<V<'ctx>, JitError> {
    let e = fl.e;
    let v = e.load_invariant(fl.group, offset, e.i32().into(), 4)?;
    e.splat(v)
}

/// The workgroup's size along `d` as an `i32`: a constant in code compiled
/// for one size (`JitOptions::workgroup`), else read from the workgroup.
pub(super) fn workgroup_size<'ctx>(
    fl: &FnLowering<'ctx, '_>,
    d: Dim,
) -> Result<IntValue<'ctx>, JitError> {
    let e = fl.e;
    Ok(match e.workgroup {
        Some(size) => e.i32().const_int(u64::from(size[d.index()]), false),
        None => {
            let offset = offsets::WORKGROUP_SIZE + 4 * d.index() as u64;
            e.load_invariant(fl.group, offset, e.i32().into(), 4)?
                .into_int_value()
        }
    })
}

fn builtin<'ctx>(fl: &FnLowering<'ctx, '_>, b: Builtin) -> Result<V<'ctx>, JitError> {
    let e = fl.e;
    let local_index = || -> Result<V<'ctx>, JitError> {
        let w = e.splat(warp_index(fl)?.into())?;
        let base = e.b.build_int_mul(w, e.splat_int(32, 32), "")?;
        Ok(e.b.build_int_add(base, lane_ids(fl), "")?)
    };
    let size = |d: Dim| e.splat(workgroup_size(fl, d)?.into());
    let local_id = |d: Dim| local_id(fl, d);
    Ok(match b {
        Builtin::GlobalId(d) => {
            let wg = e.splat(fl.workgroup_id[d.index()].into())?;
            let base = e.b.build_int_mul(wg, size(d)?, "")?;
            e.b.build_int_add(base, local_id(d)?, "")?
        }
        Builtin::LocalId(d) => local_id(d)?,
        Builtin::WorkgroupId(d) => e.splat(fl.workgroup_id[d.index()].into())?,
        Builtin::NumWorkgroups(d) => group_u32(fl, offsets::NUM_WORKGROUPS + 4 * d.index() as u64)?,
        Builtin::WorkgroupSize(d) => size(d)?,
        Builtin::LocalIndex => local_index()?,
        Builtin::LaneId => lane_ids(fl),
        Builtin::LaneMaskEq
        | Builtin::LaneMaskGe
        | Builtin::LaneMaskGt
        | Builtin::LaneMaskLe
        | Builtin::LaneMaskLt => e.lanes_const(32, |l| u64::from(lane_mask(b, l))),
        Builtin::WarpId => ctx_u32(fl, offsets::WARP_SLOT)?,
        Builtin::SmId => group_u32(fl, offsets::SM_ID)?,
        Builtin::WarpSize => e.splat_int(32, 32),
        Builtin::WarpsPerSm => group_u32(fl, offsets::WARPS_PER_SM)?,
        Builtin::SmCount => group_u32(fl, offsets::SM_COUNT)?,
        Builtin::IsHelper => {
            let h = e.splat(fl.helper_bits()?.into())?;
            let bit = e.b.build_right_shift(h, lane_ids(fl), false, "")?;
            let bit = e.b.build_and(bit, e.splat_int(32, 1), "")?;
            e.b.build_int_truncate(bit, e.i1().vec_type(LANES), "")?
        }
    })
}

/// `local_id.d` of the warp's lanes, whose local indices are the
/// consecutive `32 * warp_index + lane`. When the workgroup is at least 32
/// wide, a warp's run of indices crosses at most one row (or plane)
/// boundary, so the ids of lane 0 (in the context) and a compare per lane
/// give the ids; narrower workgroups take a division per lane. Code for
/// one workgroup size knows which case it is, and when the x size is a
/// multiple of 32 that each warp lies in one row: lane 0's ids and the
/// lane number.
fn local_id<'ctx>(fl: &FnLowering<'ctx, '_>, d: Dim) -> Result<V<'ctx>, JitError> {
    let e = fl.e;
    let b = &e.b;
    let int = e.i32();
    if e.workgroup.is_some_and(|size| size[0] % 32 == 0) {
        let lane0 = e.splat(first_local(fl, d)?.into())?;
        return Ok(match d {
            Dim::X => b.build_int_add(lane0, lane_ids(fl), "")?,
            Dim::Y | Dim::Z => lane0,
        });
    }
    let known = |d: usize| {
        e.workgroup
            .map(|size| int.const_int(u64::from(size[d]), false))
    };
    let size_field = |offset: u64| -> Result<IntValue<'ctx>, JitError> {
        Ok(e.load_invariant(fl.group, offset, int.into(), 4)?
            .into_int_value())
    };
    // Launch validation makes sizes non-zero; the maxima keep the
    // divisions total whatever the context holds.
    let at_least_one = |v: IntValue<'ctx>| -> Result<IntValue<'ctx>, JitError> {
        let zero = b.build_int_compare(IntPredicate::EQ, v, int.const_zero(), "")?;
        Ok(b.build_select(zero, int.const_int(1, false), v, "")?
            .into_int_value())
    };
    let sx = match known(0) {
        Some(sx) => sx,
        None => at_least_one(size_field(offsets::WORKGROUP_SIZE)?)?,
    };
    let sy = match known(1) {
        Some(sy) => sy,
        None => at_least_one(size_field(offsets::WORKGROUP_SIZE + 4)?)?,
    };
    let warp = warp_index(fl)?;
    let first = b.build_int_mul(warp, int.const_int(32, false), "")?;
    let wide = b.build_int_compare(IntPredicate::UGE, sx, int.const_int(32, false), "")?;
    let wide_bb = e.cx.append_basic_block(fl.func, "local_id.wide");
    let narrow_bb = e.cx.append_basic_block(fl.func, "local_id.narrow");
    let join = e.cx.append_basic_block(fl.func, "local_id.done");
    b.build_conditional_branch(wide, wide_bb, narrow_bb)?;

    b.position_at_end(wide_bb);
    // Sizes are at most 1024 threads, so the product cannot overflow.
    let row = match d {
        Dim::X | Dim::Y => sx,
        Dim::Z => b.build_int_mul(sx, sy, "")?,
    };
    let lane0 = |d: Dim| first_local(fl, d);
    // Lane 0's place in its row (or plane).
    let r0 = match d {
        Dim::X | Dim::Y => lane0(Dim::X)?,
        Dim::Z => b.build_int_add(b.build_int_mul(lane0(Dim::Y)?, sx, "")?, lane0(Dim::X)?, "")?,
    };
    let along = b.build_int_add(e.splat(r0.into())?, lane_ids(fl), "")?;
    let row_v = e.splat(row.into())?;
    let wraps = b.build_int_compare(IntPredicate::UGE, along, row_v, "")?;
    let carry = b.build_int_z_extend(wraps, e.int_vec(32), "")?;
    let fast = match d {
        Dim::X => {
            let back = select(fl, wraps, row_v, e.splat_int(32, 0))?;
            b.build_int_sub(along, back, "")?
        }
        Dim::Y => {
            let y = b.build_int_add(e.splat(lane0(Dim::Y)?.into())?, carry, "")?;
            let full = b.build_int_compare(IntPredicate::EQ, y, e.splat(sy.into())?, "")?;
            select(fl, full, e.splat_int(32, 0), y)?
        }
        Dim::Z => b.build_int_add(e.splat(lane0(Dim::Z)?.into())?, carry, "")?,
    };
    let wide_end = e.current_block()?;
    b.build_unconditional_branch(join)?;

    b.position_at_end(narrow_bb);
    let li = b.build_int_add(e.splat(first.into())?, lane_ids(fl), "")?;
    let sxv = e.splat(sx.into())?;
    let syv = e.splat(sy.into())?;
    let slow = match d {
        Dim::X => small_rem(fl, li, sxv)?,
        Dim::Y => {
            let q = small_div(fl, li, sxv)?;
            small_rem(fl, q, syv)?
        }
        Dim::Z => {
            let sxy = b.build_int_mul(sx, sy, "")?;
            small_div(fl, li, e.splat(sxy.into())?)?
        }
    };
    let narrow_end = e.current_block()?;
    b.build_unconditional_branch(join)?;

    b.position_at_end(join);
    let phi = b.build_phi(e.int_vec(32), "")?;
    phi.add_incoming(&[(&fast, wide_end), (&slow, narrow_end)]);
    Ok(phi.as_basic_value().into_vector_value())
}

/// `a / b` for non-zero `a`, `b` below 2^24 (local indices and workgroup
/// sizes, at most 1055 and 1024): one f32 division, which is exact after
/// truncation there (a quotient just below an integer `k` is at least 1/b
/// away from it, far more than half an ulp), instead of a scalar `div` per lane.
fn small_div<'ctx>(fl: &FnLowering<'ctx, '_>, a: V<'ctx>, b: V<'ctx>) -> Result<V<'ctx>, JitError> {
    let e = fl.e;
    if b.is_const() {
        // A size known when compiling (code for one workgroup size): LLVM
        // divides by the constant with shifts or a multiply.
        return Ok(e.b.build_int_unsigned_div(a, b, "")?);
    }
    let f = e.vec_type(Type::F32);
    let af = e.b.build_unsigned_int_to_float(a, f, "")?;
    let bf = e.b.build_unsigned_int_to_float(b, f, "")?;
    let q = e.b.build_float_div(af, bf, "")?;
    Ok(e.b.build_float_to_unsigned_int(q, e.int_vec(32), "")?)
}

/// `a % b` under the bounds of [`small_div`].
fn small_rem<'ctx>(fl: &FnLowering<'ctx, '_>, a: V<'ctx>, b: V<'ctx>) -> Result<V<'ctx>, JitError> {
    let e = fl.e;
    let q = small_div(fl, a, b)?;
    let qb = e.b.build_int_mul(q, b, "")?;
    Ok(e.b.build_int_sub(a, qb, "")?)
}

/// `a / b` (or `a % b` when not `quotient`) for divisors that are never
/// zero (nor -1 under MIN when `signed`); 32-bit lanes through [`div32`],
/// other widths lane by lane.
///
/// Not LLVM's vector division: the divisor here is a select (the guard's,
/// and often the program's own `min`/`max`/`select`), and LLVM 19 threads
/// a vector division over a select's arms, folds an arm that is a constant
/// with a zero lane to poison for all lanes, and keeps the other arm's
/// quotient in every lane (`(lane / max.u(lane, 1))` became `lane`; fixed
/// in later LLVM). Scalar divisions are threaded soundly. x86 has no
/// vector integer division, so the machine code is 32 scalar divisions
/// either way.
fn divide<'ctx>(
    fl: &FnLowering<'ctx, '_>,
    a: V<'ctx>,
    b: V<'ctx>,
    signed: bool,
    quotient: bool,
) -> Result<V<'ctx>, JitError> {
    if a.get_type()
        .get_element_type()
        .into_int_type()
        .get_bit_width()
        == 32
    {
        let (q, r) = div32(fl, a, b, signed)?;
        return Ok(if quotient { q } else { r });
    }
    let e = fl.e;
    let mut out = a.get_type().get_poison();
    for lane in 0..LANES {
        let at = e.i32().const_int(u64::from(lane), false);
        let x = e.b.build_extract_element(a, at, "")?.into_int_value();
        let y = e.b.build_extract_element(b, at, "")?.into_int_value();
        let r = llvm_divide(fl, x, y, signed, quotient)?;
        out = e.b.build_insert_element(out, r, at, "")?;
    }
    Ok(out)
}

/// LLVM's own `a / b` (or `a % b`) of lanes or of one lane, for divisors
/// that are never zero (nor -1 under MIN when `signed`).
fn llvm_divide<'ctx, T: IntMathValue<'ctx>>(
    fl: &FnLowering<'ctx, '_>,
    a: T,
    b: T,
    signed: bool,
    quotient: bool,
) -> Result<T, JitError> {
    let e = fl.e;
    Ok(match (signed, quotient) {
        (false, true) => e.b.build_int_unsigned_div(a, b, "")?,
        (false, false) => e.b.build_int_unsigned_rem(a, b, "")?,
        (true, true) => e.b.build_int_signed_div(a, b, "")?,
        (true, false) => e.b.build_int_signed_rem(a, b, "")?,
    })
}

/// Quotient and remainder of 32-bit lanes, `b` never zero (nor -1 under
/// MIN when signed). x86 has no vector integer division: `udiv`/`sdiv` on
/// 32 lanes become 32 scalar divisions, which cost more compile time than
/// the rest of a small kernel. In f64 the quotient is exact after
/// truncation: |a| < 2^32 < 2^53, so the rounding error of a/b is below
/// 1/|b|, the distance from a/b to the next integer when it is not one.
fn div32<'ctx>(
    fl: &FnLowering<'ctx, '_>,
    a: V<'ctx>,
    b: V<'ctx>,
    signed: bool,
) -> Result<(V<'ctx>, V<'ctx>), JitError> {
    let e = fl.e;
    let f64s = e.cx.f64_type().vec_type(LANES);
    let to_f64 = |x: V<'ctx>| {
        if signed {
            e.b.build_signed_int_to_float(x, f64s, "")
        } else {
            e.b.build_unsigned_int_to_float(x, f64s, "")
        }
    };
    let quotient = e.b.build_float_div(to_f64(a)?, to_f64(b)?, "")?;
    let q = if signed {
        e.b.build_float_to_signed_int(quotient, e.int_vec(32), "")?
    } else {
        e.b.build_float_to_unsigned_int(quotient, e.int_vec(32), "")?
    };
    let r = e.b.build_int_sub(a, e.b.build_int_mul(q, b, "")?, "")?;
    Ok((q, r))
}

fn select<'ctx>(
    fl: &FnLowering<'ctx, '_>,
    c: V<'ctx>,
    a: V<'ctx>,
    b: V<'ctx>,
) -> Result<V<'ctx>, JitError> {
    Ok(fl.e.b.build_select(c, a, b, "")?.into_vector_value())
}

/// When integer `min`/`max` (`op`) of x and y is x, as a compare of x with y.
fn takes_first(op: BinaryOp) -> IntPredicate {
    match op {
        BinaryOp::MinS => IntPredicate::SLT,
        BinaryOp::MaxS => IntPredicate::SGT,
        BinaryOp::MinU => IntPredicate::ULT,
        _ => IntPredicate::UGT,
    }
}

/// `x` shifted by `y` (`op` is `shl`, `shr.u` or `shr.s`), of lanes or of
/// one scalar: amounts past the width (above `limit`, the width - 1)
/// shift everything out, `shr.s` by the width - 1.
fn clamped_shift<'ctx, T>(
    b: &inkwell::builder::Builder<'ctx>,
    op: BinaryOp,
    x: T,
    y: T,
    limit: T,
) -> Result<T, JitError>
where
    T: IntMathValue<'ctx>
        + inkwell::values::BasicValue<'ctx>
        + TryFrom<BasicValueEnum<'ctx>>
        + Copy,
    <T::BaseType as inkwell::types::IntMathType<'ctx>>::ValueType: Copy,
{
    let back = |v: BasicValueEnum<'ctx>| {
        T::try_from(v).map_err(|_| JitError::Internal("shift of another type".into()))
    };
    let too_far = b.build_int_compare(IntPredicate::UGT, y, limit, "")?;
    let amount = back(b.build_select(too_far, limit, y, "")?)?;
    let shifted = match op {
        BinaryOp::Shl => b.build_left_shift(x, amount, "")?,
        BinaryOp::ShrU => b.build_right_shift(x, amount, false, "")?,
        _ => return Ok(b.build_right_shift(x, amount, true, "")?),
    };
    let zero = back(x.as_basic_value_enum().get_type().const_zero())?;
    back(b.build_select(too_far, zero, shifted, "")?)
}

fn float_intrinsic<'ctx>(
    fl: &FnLowering<'ctx, '_>,
    name: &str,
    x: V<'ctx>,
) -> Result<V<'ctx>, JitError> {
    let v: BasicValueEnum<'ctx> =
        fl.e.call_intrinsic(name, &[x.get_type().into()], &[x.into()])?;
    Ok(v.into_vector_value())
}

fn unary<'ctx>(
    fl: &FnLowering<'ctx, '_>,
    u: UnaryOp,
    x: V<'ctx>,
    ty: Type,
) -> Result<V<'ctx>, JitError> {
    if let Some(v) = uniform_unary(fl, u, x, ty)? {
        return Ok(v);
    }
    let e = fl.e;
    let w = ty.bits();
    if ty.is_float() {
        return Ok(match u {
            UnaryOp::Neg => e.b.build_float_neg(x, "")?,
            UnaryOp::Abs => float_intrinsic(fl, "llvm.fabs", x)?,
            UnaryOp::Floor => float_intrinsic(fl, "llvm.floor", x)?,
            UnaryOp::Ceil => float_intrinsic(fl, "llvm.ceil", x)?,
            UnaryOp::Trunc => float_intrinsic(fl, "llvm.trunc", x)?,
            UnaryOp::Round => float_intrinsic(fl, "llvm.roundeven", x)?,
            UnaryOp::Sqrt => float_intrinsic(fl, "llvm.sqrt", x)?,
            UnaryOp::Fract => {
                let fl_ = float_intrinsic(fl, "llvm.floor", x)?;
                e.b.build_float_sub(x, fl_, "")?
            }
            UnaryOp::Rcp => e.b.build_float_div(float_one(fl, ty), x, "")?,
            UnaryOp::Rsq => {
                let s = float_intrinsic(fl, "llvm.sqrt", x)?;
                e.b.build_float_div(float_one(fl, ty), s, "")?
            }
            UnaryOp::IsNan => e.b.build_float_compare(FloatPredicate::UNO, x, x, "")?,
            UnaryOp::Exp2 | UnaryOp::Log2 | UnaryOp::Sin | UnaryOp::Cos => {
                super::math::unary(fl, u, x, ty)?
            }
            other => return Err(JitError::Unsupported(format!("{other:?} on {ty}"))),
        });
    }
    Ok(match u {
        UnaryOp::Neg => e.b.build_int_sub(x.get_type().const_zero(), x, "")?,
        UnaryOp::Abs => {
            let neg = e.b.build_int_sub(x.get_type().const_zero(), x, "")?;
            let lt =
                e.b.build_int_compare(IntPredicate::SLT, x, x.get_type().const_zero(), "")?;
            select(fl, lt, neg, x)?
        }
        UnaryOp::Not => e.b.build_not(x, "")?,
        UnaryOp::Bfr => float_intrinsic(fl, "llvm.bitreverse", x)?,
        UnaryOp::Btc => {
            let c = float_intrinsic(fl, "llvm.ctpop", x)?;
            resize32(fl, c, w)?
        }
        UnaryOp::Btfl => {
            // cttz with zero-is-poison off gives the width for 0.
            let t = count_zeros(fl, "llvm.cttz", x)?;
            let t = resize32(fl, t, w)?;
            let zero =
                e.b.build_int_compare(IntPredicate::EQ, x, x.get_type().const_zero(), "")?;
            select(fl, zero, e.splat_int(32, 0xffff_ffff), t)?
        }
        UnaryOp::BtfmU => {
            // (w - 1) - ctlz, which is -1 for 0 (ctlz = w).
            let l = count_zeros(fl, "llvm.ctlz", x)?;
            let l = resize32(fl, l, w)?;
            e.b.build_int_sub(e.splat_int(32, u64::from(w - 1)), l, "")?
        }
        UnaryOp::BtfmS => {
            // The highest bit that differs from the sign: btfm.u of x or !x.
            let neg =
                e.b.build_int_compare(IntPredicate::SLT, x, x.get_type().const_zero(), "")?;
            let differing = select(fl, neg, e.b.build_not(x, "")?, x)?;
            unary(fl, UnaryOp::BtfmU, differing, ty)?
        }
        other => return Err(JitError::Unsupported(format!("{other:?} on {ty}"))),
    })
}

/// Offset and bit count of a bitfield op: low 8 bits, widened to the value's
/// width; `inside` = the field bits below the top (0 when offset >= width),
/// and the field mask `low_mask(inside)`.
struct Field<'ctx> {
    offset: V<'ctx>,
    bits: V<'ctx>,
    inside: V<'ctx>,
    /// min(offset, w - 1): a shift amount LLVM accepts.
    shift: V<'ctx>,
    low_mask: V<'ctx>,
}

fn field<'ctx>(
    fl: &FnLowering<'ctx, '_>,
    offset: V<'ctx>,
    bits: V<'ctx>,
    w: u32,
) -> Result<Field<'ctx>, JitError> {
    let e = fl.e;
    let b = &e.b;
    let widen = |v: V<'ctx>| -> Result<V<'ctx>, JitError> {
        let v = b.build_and(v, e.splat_int(32, 0xff), "")?;
        Ok(if w == 64 {
            b.build_int_z_extend(v, e.int_vec(64), "")?
        } else {
            v
        })
    };
    let offset = widen(offset)?;
    let bits = widen(bits)?;
    let wv = e.splat_int(w, u64::from(w));
    let top = e.splat_int(w, u64::from(w - 1));
    let zero = e.int_vec(w).const_zero();
    let past = b.build_int_compare(IntPredicate::UGE, offset, wv, "")?;
    let room = b.build_int_sub(wv, offset, "")?;
    let room_lt = b.build_int_compare(IntPredicate::ULT, room, bits, "")?;
    let inside = select(fl, room_lt, room, bits)?;
    let inside = select(fl, past, zero, inside)?;
    let shift = select(fl, past, top, offset)?;
    let full = b.build_int_compare(IntPredicate::UGE, inside, wv, "")?;
    let inside_safe = select(fl, full, zero, inside)?;
    let m = b.build_left_shift(e.splat_int(w, 1), inside_safe, "")?;
    let m = b.build_int_sub(m, e.splat_int(w, 1), "")?;
    let low_mask = select(fl, full, e.splat_int(w, u64::MAX), m)?;
    Ok(Field {
        offset,
        bits,
        inside,
        shift,
        low_mask,
    })
}

/// BFE per the PTX model (semantics::bfe).
fn bfe<'ctx>(
    fl: &FnLowering<'ctx, '_>,
    signed: bool,
    x: V<'ctx>,
    offset: V<'ctx>,
    bits: V<'ctx>,
    ty: Type,
) -> Result<V<'ctx>, JitError> {
    let e = fl.e;
    let b = &e.b;
    let w = ty.bits();
    let f = field(fl, offset, bits, w)?;
    let zero = e.int_vec(w).const_zero();
    let shifted = b.build_right_shift(x, f.shift, false, "")?;
    let value = b.build_and(shifted, f.low_mask, "")?;
    let none = b.build_int_compare(IntPredicate::EQ, f.inside, zero, "")?;
    let value = select(fl, none, zero, value)?;
    let value = if signed {
        // Fill with bit min(offset + bits - 1, w - 1); bits >= 1 here.
        let last = b.build_int_add(f.offset, f.bits, "")?;
        let last = b.build_int_sub(last, e.splat_int(w, 1), "")?;
        let top = e.splat_int(w, u64::from(w - 1));
        let over = b.build_int_compare(IntPredicate::UGT, last, top, "")?;
        let last = select(fl, over, top, last)?;
        let bit = b.build_right_shift(x, last, false, "")?;
        let bit = b.build_and(bit, e.splat_int(w, 1), "")?;
        let set = b.build_int_compare(IntPredicate::NE, bit, zero, "")?;
        let filled = b.build_or(value, b.build_not(f.low_mask, "")?, "")?;
        // inside = 0: the whole result is fill bits.
        let filled = select(fl, none, e.splat_int(w, u64::MAX), filled)?;
        select(fl, set, filled, value)?
    } else {
        value
    };
    let no_bits = b.build_int_compare(IntPredicate::EQ, f.bits, zero, "")?;
    select(fl, no_bits, zero, value)
}

/// BFI per the PTX model (semantics::bfi).
fn bfi<'ctx>(
    fl: &FnLowering<'ctx, '_>,
    base: V<'ctx>,
    insert: V<'ctx>,
    offset: V<'ctx>,
    bits: V<'ctx>,
    ty: Type,
) -> Result<V<'ctx>, JitError> {
    let e = fl.e;
    let b = &e.b;
    let w = ty.bits();
    let f = field(fl, offset, bits, w)?;
    let zero = e.int_vec(w).const_zero();
    let mask = b.build_left_shift(f.low_mask, f.shift, "")?;
    let kept = b.build_and(base, b.build_not(mask, "")?, "")?;
    let ins = b.build_left_shift(insert, f.shift, "")?;
    let ins = b.build_and(ins, mask, "")?;
    let merged = b.build_or(kept, ins, "")?;
    let none = b.build_int_compare(IntPredicate::EQ, f.inside, zero, "")?;
    select(fl, none, base, merged)
}

fn count_zeros<'ctx>(
    fl: &FnLowering<'ctx, '_>,
    name: &str,
    x: V<'ctx>,
) -> Result<V<'ctx>, JitError> {
    let e = fl.e;
    let v = e.call_intrinsic(
        name,
        &[x.get_type().into()],
        &[x.into(), e.i1().const_zero().into()],
    )?;
    Ok(v.into_vector_value())
}

/// An integer count of width `w` as i32.
fn resize32<'ctx>(fl: &FnLowering<'ctx, '_>, x: V<'ctx>, w: u32) -> Result<V<'ctx>, JitError> {
    let e = fl.e;
    Ok(match w {
        32 => x,
        n if n > 32 => e.b.build_int_truncate(x, e.int_vec(32), "")?,
        _ => e.b.build_int_z_extend(x, e.int_vec(32), "")?,
    })
}

fn float_one<'ctx>(fl: &FnLowering<'ctx, '_>, ty: Type) -> V<'ctx> {
    let bits = if ty == Type::F64 {
        1f64.to_bits()
    } else {
        u64::from(1f32.to_bits())
    };
    fl.e.splat_const(ty, bits)
}

fn binary<'ctx>(
    fl: &FnLowering<'ctx, '_>,
    op: BinaryOp,
    a: V<'ctx>,
    b: V<'ctx>,
    ty: Type,
) -> Result<V<'ctx>, JitError> {
    if let Some(v) = uniform_binary(fl, op, a, b, ty)? {
        return Ok(v);
    }
    let e = fl.e;
    if ty.is_float() {
        return Ok(match op {
            BinaryOp::Add => e.b.build_float_add(a, b, "")?,
            BinaryOp::Sub => e.b.build_float_sub(a, b, "")?,
            BinaryOp::Mul => e.b.build_float_mul(a, b, "")?,
            BinaryOp::Div => e.b.build_float_div(a, b, "")?,
            BinaryOp::Min | BinaryOp::Max => min_max(fl, op == BinaryOp::Min, a, b, ty)?,
            BinaryOp::Pow => super::math::pow(fl, a, b, ty)?,
            other => return Err(JitError::Unsupported(format!("{other:?} on {ty}"))),
        });
    }
    let w = ty.bits();
    let zero = a.get_type().const_zero();
    let ones = e.splat_int(w, u64::MAX);
    let cmp = |p: IntPredicate, x: V<'ctx>, y: V<'ctx>| e.b.build_int_compare(p, x, y, "");
    Ok(match op {
        BinaryOp::Add => e.b.build_int_add(a, b, "")?,
        BinaryOp::Sub => e.b.build_int_sub(a, b, "")?,
        BinaryOp::Mul => e.b.build_int_mul(a, b, "")?,
        BinaryOp::And => e.b.build_and(a, b, "")?,
        BinaryOp::Or => e.b.build_or(a, b, "")?,
        BinaryOp::Xor => e.b.build_xor(a, b, "")?,
        BinaryOp::MinS | BinaryOp::MaxS | BinaryOp::MinU | BinaryOp::MaxU => {
            select(fl, cmp(takes_first(op), a, b)?, a, b)?
        }
        BinaryOp::DivU | BinaryOp::RemU | BinaryOp::DivS | BinaryOp::RemS => {
            let signed = matches!(op, BinaryOp::DivS | BinaryOp::RemS);
            let quotient = matches!(op, BinaryOp::DivU | BinaryOp::DivS);
            if let Some(d) =
                fl.e.constant_splat(b)
                    .and_then(|d| d.get_zero_extended_constant())
            {
                let minus_one = d == u64::MAX >> (64 - w);
                if d != 0 && !(signed && minus_one) {
                    // A constant divisor that needs no guard: LLVM turns
                    // the division into a multiply by its reciprocal.
                    return llvm_divide(fl, a, b, signed, quotient);
                }
            }
            if w == 32 {
                if let Some(d) = e.splat_scalar(b) {
                    return uniform_divisor::divide(fl, a, d.into_int_value(), signed, quotient);
                }
            }
            // Never let a zero divisor reach the division, nor -1 under MIN
            // when signed: divisor 1 gives MIN / 1 = MIN and MIN % 1 = 0,
            // exactly the results for MIN / -1.
            let by_zero = cmp(IntPredicate::EQ, b, zero)?;
            let bad = if signed {
                let min = e.splat_int(w, 1u64 << (w - 1));
                let is_min = cmp(IntPredicate::EQ, a, min)?;
                let minus_one = cmp(IntPredicate::EQ, b, ones)?;
                e.b.build_or(by_zero, e.b.build_and(is_min, minus_one, "")?, "")?
            } else {
                by_zero
            };
            let safe = select(fl, bad, e.splat_int(w, 1), b)?;
            let v = divide(fl, a, safe, signed, quotient)?;
            // By zero: the quotient is all ones, the remainder the dividend.
            select(fl, by_zero, if quotient { ones } else { a }, v)?
        }
        BinaryOp::Shl | BinaryOp::ShrU | BinaryOp::ShrS => {
            let limit = e.splat_int(w, u64::from(w - 1));
            clamped_shift(&e.b, op, a, b, limit)?
        }
        other => return Err(JitError::Unsupported(format!("{other:?} on {ty}"))),
    })
}

/// IEEE minimumNumber / maximumNumber: NaN loses, -0 < +0.
///
/// `a` is chosen by one unordered compare ("`a` is smaller, or `b` is
/// NaN") rather than by an ordered compare and a separate select for a
/// NaN `b`: LLVM 19's `instcombine` merges that pair of selects wrongly
/// when `b` is `0.0` and `a` is `abs x` (`min(abs x, 0.0)` became `abs x`
/// for negative `x`).
fn min_max<'ctx>(
    fl: &FnLowering<'ctx, '_>,
    is_min: bool,
    a: V<'ctx>,
    b: V<'ctx>,
    ty: Type,
) -> Result<V<'ctx>, JitError> {
    let e = fl.e;
    let fcmp = |p: FloatPredicate, x: V<'ctx>, y: V<'ctx>| e.b.build_float_compare(p, x, y, "");
    let (b_wins, a_wins_or_b_nan) = if is_min {
        (FloatPredicate::OLT, FloatPredicate::UGT)
    } else {
        (FloatPredicate::OGT, FloatPredicate::ULT)
    };
    let b_wins = fcmp(b_wins, b, a)?;
    let a_wins_or_b_nan = fcmp(a_wins_or_b_nan, b, a)?;
    // Equal (including +0 / -0): OR of the bits picks -0 for min, AND +0 for max.
    let ab = to_bits(fl, a, ty)?;
    let bb = to_bits(fl, b, ty)?;
    let tie = if is_min {
        e.b.build_or(ab, bb, "")?
    } else {
        e.b.build_and(ab, bb, "")?
    };
    let tie = from_bits(fl, tie, ty)?;
    let r = select(fl, b_wins, b, tie)?;
    let r = select(fl, a_wins_or_b_nan, a, r)?;
    let a_nan = fcmp(FloatPredicate::UNO, a, a)?;
    select(fl, a_nan, b, r)
}

fn compare<'ctx>(
    fl: &FnLowering<'ctx, '_>,
    c: CmpOp,
    a: V<'ctx>,
    b: V<'ctx>,
    ty: Type,
) -> Result<V<'ctx>, JitError> {
    if let Some(v) = uniform_compare(fl, c, a, b, ty)? {
        return Ok(v);
    }
    let e = fl.e;
    if ty == Type::F16 {
        // Half values compare as halves (-0 == +0, NaN unequal); widening is
        // exact and done with integer operations (no f16 libcalls).
        let ah = super::convert::f16_to_f32(fl, a)?;
        let bh = super::convert::f16_to_f32(fl, b)?;
        return compare(fl, c, ah, bh, Type::F32);
    }
    if ty.is_float() {
        return Ok(e.b.build_float_compare(float_predicate(c, ty)?, a, b, "")?);
    }
    Ok(e.b.build_int_compare(int_predicate(c, ty)?, a, b, "")?)
}

fn float_predicate(c: CmpOp, ty: Type) -> Result<FloatPredicate, JitError> {
    Ok(match c {
        CmpOp::Eq => FloatPredicate::OEQ,
        CmpOp::Ne => FloatPredicate::UNE,
        CmpOp::Lt => FloatPredicate::OLT,
        CmpOp::Le => FloatPredicate::OLE,
        CmpOp::Gt => FloatPredicate::OGT,
        CmpOp::Ge => FloatPredicate::OGE,
        other => return Err(JitError::Internal(format!("{other:?} on {ty}"))),
    })
}

fn int_predicate(c: CmpOp, ty: Type) -> Result<IntPredicate, JitError> {
    Ok(match c {
        CmpOp::Eq => IntPredicate::EQ,
        CmpOp::Ne => IntPredicate::NE,
        CmpOp::LtS => IntPredicate::SLT,
        CmpOp::LeS => IntPredicate::SLE,
        CmpOp::GtS => IntPredicate::SGT,
        CmpOp::GeS => IntPredicate::SGE,
        CmpOp::LtU => IntPredicate::ULT,
        CmpOp::LeU => IntPredicate::ULE,
        CmpOp::GtU => IntPredicate::UGT,
        CmpOp::GeU => IntPredicate::UGE,
        other => return Err(JitError::Internal(format!("{other:?} on {ty}"))),
    })
}

// Operations of splats. LLVM keeps a vector operation of splats a vector
// operation, so a uniform loop test such as `cmp.ge.s $i,
// %max_iter` cost a broadcast, a vector compare and a mask move in every
// iteration. The simple ones are done once on the scalars and their result
// splat; the same IEEE operation on one lane gives the same bits.

/// The scalars of `args` when every one is a splat.
fn scalars<'ctx, const N: usize>(
    fl: &FnLowering<'ctx, '_>,
    args: [V<'ctx>; N],
) -> Option<[BasicValueEnum<'ctx>; N]> {
    let mut out = [None; N];
    for (slot, a) in out.iter_mut().zip(args) {
        *slot = Some(fl.e.splat_scalar(a)?);
    }
    Some(out.map(|s| s.expect("every slot was filled")))
}

/// `float` or `int` built on the scalars of the splats `a` and `b` of type
/// `ty`, splat; `None` when either is no splat or the closure declines.
fn on_two_scalars<'ctx>(
    fl: &FnLowering<'ctx, '_>,
    a: V<'ctx>,
    b: V<'ctx>,
    ty: Type,
    float: impl FnOnce(FloatValue<'ctx>, FloatValue<'ctx>) -> Built<'ctx>,
    int: impl FnOnce(IntValue<'ctx>, IntValue<'ctx>) -> Built<'ctx>,
) -> Result<Option<V<'ctx>>, JitError> {
    let Some([x, y]) = scalars(fl, [a, b]) else {
        return Ok(None);
    };
    let r = match (x, y) {
        (BasicValueEnum::FloatValue(x), BasicValueEnum::FloatValue(y))
            if matches!(ty, Type::F32 | Type::F64) =>
        {
            float(x, y)?
        }
        (BasicValueEnum::IntValue(x), BasicValueEnum::IntValue(y)) if !ty.is_float() => int(x, y)?,
        _ => None,
    };
    r.map(|r| fl.e.splat(r)).transpose()
}

/// A scalar operation's result, or `None` when it has no scalar form here.
type Built<'ctx> = Result<Option<BasicValueEnum<'ctx>>, JitError>;

fn uniform_binary<'ctx>(
    fl: &FnLowering<'ctx, '_>,
    op: BinaryOp,
    a: V<'ctx>,
    b: V<'ctx>,
    ty: Type,
) -> Result<Option<V<'ctx>>, JitError> {
    let bld = &fl.e.b;
    let float = |x: FloatValue<'ctx>, y: FloatValue<'ctx>| -> Built<'ctx> {
        Ok(Some(match op {
            BinaryOp::Add => bld.build_float_add(x, y, "")?.into(),
            BinaryOp::Sub => bld.build_float_sub(x, y, "")?.into(),
            BinaryOp::Mul => bld.build_float_mul(x, y, "")?.into(),
            BinaryOp::Div => bld.build_float_div(x, y, "")?.into(),
            _ => return Ok(None),
        }))
    };
    let int = |x: IntValue<'ctx>, y: IntValue<'ctx>| -> Built<'ctx> {
        Ok(Some(match op {
            BinaryOp::Add => bld.build_int_add(x, y, "")?.into(),
            BinaryOp::Sub => bld.build_int_sub(x, y, "")?.into(),
            BinaryOp::Mul => bld.build_int_mul(x, y, "")?.into(),
            BinaryOp::And => bld.build_and(x, y, "")?.into(),
            BinaryOp::Or => bld.build_or(x, y, "")?.into(),
            BinaryOp::Xor => bld.build_xor(x, y, "")?.into(),
            BinaryOp::MinS | BinaryOp::MaxS | BinaryOp::MinU | BinaryOp::MaxU => {
                let first = bld.build_int_compare(takes_first(op), x, y, "")?;
                bld.build_select(first, x, y, "")?
            }
            BinaryOp::Shl | BinaryOp::ShrU | BinaryOp::ShrS => {
                let limit = x.get_type().const_int(u64::from(ty.bits() - 1), false);
                clamped_shift(bld, op, x, y, limit)?.into()
            }
            _ => return Ok(None),
        }))
    };
    on_two_scalars(fl, a, b, ty, float, int)
}

fn uniform_compare<'ctx>(
    fl: &FnLowering<'ctx, '_>,
    c: CmpOp,
    a: V<'ctx>,
    b: V<'ctx>,
    ty: Type,
) -> Result<Option<V<'ctx>>, JitError> {
    let bld = &fl.e.b;
    let float = |x: FloatValue<'ctx>, y: FloatValue<'ctx>| -> Built<'ctx> {
        Ok(Some(
            bld.build_float_compare(float_predicate(c, ty)?, x, y, "")?
                .into(),
        ))
    };
    let int = |x: IntValue<'ctx>, y: IntValue<'ctx>| -> Built<'ctx> {
        Ok(Some(
            bld.build_int_compare(int_predicate(c, ty)?, x, y, "")?
                .into(),
        ))
    };
    on_two_scalars(fl, a, b, ty, float, int)
}

fn uniform_unary<'ctx>(
    fl: &FnLowering<'ctx, '_>,
    u: UnaryOp,
    x: V<'ctx>,
    ty: Type,
) -> Result<Option<V<'ctx>>, JitError> {
    let Some([s]) = scalars(fl, [x]) else {
        return Ok(None);
    };
    let e = fl.e;
    let intrinsic = |name: &str| e.call_intrinsic(name, &[s.get_type()], &[s]);
    let r: BasicValueEnum<'ctx> = match s {
        BasicValueEnum::FloatValue(f) if matches!(ty, Type::F32 | Type::F64) => match u {
            UnaryOp::Neg => e.b.build_float_neg(f, "")?.into(),
            UnaryOp::Abs => intrinsic("llvm.fabs")?,
            UnaryOp::Floor => intrinsic("llvm.floor")?,
            UnaryOp::Ceil => intrinsic("llvm.ceil")?,
            UnaryOp::Trunc => intrinsic("llvm.trunc")?,
            UnaryOp::Round => intrinsic("llvm.roundeven")?,
            UnaryOp::Sqrt => intrinsic("llvm.sqrt")?,
            _ => return Ok(None),
        },
        BasicValueEnum::IntValue(i) if !ty.is_float() => match u {
            UnaryOp::Neg => e.b.build_int_neg(i, "")?.into(),
            UnaryOp::Not => e.b.build_not(i, "")?.into(),
            // A ballot's count: one `popcnt` instead of a broadcast and a
            // vector population count.
            UnaryOp::Btc if ty.bits() == 32 => intrinsic("llvm.ctpop")?,
            _ => return Ok(None),
        },
        _ => return Ok(None),
    };
    Ok(Some(e.splat(r)?))
}
