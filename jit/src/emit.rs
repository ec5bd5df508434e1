//! Emission building blocks shared by the lowering: 32-lane vector types,
//! splats, mask <-> bit-set conversions, intrinsic calls and context fields.

use crate::JitError;
use inkwell::basic_block::BasicBlock;
use inkwell::builder::Builder;
use inkwell::context::Context;
use inkwell::intrinsics::Intrinsic;
use inkwell::module::Module;
use inkwell::types::{BasicTypeEnum, IntType, VectorType};
use inkwell::values::InstructionOpcode;
use inkwell::values::{
    BasicMetadataValueEnum, BasicValue, BasicValueEnum, IntValue, PointerValue, VectorValue,
};
use inkwell::IntPredicate;
use warpjit_ir::Type;

pub const LANES: u32 = 32;

/// Emission state for one LLVM function.
pub struct Emit<'ctx, 'a> {
    pub cx: &'ctx Context,
    pub module: &'a Module<'ctx>,
    pub b: Builder<'ctx>,
    /// The target has AVX-512F: two-table permutes (`vpermi2d`) are available.
    pub avx512: bool,
    /// The target has AVX2: one-table 8-lane permutes (`vpermd`) are available.
    pub avx2: bool,
    /// Loads and stores per lane-by-lane routine of the module, counted on
    /// first use (`lower/memory/lanes.rs`).
    pub lane_paths: std::cell::RefCell<Option<std::collections::HashMap<String, u32>>>,
    /// Shared routines (lane paths, math) are declared here and compiled once per thread
    /// and target (`engine/routines.rs`) instead of defined in the module;
    /// the ones this module calls.
    pub shared_routines: Option<std::cell::RefCell<Vec<crate::lower::RoutineSpec>>>,
    /// The launches' workgroup size, when the code is compiled for one
    /// (`JitOptions::workgroup`).
    pub workgroup: Option<[u32; 3]>,
    /// exp2, log2, sin and cos call shared routines (with
    /// `shared_routines`) rather than being emitted inline
    /// (`lower/math.rs`).
    pub call_math: bool,
    /// The warp fields the runtime resets between workgroups for this
    /// module (`sched::WarpRewrites`); [`Emit::store_field`] refuses the
    /// others of them.
    pub rewrites: crate::sched::WarpRewrites,
    /// Buffer accesses outside loops prefetch a page ahead
    /// (`JitOptions::prefetch_ahead`; the lowering sets it, routines have
    /// no such accesses).
    pub prefetch_ahead: bool,
    /// The module reads a y or z id: the run-time shape tests of its
    /// accesses look for a run per group of lanes too (rows of a 2D
    /// workgroup; `lower/memory/lanes.rs`).
    pub row_groups: bool,
    /// The module's non-temporal stores (none for routines).
    pub streams: Streams<'ctx>,
    /// What the lowering decided, statement by statement, when asked for
    /// (`lower/remarks.rs`).
    pub remarks: Option<std::cell::RefCell<Vec<crate::lower::Remark>>>,
}

/// Non-temporal stores of a module (`lower/memory/known.rs`).
#[derive(Default)]
pub struct Streams<'ctx> {
    /// Per buffer: the module only stores to it (no load or atomic), so a
    /// whole warp's run into a large one is a non-temporal store.
    pub buffers: Vec<bool>,
    /// Whether such a store was emitted.
    pub emitted: std::cell::Cell<bool>,
    /// The `sfence`s before buffer atomics in modules with such buffers.
    pub fences: std::cell::RefCell<Vec<inkwell::values::InstructionValue<'ctx>>>,
}

impl Streams<'_> {
    /// Whether a buffer atomic needs a fence before it: the module has
    /// buffers it may stream to.
    pub fn may_stream(&self) -> bool {
        self.buffers.iter().any(|b| *b)
    }

    /// Removes the fences if no store was streamed after all (the shapes
    /// of the module's stores decide it).
    pub fn drop_needless_fences(&self) {
        if !self.emitted.get() {
            for fence in self.fences.borrow_mut().drain(..) {
                fence.erase_from_basic_block();
            }
        }
    }
}

