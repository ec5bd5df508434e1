//! Loads and stores with `i32` addresses into buffers and shared memory
//! whose address shape is tested at run time, as one routine per access
//! kind (load or store, element width, component count) in each module:
//! it tests whether the active lanes use one address (a load is then one
//! checked scalar load, broadcast) or one run of consecutive elements
//! inside the memory (one masked vector access), in modules that read a
//! y or z id whether each group of 8 lanes is a run of its own (a row of
//! a 2D workgroup 8 or 16 wide: a masked access per group), or, for a
//! store, whether they store one after another in lane order (compressed,
//! then stored), else goes lane by lane.
//! Each such access emits only a call with the memory, the addresses and
//! the mask; a copy of the tests and paths per access made code
//! generation spend most of an access's time on them. Known shapes
//! (`known.rs`) call it too for what their own path does not take.
//!
//! The routine works on 32-bit offsets: the bounds test is one `<32 x i32>`
//! compare (against the memory's last start, clamped for memories of 4 GiB
//! or more), faulting lanes go to [`abi::FAULT_SYMBOL`] exactly as inline
//! code records them, and gathers and scatters take 32-bit indices
//! (`vpgatherdd`): from `base + 2^31`, each offset with its top bit
//! flipped, so LLVM's sign-extended indices give the unsigned offsets.

use super::{
    active_lanes_equal, aligned_inside, broadcast_components, either, elem_vec, fault_routine,
    inside_memory, join_components, load_consecutive, store_consecutive, Span, V,
};
use crate::abi;
use crate::emit::{Emit, LANES};
use crate::lower::routine::{add_routine_attributes, caller_target, RoutineBody, RoutineSpec};
use crate::lower::FnLowering;
use crate::JitError;
use inkwell::attributes::Attribute;
use inkwell::basic_block::BasicBlock;
use inkwell::llvm_sys::core::LLVMBuildGEP2;
use inkwell::module::Linkage;
use inkwell::types::{AsTypeRef, BasicMetadataTypeEnum, BasicType, VectorType};
use inkwell::values::{
    AsValueRef, BasicMetadataValueEnum, BasicValueEnum, FunctionValue, IntValue, PointerValue,
    VectorValue,
};
use inkwell::IntPredicate;
use std::collections::HashMap;
use warpjit_ir::{walk_block, Builtin, Dim, MemFormat, MemRef, Module, Op, Stmt, Type};

/// The lanes of `m` load `format` from `span` at `addr` (`<32 x i32>`);
/// the raw components, zero in lanes that did not load. `shaped`: the
/// caller has not tested the address shape (the routine always does).
pub(super) fn load<'ctx>(
    fl: &FnLowering<'ctx, '_>,
    span: &Span<'ctx>,
    format: MemFormat,
    addr: V<'ctx>,
    m: V<'ctx>,
    shaped: bool,
) -> Result<Vec<V<'ctx>>, JitError> {
    let e = fl.e;
    let args = arguments(fl, span, abi::FAULT_LOAD, addr, m)?;
    let Some(f) = routine(fl, abi::FAULT_LOAD, format, shaped)? else {
        return inline(fl, &args, abi::FAULT_LOAD, format, &[], shaped);
    };
    let out =
        e.b.build_call(f, &args, "")?
            .try_as_basic_value()
            .basic()
            .ok_or_else(|| JitError::Internal("lane load without a result".into()))?;
    if format.count == 1 {
        return Ok(vec![out.into_vector_value()]);
    }
    let out = out.into_struct_value();
    (0..format.count)
        .map(|i| {
            Ok(e.b
                .build_extract_value(out, u32::from(i), "")?
                .into_vector_value())
        })
        .collect()
}

/// The lanes of `m` store the components `raws` of `format` to `span` at
/// `addr`, in ascending lane order; `shaped` as for [`load`].
pub(super) fn store<'ctx>(
    fl: &FnLowering<'ctx, '_>,
    span: &Span<'ctx>,
    format: MemFormat,
    addr: V<'ctx>,
    m: V<'ctx>,
    raws: &[V<'ctx>],
    shaped: bool,
) -> Result<(), JitError> {
    let mut args = arguments(fl, span, abi::FAULT_STORE, addr, m)?;
    let Some(f) = routine(fl, abi::FAULT_STORE, format, shaped)? else {
        inline(fl, &args, abi::FAULT_STORE, format, raws, shaped)?;
        return Ok(());
    };
    args.extend(raws.iter().map(|r| BasicMetadataValueEnum::from(*r)));
    fl.e.b.build_call(f, &args, "")?;
    Ok(())
}

/// `ctx, base, len, addr, mask bits, site, index, function`: what the
/// routine needs to access the memory and to record faults as
/// `memory::record_faults` does.
fn arguments<'ctx>(
    fl: &FnLowering<'ctx, '_>,
    span: &Span<'ctx>,
    kind: u32,
    addr: V<'ctx>,
    m: V<'ctx>,
) -> Result<Vec<BasicMetadataValueEnum<'ctx>>, JitError> {
    let e = fl.e;
    let i32c = |v: u32| e.i32().const_int(u64::from(v), false);
    Ok(vec![
        fl.ctxp.into(),
        span.base.into(),
        span.len.into(),
        addr.into(),
        e.mask_to_bits(m)?.into(),
        i32c(kind | span.space << 8).into(),
        i32c(span.index).into(),
        i32c(fl.func_index).into(),
    ])
}

