//! Keeps LLVM 19's x86 code generator away from zero-extending mask moves,
//! which its register allocator can spill as plain copies.
//!
//! `instcombine` turns a select of lane masks on a lane-constant condition
//! (`select(lane_id >= 8, false, p)`: the lowest 8 lanes take `p`, the
//! others are off) into a `shufflevector` that keeps the lowest lanes of a
//! mask and fills the rest with constants. On AVX-512 the instruction
//! selector makes that a `kmovb`/`kmovw` between mask registers, which
//! clears the upper bits. When the result is spilled, LLVM 19 stores the
//! move's source instead, with all its bits, and the reload brings back
//! lanes that should be off: the fuzzer found a store that recorded faults
//! for 16 lanes of a warp where 8 were active.
//!
//! This pass rewrites each such shuffle of `i1` lanes back into selects on
//! a constant condition: lanes kept in place from a non-constant operand
//! are selected from it, every other lane is a constant. The code
//! generator turns those into `kand`/`kor` with constant masks, which hold
//! all their bits.

use super::operand;
use inkwell::builder::Builder;
use inkwell::context::Context;
use inkwell::llvm_sys::core::{
    LLVMGetMaskValue, LLVMGetNumMaskElements, LLVMGetUndefMaskElem, LLVMReplaceAllUsesWith,
};
use inkwell::module::Module;
use inkwell::types::{BasicTypeEnum, VectorType};
use inkwell::values::{
    AsValueRef, BasicValueEnum, InstructionOpcode, InstructionValue, VectorValue,
};

/// Rewrites every shuffle of `i1` lanes in `module` that keeps lanes in
/// place or fills them with constants.
pub fn rewrite<'ctx>(cx: &'ctx Context, module: &Module<'ctx>) {
    let builder = cx.create_builder();
    super::each_instruction(module, |inst| {
        rewrite_shuffle(cx, &builder, inst);
    });
}

/// Where a lane of the shuffle's result comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Lane {
    /// The same lane of operand 0 or 1.
    InPlace(usize),
    /// A constant (an undefined lane is false).
    Constant(bool),
}

/// Lane `lane` of `v`, a constant vector of `i1`; an undefined or poison
/// lane is taken as false.
fn constant_lane(v: VectorValue<'_>, lane: u32) -> bool {
    crate::emit::constant_int_lane(v, lane).is_some_and(|x| x & 1 == 1)
}

/// The source of each lane of `shuffle`, if every lane is in place or a
/// constant (and so the result is as wide as the inputs).
fn lanes(shuffle: InstructionValue<'_>, inputs: [VectorValue<'_>; 2]) -> Option<Vec<Lane>> {
    let width = inputs[0].get_type().get_size();
    // SAFETY: `shuffle` is a shufflevector instruction.
    let count = unsafe { LLVMGetNumMaskElements(shuffle.as_value_ref()) };
    if count != width {
        return None;
    }
    let undefined = unsafe { LLVMGetUndefMaskElem() };
    (0..count)
        .map(|lane| {
            // SAFETY: as above, `lane` is below the mask's length.
            let index = unsafe { LLVMGetMaskValue(shuffle.as_value_ref(), lane) };
            if index == undefined {
                return Some(Lane::Constant(false));
            }
            let index = u32::try_from(index).ok()?;
            let (input, element) = if index < width {
                (0, index)
            } else {
                (1, index - width)
            };
            if inputs[input].is_const() {
                Some(Lane::Constant(constant_lane(inputs[input], element)))
            } else if element == lane {
                Some(Lane::InPlace(input))
            } else {
                None
            }
        })
        .collect()
}

/// Replaces `shuffle` by selects on constant conditions if it is a shuffle
/// of `i1` lanes in place or constant; false if it leaves it alone.
fn rewrite_shuffle<'ctx>(
    cx: &'ctx Context,
    b: &Builder<'ctx>,
    shuffle: InstructionValue<'ctx>,
) -> bool {
    if shuffle.get_opcode() != InstructionOpcode::ShuffleVector {
        return false;
    }
    let (Some(BasicValueEnum::VectorValue(a)), Some(BasicValueEnum::VectorValue(c))) =
        (operand(shuffle, 0), operand(shuffle, 1))
    else {
        return false;
    };
    let is_mask = matches!(a.get_type().get_element_type(),
        BasicTypeEnum::IntType(t) if t.get_bit_width() == 1);
    if !is_mask {
        return false;
    }
    let Some(lanes) = lanes(shuffle, [a, c]) else {
        return false;
    };
    let bool_t = cx.bool_type();
    let bits = |f: &dyn Fn(Lane) -> bool| {
        let lanes: Vec<_> = lanes
            .iter()
            .map(|&l| bool_t.const_int(u64::from(f(l)), false))
            .collect();
        VectorType::const_vector(&lanes)
    };
    let constants = bits(&|l| l == Lane::Constant(true));
    b.position_before(&shuffle);
    let mut result = constants;
    for (input, value) in [(1, c), (0, a)] {
        if !lanes.contains(&Lane::InPlace(input)) {
            continue;
        }
        let from_input = bits(&|l| l == Lane::InPlace(input));
        let Ok(selected) = b.build_select(from_input, value, result, "") else {
            return false;
        };
        result = selected.into_vector_value();
    }
    // The result takes the shuffle's name, for readable dumps.
    if let Some(name) = shuffle.get_name().and_then(|n| n.to_str().ok()) {
        let name = name.to_owned();
        shuffle.set_name("").ok();
        result.set_name(&name);
    }
    // SAFETY: both are values of one function, of the same type.
    unsafe { LLVMReplaceAllUsesWith(shuffle.as_value_ref(), result.as_value_ref()) };
    shuffle.erase_from_basic_block();
    true
}

