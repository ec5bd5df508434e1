//! sin, cos, exp2, log2 and pow: `warpjit_ir::semantics::math`'s generic
//! routines instantiated with LLVM vector operations, so compiled code runs
//! the very same sequence of IEEE operations as the interpreter (with
//! AVX-512, exp2's final scaling is one `vscalef` that rounds the same
//! product once).

use super::routine::{
    add_routine_attributes, call_shared, caller_target, RoutineBody, RoutineSpec,
};
use super::FnLowering;
use crate::emit::{Emit, LANES};
use crate::JitError;
use inkwell::attributes::Attribute;
use inkwell::module::Linkage;
use inkwell::values::{FunctionValue, VectorValue};
use inkwell::{FloatPredicate, IntPredicate};
use std::cell::RefCell;
use warpjit_ir::semantics::math::{self, FloatOps, FloatWidth};
use warpjit_ir::{Op, Type, UnaryOp};

type V<'ctx> = VectorValue<'ctx>;

/// `FloatOps` on `<32 x float>` / `<32 x double>`. Builder errors cannot be
/// returned through the trait, so the first one is kept and reported after
/// the routine; the failed step yields poison meanwhile.
struct VecOps<'ctx, 'a, const W64: bool> {
    e: &'a Emit<'ctx, 'a>,
    error: RefCell<Option<JitError>>,
}

impl<'ctx, const W64: bool> VecOps<'ctx, '_, W64> {
    fn fty(&self) -> Type {
        if W64 {
            Type::F64
        } else {
            Type::F32
        }
    }
    fn bits(&self) -> u32 {
        if W64 {
            64
        } else {
            32
        }
    }
    fn ok<T: Copy>(&self, r: Result<T, inkwell::builder::BuilderError>, fallback: T) -> T {
        match r {
            Ok(v) => v,
            Err(err) => {
                self.error.borrow_mut().get_or_insert(err.into());
                fallback
            }
        }
    }
    fn fpoison(&self) -> V<'ctx> {
        self.e.vec_type(self.fty()).get_poison()
    }
    fn ipoison(&self) -> V<'ctx> {
        self.e.int_vec(self.bits()).get_poison()
    }
    fn mpoison(&self) -> V<'ctx> {
        self.e.i1().vec_type(LANES).get_poison()
    }
}