/// The path emitted in the calling function, for the only access of its
/// kind in the module: a routine would cost more code than it saves. The
/// shape tests only when the caller has not made them.
fn inline<'ctx>(
    fl: &FnLowering<'ctx, '_>,
    args: &[BasicMetadataValueEnum<'ctx>],
    kind: u32,
    format: MemFormat,
    raws: &[V<'ctx>],
    shaped: bool,
) -> Result<Vec<V<'ctx>>, JitError> {
    let value = |i: usize| -> Result<BasicValueEnum<'ctx>, JitError> {
        BasicValueEnum::try_from(args[i])
            .map_err(|_| JitError::Internal("lane path argument is not a value".into()))
    };
    let values = Operands {
        ctx: value(0)?.into_pointer_value(),
        base: value(1)?.into_pointer_value(),
        len: value(2)?.into_int_value(),
        addr: value(3)?.into_vector_value(),
        bits: value(4)?.into_int_value(),
        fault: [value(5)?, value(6)?, value(7)?],
        raws: raws.to_vec(),
    };
    let vt = elem_vec(fl, format.elem);
    if shaped {
        emit_shaped(fl.e, fl.func, &values, kind, format, vt, fl.e.row_groups)
    } else {
        emit_path(fl.e, fl.func, &values, kind, format, vt)
    }
}

/// The module's routine for `kind` (load or store) of `format`, built or
/// declared (see [`Emit::shared_routines`]) on first use; `None` when the
/// module has one access of that kind and emits it inline: always where
/// the routine would be built into the module, and where it is shared,
/// for an access of unknown shape (`shaped`: the path is its every run)
/// or inside a loop (a call there, even on the branch not taken, changed
/// the loop's register allocation: W6 ran 4% slower). A known shape's
/// fallback elsewhere rarely runs, and calling the shared routine costs
/// the module no code generation.
fn routine<'ctx>(
    fl: &FnLowering<'ctx, '_>,
    kind: u32,
    format: MemFormat,
    shaped: bool,
) -> Result<Option<FunctionValue<'ctx>>, JitError> {
    let e = fl.e;
    let kind_name = routine_name(kind == abi::FAULT_LOAD, format);
    let groups = e.row_groups;
    let name = if groups {
        format!("{kind_name}.rows")
    } else {
        kind_name.clone()
    };
    if let Some(f) = e.module.get_function(&name) {
        return Ok(Some(f));
    }
    let uses = e
        .lane_paths
        .borrow_mut()
        .get_or_insert_with(|| count_kinds(fl.module))
        .get(&kind_name)
        .copied()
        .unwrap_or(0);
    if uses <= 1 && (shaped || e.shared_routines.is_none() || fl.in_loop()) {
        return Ok(None);
    }
    let target = caller_target(fl.func);
    if let Some(shared) = &e.shared_routines {
        let f = declare(e, &name, kind, format, Linkage::External, &target);
        shared.borrow_mut().push(RoutineSpec {
            name,
            body: RoutineBody::Lanes {
                kind,
                format,
                groups,
            },
        });
        return Ok(Some(f));
    }
    let f = declare(e, &name, kind, format, Linkage::Internal, &target);
    let here = e.current_block()?;
    let built = define(e, f, kind, format, groups);
    e.b.position_at_end(here);
    built?;
    Ok(Some(f))
}

/// Defines the lane-path routine `name`, a load or store (`kind`) of
/// `format` that tests for runs per group of lanes when `groups`, as an
/// exported function for the callers' `target`.
pub(in crate::lower) fn define_lanes_routine<'ctx>(
    e: &Emit<'ctx, '_>,
    name: &str,
    kind: u32,
    format: MemFormat,
    groups: bool,
    target: &[Attribute],
) -> Result<(), JitError> {
    let f = declare(e, name, kind, format, Linkage::External, target);
    define(e, f, kind, format, groups)
}

/// The routine's function with its signature and attributes, no body.
fn declare<'ctx>(
    e: &Emit<'ctx, '_>,
    name: &str,
    kind: u32,
    format: MemFormat,
    linkage: Linkage,
    target: &[Attribute],
) -> FunctionValue<'ctx> {
    let load = kind == abi::FAULT_LOAD;
    let vt = e.int_vec(format.elem.bits());
    let ptr = e.cx.ptr_type(Default::default());
    let i32t = e.i32();
    let mut params: Vec<BasicMetadataTypeEnum> = vec![
        ptr.into(),
        ptr.into(),
        e.i64().into(),
        e.int_vec(32).into(),
        i32t.into(),
        i32t.into(),
        i32t.into(),
        i32t.into(),
    ];
    let fty = if load {
        if format.count == 1 {
            vt.fn_type(&params, false)
        } else {
            let fields = vec![vt.as_basic_type_enum(); format.count as usize];
            e.cx.struct_type(&fields, false).fn_type(&params, false)
        }
    } else {
        params.extend((0..format.count).map(|_| BasicMetadataTypeEnum::from(vt)));
        e.cx.void_type().fn_type(&params, false)
    };
    let f = e.module.add_function(name, fty, Some(linkage));
    add_routine_attributes(e, f, target);
    f
}

fn routine_name(load: bool, format: MemFormat) -> String {
    format!(
        "warpjit.lanes.{}.i{}x{}",
        if load { "load" } else { "store" },
        format.elem.bits(),
        format.count
    )
}

/// How many loads and stores of each routine's kind (`i32` address, not a
/// private array) the module has: those that may take the path.
fn count_kinds(module: &Module) -> HashMap<String, u32> {
    let mut uses = HashMap::new();
    for f in &module.functions {
        walk_block(&f.body, &mut |s| {
            let Stmt::Inst(i) = s else { return };
            let (load, mem, format) = match &i.op {
                Op::Load { mem, format } => (true, mem, format),
                Op::Store { mem, format } => (false, mem, format),
                _ => return,
            };
            let narrow = i
                .args
                .first()
                .is_some_and(|a| module.operand_type(f, a) == Type::I32);
            if narrow && !matches!(mem, MemRef::Private(_)) {
                *uses.entry(routine_name(load, *format)).or_insert(0) += 1;
            }
        });
    }
    uses
}

/// What the path works on: the context, the memory, the lanes' `i32`
/// addresses and mask bits, the fault site (`site, index, function` as
/// [`abi::FAULT_SYMBOL`] takes them) and, for stores, the components.
struct Operands<'ctx> {
    ctx: PointerValue<'ctx>,
    base: PointerValue<'ctx>,
    len: IntValue<'ctx>,
    addr: V<'ctx>,
    bits: IntValue<'ctx>,
    fault: [BasicValueEnum<'ctx>; 3],
    raws: Vec<V<'ctx>>,
}

