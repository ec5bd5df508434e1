//! On AVX2, computes lane masks as `<32 x i32>` lanes of all ones or zero.
//!
//! Without mask registers, x86's type legalizer keeps a `<32 x i1>` as 32
//! bytes: each 32-bit compare is packed down to bytes (`vpackssdw`,
//! `vpacksswb`, `vpermq`) and widened back (`vpmovzxbd`, `vpslld`,
//! `vpsrad`) for every blend of 32-bit lanes, and across blocks (a loop's
//! active lanes, an `if`'s mask in its body) a mask can only travel
//! packed. As 32-bit lanes the mask is what the compares give, what the
//! blends and `vmovmskps` read, and what `vpand` combines.
//!
//! This runs after the optimiser, which would fold the widening back. Each
//! mask that reaches a blend of 32-bit lanes, a bit set or a phi gets a wide
//! twin: a compare's sign extension, the same logic op on the operands'
//! twins, a phi of the incoming twins. Those users read the twin (a blend
//! as `twin < 0`, a sign test the code generator folds into the blend; a
//! bit set as four `vmovmskps`, or one of the or-ed or and-ed quarters for
//! a test of any or every lane), and a mask phi's other users read it
//! just before them. Narrow masks left without users are deleted.

use super::operand;
use inkwell::builder::Builder;
use inkwell::context::Context;
use inkwell::module::Module;
use inkwell::types::{AnyTypeEnum, BasicTypeEnum, VectorType};
use inkwell::values::{
    AnyValue, AsValueRef, BasicValue, BasicValueEnum, FunctionValue, InstructionOpcode,
    InstructionValue, IntValue, PhiValue, VectorValue,
};
use inkwell::IntPredicate;
use std::collections::{HashMap, HashSet};
use std::sync::OnceLock;

use crate::emit::{has_avx2, has_avx512, LANES};

use inkwell::llvm_sys::core::LLVMIsAInstruction;

type ValueRef = inkwell::llvm_sys::prelude::LLVMValueRef;

/// Whether code for `features` (LLVM's feature list) gets wide masks: AVX2
/// without AVX-512, unless `WARPJIT_NARROW_MASKS` is set (read once; it is
/// there to measure the difference).
pub fn wanted(features: &str) -> bool {
    static NARROW: OnceLock<bool> = OnceLock::new();
    let narrow = *NARROW.get_or_init(|| std::env::var_os("WARPJIT_NARROW_MASKS").is_some());
    has_avx2(features) && !has_avx512(features) && !narrow
}

/// Rewrites the masks of every function of `module`.
pub fn widen<'ctx>(cx: &'ctx Context, module: &Module<'ctx>) {
    let builder = cx.create_builder();
    for function in module.get_functions() {
        let mut w = Widener {
            cx,
            module,
            b: &builder,
            wide_t: cx.i32_type().vec_type(LANES),
            twins: HashMap::new(),
            function,
        };
        w.run();
    }
}

struct Widener<'ctx, 'a> {
    cx: &'ctx Context,
    module: &'a Module<'ctx>,
    b: &'a Builder<'ctx>,
    wide_t: VectorType<'ctx>,
    /// Each mask's wide twin.
    twins: HashMap<ValueRef, VectorValue<'ctx>>,
    function: FunctionValue<'ctx>,
}

