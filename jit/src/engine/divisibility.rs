//! Tests of divisibility by a constant as a multiply and a compare.
//!
//! For unsigned `w`-bit `x` and a constant `c = d * 2^k` with `d` odd,
//! `x % c == 0` exactly when `rotr(x * inv, k) <= (2^w - 1) / c`, where
//! `inv` is `d`'s inverse modulo `2^w`: multiplying by `inv` maps the
//! multiples of `d` one to one onto `0..=(2^w - 1) / d`, and the rotation
//! sends those with a low bit set among the `k` lowest (not multiples of
//! `2^k`) above the bound. LLVM's instruction selector makes this rewrite
//! itself, but on a wide vector only when it meets the compare before it
//! has expanded the remainder into a multiply-high sequence. A lane mask
//! and-ed onto the compare, as every test under a masked `if` has, makes it
//! expand the remainder first: W5's `x % 3 == 0` took 16 instructions per
//! 32 lanes instead of 4. So this runs on the optimised IR, before code
//! generation, on vectors of 32- and 64-bit lanes.

use super::operand;
use inkwell::builder::Builder;
use inkwell::context::Context;
use inkwell::intrinsics::Intrinsic;
use inkwell::module::Module;
use inkwell::types::{BasicTypeEnum, VectorType};
use inkwell::values::{
    AsValueRef, BasicValue, BasicValueEnum, InstructionOpcode, InstructionValue, VectorValue,
};
use inkwell::IntPredicate;

/// Rewrites every `icmp eq|ne (urem x, C), 0` of `module` on vectors of 32-
/// or 64-bit lanes whose divisors are constants other than 0.
pub fn rewrite<'ctx>(cx: &'ctx Context, module: &Module<'ctx>) {
    let builder = cx.create_builder();
    super::each_instruction(module, |inst| {
        rewrite_compare(module, &builder, inst);
    });
}

/// The multiplier, rotation and bound of each lane's divisor.
struct Test {
    inverse: Vec<u64>,
    rotation: Vec<u64>,
    bound: Vec<u64>,
}

/// Rewrites `compare` if it is such a test; false if it leaves it alone.
fn rewrite_compare<'ctx>(
    module: &Module<'ctx>,
    b: &Builder<'ctx>,
    compare: InstructionValue<'ctx>,
) -> bool {
    if compare.get_opcode() != InstructionOpcode::ICmp {
        return false;
    }
    let equal = match compare.get_icmp_predicate() {
        Some(IntPredicate::EQ) => true,
        Some(IntPredicate::NE) => false,
        _ => return false,
    };
    let (Some(BasicValueEnum::VectorValue(rem)), Some(BasicValueEnum::VectorValue(zero))) =
        (operand(compare, 0), operand(compare, 1))
    else {
        return false;
    };
    let Some(urem) = rem.as_instruction() else {
        return false;
    };
    if urem.get_opcode() != InstructionOpcode::URem || !zero.is_null() {
        return false;
    }
    let (Some(BasicValueEnum::VectorValue(x)), Some(BasicValueEnum::VectorValue(divisor))) =
        (operand(urem, 0), operand(urem, 1))
    else {
        return false;
    };
    let ty = x.get_type();
    let bits = match ty.get_element_type() {
        BasicTypeEnum::IntType(t) if matches!(t.get_bit_width(), 32 | 64) => t.get_bit_width(),
        _ => return false,
    };
    let Some(test) = divisors(divisor, ty.get_size()).and_then(|d| test(&d, bits)) else {
        return false;
    };
    let Some(rewritten) = build(module, b, compare, x, ty, &test, equal) else {
        return false;
    };
    // SAFETY: both are live values of one function, of the same type.
    unsafe {
        inkwell::llvm_sys::core::LLVMReplaceAllUsesWith(
            compare.as_value_ref(),
            rewritten.as_value_ref(),
        );
    }
    compare.erase_from_basic_block();
    if urem.get_first_use().is_none() {
        urem.erase_from_basic_block();
    }
    true
}

/// Each lane's divisor, if all are constant integers.
fn divisors(divisor: VectorValue<'_>, lanes: u32) -> Option<Vec<u64>> {
    (0..lanes)
        .map(|i| crate::emit::constant_int_lane(divisor, i))
        .collect()
}