fn define<'ctx>(
    e: &Emit<'ctx, '_>,
    f: FunctionValue<'ctx>,
    kind: u32,
    format: MemFormat,
    groups: bool,
) -> Result<(), JitError> {
    let vt = e.int_vec(format.elem.bits());
    let p = |n: u32| {
        f.get_nth_param(n)
            .ok_or_else(|| JitError::Internal(format!("lane routine without parameter {n}")))
    };
    let raws = if kind == abi::FAULT_LOAD {
        Vec::new()
    } else {
        (0..u32::from(format.count))
            .map(|i| Ok(p(8 + i)?.into_vector_value()))
            .collect::<Result<Vec<_>, JitError>>()?
    };
    let values = Operands {
        ctx: p(0)?.into_pointer_value(),
        base: p(1)?.into_pointer_value(),
        len: p(2)?.into_int_value(),
        addr: p(3)?.into_vector_value(),
        bits: p(4)?.into_int_value(),
        fault: [p(5)?, p(6)?, p(7)?],
        raws,
    };
    let entry = e.cx.append_basic_block(f, "entry");
    e.b.position_at_end(entry);
    let loaded = emit_shaped(e, f, &values, kind, format, vt, groups)?;
    let loaded: Vec<BasicValueEnum> = loaded.into_iter().map(Into::into).collect();
    match loaded.as_slice() {
        [] => e.b.build_return(None)?,
        [one] => e.b.build_return(Some(one))?,
        many => e.b.build_aggregate_return(many)?,
    };
    Ok(())
}

/// The access by the shape of the active lanes' addresses, tested here:
/// when all give one address, a load is checked, done and its fault
/// recorded once in scalar code and broadcast to the active lanes (0
/// elsewhere, as a gather gives); when a single-component access is one
/// aligned run of consecutive elements inside the memory, one masked
/// vector access; on AVX-512, when a store of 32-bit elements puts the
/// active lanes one after another in lane order (stream compaction), a
/// compress and a masked store per half; otherwise [`emit_path`]. Faults
/// are the same: with one
/// address all active lanes are out of bounds or none, and the first of
/// them is the first fault.
fn emit_shaped<'ctx>(
    e: &Emit<'ctx, '_>,
    func: FunctionValue<'ctx>,
    v: &Operands<'ctx>,
    kind: u32,
    format: MemFormat,
    vt: VectorType<'ctx>,
    groups: bool,
) -> Result<Vec<V<'ctx>>, JitError> {
    let load = kind == abi::FAULT_LOAD;
    let run = format.count == 1;
    if !load && !run {
        return emit_path(e, func, v, kind, format, vt);
    }
    let b = &e.b;
    let shape = address_shape(e, v, format.bytes())?;
    let mask = e.bits_to_mask(v.bits)?;
    let align = e.i32().const_int(u64::from(format.elem.bytes()), false);
    let join = e.cx.append_basic_block(func, "shaped.done");
    let lanes_bb = e.cx.append_basic_block(func, "shaped.lanes");
    let mut joined: Vec<(Vec<V<'ctx>>, BasicBlock<'ctx>)> = Vec::new();
    if load {
        let uniform_bb = e.cx.append_basic_block(func, "shaped.uniform");
        let inside_bb = e.cx.append_basic_block(func, "shaped.uniform.inside");
        let outside_bb = e.cx.append_basic_block(func, "shaped.uniform.outside");
        let other_bb = e.cx.append_basic_block(func, "shaped.not.uniform");
        b.build_conditional_branch(shape.uniform, uniform_bb, other_bb)?;

        b.position_at_end(uniform_bb);
        let size = u64::from(format.bytes());
        let (aligned, inside) = aligned_inside(e, v.len, size, shape.at)?;
        b.build_conditional_branch(inside, inside_bb, outside_bb)?;

        b.position_at_end(outside_bb);
        // Every active lane has the address: the lowest one's is `at`.
        record_faults(e, v.ctx, v.bits, v.addr, v.fault)?;
        b.build_unconditional_branch(join)?;
        let zeros = vec![vt.const_zero(); usize::from(format.count)];
        joined.push((zeros, outside_bb));

        b.position_at_end(inside_bb);
        let scalars = broadcast_components(e, v.base, aligned, format, vt)?;
        b.build_unconditional_branch(join)?;
        joined.push((scalars, inside_bb));
        b.position_at_end(other_bb);
    }
    // Stores of the lanes that pass a test, each at the next element
    // (stream compaction): a compress, tested only when the run is not.
    let packs = !load && compresses(e, format);
    // Runs per group of 8 lanes (rows of a 2D workgroup 8 or 16 wide),
    // where masked accesses of the element exist: tested before the
    // compress, whose test costs more.
    let grouped = groups && tests_groups(e, format);
    if run {
        let run_bb = e.cx.append_basic_block(func, "shaped.run");
        let packs_test = if packs {
            e.cx.append_basic_block(func, "shaped.packed.test")
        } else {
            lanes_bb
        };
        let not_run = if grouped {
            e.cx.append_basic_block(func, "shaped.groups.test")
        } else {
            packs_test
        };
        b.build_conditional_branch(shape.run_inside, run_bb, not_run)?;
        if grouped {
            b.position_at_end(not_run);
            let groups_bb = e.cx.append_basic_block(func, "shaped.groups");
            let groups = group_runs(e, v, format.bytes())?;
            b.build_conditional_branch(groups.inside, groups_bb, packs_test)?;
            b.position_at_end(groups_bb);
            let raw = if load { None } else { Some(v.raws[0]) };
            if let Some(x) = group_access(e, func, vt, &groups.starts, align, mask, raw)? {
                joined.push((vec![x], e.current_block()?));
            }
            b.build_unconditional_branch(join)?;
        }
        if packs {
            b.position_at_end(packs_test);
            let packed_bb = e.cx.append_basic_block(func, "shaped.packed");
            let packed = packed_run(e, v.base, v.len, v.bits, shape.at, Type::I32)?;
            let take = b.build_and(ranked_addresses(e, v, &shape)?, packed.inside, "")?;
            b.build_conditional_branch(take, packed_bb, lanes_bb)?;
            b.position_at_end(packed_bb);
            compress_store(e, v.bits, packed.start, v.raws[0])?;
            b.build_unconditional_branch(join)?;
        }
        b.position_at_end(run_bb);
        if load {
            let x = load_consecutive(e, func, vt, shape.run_start, align, mask)?;
            joined.push((vec![x], e.current_block()?));
        } else {
            store_consecutive(e, func, v.raws[0], shape.run_start, align, mask)?;
        }
        b.build_unconditional_branch(join)?;
    } else {
        b.build_unconditional_branch(lanes_bb)?;
    }

    b.position_at_end(lanes_bb);
    let lanes = emit_path(e, func, v, kind, format, vt)?;
    joined.push((lanes, e.current_block()?));
    b.build_unconditional_branch(join)?;

    b.position_at_end(join);
    let components = if load { usize::from(format.count) } else { 0 };
    let incoming: Vec<_> = joined
        .iter()
        .map(|(values, from)| (values.as_slice(), *from))
        .collect();
    join_components(e, vt, components, &incoming)
}

