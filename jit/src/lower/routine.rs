//! Routines compiled once per thread, target and optimisation level
//! (`engine/routines.rs`) and called by every module that declares them:
//! the lane-by-lane paths of loads and stores (`memory/lanes.rs`), the
//! math functions (`math.rs`) and division by a uniform divisor
//! (`uniform_divisor.rs`). A routine is the same code whichever kernel
//! calls it, and code generation for it costs milliseconds; compiled into
//! each module, it was a large part of the cold compile of the kernels
//! that need it.

use crate::emit::Emit;
use crate::lower::{math, memory, uniform_divisor};
use crate::JitError;
use inkwell::attributes::{Attribute, AttributeLoc};
use inkwell::values::{BasicMetadataValueEnum, FunctionValue, VectorValue};
use std::cell::RefCell;
use warpjit_ir::{MemFormat, Type, UnaryOp};

/// A routine: its symbol and what it computes.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct RoutineSpec {
    pub name: String,
    pub body: RoutineBody,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RoutineBody {
    /// The lane path of a load or store (`kind` is `abi::FAULT_LOAD` or
    /// `abi::FAULT_STORE`) of `format`, testing for runs per group of
    /// lanes when `groups`.
    Lanes {
        kind: u32,
        format: MemFormat,
        groups: bool,
    },
    /// exp2, log2, sin or cos of 32 lanes of `ty` (f32 or f64).
    Math { op: UnaryOp, ty: Type },
    /// The unsigned quotient of 32 lanes by a nonzero scalar.
    UniformQuotient,
}

/// Defines the routine `spec` in `llmod` as an exported function for the
/// target `cpu` and `features`: the code a module that declares it calls.
pub fn define_routine<'ctx>(
    cx: &'ctx inkwell::context::Context,
    llmod: &inkwell::module::Module<'ctx>,
    spec: &RoutineSpec,
    cpu: &str,
    features: &str,
) -> Result<(), JitError> {
    let e = Emit::new(cx, llmod, features, false);
    let target = crate::emit::target_attributes(cx, cpu, features);
    match spec.body {
        RoutineBody::Lanes {
            kind,
            format,
            groups,
        } => memory::define_lanes_routine(&e, &spec.name, kind, format, groups, &target),
        RoutineBody::Math { op, ty } => math::define_routine(&e, &spec.name, op, ty, &target),
        RoutineBody::UniformQuotient => uniform_divisor::define_routine(&e, &target),
    }
}

/// The attributes of a routine's function: not inlined (one copy per
/// module, never one per use), and `target`, the callers' target, so both
/// sides pass the vectors alike.
pub(crate) fn add_routine_attributes(e: &Emit<'_, '_>, f: FunctionValue<'_>, target: &[Attribute]) {
    for attr in ["noinline", "nounwind"] {
        let id = Attribute::get_named_enum_kind_id(attr);
        f.add_attribute(AttributeLoc::Function, e.cx.create_enum_attribute(id, 0));
    }
    for a in target {
        f.add_attribute(AttributeLoc::Function, *a);
    }
}

/// The target attributes of the function being lowered, for the routines
/// it declares.
pub(crate) fn caller_target<'ctx>(f: FunctionValue<'ctx>) -> Vec<Attribute> {
    ["target-cpu", "target-features"]
        .iter()
        .filter_map(|key| f.get_string_attribute(AttributeLoc::Function, key))
        .collect()
}

/// Calls the shared routine `spec` with `args` and returns its vector
/// result. On the module's first call, `declare` declares it and `spec`
/// joins `shared`, the routines the engine supplies.
pub(crate) fn call_shared<'ctx>(
    e: &Emit<'ctx, '_>,
    shared: &RefCell<Vec<RoutineSpec>>,
    spec: RoutineSpec,
    declare: impl FnOnce() -> FunctionValue<'ctx>,
    args: &[BasicMetadataValueEnum<'ctx>],
) -> Result<VectorValue<'ctx>, JitError> {
    let f = match e.module.get_function(&spec.name) {
        Some(f) => f,
        None => {
            let f = declare();
            shared.borrow_mut().push(spec);
            f
        }
    };
    e.b.build_call(f, args, "")?
        .try_as_basic_value()
        .basic()
        .map(|v| v.into_vector_value())
        .ok_or_else(|| {
            JitError::Internal(format!(
                "the routine {} has no result",
                f.get_name().to_string_lossy()
            ))
        })
}