impl<'ctx, const W64: bool> FloatOps for VecOps<'ctx, '_, W64> {
    type F = V<'ctx>;
    type I = V<'ctx>;
    type M = V<'ctx>;
    const WIDTH: FloatWidth = if W64 {
        FloatWidth::F64
    } else {
        FloatWidth::F32
    };

    fn float(&self, value: f64) -> V<'ctx> {
        let bits = if W64 {
            value.to_bits()
        } else {
            u64::from((value as f32).to_bits())
        };
        self.e.splat_const(self.fty(), bits)
    }
    fn int(&self, value: i64) -> V<'ctx> {
        self.e.splat_int(self.bits(), value as u64)
    }
    fn add(&self, a: V<'ctx>, b: V<'ctx>) -> V<'ctx> {
        self.ok(self.e.b.build_float_add(a, b, ""), self.fpoison())
    }
    fn sub(&self, a: V<'ctx>, b: V<'ctx>) -> V<'ctx> {
        self.ok(self.e.b.build_float_sub(a, b, ""), self.fpoison())
    }
    fn mul(&self, a: V<'ctx>, b: V<'ctx>) -> V<'ctx> {
        self.ok(self.e.b.build_float_mul(a, b, ""), self.fpoison())
    }
    fn fma(&self, a: V<'ctx>, b: V<'ctx>, c: V<'ctx>) -> V<'ctx> {
        match self.e.call_intrinsic(
            "llvm.fma",
            &[a.get_type().into()],
            &[a.into(), b.into(), c.into()],
        ) {
            Ok(v) => v.into_vector_value(),
            Err(err) => {
                self.error.borrow_mut().get_or_insert(err);
                self.fpoison()
            }
        }
    }
    fn lt(&self, a: V<'ctx>, b: V<'ctx>) -> V<'ctx> {
        self.ok(
            self.e.b.build_float_compare(FloatPredicate::OLT, a, b, ""),
            self.mpoison(),
        )
    }
    fn le(&self, a: V<'ctx>, b: V<'ctx>) -> V<'ctx> {
        self.ok(
            self.e.b.build_float_compare(FloatPredicate::OLE, a, b, ""),
            self.mpoison(),
        )
    }
    fn eq(&self, a: V<'ctx>, b: V<'ctx>) -> V<'ctx> {
        self.ok(
            self.e.b.build_float_compare(FloatPredicate::OEQ, a, b, ""),
            self.mpoison(),
        )
    }
    fn select(&self, mask: V<'ctx>, a: V<'ctx>, b: V<'ctx>) -> V<'ctx> {
        match self.e.b.build_select(mask, a, b, "") {
            Ok(v) => v.into_vector_value(),
            Err(err) => {
                self.error.borrow_mut().get_or_insert(err.into());
                a
            }
        }
    }
    fn bitcast_to_int(&self, a: V<'ctx>) -> V<'ctx> {
        match self.e.float_bits(a) {
            Ok(v) => v,
            Err(err) => {
                self.error.borrow_mut().get_or_insert(err);
                self.ipoison()
            }
        }
    }
    fn bitcast_to_float(&self, a: V<'ctx>) -> V<'ctx> {
        match self.e.b.build_bit_cast(a, self.e.vec_type(self.fty()), "") {
            Ok(v) => v.into_vector_value(),
            Err(err) => {
                self.error.borrow_mut().get_or_insert(err.into());
                self.fpoison()
            }
        }
    }
    fn int_add(&self, a: V<'ctx>, b: V<'ctx>) -> V<'ctx> {
        self.ok(self.e.b.build_int_add(a, b, ""), self.ipoison())
    }
    fn int_sub(&self, a: V<'ctx>, b: V<'ctx>) -> V<'ctx> {
        self.ok(self.e.b.build_int_sub(a, b, ""), self.ipoison())
    }
    fn int_and(&self, a: V<'ctx>, b: V<'ctx>) -> V<'ctx> {
        self.ok(self.e.b.build_and(a, b, ""), self.ipoison())
    }
    fn int_xor(&self, a: V<'ctx>, b: V<'ctx>) -> V<'ctx> {
        self.ok(self.e.b.build_xor(a, b, ""), self.ipoison())
    }
    fn int_shl(&self, a: V<'ctx>, amount: u32) -> V<'ctx> {
        let n = self.e.splat_int(self.bits(), u64::from(amount));
        self.ok(self.e.b.build_left_shift(a, n, ""), self.ipoison())
    }
    fn int_shr_arith(&self, a: V<'ctx>, amount: u32) -> V<'ctx> {
        let n = self.e.splat_int(self.bits(), u64::from(amount));
        self.ok(self.e.b.build_right_shift(a, n, true, ""), self.ipoison())
    }
    fn int_eq(&self, a: V<'ctx>, b: V<'ctx>) -> V<'ctx> {
        self.ok(
            self.e.b.build_int_compare(IntPredicate::EQ, a, b, ""),
            self.mpoison(),
        )
    }
    /// With AVX-512, `vscalefps`/`vscalefpd`: one instruction that rounds
    /// `a * 2^n` once, as the default's two multiplies do (the first is
    /// exact), in place of those and the integer work building the powers.
    fn scale_by_power_of_two(&self, a: V<'ctx>, n: V<'ctx>, n_float: V<'ctx>) -> V<'ctx> {
        if !self.e.avx512 {
            return math::scale_in_two_steps(self, a, n);
        }
        match scalef::<W64>(self.e, a, n_float) {
            Ok(v) => v,
            Err(err) => {
                self.error.borrow_mut().get_or_insert(err);
                self.fpoison()
            }
        }
    }
}

/// `a * 2^floor(n)` rounded once, by 512-bit `vscalef` on each quarter or
/// half of the 32 lanes.
fn scalef<'ctx, const W64: bool>(
    e: &Emit<'ctx, '_>,
    a: V<'ctx>,
    n: V<'ctx>,
) -> Result<V<'ctx>, JitError> {
    let (name, part) = if W64 {
        ("llvm.x86.avx512.mask.scalef.pd.512", 8)
    } else {
        ("llvm.x86.avx512.mask.scalef.ps.512", 16)
    };
    // All lanes, rounding as the current mode (round to nearest even).
    let all = e.int_t(part).const_all_ones();
    let current_direction = e.i32().const_int(4, false);
    let mut parts = Vec::new();
    for from in (0..LANES).step_by(part as usize) {
        let (a_part, n_part) = (e.lane_run(a, from, part)?, e.lane_run(n, from, part)?);
        let args = [
            a_part.into(),
            n_part.into(),
            a_part.get_type().get_poison().into(),
            all.into(),
            current_direction.into(),
        ];
        parts.push(e.call_intrinsic(name, &[], &args)?.into_vector_value());
    }
    // Pairwise concatenation back to 32 lanes.
    while parts.len() > 1 {
        parts = parts
            .chunks(2)
            .map(|pair| e.concat(pair[0], pair[1]))
            .collect::<Result<_, _>>()?;
    }
    Ok(parts[0])
}