/// Where the active lanes' 4-byte elements go when they are packed: the
/// `r`-th active lane at `at + 4 r`.
pub(super) struct PackedRun<'ctx> {
    /// Some lane is active, `at` is aligned, and the run does not wrap and
    /// ends inside the memory.
    pub inside: IntValue<'ctx>,
    /// Where the lowest active lane's element goes.
    pub start: PointerValue<'ctx>,
}

/// Whether stores of `format` can be packed with a compress: AVX-512 or
/// AVX2, and one 32-bit element per lane.
pub(super) fn compresses(e: &Emit<'_, '_>, format: MemFormat) -> bool {
    (e.avx512 || e.avx2) && format.count == 1 && format.elem.bytes() == 4
}

/// The run of the lanes in `bits` packed from `at`, the lowest one's
/// address (zero-extended from `addr_ty`), into the memory of `len` bytes
/// at `base`.
pub(super) fn packed_run<'ctx>(
    e: &Emit<'ctx, '_>,
    base: PointerValue<'ctx>,
    len: IntValue<'ctx>,
    bits: IntValue<'ctx>,
    at: IntValue<'ctx>,
    addr_ty: Type,
) -> Result<PackedRun<'ctx>, JitError> {
    let b = &e.b;
    // The last element is at `at + (count - 1) * 4`, computed in 64 bits.
    let count: IntValue = e
        .call_intrinsic("llvm.ctpop", &[e.i32().into()], &[bits.into()])?
        .into_int_value();
    let some = b.build_int_compare(IntPredicate::NE, count, e.i32().const_zero(), "")?;
    let steps = b.build_int_sub(count, e.i32().const_int(1, false), "")?;
    let steps = b.build_int_z_extend(steps, e.i64(), "")?;
    let at_last = b.build_int_add(
        at,
        b.build_int_mul(steps, e.i64().const_int(4, false), "")?,
        "",
    )?;
    let no_wrap = if addr_ty == Type::I64 {
        b.build_int_compare(IntPredicate::UGE, at_last, at, "")?
    } else {
        let max = e.i64().const_int(u64::from(u32::MAX), false);
        b.build_int_compare(IntPredicate::ULE, at_last, max, "")?
    };
    let misalign = b.build_and(at, e.i64().const_int(3, false), "")?;
    let aligned = b.build_int_compare(IntPredicate::EQ, misalign, e.i64().const_zero(), "")?;
    let mut inside = inside_memory(e, len, 4, at_last)?;
    for c in [some, no_wrap, aligned] {
        inside = b.build_and(inside, c, "")?;
    }
    let base = b.build_ptr_to_int(base, e.i64(), "")?;
    let start = b.build_int_add(base, at, "")?;
    let start = b.build_int_to_ptr(start, e.cx.ptr_type(Default::default()), "")?;
    Ok(PackedRun { inside, start })
}

/// Whether every active lane's 32-bit address is the first one's plus its
/// rank among the active lanes times 4.
fn ranked_addresses<'ctx>(
    e: &Emit<'ctx, '_>,
    v: &Operands<'ctx>,
    shape: &AddressShape<'ctx>,
) -> Result<IntValue<'ctx>, JitError> {
    let b = &e.b;
    let mask = e.bits_to_mask(v.bits)?;
    // Lane l's rank among the active lanes: the active lanes below it.
    let below = e.lanes_const(32, |l| (1u64 << l) - 1);
    let below = b.build_and(e.splat(v.bits.into())?, below, "")?;
    let ranks: V = e
        .call_intrinsic("llvm.ctpop", &[below.get_type().into()], &[below.into()])?
        .into_vector_value();
    let at32 = b.build_int_truncate(shape.at, e.i32(), "")?;
    let expected = b.build_int_add(
        e.splat(at32.into())?,
        b.build_int_mul(ranks, e.splat_int(32, 4), "")?,
        "",
    )?;
    active_lanes_equal(e, mask, expected, v.addr)
}

