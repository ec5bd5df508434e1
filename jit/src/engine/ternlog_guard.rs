//! Keeps LLVM 19's x86 instruction selector away from a masked `vpternlog`
//! form that it encodes wrongly.
//!
//! A lane-masked update of a three-input bitwise expression, such as
//! `select(m, (a & C) | (b & ~C), a)`, selects to one `vpternlogd` that
//! merges into `a` under the mask `k`. When one input is a memory operand
//! (a constant-pool vector, or a broadcast scalar) and the operands have to
//! be rotated to put `a` first, LLVM 19 rotates the truth table the wrong
//! way round (llvm-project issue 157929, fixed after LLVM 19): the result is
//! a different bitwise function. The fuzzer found it through `bfi` with a
//! lane-varying offset in a branch.
//!
//! The merge form needs the select's fallback to be one of the bitwise
//! expression's inputs, so this pass hands the select a copy of that input
//! that LLVM cannot see through (an empty inline-assembly statement per
//! 512-bit register). The expression then selects to an unmasked
//! `vpternlog`, whose operand rotation is right, and a masked move; that is
//! one instruction more, only where the pattern occurs.

use super::operand;
use inkwell::builder::Builder;
use inkwell::context::Context;
use inkwell::llvm_sys::prelude::LLVMValueRef;
use inkwell::module::Module;
use inkwell::types::{BasicTypeEnum, VectorType};
use inkwell::values::{
    AsValueRef, BasicValue, BasicValueEnum, InstructionOpcode, InstructionValue, VectorValue,
};

/// How deep a bitwise expression can reach for its inputs and still become
/// one `vpternlog` (two levels of logic, with bitcasts between; one more for
/// the instruction selector's own rewriting).
const EXPRESSION_DEPTH: u32 = 4;

/// Bits in one AVX-512 register: the barrier is applied per register,
/// because inline assembly cannot take a value that spans several.
const REGISTER_BITS: u32 = 512;

/// Rewrites every select of `module` that could become the miscompiled
/// merge.
pub fn guard(cx: &Context, module: &Module) {
    let builder = cx.create_builder();
    super::each_instruction(module, |inst| {
        if inst.get_opcode() == InstructionOpcode::Select {
            guard_select(cx, &builder, inst);
        }
    });
}

/// Gives `select` an opaque copy of one arm when that arm is an input of
/// the bitwise expression in the other arm (either way round: the code
/// generator inverts a mask to put the expression first); false if it
/// leaves the select alone.
fn guard_select(cx: &Context, builder: &Builder, select: InstructionValue) -> bool {
    [(1, 2), (2, 1)].into_iter().any(|(expression, input)| {
        let (Some(expr), Some(BasicValueEnum::VectorValue(arm))) =
            (operand(select, expression), operand(select, input))
        else {
            return false;
        };
        let ty = arm.get_type();
        let element_bits = match ty.get_element_type() {
            BasicTypeEnum::IntType(t) => t.get_bit_width(),
            BasicTypeEnum::FloatType(t) if t == cx.f32_type() => 32,
            BasicTypeEnum::FloatType(t) if t == cx.f64_type() => 64,
            _ => 0,
        };
        // vpternlog masks lanes of 32 or 64 bits only.
        if !matches!(element_bits, 32 | 64) || arm.is_const() {
            return false;
        }
        let arm_ref = strip_bitcasts(arm.as_basic_value_enum()).as_value_ref();
        let expr = strip_bitcasts(expr);
        if !is_logic(expr) || !reaches(expr, arm_ref, EXPRESSION_DEPTH) {
            return false;
        }
        builder.position_before(&select);
        opaque_copy(cx, builder, arm, ty, element_bits)
            .is_some_and(|copy| select.set_operand(input, copy))
    })
}

fn strip_bitcasts(mut v: BasicValueEnum) -> BasicValueEnum {
    while let Some(inst) = v.as_instruction_value() {
        if inst.get_opcode() != InstructionOpcode::BitCast {
            break;
        }
        match operand(inst, 0) {
            Some(source) => v = source,
            None => break,
        }
    }
    v
}

fn is_logic(v: BasicValueEnum) -> bool {
    v.as_instruction_value().is_some_and(|i| {
        matches!(
            i.get_opcode(),
            InstructionOpcode::And | InstructionOpcode::Or | InstructionOpcode::Xor
        )
    })
}

/// Whether `input` is `expr` or an input of its and/or/xor tree within
/// `depth` levels.
fn reaches(expr: BasicValueEnum, input: LLVMValueRef, depth: u32) -> bool {
    let expr = strip_bitcasts(expr);
    if expr.as_value_ref() == input {
        return true;
    }
    if depth == 0 || !is_logic(expr) {
        return false;
    }
    let inst = expr
        .as_instruction_value()
        .expect("logic values are instructions");
    (0..2).any(|i| operand(inst, i).is_some_and(|op| reaches(op, input, depth - 1)))
}

/// `value` passed through empty inline assembly, one register at a time.
fn opaque_copy<'ctx>(
    cx: &'ctx Context,
    builder: &Builder<'ctx>,
    value: VectorValue<'ctx>,
    ty: VectorType<'ctx>,
    element_bits: u32,
) -> Option<BasicValueEnum<'ctx>> {
    let lanes = ty.get_size();
    let per_register = (REGISTER_BITS / element_bits).min(lanes);
    if !lanes.is_multiple_of(per_register) || !(lanes / per_register).is_power_of_two() {
        return None;
    }
    let i32t = cx.i32_type();
    let indices = |from: u32, count: u32| {
        let lanes: Vec<_> = (from..from + count)
            .map(|i| i32t.const_int(i as u64, false))
            .collect();
        VectorType::const_vector(&lanes)
    };
    let part_ty = match ty.get_element_type() {
        BasicTypeEnum::IntType(t) => t.vec_type(per_register),
        BasicTypeEnum::FloatType(t) => t.vec_type(per_register),
        _ => return None,
    };
    let barrier_ty = part_ty.fn_type(&[part_ty.into()], false);
    let barrier = cx.create_inline_asm(
        barrier_ty,
        String::new(),
        "=v,0".to_string(),
        false,
        false,
        None,
        false,
    );
    let mut parts = Vec::new();
    for start in (0..lanes).step_by(per_register as usize) {
        let part = if per_register == lanes {
            value
        } else {
            builder
                .build_shuffle_vector(
                    value,
                    value.get_type().get_undef(),
                    indices(start, per_register),
                    "",
                )
                .ok()?
        };
        let copied = builder
            .build_indirect_call(barrier_ty, barrier, &[part.into()], "")
            .ok()?
            .try_as_basic_value()
            .basic()?
            .into_vector_value();
        parts.push(copied);
    }
    // Join the parts pairwise back into one vector.
    while parts.len() > 1 {
        let mut joined = Vec::new();
        for pair in parts.chunks(2) {
            let width = pair[0].get_type().get_size() * 2;
            joined.push(
                builder
                    .build_shuffle_vector(pair[0], pair[1], indices(0, width), "")
                    .ok()?,
            );
        }
        parts = joined;
    }
    Some(parts[0].as_basic_value_enum())
}