fn run<'ctx, 'a, const W64: bool>(
    e: &'a Emit<'ctx, 'a>,
    f: impl FnOnce(&VecOps<'ctx, 'a, W64>) -> V<'ctx>,
) -> Result<V<'ctx>, JitError> {
    let ops = VecOps::<W64> {
        e,
        error: RefCell::new(None),
    };
    let v = f(&ops);
    match ops.error.into_inner() {
        Some(err) => Err(err),
        None => Ok(v),
    }
}

/// exp2, log2, sin or cos of `x` (f32 or f64): the routine's operations
/// inline, or at levels 0 and 1 a call of the routine shared between
/// modules. Inline, each costs 2-5 ms of code generation; the call costs
/// the code around it its interleaving with the routine (W8 ran about 12%
/// slower with calls at level 2).
pub fn unary<'ctx>(
    fl: &FnLowering<'ctx, '_>,
    op: UnaryOp,
    x: V<'ctx>,
    ty: Type,
) -> Result<V<'ctx>, JitError> {
    let e = fl.e;
    let Some(shared) = e.shared_routines.as_ref().filter(|_| e.call_math) else {
        return inline(e, op, x, ty);
    };
    let name = routine_name(op, ty);
    let spec = RoutineSpec {
        name: name.clone(),
        body: RoutineBody::Math { op, ty },
    };
    let declare = || declare(e, &name, ty, &caller_target(fl.func));
    call_shared(e, shared, spec, declare, &[x.into()])
}

/// The routine's operations on `x`, emitted where the builder is.
fn inline<'ctx>(
    e: &Emit<'ctx, '_>,
    op: UnaryOp,
    x: V<'ctx>,
    ty: Type,
) -> Result<V<'ctx>, JitError> {
    macro_rules! with {
        ($w:literal) => {
            run::<$w>(e, |o| match op {
                UnaryOp::Exp2 => math::exp2(o, x),
                UnaryOp::Log2 => math::log2(o, x),
                UnaryOp::Sin => math::sin(o, x),
                _ => math::cos(o, x),
            })
        };
    }
    if ty == Type::F64 {
        with!(true)
    } else {
        with!(false)
    }
}

fn routine_name(op: UnaryOp, ty: Type) -> String {
    format!("warpjit.math.{}.{}", Op::Unary(op).mnemonic(), ty.name())
}

/// `<32 x T> (<32 x T>)`, the routine's function without a body.
fn declare<'ctx>(
    e: &Emit<'ctx, '_>,
    name: &str,
    ty: Type,
    target: &[Attribute],
) -> FunctionValue<'ctx> {
    let vt = e.vec_type(ty);
    let f = e.module.add_function(
        name,
        vt.fn_type(&[vt.into()], false),
        Some(Linkage::External),
    );
    add_routine_attributes(e, f, target);
    f
}

/// Defines the routine `name` computing `op` of `ty` (see [`unary`]).
pub(super) fn define_routine<'ctx>(
    e: &Emit<'ctx, '_>,
    name: &str,
    op: UnaryOp,
    ty: Type,
    target: &[Attribute],
) -> Result<(), JitError> {
    let f = declare(e, name, ty, target);
    let entry = e.cx.append_basic_block(f, "entry");
    e.b.position_at_end(entry);
    let x = f
        .get_first_param()
        .ok_or_else(|| JitError::Internal("a math routine without a parameter".into()))?
        .into_vector_value();
    let y = inline(e, op, x, ty)?;
    e.b.build_return(Some(&y))?;
    Ok(())
}

/// `pow x, y = exp2(y * log2(x))`, each step as the IR operations.
pub fn pow<'ctx>(
    fl: &FnLowering<'ctx, '_>,
    x: V<'ctx>,
    y: V<'ctx>,
    ty: Type,
) -> Result<V<'ctx>, JitError> {
    let l = unary(fl, UnaryOp::Log2, x, ty)?;
    let p = fl.e.b.build_float_mul(y, l, "")?;
    unary(fl, UnaryOp::Exp2, p, ty)
}