/// The test for `bits`-bit lanes with these divisors (none with a 0).
fn test(divisors: &[u64], bits: u32) -> Option<Test> {
    let mask = if bits == 64 {
        u64::MAX
    } else {
        (1 << bits) - 1
    };
    let mut t = Test {
        inverse: Vec::new(),
        rotation: Vec::new(),
        bound: Vec::new(),
    };
    for &c in divisors {
        if c == 0 || c > mask {
            return None;
        }
        let k = c.trailing_zeros();
        let odd = c >> k;
        t.inverse.push(inverse(odd) & mask);
        t.rotation.push(u64::from(k));
        t.bound.push(mask / c);
    }
    Some(t)
}

/// The inverse of odd `d` modulo 2^64 (Newton's iteration doubles the
/// correct low bits each step: 3 bits from `d` itself, then 6, 12, 24, 48,
/// 96).
fn inverse(d: u64) -> u64 {
    let mut x = d;
    for _ in 0..5 {
        x = x.wrapping_mul(2u64.wrapping_sub(d.wrapping_mul(x)));
    }
    x
}

/// `rotr(x * inverse, rotation) <= bound` (`> bound` for `ne`), before
/// `at`.
fn build<'ctx>(
    module: &Module<'ctx>,
    b: &Builder<'ctx>,
    at: InstructionValue<'ctx>,
    x: VectorValue<'ctx>,
    ty: VectorType<'ctx>,
    test: &Test,
    equal: bool,
) -> Option<BasicValueEnum<'ctx>> {
    let element = ty.get_element_type().into_int_type();
    let constants = |values: &[u64]| {
        let lanes: Vec<_> = values
            .iter()
            .map(|&v| element.const_int(v, false))
            .collect();
        VectorType::const_vector(&lanes)
    };
    b.position_before(&at);
    let mut product = b
        .build_int_mul(x, constants(&test.inverse), "divisible.product")
        .ok()?;
    if test.rotation.iter().any(|&k| k != 0) {
        let fshr = Intrinsic::find("llvm.fshr")?.get_declaration(module, &[ty.into()])?;
        let amounts = constants(&test.rotation);
        product = b
            .build_call(
                fshr,
                &[product.into(), product.into(), amounts.into()],
                "divisible.rotated",
            )
            .ok()?
            .try_as_basic_value()
            .basic()?
            .into_vector_value();
    }
    let predicate = if equal {
        IntPredicate::ULE
    } else {
        IntPredicate::UGT
    };
    b.build_int_compare(predicate, product, constants(&test.bound), "divisible")
        .ok()
        .map(|v| v.as_basic_value_enum())
}

#[cfg(test)]
mod tests {
    use super::{inverse, test};

    /// The test against `%` for every divisor up to 64 and some large
    /// ones, on values around multiples and at the ends of the range.
    #[test]
    fn the_multiply_and_compare_is_divisibility() {
        let mut divisors: Vec<u64> = (1..=64).collect();
        divisors.extend([96, 100, 1000, 4096, 65535, 65536, 0x7fff_ffff, 0x8000_0000]);
        divisors.extend([0xffff_fffe, 0xffff_ffff]);
        for c in divisors {
            let t = test(&[c], 32).expect("a divisor");
            let mut xs: Vec<u64> = vec![0, 1, 2, 0xffff_ffff, 0xffff_fffe, 0x8000_0000];
            for m in [1u64, 2, 3, 1000, 0xffff_ffff / c] {
                let base = m.wrapping_mul(c) & 0xffff_ffff;
                xs.extend([
                    base,
                    base.wrapping_sub(1) & 0xffff_ffff,
                    (base + 1) & 0xffff_ffff,
                ]);
            }
            for x in xs {
                let product = (x * t.inverse[0]) & 0xffff_ffff;
                let k = t.rotation[0] as u32;
                let rotated = ((product >> k) | (product << (32 - k))) & 0xffff_ffff;
                assert_eq!(rotated <= t.bound[0], x % c == 0, "{x} % {c}");
            }
        }
        // 64-bit lanes.
        for c in [3u64, 6, 7, 10, 1 << 40, u64::MAX] {
            let t = test(&[c], 64).expect("a divisor");
            for x in [0, 1, c, c.wrapping_mul(12345), u64::MAX, u64::MAX - 1] {
                let rotated = x
                    .wrapping_mul(t.inverse[0])
                    .rotate_right(t.rotation[0] as u32);
                assert_eq!(rotated <= t.bound[0], x % c == 0, "{x} % {c}");
            }
        }
        assert!(test(&[3, 0], 32).is_none());
        for d in (1..200u64).step_by(2) {
            assert_eq!(d.wrapping_mul(inverse(d)), 1);
        }
    }
}