/// Stores the lanes of the 32-bit `x` in the bit set `bits` one after
/// another from `start`: on AVX-512 each half compressed in registers
/// (`vpcompressd`; its memory form is slow on some cores) and stored with
/// a mask of its count; on AVX2 each quarter likewise, permuted by a table.
pub(super) fn compress_store<'ctx>(
    e: &Emit<'ctx, '_>,
    bits: IntValue<'ctx>,
    start: PointerValue<'ctx>,
    x: V<'ctx>,
) -> Result<(), JitError> {
    if !e.avx512 {
        return compress_store_by_quarters(e, bits, start, x);
    }
    let b = &e.b;
    let v16 = e.i32().vec_type(16);
    let i16t = e.cx.i16_type();
    let mask16 = |bits: IntValue<'ctx>| -> Result<V<'ctx>, JitError> {
        let narrow = b.build_int_truncate(bits, i16t, "")?;
        Ok(b.build_bit_cast(narrow, e.i1().vec_type(16), "")?
            .into_vector_value())
    };
    let half = |start: u32| e.lane_run(x, start, 16);
    let low_bits = b.build_and(bits, e.i32().const_int(0xffff, false), "")?;
    let high_bits = b.build_right_shift(bits, e.i32().const_int(16, false), false, "")?;
    let align = e.i32().const_int(4, false);
    let mut at = start;
    for (data, bits) in [(half(0)?, low_bits), (half(16)?, high_bits)] {
        let packed_half = e
            .call_intrinsic(
                "llvm.x86.avx512.mask.compress",
                &[v16.into()],
                &[data.into(), v16.const_zero().into(), mask16(bits)?.into()],
            )?
            .into_vector_value();
        let count: IntValue = e
            .call_intrinsic("llvm.ctpop", &[e.i32().into()], &[bits.into()])?
            .into_int_value();
        let one = e.i32().const_int(1, false);
        let first = b.build_int_sub(b.build_left_shift(one, count, "")?, one, "")?;
        let data: BasicValueEnum = packed_half.into();
        e.call_void_intrinsic(
            "llvm.masked.store",
            &[data.get_type(), at.get_type().into()],
            &[data, at.into(), align.into(), mask16(first)?.into()],
        )?;
        let count64 = b.build_int_z_extend(count, e.i64(), "")?;
        let bytes = b.build_int_mul(count64, e.i64().const_int(4, false), "")?;
        // SAFETY (for LLVM): inside the run the caller checked.
        at = unsafe { b.build_gep(e.cx.i8_type(), at, &[bytes], "")? };
    }
    Ok(())
}

/// [`compress_store`] on AVX2: each 8-lane quarter is permuted (`vpermd`)
/// so that its lanes in `bits` come first, in order, and stored whole into
/// a stack array where the quarter's count says, so the later quarters
/// overwrite what it stores past its count. The permutation for each 8-bit
/// set comes from a table of 256 words, the `r`-th lane of the set in
/// nibble `r`. The packed run then goes to memory in four whole 8-element
/// copies, at 0, 8, 16 and 24 elements or the run's last 8 where those lie
/// past its end (copies that overlap write the same values twice); a run
/// of fewer than 8 takes one masked store (`vpmaskmovd`, which is slow:
/// see `store_consecutive`). Memory only ever receives the run's values.
fn compress_store_by_quarters<'ctx>(
    e: &Emit<'ctx, '_>,
    bits: IntValue<'ctx>,
    start: PointerValue<'ctx>,
    x: V<'ctx>,
) -> Result<(), JitError> {
    let b = &e.b;
    let i32t = e.i32();
    let v8 = i32t.vec_type(8);
    let eight = |f: &dyn Fn(u64) -> u64| {
        VectorType::const_vector(
            &(0..8)
                .map(|l| i32t.const_int(f(l), false))
                .collect::<Vec<_>>(),
        )
    };
    let table = compress_table(e);
    let total: IntValue = e
        .call_intrinsic("llvm.ctpop", &[i32t.into()], &[bits.into()])?
        .into_int_value();
    let func = e
        .current_block()?
        .get_parent()
        .ok_or_else(|| JitError::Internal("block without a function".into()))?;
    // 32 elements, and room for the last quarter's 8 lanes past 24.
    let packed_run = e.entry_alloca(i32t.array_type(40), "packed")?;
    let element = |base: PointerValue<'ctx>, index: IntValue<'ctx>| {
        let index = b.build_int_z_extend(index, e.i64(), "")?;
        // SAFETY (for LLVM): the callers keep `index` inside the run (in
        // memory, checked by the caller) or the 40-element array.
        Ok::<_, JitError>(unsafe { b.build_gep(i32t, base, &[index], "")? })
    };
    let mut stored = i32t.const_zero();
    for q in 0..4u32 {
        let set = b.build_right_shift(bits, i32t.const_int(u64::from(8 * q), false), false, "")?;
        let set = b.build_and(set, i32t.const_int(0xff, false), "")?;
        let set64 = b.build_int_z_extend(set, e.i64(), "")?;
        // SAFETY (for LLVM): `set` < 256 indexes the 256-word table.
        let slot = unsafe { b.build_gep(i32t, table, &[set64], "")? };
        let word = e.load_aligned(i32t.into(), slot, 4)?.into_int_value();
        let word = splat8(e, word)?;
        let idx = b.build_right_shift(word, eight(&|l| 4 * l), false, "")?;
        let idx = b.build_and(idx, eight(&|_| 7), "")?;
        let data = e.lane_run(x, 8 * q, 8)?;
        let packed = e
            .call_intrinsic("llvm.x86.avx2.permd", &[], &[data.into(), idx.into()])?
            .into_vector_value();
        e.store_aligned(element(packed_run, stored)?, packed.into(), 4)?;
        let count: IntValue = e
            .call_intrinsic("llvm.ctpop", &[i32t.into()], &[set.into()])?
            .into_int_value();
        stored = b.build_int_add(stored, count, "")?;
    }
    let eight_or_more =
        b.build_int_compare(IntPredicate::UGE, total, i32t.const_int(8, false), "")?;
    either(e, func, eight_or_more, |whole| {
        if whole {
            // Against a masked store for each quarter past the run's last
            // 8 elements: W5 on one SM of an AVX2 host about a quarter
            // faster (docs/performance-log.md).
            let last = b.build_int_sub(total, i32t.const_int(8, false), "")?;
            for k in 0..4u64 {
                let from = i32t.const_int(8 * k, false);
                let before_end = b.build_int_compare(IntPredicate::ULE, from, last, "")?;
                let from = b.build_select(before_end, from, last, "")?.into_int_value();
                let chunk = e.load_aligned(v8.into(), element(packed_run, from)?, 4)?;
                e.store_aligned(element(start, from)?, chunk, 4)?;
            }
        } else {
            let chunk = e.load_aligned(v8.into(), packed_run, 4)?;
            let first =
                b.build_int_compare(IntPredicate::ULT, eight(&|l| l), splat8(e, total)?, "")?;
            e.call_void_intrinsic(
                "llvm.masked.store",
                &[v8.into(), start.get_type().into()],
                &[
                    chunk,
                    start.into(),
                    i32t.const_int(4, false).into(),
                    first.into(),
                ],
            )?;
        }
        Ok(None)
    })?;
    Ok(())
}

