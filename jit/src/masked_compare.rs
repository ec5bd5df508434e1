//! The test of a divergent `if` on a float compare, as AVX-512 compares
//! under the active lanes' write mask.
//!
//! `if a < b` takes the lanes that are active and have `a < b`, and
//! branches on whether there is one. Written as a 32-lane AND and test,
//! that is two compares, a `kunpckwd`, a `kandd` and a `kortestd`; per
//! 16-lane half with the active half as the compare's write mask it is two
//! compares and a `kortestw`. The halves are made with the x86 intrinsic,
//! as LLVM folds a generic AND of halves back into one 32-lane AND.

use crate::emit::{Emit, LANES};
use crate::JitError;
use inkwell::types::BasicTypeEnum;
use inkwell::values::{InstructionOpcode, IntValue, VectorValue};
use inkwell::FloatPredicate;

/// `active & cond` and whether it has a lane, when `cond` is a compare of
/// two 32-lane `f32` vectors and the target has AVX-512; `None` otherwise.
pub(crate) fn and_any<'ctx>(
    e: &Emit<'ctx, '_>,
    active: VectorValue<'ctx>,
    cond: VectorValue<'ctx>,
) -> Result<Option<(VectorValue<'ctx>, IntValue<'ctx>)>, JitError> {
    if !e.avx512 {
        return Ok(None);
    }
    let Some(compare) = cond.as_instruction() else {
        return Ok(None);
    };
    if compare.get_opcode() != InstructionOpcode::FCmp {
        return Ok(None);
    }
    let Some(predicate) = compare.get_fcmp_predicate().and_then(x86_predicate) else {
        return Ok(None);
    };
    let operands: Option<Vec<VectorValue<'ctx>>> = (0..2)
        .map(|i| {
            compare
                .get_operand(i)
                .and_then(|o| o.value())
                .filter(|v| v.is_vector_value())
                .map(|v| v.into_vector_value())
        })
        .collect();
    let Some(operands) = operands else {
        return Ok(None);
    };
    let f32_lanes = e.cx.f32_type().vec_type(LANES);
    if operands[0].get_type() != f32_lanes || operands[1].get_type() != f32_lanes {
        return Ok(None);
    }
    let half = LANES / 2;
    let i32t = e.i32();
    let mut halves = Vec::with_capacity(2);
    for from in [0, half] {
        let x = e.lane_run(operands[0], from, half)?;
        let y = e.lane_run(operands[1], from, half)?;
        let write_mask = e.lane_run(active, from, half)?;
        let args = [
            x.into(),
            y.into(),
            i32t.const_int(predicate, false).into(),
            write_mask.into(),
            // The current rounding mode: no embedded rounding or SAE.
            i32t.const_int(4, false).into(),
        ];
        let none: [BasicTypeEnum<'ctx>; 0] = [];
        halves.push(
            e.call_intrinsic("llvm.x86.avx512.mask.cmp.ps.512", &none, &args)?
                .into_vector_value(),
        );
    }
    let either = e.b.build_or(halves[0], halves[1], "")?;
    let bits =
        e.b.build_bit_cast(either, e.cx.i16_type(), "")?
            .into_int_value();
    let taken = e.b.build_int_compare(
        inkwell::IntPredicate::NE,
        bits,
        e.cx.i16_type().const_zero(),
        "",
    )?;
    Ok(Some((e.concat(halves[0], halves[1])?, taken)))
}

/// The `vcmpps` immediate of an LLVM float predicate (the quiet forms:
/// no exception is observed either way).
fn x86_predicate(p: FloatPredicate) -> Option<u64> {
    Some(match p {
        FloatPredicate::OEQ => 0x00,
        FloatPredicate::OLT => 0x11,
        FloatPredicate::OLE => 0x12,
        FloatPredicate::UNE => 0x04,
        FloatPredicate::OGE => 0x1d,
        FloatPredicate::OGT => 0x1e,
        _ => return None,
    })
}