impl<'ctx, 'a> Emit<'ctx, 'a> {
    /// Emission into `module` for a target with `features`; lane-path
    /// routines declared rather than defined when `shared_routines`.
    pub fn new(
        cx: &'ctx Context,
        module: &'a Module<'ctx>,
        features: &str,
        shared_routines: bool,
    ) -> Emit<'ctx, 'a> {
        Emit {
            cx,
            module,
            b: cx.create_builder(),
            avx512: has_avx512(features),
            avx2: has_avx2(features),
            lane_paths: Default::default(),
            shared_routines: shared_routines.then(Default::default),
            workgroup: None,
            call_math: false,
            rewrites: crate::sched::WarpRewrites::ALL,
            prefetch_ahead: false,
            row_groups: false,
            streams: Streams::default(),
            remarks: None,
        }
    }
}

impl<'ctx> Emit<'ctx, '_> {
    pub fn i1(&self) -> IntType<'ctx> {
        self.cx.bool_type()
    }
    pub fn i32(&self) -> IntType<'ctx> {
        self.cx.i32_type()
    }
    pub fn i64(&self) -> IntType<'ctx> {
        self.cx.i64_type()
    }

    /// The LLVM element type holding one lane of `ty` (f16 as its bits).
    pub fn elem_type(&self, ty: Type) -> BasicTypeEnum<'ctx> {
        match ty {
            Type::Bool => self.cx.bool_type().into(),
            Type::I8 => self.cx.i8_type().into(),
            Type::I16 | Type::F16 => self.cx.i16_type().into(),
            Type::I32 => self.cx.i32_type().into(),
            Type::I64 => self.cx.i64_type().into(),
            Type::F32 => self.cx.f32_type().into(),
            Type::F64 => self.cx.f64_type().into(),
        }
    }

    pub fn vec_type(&self, ty: Type) -> VectorType<'ctx> {
        vec_of(self.elem_type(ty))
    }

    /// The integer type of `ty`'s width (its bits).
    pub fn int_of(&self, ty: Type) -> IntType<'ctx> {
        self.int_t(ty.bits())
    }

    /// The integer type of a width (1, 8, 16, 32 or 64).
    pub fn int_t(&self, bits: u32) -> IntType<'ctx> {
        match bits {
            1 => self.cx.bool_type(),
            8 => self.cx.i8_type(),
            16 => self.cx.i16_type(),
            32 => self.cx.i32_type(),
            _ => self.cx.i64_type(),
        }
    }

    pub fn int_vec(&self, bits: u32) -> VectorType<'ctx> {
        self.int_t(bits).vec_type(LANES)
    }

    /// A constant vector of `bits` in every lane of type `ty`.
    pub fn splat_const(&self, ty: Type, bits: u64) -> VectorValue<'ctx> {
        match ty {
            Type::F32 => {
                let f = self
                    .cx
                    .f32_type()
                    .const_float(f64::from(f32::from_bits(bits as u32)));
                VectorType::const_vector(&vec![f; LANES as usize])
            }
            Type::F64 => {
                let f = self.cx.f64_type().const_float(f64::from_bits(bits));
                VectorType::const_vector(&vec![f; LANES as usize])
            }
            _ => {
                let int = self.int_of(ty).const_int(bits, false);
                VectorType::const_vector(&vec![int; LANES as usize])
            }
        }
    }

    /// A constant integer vector of the given width.
    pub fn splat_int(&self, bits: u32, value: u64) -> VectorValue<'ctx> {
        let int = self.int_t(bits).const_int(value, false);
        VectorType::const_vector(&vec![int; LANES as usize])
    }

    /// A constant vector from per-lane values.
    pub fn lanes_const(&self, bits: u32, f: impl Fn(u32) -> u64) -> VectorValue<'ctx> {
        let t = self.int_t(bits);
        let lanes: Vec<IntValue<'ctx>> = (0..LANES).map(|l| t.const_int(f(l), false)).collect();
        VectorType::const_vector(&lanes)
    }

    /// Lanes `from..from + count` of `v`, as a vector of `count`.
    pub fn lane_run(
        &self,
        v: VectorValue<'ctx>,
        from: u32,
        count: u32,
    ) -> Result<VectorValue<'ctx>, JitError> {
        let idx: Vec<IntValue<'ctx>> = (from..from + count)
            .map(|l| self.i32().const_int(u64::from(l), false))
            .collect();
        let poison = v.get_type().get_poison();
        Ok(self
            .b
            .build_shuffle_vector(v, poison, VectorType::const_vector(&idx), "")?)
    }

    /// `a`'s lanes followed by `b`'s (of the same type).
    pub fn concat(
        &self,
        a: VectorValue<'ctx>,
        b: VectorValue<'ctx>,
    ) -> Result<VectorValue<'ctx>, JitError> {
        let idx: Vec<IntValue<'ctx>> = (0..2 * a.get_type().get_size())
            .map(|l| self.i32().const_int(u64::from(l), false))
            .collect();
        Ok(self
            .b
            .build_shuffle_vector(a, b, VectorType::const_vector(&idx), "")?)
    }

    pub fn all_lanes(&self) -> VectorValue<'ctx> {
        self.splat_int(1, 1)
    }

    /// A run-time scalar in every lane.
    pub fn splat(&self, scalar: BasicValueEnum<'ctx>) -> Result<VectorValue<'ctx>, JitError> {
        // A mask's bit set (ballot, active mask) goes into a half-width
        // vector first: LLVM 19 lowers a 32-lane splat of a bitcast mask
        // through a 64-bit mask register and a 2-lane vector (`kunpckdq`,
        // `kmovq`, `vmovd`, `shrq`, `vpinsrd`, `vpbroadcastq`), this to
        // a mask move (`kmovq`) and `vpbroadcastd`.
        let vt = if is_mask_bits(scalar) {
            self.i32().vec_type(LANES / 2)
        } else {
            vec_of(scalar.get_type())
        };
        let one =
            self.b
                .build_insert_element(vt.get_poison(), scalar, self.i32().const_zero(), "")?;
        let zeros = self.i32().vec_type(LANES).const_zero();
        Ok(self
            .b
            .build_shuffle_vector(one, vt.get_poison(), zeros, "")?)
    }

    /// The bits of float vector `x` as an integer vector of its width, with
    /// a `freeze` before the bit cast. LLVM 19's known-bits analysis looks
    /// through a float-to-integer cast into the float computation, and at
    /// each constant vector there builds a scalar constant for every one of
    /// the 32 lanes. `instcombine` asks it of most integer instructions,
    /// and the casts in the math routines (`exp2`, `log2`) sit on long
    /// float computations with many constants: they cost W8 a third of its
    /// IR passes. Known-bits analysis does not look through a freeze, so
    /// the walk stops there. A freeze of a value that is not poison is that
    /// value, and it emits no machine code. (Elsewhere, as before stores of
    /// floats, `instcombine`'s work on the freezes cost more than it saved.)
    pub fn float_bits(&self, x: VectorValue<'ctx>) -> Result<VectorValue<'ctx>, JitError> {
        use inkwell::llvm_sys::core::LLVMBuildFreeze;
        use inkwell::values::AsValueRef;
        let width = x.get_type().get_element_type().into_float_type();
        let bits = if width == self.cx.f64_type() { 64 } else { 32 };
        // SAFETY: the builder is positioned in a block and `x` is a live
        // vector value of this context; the result has `x`'s type.
        let frozen = unsafe {
            VectorValue::new(LLVMBuildFreeze(
                self.b.as_mut_ptr(),
                x.as_value_ref(),
                c"".as_ptr(),
            ))
        };
        let lanes = x.get_type().get_size();
        Ok(self
            .b
            .build_bit_cast(frozen, self.int_t(bits).vec_type(lanes), "")?
            .into_vector_value())
    }

    /// The scalar every lane of `v` holds, when `v` is a splat: one made by
    /// [`Emit::splat`] (a shuffle of lane 0 of an insert at lane 0) or a
    /// constant with the same element in all lanes (zeros included).
    pub fn splat_scalar(&self, v: VectorValue<'ctx>) -> Option<BasicValueEnum<'ctx>> {
        use inkwell::llvm_sys::core::{LLVMGetMaskValue, LLVMGetNumMaskElements};
        use inkwell::values::AsValueRef;
        if v.is_const() {
            // Constants fold and are unique: a splat of lane 0 rebuilds `v`
            // exactly when every lane holds lane 0's value.
            let first = self
                .b
                .build_extract_element(v, self.i32().const_zero(), "")
                .ok()?;
            let again = self.splat(first).ok()?;
            return (again.as_value_ref() == v.as_value_ref()).then_some(first);
        }
        let shuffle = v.as_instruction()?;
        if shuffle.get_opcode() != InstructionOpcode::ShuffleVector {
            return None;
        }
        // SAFETY: `shuffle` is a live shufflevector instruction.
        let lane_zero_only = unsafe {
            let r = shuffle.as_value_ref();
            (0..LLVMGetNumMaskElements(r)).all(|i| LLVMGetMaskValue(r, i) == 0)
        };
        let insert = shuffle
            .get_operand(0)?
            .value()?
            .as_instruction_value()
            .filter(|i| i.get_opcode() == InstructionOpcode::InsertElement)?;
        let at_lane_zero = insert
            .get_operand(2)?
            .value()
            .and_then(|i| i.into_int_value().get_zero_extended_constant())
            == Some(0);
        (lane_zero_only && at_lane_zero).then(|| insert.get_operand(1)?.value())?
    }

    /// The integer every lane of `v` holds, when `v` is a constant splat.
    pub fn constant_splat(&self, v: VectorValue<'ctx>) -> Option<IntValue<'ctx>> {
        if !v.is_const() {
            return None;
        }
        match self.splat_scalar(v)? {
            BasicValueEnum::IntValue(x) => Some(x),
            _ => None,
        }
    }

    /// A `u32` bit set as a `<32 x i1>` mask.
    ///
    /// On AVX-512 a bit cast (a mask-register move); below it LLVM expands
    /// that cast into an extract and an insert per bit (96 instructions on
    /// AVX2), so each lane tests its bit of a splat instead.
    pub fn bits_to_mask(&self, bits: IntValue<'ctx>) -> Result<VectorValue<'ctx>, JitError> {
        if self.avx512 {
            return Ok(self
                .b
                .build_bit_cast(bits, self.i1().vec_type(LANES), "")?
                .into_vector_value());
        }
        let each = self.lanes_const(32, |l| 1 << l);
        let own = self.b.build_and(self.splat(bits.into())?, each, "")?;
        Ok(self
            .b
            .build_int_compare(IntPredicate::NE, own, self.int_vec(32).const_zero(), "")?)
    }

    pub fn mask_to_bits(&self, mask: VectorValue<'ctx>) -> Result<IntValue<'ctx>, JitError> {
        Ok(self
            .b
            .build_bit_cast(mask, self.i32(), "")?
            .into_int_value())
    }

    /// The lowest lane of the lane bit set `bits`; lane 31 when it is
    /// empty, so an extract at it stays defined.
    ///
    /// The count is of `bits` with bit 31 set, which is never zero: the
    /// result lies in 0..32 whatever LLVM knows. A mask (`& 31`) after a
    /// plain count is not enough: where a dominating test says `bits` is
    /// not zero, LLVM drops the mask, may then hoist the count above that
    /// test, and x86 code generation turns the extract at the unmasked
    /// index into a load from a stack slot without bounds.
    pub fn lowest_lane(&self, bits: IntValue<'ctx>) -> Result<IntValue<'ctx>, JitError> {
        let top = self.i32().const_int(1 << 31, false);
        let nonzero = self.b.build_or(bits, top, "")?;
        self.count_zeros("llvm.cttz", nonzero, true)
    }

    /// The highest lane of the lane bit set `bits`; lane 0 when it is
    /// empty. Counted on `bits` with bit 0 set, which is never zero, so the
    /// result lies in 0..32 whatever LLVM knows (see [`Self::lowest_lane`];
    /// `31 - ctlz(0)` is lane -1, which such a hoisted extract read from
    /// 16 GiB past the stack slot).
    pub fn highest_lane(&self, bits: IntValue<'ctx>) -> Result<IntValue<'ctx>, JitError> {
        let nonzero = self.b.build_or(bits, self.i32().const_int(1, false), "")?;
        let n = self.count_zeros("llvm.ctlz", nonzero, true)?;
        Ok(self
            .b
            .build_int_sub(self.i32().const_int(31, false), n, "")?)
    }

    /// The lowest lane of `bits`, which holds at least one (poison if not).
    /// Only for indices LLVM cannot hoist above the test that `bits` is not
    /// empty (a loop's memory accesses); extracts take [`Self::lowest_lane`].
    pub fn lowest_lane_in(&self, bits: IntValue<'ctx>) -> Result<IntValue<'ctx>, JitError> {
        self.count_zeros("llvm.cttz", bits, true)
    }

    fn count_zeros(
        &self,
        name: &str,
        bits: IntValue<'ctx>,
        zero_is_poison: bool,
    ) -> Result<IntValue<'ctx>, JitError> {
        let poison = self.i1().const_int(u64::from(zero_is_poison), false);
        Ok(self
            .call_intrinsic(name, &[self.i32().into()], &[bits.into(), poison.into()])?
            .into_int_value())
    }

    pub fn any(&self, mask: VectorValue<'ctx>) -> Result<IntValue<'ctx>, JitError> {
        let bits = self.mask_to_bits(mask)?;
        Ok(self
            .b
            .build_int_compare(IntPredicate::NE, bits, self.i32().const_zero(), "")?)
    }

    pub fn call_intrinsic(
        &self,
        name: &str,
        overloads: &[BasicTypeEnum<'ctx>],
        args: &[BasicValueEnum<'ctx>],
    ) -> Result<BasicValueEnum<'ctx>, JitError> {
        let intrinsic =
            Intrinsic::find(name).ok_or_else(|| JitError::Llvm(format!("no intrinsic {name}")))?;
        let decl = intrinsic
            .get_declaration(self.module, overloads)
            .ok_or_else(|| JitError::Llvm(format!("cannot declare {name}")))?;
        let args: Vec<BasicMetadataValueEnum<'ctx>> = args.iter().map(|a| (*a).into()).collect();
        self.b
            .build_call(decl, &args, "")?
            .try_as_basic_value()
            .basic()
            .ok_or_else(|| JitError::Llvm(format!("{name} returned nothing")))
    }

    /// Calls an intrinsic that returns nothing.
    pub fn call_void_intrinsic(
        &self,
        name: &str,
        overloads: &[BasicTypeEnum<'ctx>],
        args: &[BasicValueEnum<'ctx>],
    ) -> Result<(), JitError> {
        let intrinsic =
            Intrinsic::find(name).ok_or_else(|| JitError::Llvm(format!("no intrinsic {name}")))?;
        let decl = intrinsic
            .get_declaration(self.module, overloads)
            .ok_or_else(|| JitError::Llvm(format!("cannot declare {name}")))?;
        let args: Vec<BasicMetadataValueEnum<'ctx>> = args.iter().map(|a| (*a).into()).collect();
        self.b.build_call(decl, &args, "")?;
        Ok(())
    }

    /// `ptr + offset` bytes.
    pub fn byte_ptr(
        &self,
        ptr: PointerValue<'ctx>,
        offset: u64,
    ) -> Result<PointerValue<'ctx>, JitError> {
        let off = self.i64().const_int(offset, false);
        // SAFETY: inkwell marks GEP unsafe because LLVM does not check it; the
        // offsets come from the repr(C) layout of the context.
        Ok(unsafe { self.b.build_gep(self.cx.i8_type(), ptr, &[off], "")? })
    }

    pub fn load_field(
        &self,
        ptr: PointerValue<'ctx>,
        offset: u64,
        ty: BasicTypeEnum<'ctx>,
        align: u32,
    ) -> Result<BasicValueEnum<'ctx>, JitError> {
        self.load_aligned(ty, self.byte_ptr(ptr, offset)?, align)
    }

    /// [`Emit::load_field`] of something that stays the same while the
    /// kernel runs (parameters, memory spans, IDs): marked
    /// `!invariant.load`, so LLVM may hoist it out of loops past the
    /// kernel's own stores to the context.
    pub fn load_invariant(
        &self,
        ptr: PointerValue<'ctx>,
        offset: u64,
        ty: BasicTypeEnum<'ctx>,
        align: u32,
    ) -> Result<BasicValueEnum<'ctx>, JitError> {
        let v = self.load_field(ptr, offset, ty, align)?;
        self.mark(v, "invariant.load", &[])?;
        Ok(v)
    }

    /// [`Emit::load_field`] of an `i32` the runtime keeps below `bound`
    /// (IDs, which launch validation bounds): marked `!range`, so LLVM can
    /// drop the bounds tests of addresses computed from it.
    pub fn load_below_u32(
        &self,
        ptr: PointerValue<'ctx>,
        offset: u64,
        bound: u32,
    ) -> Result<IntValue<'ctx>, JitError> {
        let v = self.load_field(ptr, offset, self.i32().into(), 4)?;
        // An empty range is not valid metadata (no launch has a 0 bound).
        if bound > 0 {
            let end = |b: u32| self.i32().const_int(u64::from(b), false).into();
            self.mark(v, "range", &[end(0), end(bound)])?;
        }
        Ok(v.into_int_value())
    }

    /// Attaches metadata `kind` with operands `node` to the instruction
    /// that computes `v`, if an instruction does.
    fn mark(
        &self,
        v: BasicValueEnum<'ctx>,
        kind: &str,
        node: &[BasicMetadataValueEnum<'ctx>],
    ) -> Result<(), JitError> {
        if let Some(inst) = v.as_instruction_value() {
            inst.set_metadata(self.cx.metadata_node(node), self.cx.get_kind_id(kind))
                .map_err(|e| JitError::Llvm(e.to_string()))?;
        }
        Ok(())
    }

    pub fn store_field(
        &self,
        ptr: PointerValue<'ctx>,
        offset: u64,
        value: BasicValueEnum<'ctx>,
        align: u32,
    ) -> Result<(), JitError> {
        use crate::abi::offsets;
        let (field, reset) = match offset {
            offsets::LIVE_MASK => ("live_mask", self.rewrites.live_mask),
            offsets::HELPER_MASK => ("helper_mask", self.rewrites.helper_mask),
            offsets::FUEL => ("fuel", self.rewrites.fuel),
            _ => ("", true),
        };
        if !reset {
            return Err(JitError::Internal(format!(
                "a store of the warp's {field}, which the runtime does not reset for this module"
            )));
        }
        self.store_aligned(self.byte_ptr(ptr, offset)?, value, align)
    }

    /// Whether the launch's cancel flag, which the context at `ctxp` points
    /// to, is raised: a relaxed atomic byte load, since another thread
    /// raises it.
    pub fn cancel_raised(&self, ctxp: PointerValue<'ctx>) -> Result<IntValue<'ctx>, JitError> {
        let ptr = self.cx.ptr_type(inkwell::AddressSpace::default());
        let flag_ptr = self
            .load_field(ctxp, crate::abi::offsets::CANCEL, ptr.into(), 8)?
            .into_pointer_value();
        let flag = self
            .b
            .build_load(self.cx.i8_type(), flag_ptr, "cancel")?
            .into_int_value();
        if let Some(load) = flag.as_instruction() {
            load.set_atomic_ordering(inkwell::AtomicOrdering::Monotonic)
                .map_err(|m| JitError::Llvm(m.to_string()))?;
            load.set_alignment(1)
                .map_err(|m| JitError::Llvm(m.to_string()))?;
        }
        Ok(self.b.build_int_compare(
            inkwell::IntPredicate::NE,
            flag,
            self.cx.i8_type().const_zero(),
            "",
        )?)
    }

    /// A load of `ty` from `ptr` that assumes `align` bytes of alignment.
    pub fn load_aligned(
        &self,
        ty: BasicTypeEnum<'ctx>,
        ptr: PointerValue<'ctx>,
        align: u32,
    ) -> Result<BasicValueEnum<'ctx>, JitError> {
        let v = self.b.build_load(ty, ptr, "")?;
        if let Some(inst) = v.as_instruction_value() {
            inst.set_alignment(align)
                .map_err(|e| JitError::Llvm(e.to_string()))?;
        }
        Ok(v)
    }

    /// A store of `value` to `ptr` that assumes `align` bytes of alignment.
    pub fn store_aligned(
        &self,
        ptr: PointerValue<'ctx>,
        value: BasicValueEnum<'ctx>,
        align: u32,
    ) -> Result<(), JitError> {
        let st = self.b.build_store(ptr, value)?;
        st.set_alignment(align)
            .map_err(|e| JitError::Llvm(e.to_string()))?;
        Ok(())
    }

    /// A stack slot of `ty` at the start of the current function's entry
    /// block (where LLVM promotes and reuses slots), the builder left where
    /// it was.
    pub fn entry_alloca(
        &self,
        ty: impl inkwell::types::BasicType<'ctx>,
        name: &str,
    ) -> Result<PointerValue<'ctx>, JitError> {
        self.at_entry(|| Ok(self.b.build_alloca(ty, name)?))
    }

    /// Builds with `build` at the start of the current function's entry
    /// block, then goes back to where the builder was: what is built there
    /// runs once per call, before anything else.
    pub fn at_entry<T>(&self, build: impl FnOnce() -> Result<T, JitError>) -> Result<T, JitError> {
        let here = self.current_block()?;
        let entry = here
            .get_parent()
            .and_then(|f| f.get_first_basic_block())
            .ok_or_else(|| JitError::Internal("block without a function".into()))?;
        match entry.get_first_instruction() {
            Some(first) => self.b.position_before(&first),
            None => self.b.position_at_end(entry),
        }
        let built = build();
        self.b.position_at_end(here);
        built
    }

    /// A stack slot as [`Emit::entry_alloca`] makes, holding `initial`
    /// when the function starts.
    pub fn entry_slot(
        &self,
        initial: BasicValueEnum<'ctx>,
        name: &str,
    ) -> Result<PointerValue<'ctx>, JitError> {
        self.at_entry(|| {
            let slot = self.b.build_alloca(initial.get_type(), name)?;
            self.b.build_store(slot, initial)?;
            Ok(slot)
        })
    }

    /// The block the builder is emitting into (for phi edges).
    pub fn current_block(&self) -> Result<BasicBlock<'ctx>, JitError> {
        self.b
            .get_insert_block()
            .ok_or_else(|| JitError::Internal("builder without a block".into()))
    }
}

/// What AVX2 builds on: turning one of them off (`-avx` in a feature list)
/// turns AVX2 off too.
const AVX2_NEEDS: [&str; 7] = [
    "-avx", "-sse4.2", "-sse4.1", "-ssse3", "-sse3", "-sse2", "-sse",
];

/// What AVX-512 Foundation builds on.
const AVX512F_NEEDS: [&str; 10] = [
    "-avx2", "-fma", "-f16c", "-avx", "-sse4.2", "-sse4.1", "-ssse3", "-sse3", "-sse2", "-sse",
];

/// Lane `lane` of `v` as an unsigned integer, when `v` is a constant vector
/// whose element there is a constant integer (not undefined or poison).
/// Read through the C API: inkwell's `get_element_as_constant` takes only
/// constant data vectors, which cannot hold `i1` elements.
pub fn constant_int_lane(v: VectorValue<'_>, lane: u32) -> Option<u64> {
    use inkwell::llvm_sys::core::{
        LLVMConstIntGetZExtValue, LLVMGetAggregateElement, LLVMIsAConstantInt,
    };
    use inkwell::values::AsValueRef;
    if !v.is_const() || lane >= v.get_type().get_size() {
        return None;
    }
    // SAFETY: `v` is a constant vector with more than `lane` elements;
    // `LLVMGetAggregateElement` gives null for an element it cannot name,
    // and the element is read as an integer only when it is one.
    unsafe {
        let element = LLVMGetAggregateElement(v.as_value_ref(), lane);
        if element.is_null() || LLVMIsAConstantInt(element).is_null() {
            None
        } else {
            Some(LLVMConstIntGetZExtValue(element))
        }
    }
}

/// Whether an LLVM feature string (as the engine builds it: the host's
/// features, then overrides) leaves AVX-512F enabled.
pub fn has_avx512(features: &str) -> bool {
    has_feature(features, "avx512f", &AVX512F_NEEDS)
}

/// Whether an LLVM feature string leaves AVX2 enabled.
pub fn has_avx2(features: &str) -> bool {
    has_feature(features, "avx2", &AVX2_NEEDS)
}

/// Whether an LLVM feature string leaves `name` enabled: its last `+name`
/// comes after its last `-name` and after every entry of `disabled_by`
/// (features it needs, whose removal takes it away too).
pub fn has_feature(features: &str, name: &str, disabled_by: &[&str]) -> bool {
    let mut on = false;
    for f in features.split(',') {
        match f.split_at_checked(1) {
            Some(("+", n)) if n == name => on = true,
            Some(("-", n)) if n == name || disabled_by.contains(&f) => on = false,
            _ => {}
        }
    }
    on
}

/// Whether `v` is a bit cast of a lane mask (`<32 x i1>`) to its bit set.
fn is_mask_bits(v: BasicValueEnum<'_>) -> bool {
    let BasicValueEnum::IntValue(int) = v else {
        return false;
    };
    let from_mask = |op| {
        matches!(op, Some(inkwell::values::Operand::Value(BasicValueEnum::VectorValue(m)))
            if m.get_type().get_size() == LANES
                && matches!(m.get_type().get_element_type(),
                    BasicTypeEnum::IntType(t) if t.get_bit_width() == 1))
    };
    int.get_type().get_bit_width() == LANES
        && int.as_instruction().is_some_and(|i| {
            i.get_opcode() == InstructionOpcode::BitCast && from_mask(i.get_operand(0))
        })
}

/// `<32 x elem>`.
pub fn vec_of(elem: BasicTypeEnum<'_>) -> VectorType<'_> {
    match elem {
        BasicTypeEnum::IntType(t) => t.vec_type(LANES),
        BasicTypeEnum::FloatType(t) => t.vec_type(LANES),
        BasicTypeEnum::PointerType(t) => t.vec_type(LANES),
        BasicTypeEnum::VectorType(t) => t,
        // Lanes are always scalars; aggregates never reach here.
        BasicTypeEnum::ArrayType(t) => t.get_context().i8_type().vec_type(LANES),
        BasicTypeEnum::StructType(t) => t.get_context().i8_type().vec_type(LANES),
        BasicTypeEnum::ScalableVectorType(t) => t.get_context().i8_type().vec_type(LANES),
    }
}

/// The attributes every compiled function carries: the target, and stack
/// probes, so a frame past a page touches each page in turn and an
/// overflow meets the stack's guard page instead of memory beyond it.
pub fn target_attributes(
    cx: &Context,
    cpu: &str,
    features: &str,
) -> [inkwell::attributes::Attribute; 3] {
    [
        cx.create_string_attribute("target-cpu", cpu),
        cx.create_string_attribute("target-features", features),
        cx.create_string_attribute("probe-stack", "inline-asm"),
    ]
}

#[cfg(test)]
mod tests {
    use super::{has_avx2, has_avx512, has_feature};

    #[test]
    fn a_feature_is_on_until_it_or_what_it_needs_is_turned_off() {
        assert!(has_feature("+sse2,+avx,+avx2", "avx2", &["-avx"]));
        assert!(!has_feature("+sse2,+avx,+avx2,-avx", "avx2", &["-avx"]));
        assert!(!has_feature("+avx2,-avx2", "avx2", &["-avx"]));
        assert!(has_feature("-avx,+avx2", "avx2", &["-avx"]));
        assert!(!has_feature("+avx2x", "avx2", &[]));
        assert!(!has_feature("", "avx2", &[]));
    }

    #[test]
    fn avx512_goes_with_the_features_below_it() {
        assert!(has_avx512("+avx2,+avx512f,+avx512bw"));
        assert!(!has_avx512("+avx512f,-avx512f"));
        assert!(!has_avx512("+avx512f,-fma"));
        assert!(!has_avx512("+avx512f,-avx"));
        assert!(!has_avx512("+avx2"));
        // A later entry wins, and a prerequisite turned off takes it away.
        assert!(has_avx512("+sse2,+avx2,+avx512f,+avx512bw"));
        assert!(!has_avx512("+sse2,+avx2,-avx512f"));
        assert!(!has_avx512("+avx2,+avx512f,-avx512f"));
        assert!(!has_avx512("+avx2,+avx512f,+avx512vl,-avx"));
        assert!(has_avx512("-avx512f,+avx512f"));
        assert!(!has_avx512(""));
        assert!(!has_avx512("+avx2,+avx512f,-sse4.2"));
        assert!(has_avx2("+sse4.2,+avx,+avx2,-avx512f"));
        assert!(!has_avx2("+avx2,-avx"));
        assert!(!has_avx2("+avx2,-sse2"));
    }
}