/// `<8 x i32>` with `x` in every lane.
fn splat8<'ctx>(e: &Emit<'ctx, '_>, x: IntValue<'ctx>) -> Result<V<'ctx>, JitError> {
    let t = e.i32().vec_type(8);
    let one =
        e.b.build_insert_element(t.get_poison(), x, e.i32().const_zero(), "")?;
    Ok(e.b.build_shuffle_vector(one, t.get_poison(), t.const_zero(), "")?)
}

/// The module's table of [`compress_store_by_quarters`], made on first use.
fn compress_table<'ctx>(e: &Emit<'ctx, '_>) -> PointerValue<'ctx> {
    const NAME: &str = "warpjit.compress.quarter";
    if let Some(g) = e.module.get_global(NAME) {
        return g.as_pointer_value();
    }
    let words: Vec<IntValue> = (0..256u32)
        .map(|set| {
            let word = (0..8u32)
                .filter(|l| set & (1 << l) != 0)
                .enumerate()
                .fold(0u32, |w, (rank, lane)| w | lane << (4 * rank));
            e.i32().const_int(u64::from(word), false)
        })
        .collect();
    let t = e.i32().array_type(256);
    let g = e.module.add_global(t, None, NAME);
    g.set_initializer(&e.i32().const_array(&words));
    g.set_constant(true);
    g.set_linkage(inkwell::module::Linkage::Private);
    g.set_unnamed_addr(true);
    g.set_alignment(64);
    g.as_pointer_value()
}

/// What the active lanes' `i32` addresses look like.
struct AddressShape<'ctx> {
    /// The first active lane's address, zero-extended.
    at: IntValue<'ctx>,
    /// Some lane is active and all active lanes give `at`.
    uniform: IntValue<'ctx>,
    /// Some lane is active, lane `l` gives `at + (l - first) * size`, `at`
    /// is a multiple of `size` and the whole run is inside the memory.
    run_inside: IntValue<'ctx>,
    /// Where lane 0's element of the run is (may lie before the memory).
    run_start: PointerValue<'ctx>,
}

fn address_shape<'ctx>(
    e: &Emit<'ctx, '_>,
    v: &Operands<'ctx>,
    size: u32,
) -> Result<AddressShape<'ctx>, JitError> {
    let b = &e.b;
    let mask = e.bits_to_mask(v.bits)?;
    let some = b.build_int_compare(IntPredicate::NE, v.bits, e.i32().const_zero(), "")?;
    let first = e.lowest_lane(v.bits)?;
    let last = e.highest_lane(v.bits)?;
    let at32 = b.build_extract_element(v.addr, first, "")?.into_int_value();
    let last32 = b.build_extract_element(v.addr, last, "")?.into_int_value();
    // Some lane is active and every active lane's address is `expected`'s.
    let all_active = |expected: V<'ctx>| -> Result<IntValue<'ctx>, JitError> {
        Ok(b.build_and(active_lanes_equal(e, mask, expected, v.addr)?, some, "")?)
    };
    let uniform = all_active(e.splat(at32.into())?)?;
    // Lane l's expected address, modulo 2^32: at + (l - first) * size.
    let steps = e.lanes_const(32, |l| u64::from(l) * u64::from(size));
    let size32 = e.i32().const_int(u64::from(size), false);
    let lane0 = b.build_int_sub(at32, b.build_int_mul(first, size32, "")?, "")?;
    let consecutive = all_active(b.build_int_add(e.splat(lane0.into())?, steps, "")?)?;
    // In 64 bits: the run does not wrap (so every lane's address is the
    // expected one), starts aligned and ends inside the memory.
    let at = b.build_int_z_extend(at32, e.i64(), "")?;
    let at_last = b.build_int_z_extend(last32, e.i64(), "")?;
    let size64 = e.i64().const_int(u64::from(size), false);
    let span_lanes = b.build_int_z_extend(b.build_int_sub(last, first, "")?, e.i64(), "")?;
    let span_bytes = b.build_int_mul(span_lanes, size64, "")?;
    let ends = b.build_int_add(at, span_bytes, "")?;
    let no_wrap = b.build_int_compare(IntPredicate::EQ, ends, at_last, "")?;
    let misalign = b.build_and(at, e.i64().const_int(u64::from(size) - 1, false), "")?;
    let aligned = b.build_int_compare(IntPredicate::EQ, misalign, e.i64().const_zero(), "")?;
    let end_ok = inside_memory(e, v.len, u64::from(size), at_last)?;
    let mut run_inside = b.build_and(consecutive, no_wrap, "")?;
    for c in [aligned, end_ok] {
        run_inside = b.build_and(run_inside, c, "")?;
    }
    let first64 = b.build_int_z_extend(first, e.i64(), "")?;
    let lane0_at = b.build_int_sub(at, b.build_int_mul(first64, size64, "")?, "")?;
    let base = b.build_ptr_to_int(v.base, e.i64(), "")?;
    let start = b.build_int_add(base, lane0_at, "")?;
    let run_start = b.build_int_to_ptr(start, e.cx.ptr_type(Default::default()), "")?;
    Ok(AddressShape {
        at,
        uniform,
        run_inside,
        run_start,
    })
}

