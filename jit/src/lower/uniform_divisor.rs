//! 32-bit division and remainder by a divisor that is the same in every
//! lane but known only at run time: a multiply by a reciprocal computed
//! once per warp on the scalar (Granlund and Montgomery, "Division by
//! invariant integers using multiplication", figure 4.1).
//!
//! The unsigned quotient of 32 lanes costs milliseconds of code
//! generation inline (4.5 ms for `llc` on its own; W1's cold compile is
//! 1-2.5 ms shorter with the call). Outside loops it is a call of a
//! routine compiled once per thread (`routine.rs`); the call is marked as
//! touching no memory, so LLVM makes one call of a `div` and a `rem` of the
//! same operands. Inside a loop it stays inline, where its code runs every
//! iteration.

use super::routine::{
    add_routine_attributes, call_shared, caller_target, RoutineBody, RoutineSpec,
};
use super::FnLowering;
use crate::emit::Emit;
use crate::JitError;
use inkwell::attributes::{Attribute, AttributeLoc};
use inkwell::module::Linkage;
use inkwell::values::{FunctionValue, IntValue, VectorValue};
use inkwell::IntPredicate;

type V<'ctx> = VectorValue<'ctx>;

const ROUTINE: &str = "warpjit.div.uniform.u32";

/// `a / d` (`quotient`) or `a % d` in every lane, signed or not, for a
/// scalar `d`, with the results of the general division: by 0 the
/// quotient is all ones and the remainder the dividend; signed division
/// truncates toward zero and MIN / -1 is MIN with remainder 0.
pub(super) fn divide<'ctx>(
    fl: &FnLowering<'ctx, '_>,
    a: V<'ctx>,
    d: IntValue<'ctx>,
    signed: bool,
    quotient: bool,
) -> Result<V<'ctx>, JitError> {
    let e = fl.e;
    let b = &e.b;
    let i32t = e.i32();
    let by_zero = b.build_int_compare(IntPredicate::EQ, d, i32t.const_zero(), "")?;
    let nonzero = b
        .build_select(by_zero, i32t.const_int(1, false), d, "")?
        .into_int_value();
    let lanes_zero = a.get_type().const_zero();
    // Magnitudes for signed division (|MIN| wraps to MIN, 2^31 unsigned).
    let (dividend, divisor) = if signed {
        let negative = b.build_int_compare(IntPredicate::SLT, a, lanes_zero, "")?;
        let a_abs = b.build_select(negative, b.build_int_neg(a, "")?, a, "")?;
        let d_negative = b.build_int_compare(IntPredicate::SLT, nonzero, i32t.const_zero(), "")?;
        let d_abs = b.build_select(d_negative, b.build_int_neg(nonzero, "")?, nonzero, "")?;
        (a_abs.into_vector_value(), d_abs.into_int_value())
    } else {
        (a, nonzero)
    };
    let mut q = unsigned_quotient(fl, dividend, divisor)?;
    if signed {
        let signs = b.build_xor(a, e.splat(nonzero.into())?, "")?;
        let differ = b.build_int_compare(IntPredicate::SLT, signs, lanes_zero, "")?;
        q = b
            .build_select(differ, b.build_int_neg(q, "")?, q, "")?
            .into_vector_value();
    }
    let v = if quotient {
        b.build_select(by_zero, e.splat_int(32, u64::MAX), q, "")?
    } else {
        let r = b.build_int_sub(a, b.build_int_mul(q, e.splat(nonzero.into())?, "")?, "")?;
        b.build_select(by_zero, a, r, "")?
    };
    Ok(v.into_vector_value())
}

/// `x / d` unsigned for a nonzero `d`: the routine's call where modules
/// share routines and the code is outside loops, else its operations.
fn unsigned_quotient<'ctx>(
    fl: &FnLowering<'ctx, '_>,
    x: V<'ctx>,
    d: IntValue<'ctx>,
) -> Result<V<'ctx>, JitError> {
    let e = fl.e;
    let Some(shared) = e.shared_routines.as_ref().filter(|_| !fl.in_loop()) else {
        return inline_quotient(e, x, d);
    };
    let spec = RoutineSpec {
        name: ROUTINE.to_string(),
        body: RoutineBody::UniformQuotient,
    };
    let declare = || declare(e, &caller_target(fl.func));
    call_shared(e, shared, spec, declare, &[x.into(), d.into()])
}