/// How a user of a mask changes.
enum Use<'ctx> {
    /// A select of 32-bit lanes: its condition.
    Blend(InstructionValue<'ctx>),
    /// `bitcast <32 x i1> to i32`.
    Bits(InstructionValue<'ctx>),
    /// A mask phi and its twin.
    Phi(PhiValue<'ctx>, PhiValue<'ctx>),
}

impl<'ctx> Widener<'ctx, '_> {
    fn run(&mut self) {
        let all: Vec<InstructionValue<'ctx>> = self
            .function
            .get_basic_blocks()
            .into_iter()
            .flat_map(|block| block.get_instructions())
            .collect();
        let mut uses = Vec::new();
        for &inst in &all {
            match inst.get_opcode() {
                InstructionOpcode::Phi if is_mask_type(inst.get_type()) => {
                    // Every mask phi must get its twin: a phi fed by one
                    // without would read poison.
                    self.b.position_before(&inst);
                    let (Ok(phi), Ok(twin)) = (
                        PhiValue::try_from(inst),
                        self.b.build_phi(self.wide_t, "mask.wide"),
                    ) else {
                        return self.abandon();
                    };
                    let wide = twin.as_basic_value().into_vector_value();
                    self.twins.insert(inst.as_value_ref(), wide);
                    uses.push(Use::Phi(phi, twin));
                }
                InstructionOpcode::Select if blends_words(inst) => uses.push(Use::Blend(inst)),
                InstructionOpcode::BitCast if operand_is_mask(inst, 0) && is_bit_set(inst) => {
                    uses.push(Use::Bits(inst))
                }
                _ => {}
            }
        }
        let mut dead = Vec::new();
        for u in uses {
            match u {
                Use::Blend(select) => {
                    let Some(cond) = operand(select, 0) else {
                        continue;
                    };
                    let Some(twin) = self.twin(cond) else {
                        continue;
                    };
                    self.b.position_before(&select);
                    if let Some(read) = self.read(twin) {
                        select.set_operand(0, read);
                    }
                }
                Use::Bits(cast) => {
                    let Some(mask) = operand(cast, 0) else {
                        continue;
                    };
                    let Some(twin) = self.twin(mask) else {
                        continue;
                    };
                    if self.any_or_all(cast, twin, &mut dead) {
                        dead.push(cast);
                        continue;
                    }
                    self.b.position_before(&cast);
                    if let Some(bits) = self.sign_bits(twin) {
                        replace(cast, bits.as_value_ref());
                        dead.push(cast);
                    }
                }
                Use::Phi(phi, twin) => {
                    self.fill_twin(phi, twin);
                    dead.push(phi.as_instruction());
                }
            }
        }
        let gone: HashSet<ValueRef> = dead.iter().map(|i| i.as_value_ref()).collect();
        // A mask phi's remaining users (masked loads, other logic) read
        // its twin just before them.
        for &phi in &dead {
            if phi.get_opcode() != InstructionOpcode::Phi {
                continue;
            }
            let twin = self.twins[&phi.as_value_ref()];
            for user in users(phi) {
                if gone.contains(&user.as_value_ref())
                    || user.get_opcode() == InstructionOpcode::Phi
                {
                    continue; // another mask phi, fed by this twin, or a bit cast
                }
                self.b.position_before(&user);
                let Some(read) = self.read(twin) else {
                    continue;
                };
                for i in 0..user.get_num_operands() {
                    if operand(user, i).is_some_and(|o| o.as_value_ref() == phi.as_value_ref()) {
                        user.set_operand(i, read);
                    }
                }
            }
        }
        // What still uses a mask phi is another mask phi, going too (and
        // nothing uses a replaced compare or bit cast): erased only once
        // nothing refers to any of them, and never read again.
        for &inst in &dead {
            replace(inst, poison_of(inst));
        }
        for inst in dead {
            inst.erase_from_basic_block();
        }
        let left: Vec<_> = all
            .into_iter()
            .filter(|i| !gone.contains(&i.as_value_ref()))
            .collect();
        delete_unused_masks(&left);
    }

    /// Leaves the function as it was: deletes the twin phis made so far
    /// (nothing uses them yet).
    fn abandon(&mut self) {
        for twin in self.twins.drain().map(|(_, t)| t) {
            if let Some(phi) = twin.as_instruction() {
                phi.erase_from_basic_block();
            }
        }
    }

    /// The wide twin of `mask`, made where `mask` is defined.
    fn twin(&mut self, mask: BasicValueEnum<'ctx>) -> Option<VectorValue<'ctx>> {
        let key = mask.as_value_ref();
        if let Some(t) = self.twins.get(&key) {
            return Some(*t);
        }
        if !is_mask_type(mask.as_any_value_enum().get_type()) {
            return None;
        }
        let mask = mask.into_vector_value();
        let Some(inst) = mask.as_instruction() else {
            // A constant folds; an argument is extended at the entry.
            if !mask.is_const() {
                let entry = self.function.get_first_basic_block()?;
                let first = entry.get_first_instruction()?;
                self.b.position_before(&first);
            }
            let t = self.b.build_int_s_extend(mask, self.wide_t, "").ok()?;
            self.twins.insert(key, t);
            return Some(t);
        };
        let t = match self.combined(inst) {
            Some(t) => t,
            None => {
                // Any other mask (a compare, a call's result): its sign
                // extension, where it is made.
                self.b.position_before(&inst.get_next_instruction()?);
                self.b.build_int_s_extend(mask, self.wide_t, "").ok()?
            }
        };
        self.twins.insert(key, t);
        Some(t)
    }

    /// The twin of a logic op, select or shuffle of masks, made of its
    /// operands' twins; `None` for other instructions.
    fn combined(&mut self, inst: InstructionValue<'ctx>) -> Option<VectorValue<'ctx>> {
        let op = inst.get_opcode();
        Some(match op {
            InstructionOpcode::And | InstructionOpcode::Or | InstructionOpcode::Xor => {
                let a = self.twin(operand(inst, 0)?)?;
                let c = self.twin(operand(inst, 1)?)?;
                self.b.position_before(&inst.get_next_instruction()?);
                match op {
                    InstructionOpcode::And => self.b.build_and(a, c, "").ok()?,
                    InstructionOpcode::Or => self.b.build_or(a, c, "").ok()?,
                    _ => self.b.build_xor(a, c, "").ok()?,
                }
            }
            InstructionOpcode::Select => {
                let cond = operand(inst, 0)?;
                let a = self.twin(operand(inst, 1)?)?;
                let c = self.twin(operand(inst, 2)?)?;
                let picked = match cond {
                    BasicValueEnum::VectorValue(lanes) => {
                        let t = self.twin(lanes.as_basic_value_enum())?;
                        self.b.position_before(&inst.get_next_instruction()?);
                        let cond = self.read(t)?;
                        self.b.build_select(cond, a, c, "")
                    }
                    scalar => {
                        self.b.position_before(&inst.get_next_instruction()?);
                        self.b.build_select(scalar.into_int_value(), a, c, "")
                    }
                };
                picked.ok()?.into_vector_value()
            }
            InstructionOpcode::ShuffleVector => {
                let a = self.twin(operand(inst, 0)?)?;
                let c = self.twin(operand(inst, 1)?)?;
                let pick = self.shuffle_mask(inst);
                self.b.position_before(&inst.get_next_instruction()?);
                self.b.build_shuffle_vector(a, c, pick, "").ok()?
            }
            _ => return None,
        })
    }

    /// The lane selectors of a `shufflevector`, as a constant vector.
    fn shuffle_mask(&self, inst: InstructionValue<'ctx>) -> VectorValue<'ctx> {
        use inkwell::llvm_sys::core::{
            LLVMGetMaskValue, LLVMGetNumMaskElements, LLVMGetUndefMaskElem,
        };
        let i32_t = self.cx.i32_type();
        // SAFETY: `inst` is a live shufflevector.
        let picks: Vec<_> = unsafe {
            let n = LLVMGetNumMaskElements(inst.as_value_ref());
            (0..n)
                .map(|i| {
                    let lane = LLVMGetMaskValue(inst.as_value_ref(), i);
                    if lane == LLVMGetUndefMaskElem() {
                        i32_t.get_poison()
                    } else {
                        i32_t.const_int(lane as u64, false)
                    }
                })
                .collect()
        };
        VectorType::const_vector(&picks)
    }

    /// `twin < 0` at the builder's position: the narrow mask again.
    fn read(&self, twin: VectorValue<'ctx>) -> Option<VectorValue<'ctx>> {
        let zero = self.wide_t.const_zero();
        self.b
            .build_int_compare(IntPredicate::SLT, twin, zero, "mask")
            .ok()
    }

    /// The four 8-lane quarters of `twin`.
    fn quarters(&self, twin: VectorValue<'ctx>) -> Option<Vec<VectorValue<'ctx>>> {
        let i32_t = self.cx.i32_type();
        (0..4u64)
            .map(|q| {
                let pick = VectorType::const_vector(
                    &(0..8)
                        .map(|l| i32_t.const_int(q * 8 + l, false))
                        .collect::<Vec<_>>(),
                );
                self.b
                    .build_shuffle_vector(twin, twin.get_type().get_poison(), pick, "")
                    .ok()
            })
            .collect()
    }

    /// `vmovmskps` of an 8-lane quarter: its lanes' sign bits.
    fn movmsk(&self, quarter: VectorValue<'ctx>) -> Option<IntValue<'ctx>> {
        let f8 = self.cx.f32_type().vec_type(8);
        let movmsk = inkwell::intrinsics::Intrinsic::find("llvm.x86.avx.movmsk.ps.256")?
            .get_declaration(self.module, &[])?;
        let quarter = self.b.build_bit_cast(quarter, f8, "").ok()?;
        Some(
            self.b
                .build_call(movmsk, &[quarter.into()], "")
                .ok()?
                .try_as_basic_value()
                .basic()?
                .into_int_value(),
        )
    }

    /// The lane bit set of `twin`: `vmovmskps` of each quarter.
    fn sign_bits(&self, twin: VectorValue<'ctx>) -> Option<IntValue<'ctx>> {
        let i32_t = self.cx.i32_type();
        let mut bits: Option<IntValue<'ctx>> = None;
        for (q, quarter) in self.quarters(twin)?.into_iter().enumerate() {
            let m = self.movmsk(quarter)?;
            let m = if q == 0 {
                m
            } else {
                let at = i32_t.const_int(q as u64 * 8, false);
                self.b.build_left_shift(m, at, "").ok()?
            };
            bits = Some(match bits {
                None => m,
                Some(b) => self.b.build_or(b, m, "").ok()?,
            });
        }
        bits
    }

    /// The sign bits of `twin`'s quarters and-ed (`all`) or or-ed together:
    /// the eight bits are all set (any set) when every lane (any lane) is.
    fn folded_sign_bits(&self, twin: VectorValue<'ctx>, all: bool) -> Option<IntValue<'ctx>> {
        let quarters = self.quarters(twin)?;
        let mut folded = quarters[0];
        for &q in &quarters[1..] {
            folded = if all {
                self.b.build_and(folded, q, "").ok()?
            } else {
                self.b.build_or(folded, q, "").ok()?
            };
        }
        self.movmsk(folded)
    }

    /// Replaces the bit set `cast` of `twin` when it is only compared with
    /// no lanes or all lanes (a branch on any or every lane): the quarters
    /// are or-ed (and-ed) first, one `vmovmskps` instead of four and the
    /// shifts; the replaced compares go to `dead`. False if `cast` has
    /// another use.
    fn any_or_all(
        &self,
        cast: InstructionValue<'ctx>,
        twin: VectorValue<'ctx>,
        dead: &mut Vec<InstructionValue<'ctx>>,
    ) -> bool {
        let tests: Option<Vec<_>> = users(cast).into_iter().map(bit_set_test).collect();
        let Some(tests) = tests.filter(|t| !t.is_empty()) else {
            return false;
        };
        let i32_t = self.cx.i32_type();
        let mut reduced: [Option<IntValue<'ctx>>; 2] = [None, None];
        for (test, all) in tests {
            let slot = &mut reduced[usize::from(all)];
            if slot.is_none() {
                self.b.position_before(&cast);
                *slot = self.folded_sign_bits(twin, all);
            }
            let Some(bits) = *slot else { return false };
            let Some(predicate) = test.get_icmp_predicate() else {
                return false;
            };
            let against = i32_t.const_int(if all { 0xff } else { 0 }, false);
            self.b.position_before(&test);
            let Ok(new) = self.b.build_int_compare(predicate, bits, against, "") else {
                return false;
            };
            replace(test, new.as_value_ref());
            dead.push(test);
        }
        true
    }

    /// Gives a mask phi's twin the twins of its incoming masks.
    fn fill_twin(&mut self, phi: PhiValue<'ctx>, twin: PhiValue<'ctx>) {
        for i in 0..phi.count_incoming() {
            let Some((value, pred)) = phi.get_incoming(i) else {
                continue;
            };
            // Without a twin (the builder failed) the phi lacks an entry,
            // and the module's verification after the rewrite says so.
            if let Some(wide) = self.twin(value) {
                twin.add_incoming(&[(&wide, pred)]);
            }
        }
    }
}

/// Deletes the mask computations (compares, logic, casts) that the rewrite
/// left without users, last first so a chain goes in one pass.
fn delete_unused_masks(all: &[InstructionValue<'_>]) {
    for &inst in all.iter().rev() {
        let pure = matches!(
            inst.get_opcode(),
            InstructionOpcode::ICmp
                | InstructionOpcode::FCmp
                | InstructionOpcode::And
                | InstructionOpcode::Or
                | InstructionOpcode::Xor
                | InstructionOpcode::Select
                | InstructionOpcode::ShuffleVector
                | InstructionOpcode::BitCast
        );
        if pure && is_mask_type(inst.get_type()) && inst.get_first_use().is_none() {
            inst.erase_from_basic_block();
        }
    }
}

/// A use of a mask's bit set that tests for no lanes or all lanes: the
/// compare, and whether it is against all lanes.
fn bit_set_test(user: InstructionValue<'_>) -> Option<(InstructionValue<'_>, bool)> {
    if user.get_opcode() != InstructionOpcode::ICmp
        || !matches!(
            user.get_icmp_predicate(),
            Some(IntPredicate::EQ | IntPredicate::NE)
        )
    {
        return None;
    }
    let BasicValueEnum::IntValue(c) = operand(user, 1)? else {
        return None;
    };
    match c.get_zero_extended_constant()? {
        0 => Some((user, false)),
        0xffff_ffff => Some((user, true)),
        _ => None,
    }
}

/// Points every use of `old` at `new`.
fn replace(old: InstructionValue<'_>, new: ValueRef) {
    // SAFETY: both are live values of one function, of the same type.
    unsafe { inkwell::llvm_sys::core::LLVMReplaceAllUsesWith(old.as_value_ref(), new) }
}

fn poison_of(inst: InstructionValue<'_>) -> ValueRef {
    // SAFETY: `inst` is a live value; poison of its type is a constant.
    unsafe {
        inkwell::llvm_sys::core::LLVMGetPoison(inkwell::llvm_sys::core::LLVMTypeOf(
            inst.as_value_ref(),
        ))
    }
}

fn operand_is_mask(inst: InstructionValue<'_>, i: u32) -> bool {
    operand(inst, i).is_some_and(|o| is_mask_type(o.as_any_value_enum().get_type()))
}

/// Whether `inst` gives an `i32` (a mask's bit cast to its bit set).
fn is_bit_set(inst: InstructionValue<'_>) -> bool {
    matches!(inst.get_type(), AnyTypeEnum::IntType(t) if t.get_bit_width() == LANES)
}

/// A select on a lane mask between vectors of 32-bit lanes.
fn blends_words(inst: InstructionValue<'_>) -> bool {
    let words = match inst.get_type() {
        AnyTypeEnum::VectorType(v) => match v.get_element_type() {
            BasicTypeEnum::IntType(t) => t.get_bit_width() == 32,
            BasicTypeEnum::FloatType(t) => t.get_bit_width() == 32,
            _ => false,
        },
        _ => false,
    };
    words && operand_is_mask(inst, 0)
}

/// The instructions that use `inst`, each once.
fn users<'ctx>(inst: InstructionValue<'ctx>) -> Vec<InstructionValue<'ctx>> {
    let mut out: Vec<InstructionValue<'ctx>> = Vec::new();
    let mut next = inst.get_first_use();
    while let Some(u) = next {
        next = u.get_next_use();
        let user = u.get_user().as_value_ref();
        // SAFETY: `user` is a live value; it is taken as an instruction
        // only when LLVM says it is one.
        let is_instruction = unsafe { !LLVMIsAInstruction(user).is_null() };
        if is_instruction {
            let user = unsafe { InstructionValue::new(user) };
            if !out.contains(&user) {
                out.push(user);
            }
        }
    }
    out
}

fn is_mask_type(t: AnyTypeEnum<'_>) -> bool {
    match t {
        AnyTypeEnum::VectorType(v) => {
            v.get_size() == LANES
                && matches!(v.get_element_type(), BasicTypeEnum::IntType(t) if t.get_bit_width() == 1)
        }
        _ => false,
    }
}