/// Whether the run-time tests of a single-component access of `format`
/// can include runs per group of lanes: the target accesses its element
/// under a mask. (Accesses with `i32` addresses take these tests, in
/// modules that read a y or z id: [`Emit::row_groups`].)
pub(super) fn tests_groups(e: &Emit<'_, '_>, format: MemFormat) -> bool {
    format.count == 1 && super::has_masked_access(e, format.elem.bytes())
}

/// Whether a function of `module` reads a y or z id: a 2D or 3D
/// workgroup's rows, whose accesses may be a run per group of lanes.
pub fn reads_rows(module: &Module) -> bool {
    let mut rows = false;
    for f in &module.functions {
        walk_block(&f.body, &mut |s| {
            if let Stmt::Inst(i) = s {
                if let Op::Builtin(Builtin::GlobalId(d) | Builtin::LocalId(d)) = i.op {
                    rows |= d != Dim::X;
                }
            }
        });
    }
    rows
}

/// The lanes of a group in [`group_runs`].
const GROUP: u32 = 8;

/// Each aligned group of [`GROUP`] lanes accessing a run of its own:
/// whether every group with an active lane does, its first lane active,
/// its whole run aligned and inside the memory, and where each group's run
/// starts (the memory's start for a group without active lanes).
struct GroupRuns<'ctx> {
    inside: IntValue<'ctx>,
    starts: Vec<PointerValue<'ctx>>,
}

/// The groups' runs of `size`-byte elements: a workgroup whose rows are 8
/// or 16 threads wide (8x8, 16x16) accesses a row's elements from each
/// group of 8 lanes, with other rows, anywhere in memory, in the other
/// groups. Each group's first lane stands for it (constant extracts, no
/// stack round trip); a group whose first lane is inactive but others are
/// not takes the lane-by-lane path.
fn group_runs<'ctx>(
    e: &Emit<'ctx, '_>,
    v: &Operands<'ctx>,
    size: u32,
) -> Result<GroupRuns<'ctx>, JitError> {
    let b = &e.b;
    let i32t = e.i32();
    let i64t = e.i64();
    let k32 = |n: u64| i32t.const_int(n, false);
    // Lane l's address less its place in its group: the same for every
    // active lane of a group exactly when the group's lanes are a run.
    let place = e.lanes_const(32, |l| u64::from(l % GROUP) * u64::from(size));
    let group_start = b.build_int_sub(v.addr, place, "")?;
    let firsts: Vec<IntValue> = (0..LANES)
        .map(|l| k32(u64::from(l / GROUP * GROUP)))
        .collect();
    let expected = b.build_shuffle_vector(
        group_start,
        group_start.get_type().get_poison(),
        VectorType::const_vector(&firsts),
        "",
    )?;
    let mask = e.bits_to_mask(v.bits)?;
    let mut inside = active_lanes_equal(e, mask, expected, group_start)?;
    let base = b.build_ptr_to_int(v.base, i64t, "")?;
    let run_bytes = u64::from(GROUP * size);
    let mut starts = Vec::new();
    for g in 0..LANES / GROUP {
        let shifted = b.build_right_shift(v.bits, k32(u64::from(g * GROUP)), false, "")?;
        let lanes = b.build_and(shifted, k32((1 << GROUP) - 1), "")?;
        let some = b.build_int_compare(IntPredicate::NE, lanes, k32(0), "")?;
        let first_on = b.build_int_compare(
            IntPredicate::NE,
            b.build_and(lanes, k32(1), "")?,
            k32(0),
            "",
        )?;
        let at = b.build_extract_element(group_start, k32(u64::from(g * GROUP)), "")?;
        let at = b.build_int_z_extend(at.into_int_value(), i64t, "")?;
        // The whole run: below 2^32 (no wrap), aligned, inside.
        let end = b.build_int_add(at, i64t.const_int(run_bytes, false), "")?;
        let no_wrap =
            b.build_int_compare(IntPredicate::ULE, end, i64t.const_int(1 << 32, false), "")?;
        let misalign = b.build_and(at, i64t.const_int(u64::from(size) - 1, false), "")?;
        let aligned = b.build_int_compare(IntPredicate::EQ, misalign, i64t.const_zero(), "")?;
        let fits = inside_memory(e, v.len, run_bytes, at)?;
        let mut ok = first_on;
        for c in [no_wrap, aligned, fits] {
            ok = b.build_and(ok, c, "")?;
        }
        let ok = b.build_or(ok, b.build_not(some, "")?, "")?;
        inside = b.build_and(inside, ok, "")?;
        let at = b
            .build_select(some, at, i64t.const_zero(), "")?
            .into_int_value();
        let start = b.build_int_add(base, at, "")?;
        starts.push(b.build_int_to_ptr(start, e.cx.ptr_type(Default::default()), "")?);
    }
    Ok(GroupRuns { inside, starts })
}