#[cfg(test)]
mod tests {
    use inkwell::context::Context;
    use inkwell::memory_buffer::MemoryBuffer;

    /// The optimised module's shuffle, from the fuzzer's case: lanes 0-7
    /// from a broadcast, lanes 8-31 false.
    const SHUFFLE: &str = r#"
define <32 x i1> @f(i1 %u, <32 x i1> %m) {
  %b = insertelement <32 x i1> poison, i1 %u, i64 0
  %s = shufflevector <32 x i1> %b, <32 x i1> poison, <32 x i32> <i32 0, i32 0, i32 0, i32 0, i32 0, i32 0, i32 0, i32 0, i32 poison, i32 poison, i32 poison, i32 poison, i32 poison, i32 poison, i32 poison, i32 poison, i32 poison, i32 poison, i32 poison, i32 poison, i32 poison, i32 poison, i32 poison, i32 poison, i32 poison, i32 poison, i32 poison, i32 poison, i32 poison, i32 poison, i32 poison, i32 poison>
  %k = shufflevector <32 x i1> %s, <32 x i1> <i1 poison, i1 poison, i1 poison, i1 poison, i1 poison, i1 poison, i1 poison, i1 poison, i1 false, i1 true, i1 false, i1 false, i1 false, i1 false, i1 false, i1 false, i1 false, i1 false, i1 false, i1 false, i1 false, i1 false, i1 false, i1 false, i1 false, i1 false, i1 false, i1 false, i1 false, i1 false, i1 false, i1 false>, <32 x i32> <i32 0, i32 1, i32 2, i32 3, i32 4, i32 5, i32 6, i32 7, i32 40, i32 41, i32 42, i32 43, i32 44, i32 45, i32 46, i32 47, i32 48, i32 49, i32 50, i32 51, i32 52, i32 53, i32 54, i32 55, i32 56, i32 57, i32 58, i32 59, i32 60, i32 61, i32 62, i32 63>
  %blend = shufflevector <32 x i1> %k, <32 x i1> %m, <32 x i32> <i32 0, i32 33, i32 2, i32 35, i32 4, i32 37, i32 6, i32 39, i32 8, i32 41, i32 10, i32 43, i32 12, i32 45, i32 14, i32 47, i32 16, i32 49, i32 18, i32 51, i32 20, i32 53, i32 22, i32 55, i32 24, i32 57, i32 26, i32 59, i32 28, i32 61, i32 30, i32 63>
  %half = shufflevector <32 x i1> %m, <32 x i1> poison, <16 x i32> <i32 0, i32 1, i32 2, i32 3, i32 4, i32 5, i32 6, i32 7, i32 8, i32 9, i32 10, i32 11, i32 12, i32 13, i32 14, i32 15>
  %wide = shufflevector <16 x i1> %half, <16 x i1> zeroinitializer, <32 x i32> <i32 0, i32 1, i32 2, i32 3, i32 4, i32 5, i32 6, i32 7, i32 8, i32 9, i32 10, i32 11, i32 12, i32 13, i32 14, i32 15, i32 16, i32 17, i32 18, i32 19, i32 20, i32 21, i32 22, i32 23, i32 24, i32 25, i32 26, i32 27, i32 28, i32 29, i32 30, i32 31>
  %both = and <32 x i1> %blend, %wide
  %moved = shufflevector <32 x i1> %both, <32 x i1> poison, <32 x i32> <i32 1, i32 0, i32 2, i32 3, i32 4, i32 5, i32 6, i32 7, i32 8, i32 9, i32 10, i32 11, i32 12, i32 13, i32 14, i32 15, i32 16, i32 17, i32 18, i32 19, i32 20, i32 21, i32 22, i32 23, i32 24, i32 25, i32 26, i32 27, i32 28, i32 29, i32 30, i32 31>
  ret <32 x i1> %moved
}
"#;

    #[test]
    fn in_place_and_constant_lanes_become_selects() {
        let cx = Context::create();
        let buffer = MemoryBuffer::create_from_memory_range_copy(SHUFFLE.as_bytes(), "t");
        let module = cx.create_module_from_ir(buffer).expect("parses");
        super::rewrite(&cx, &module);
        module.verify().expect("verifies");
        let text = module.print_to_string().to_string();
        // The broadcast keeps its shuffle; the in-place one becomes a
        // select and the blend two; the shuffles that change the width
        // and the permutation stay.
        assert_eq!(text.matches("shufflevector").count(), 4, "{text}");
        assert_eq!(text.matches(" select ").count(), 3, "{text}");
        // Lane 9's constant true survives; the undefined lanes are false.
        let kept = text
            .lines()
            .find(|l| l.contains("%k = select"))
            .expect("the kept lanes' select");
        assert!(
            kept.contains("<32 x i1> <i1 false, i1 false, i1 false, i1 false, i1 false, i1 false, i1 false, i1 false, i1 false, i1 true, i1 false"),
            "{kept}"
        );
    }
}