/// `x / d` unsigned for a nonzero `d`, emitted where the builder is. With
/// l = ceil(log2 d) and m = floor(2^32 (2^l - d) / d) + 1 (below 2^32) and
/// t the high half of m * x, the quotient is
/// (t + ((x - t) >> min(l, 1))) >> max(l - 1, 0) for every 32-bit x.
fn inline_quotient<'ctx>(
    e: &Emit<'ctx, '_>,
    x: V<'ctx>,
    d: IntValue<'ctx>,
) -> Result<V<'ctx>, JitError> {
    let b = &e.b;
    let (i32t, i64t) = (e.i32(), e.i64());
    let splat = |v: IntValue<'ctx>| e.splat(v.into());
    let below = b.build_int_sub(d, i32t.const_int(1, false), "")?;
    let zeros = e.call_intrinsic(
        "llvm.ctlz",
        &[i32t.into()],
        &[below.into(), e.i1().const_zero().into()],
    )?;
    let l = b.build_int_sub(i32t.const_int(32, false), zeros.into_int_value(), "")?;
    let wide = |v| b.build_int_z_extend(v, i64t, "");
    let d64 = wide(d)?;
    let power = b.build_left_shift(i64t.const_int(1, false), wide(l)?, "")?;
    let excess = b.build_left_shift(
        b.build_int_sub(power, d64, "")?,
        i64t.const_int(32, false),
        "",
    )?;
    let m = b.build_int_add(
        b.build_int_unsigned_div(excess, d64, "")?,
        i64t.const_int(1, false),
        "",
    )?;
    let shift1 = b
        .build_select(
            b.build_int_compare(IntPredicate::EQ, l, i32t.const_zero(), "")?,
            i32t.const_zero(),
            i32t.const_int(1, false),
            "",
        )?
        .into_int_value();
    let shift2 = b.build_int_sub(l, shift1, "")?;
    // The high halves of the 64-bit products x * m (one `vpmuludq` per
    // pair of lanes).
    let lanes64 = e.int_vec(64);
    let product = b.build_int_mul(
        b.build_int_z_extend(x, lanes64, "")?,
        b.build_int_z_extend(splat(b.build_int_truncate(m, i32t, "")?)?, lanes64, "")?,
        "",
    )?;
    let high = b.build_right_shift(product, e.splat_int(64, 32), false, "")?;
    let t = b.build_int_truncate(high, e.int_vec(32), "")?;
    let half = b.build_right_shift(b.build_int_sub(x, t, "")?, splat(shift1)?, false, "")?;
    Ok(b.build_right_shift(b.build_int_add(t, half, "")?, splat(shift2)?, false, "")?)
}

/// `<32 x i32> (<32 x i32> x, i32 d)`, the routine without a body: it reads
/// and writes no memory and always returns, so equal calls are one.
fn declare<'ctx>(e: &Emit<'ctx, '_>, target: &[Attribute]) -> FunctionValue<'ctx> {
    let vt = e.int_vec(32);
    let f = e.module.add_function(
        ROUTINE,
        vt.fn_type(&[vt.into(), e.i32().into()], false),
        Some(Linkage::External),
    );
    add_routine_attributes(e, f, target);
    for (attr, value) in [
        ("memory", 0),
        ("willreturn", 0),
        ("nosync", 0),
        ("nofree", 0),
    ] {
        let id = Attribute::get_named_enum_kind_id(attr);
        f.add_attribute(
            AttributeLoc::Function,
            e.cx.create_enum_attribute(id, value),
        );
    }
    f
}

/// Defines the routine (see [`unsigned_quotient`]) for the callers' `target`.
pub(super) fn define_routine(e: &Emit<'_, '_>, target: &[Attribute]) -> Result<(), JitError> {
    let f = declare(e, target);
    e.b.position_at_end(e.cx.append_basic_block(f, "entry"));
    let param = |n| {
        f.get_nth_param(n)
            .ok_or_else(|| JitError::Internal("a division routine without its parameters".into()))
    };
    let q = inline_quotient(e, param(0)?.into_vector_value(), param(1)?.into_int_value())?;
    e.b.build_return(Some(&q))?;
    Ok(())
}