/// The groups' runs at `starts` (checked by [`group_runs`]): a load of
/// `vt` elements, or a store of `raw`. Loads take a masked load per group;
/// stores a plain store per group when the whole warp stores (a masked
/// store is slow on some cores), else a masked one, in ascending groups,
/// so that where two overlap the higher lanes' values stay.
fn group_access<'ctx>(
    e: &Emit<'ctx, '_>,
    func: FunctionValue<'ctx>,
    vt: VectorType<'ctx>,
    starts: &[PointerValue<'ctx>],
    align: IntValue<'ctx>,
    mask: V<'ctx>,
    raw: Option<V<'ctx>>,
) -> Result<Option<V<'ctx>>, JitError> {
    let piece_t = vt.get_element_type().into_int_type().vec_type(GROUP);
    let lanes = |g: usize| e.lane_run(mask, g as u32 * GROUP, GROUP);
    let Some(raw) = raw else {
        let mut pieces = Vec::new();
        for (g, start) in starts.iter().enumerate() {
            let args = [
                (*start).into(),
                align.into(),
                lanes(g)?.into(),
                piece_t.const_zero().into(),
            ];
            let piece = e.call_intrinsic(
                "llvm.masked.load",
                &[piece_t.into(), start.get_type().into()],
                &args,
            )?;
            pieces.push(piece.into_vector_value());
        }
        let low = e.concat(pieces[0], pieces[1])?;
        let high = e.concat(pieces[2], pieces[3])?;
        return Ok(Some(e.concat(low, high)?));
    };
    let bytes = super::lane_loop::element_bytes(vt);
    super::whole_warp_or_lanes(e, func, mask, |whole| {
        for (g, start) in starts.iter().enumerate() {
            let piece = e.lane_run(raw, g as u32 * GROUP, GROUP)?;
            if whole {
                e.store_aligned(*start, piece.into(), bytes)?;
            } else {
                e.call_void_intrinsic(
                    "llvm.masked.store",
                    &[piece_t.into(), start.get_type().into()],
                    &[
                        piece.into(),
                        (*start).into(),
                        align.into(),
                        lanes(g)?.into(),
                    ],
                )?;
            }
        }
        Ok(None)
    })?;
    Ok(None)
}

/// The checked lane-by-lane access from the builder's position in `func`;
/// leaves the builder after it and gives the loaded components (none for
/// a store).
fn emit_path<'ctx>(
    e: &Emit<'ctx, '_>,
    func: FunctionValue<'ctx>,
    v: &Operands<'ctx>,
    kind: u32,
    format: MemFormat,
    vt: VectorType<'ctx>,
) -> Result<Vec<V<'ctx>>, JitError> {
    let b = &e.b;
    let record = e.cx.append_basic_block(func, "lanes.fault");
    let access = e.cx.append_basic_block(func, "lanes.access");
    let mask = e.bits_to_mask(v.bits)?;
    let size = format.bytes();
    let (aligned, inside) = super::narrow_inside(e, v.len, size, v.addr)?;
    let ok = b.build_and(mask, inside, "")?;
    let outside = b.build_and(mask, b.build_not(inside, "")?, "")?;
    let outside = e.mask_to_bits(outside)?;
    let any = b.build_int_compare(IntPredicate::NE, outside, e.i32().const_zero(), "")?;
    b.build_conditional_branch(any, record, access)?;

    b.position_at_end(record);
    record_faults(e, v.ctx, outside, v.addr, v.fault)?;
    b.build_unconditional_branch(access)?;

    b.position_at_end(access);
    // Lanes outside `ok` are not touched, whatever their offset.
    let elem = u64::from(format.elem.bytes());
    let mut loaded = Vec::new();
    if !super::lane_loop::native(e, format.elem.bits()) {
        for i in 0..format.count {
            let at = u64::from(i) * elem;
            if kind == abi::FAULT_LOAD {
                loaded.push(super::lane_loop::gather(e, v.base, aligned, at, ok, vt)?);
            } else {
                let x = v.raws[usize::from(i)];
                super::lane_loop::scatter(e, v.base, aligned, at, ok, x)?;
            }
        }
        return Ok(loaded);
    }
    let biased = b.build_xor(aligned, e.splat_int(32, 1 << 31), "")?;
    let align = e.i32().const_int(u64::from(format.elem.bytes()), false);
    for i in 0..format.count {
        let at = u64::from(i) * elem;
        let ptrs = pointers(e, v.base, biased, (1 << 31) + at)?;
        if kind == abi::FAULT_LOAD {
            let x = e.call_intrinsic(
                "llvm.masked.gather",
                &[vt.into(), ptrs.get_type().into()],
                &[ptrs.into(), align.into(), ok.into(), vt.const_zero().into()],
            )?;
            loaded.push(x.into_vector_value());
        } else {
            let x: BasicValueEnum = v.raws[usize::from(i)].into();
            e.call_void_intrinsic(
                "llvm.masked.scatter",
                &[x.get_type(), ptrs.get_type().into()],
                &[x, ptrs.into(), align.into(), ok.into()],
            )?;
        }
    }
    Ok(loaded)
}

/// The call of [`abi::FAULT_SYMBOL`] for the faulting lanes `bits`, with
/// the lowest one's address; `site, index, function` as the caller gave.
fn record_faults<'ctx>(
    e: &Emit<'ctx, '_>,
    ctx: PointerValue<'ctx>,
    bits: IntValue<'ctx>,
    addr: V<'ctx>,
    site_index_function: [BasicValueEnum<'ctx>; 3],
) -> Result<(), JitError> {
    let b = &e.b;
    let lane = e.lowest_lane(bits)?;
    let address = b.build_extract_element(addr, lane, "")?.into_int_value();
    let address = b.build_int_z_extend(address, e.i64(), "")?;
    let [site, index, function] = site_index_function;
    let args = [
        ctx.into(),
        bits.into(),
        address.into(),
        site.into(),
        index.into(),
        function.into(),
    ];
    b.build_call(fault_routine(e), &args, "")?;
    Ok(())
}

/// `base + at` indexed by each lane's biased offset (sign-extended): a
/// vector of 32 pointers. inkwell's GEP builder assumes a scalar result,
/// hence the C API.
fn pointers<'ctx>(
    e: &Emit<'ctx, '_>,
    base: PointerValue<'ctx>,
    biased: V<'ctx>,
    at: u64,
) -> Result<V<'ctx>, JitError> {
    let start = e.byte_ptr(base, at)?;
    let mut index = [biased.as_value_ref()];
    // SAFETY: a valid builder, the i8 type, a pointer and one vector of
    // i32 indices, all of one context; the result is a `<32 x ptr>`.
    Ok(unsafe {
        let raw = LLVMBuildGEP2(
            e.b.as_mut_ptr(),
            e.cx.i8_type().as_type_ref(),
            start.as_value_ref(),
            index.as_mut_ptr(),
            1,
            c"".as_ptr(),
        );
        VectorValue::new(raw)
    })
}
