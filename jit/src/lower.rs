//! Lowering of a verified module to LLVM IR: functions, statements and the
//! execution mask. Instructions are in [`ops`], memory access in [`memory`].
//!
//! Every IR function becomes an internal LLVM function
//! `void(ptr ctx, <32 x i1> mask, args..., ptr results..., ptr group,
//! i32 x, i32 y, i32 z [, i32 phase])` (the call's first context and the
//! workgroup's id); each kernel additionally gets an external entry
//! `i64(ptr contexts, i64 count, i64 workgroups)` that runs it for
//! consecutive warps, each from its context's entry mask, and for a short
//! kernel for several workgroups in turn.
//! Variables are zeroed entry-block allocas of their vector type, assigned
//! with `select(mask, new, old)`.
//!
//! Compiled for whole warps (`JitOptions::whole_warps`), a kernel starts
//! with every lane active and live as constants instead of the context's
//! masks; everything after that is the same code.

mod atomic;
mod convert;
mod inlining;
mod loop_vars;
mod math;
mod memory;
mod ops;
pub(crate) mod phases;
pub(crate) mod posted;
mod remarks;
mod routine;
mod scalar_shadows;
pub mod shape;
mod uniform_divisor;
mod warp;

use crate::abi::{self, offsets};
use crate::emit::{Emit, LANES};
use crate::mask::ExecMask;
use crate::sched::KernelPlan;
use crate::{JitError, JitOptions};
use inkwell::attributes::AttributeLoc;
use inkwell::basic_block::BasicBlock;
use inkwell::context::Context;
use inkwell::module::{Linkage, Module};
use inkwell::types::{BasicMetadataTypeEnum, BasicType};
use inkwell::values::{
    BasicMetadataValueEnum, BasicValueEnum, FunctionValue, IntValue, PointerValue, VectorValue,
};
use inkwell::IntPredicate;
use loop_vars::Shadow;
use memory::{AddressFacts, KnownAddress};
pub use remarks::{Remark, RemarkKind};
pub use routine::{define_routine, RoutineSpec};
use shape::{FunctionShapes, IdLayout, LaneShape, OperandShape};
use warpjit_ir::{
    AtomOp, Block, FuncId, Function, Inst, NumFormat, Op, Operand, Place, Stmt, Type, VarId,
    VerifiedModule,
};

/// What [`lower_module`] gives: each kernel's entry symbol, and the
/// shared routines the module declares (empty unless asked to share
/// them).
pub struct Lowered {
    pub kernels: Vec<(FuncId, String)>,
    pub routines: Vec<RoutineSpec>,
    /// What the lowering decided, in program order (empty unless asked for).
    pub remarks: Vec<Remark>,
}

/// Lowers every function into `llmod`. Shared routines (lane paths, math)
/// are declared for the caller to supply rather than defined. With
/// `remarks`, the lowering records what it decides (`dump --remarks`);
/// compiles do not pay for the words.
pub fn lower_module<'ctx>(
    cx: &'ctx Context,
    llmod: &Module<'ctx>,
    module: &VerifiedModule,
    cpu: &str,
    features: &str,
    opts: &JitOptions,
    remarks: bool,
) -> Result<Lowered, JitError> {
    let whole_warps = opts.whole_warps;
    let uses = memory::buffer_uses(module);
    let e = Emit {
        workgroup: opts.workgroup,
        call_math: opts.opt_level < 2,
        rewrites: crate::sched::WarpRewrites::of(module),
        prefetch_ahead: opts.prefetch_ahead.applies(uses.iter().any(|u| u.stored)),
        row_groups: memory::reads_rows(module),
        streams: crate::emit::Streams {
            buffers: uses.iter().map(|u| u.stored && !u.read).collect(),
            ..Default::default()
        },
        remarks: remarks.then(Default::default),
        ..Emit::new(cx, llmod, features, true)
    };
    let ptr = cx.ptr_type(inkwell::AddressSpace::default());
    // Frames aligned to the vector size, so spilled vectors are aligned:
    // without it LLVM realigns only frames that need it for other reasons
    // and spills 64-byte vectors across cache lines in the others.
    let align_id = inkwell::attributes::Attribute::get_named_enum_kind_id("alignstack");
    let vector_bytes = if e.avx512 { 64 } else { 32 };
    let [cpu_attr, features_attr, probes] = crate::emit::target_attributes(cx, cpu, features);
    let attrs = [
        cpu_attr,
        features_attr,
        probes,
        cx.create_enum_attribute(align_id, vector_bytes),
    ];
    let posted = posted::posted_buffers(module);
    let start = if whole_warps {
        KernelStart::WholeWarp {
            may_kill: any_stmt(module, |s| matches!(s, Stmt::Kill { .. })),
        }
    } else {
        KernelStart::FromContext
    };
    let may_demote = any_stmt(module, |s| matches!(s, Stmt::Inst(i) if i.op == Op::Demote));
    // The phases of each kernel split at its barriers (`phases.rs`).
    let (plans, layouts): (Vec<Option<KernelPlan>>, Vec<Option<phases::PhaseLayout>>) =
        (0..module.functions.len())
            .map(|i| {
                if !module.functions[i].is_kernel() {
                    return (None, None);
                }
                let (plan, layout) = KernelPlan::with_phases(module, FuncId(i as u32));
                (Some(plan), layout)
            })
            .unzip();
    let mut funcs = Vec::new();
    for (i, f) in module.functions.iter().enumerate() {
        let mut params: Vec<BasicMetadataTypeEnum> =
            vec![ptr.into(), e.i1().vec_type(LANES).into()];
        for p in &f.params {
            params.push(e.vec_type(f.value_type(*p)).into());
        }
        params.extend(f.results.iter().map(|_| BasicMetadataTypeEnum::from(ptr)));
        // The first context of the call: its workgroup's fields.
        params.push(ptr.into());
        // The workgroup's id (x, y, z): an entry that runs several
        // workgroups counts it in registers.
        params.extend([BasicMetadataTypeEnum::from(e.i32()); 3]);
        // A phased kernel: the phase to run, a constant where its entry
        // knows it.
        if layouts[i].is_some() {
            params.push(e.i32().into());
        }
        let fty = cx.void_type().fn_type(&params, false);
        let func = llmod.add_function(&format!("f{i}.{}", f.name), fty, Some(Linkage::Internal));
        for a in attrs {
            func.add_attribute(AttributeLoc::Function, a);
        }
        funcs.push(func);
    }
    let shared = ModuleLowering {
        module,
        funcs: &funcs,
        posted: &posted,
        kernel_start: start,
        may_demote,
        layouts: &layouts,
        plans: &plans,
    };
    for i in 0..module.functions.len() {
        FnLowering::lower(&e, &shared, i as u32)?;
    }
    e.streams.drop_needless_fences();
    if opts.opt_level == 2 {
        let inlined = inlining::mark_inlined(cx, module, &funcs);
        if let Some(remarks) = &e.remarks {
            call_remarks(&mut remarks.borrow_mut(), module, &inlined);
        }
    }
    // A warp that runs no loop is short, and calling it costs as much as
    // running it; a warp with a loop runs long enough that its call does
    // not matter, and a loop around it costs LLVM more time to compile.
    // Decided per module (a kernel may call any of its functions).
    let runs = if any_stmt(module, |s| matches!(s, Stmt::Loop { .. })) {
        WarpsPerCall::One
    } else {
        WarpsPerCall::All
    };
    let mut kernels = Vec::new();
    let shared: Vec<u32> = module.shared.iter().map(|d| d.size).collect();
    for (id, f) in module.kernels() {
        let name = format!("kernel.{}", f.name);
        let phases = layouts[id.0 as usize].as_ref().map(|l| l.phases.len());
        let many = plans[id.0 as usize].is_some_and(|p| p.many_workgroups);
        let runs = if many {
            WarpsPerCall::AllOfEachWorkgroup
        } else {
            runs
        };
        let entry = warp_entry(
            &e,
            &name,
            funcs[id.0 as usize],
            whole_warps,
            runs,
            phases,
            &shared,
        )?;
        for a in attrs {
            entry.add_attribute(AttributeLoc::Function, a);
        }
        kernels.push((id, name));
    }
    let routines = e
        .shared_routines
        .map(|r| r.into_inner())
        .unwrap_or_default();
    Ok(Lowered {
        kernels,
        routines,
        remarks: remarks::in_order(e.remarks.map(|r| r.into_inner()).unwrap_or_default()),
    })
}

/// Parameter `n` of a function the lowering created with it.
fn nth_param(func: FunctionValue<'_>, n: u32) -> Result<BasicValueEnum<'_>, JitError> {
    func.get_nth_param(n)
        .ok_or_else(|| JitError::Internal(format!("missing parameter {n}")))
}

/// A warp's lane bits from the context's `field` (the entry or live mask);
/// every lane in code for whole warps, where the field is known.
fn warp_bits<'ctx>(
    e: &Emit<'ctx, '_>,
    ctxp: PointerValue<'ctx>,
    whole_warps: bool,
    field: u64,
) -> Result<IntValue<'ctx>, JitError> {
    if whole_warps {
        return Ok(e.i32().const_all_ones());
    }
    Ok(e.load_field(ctxp, field, e.i32().into(), 4)?
        .into_int_value())
}

/// How many of the contexts it is given a kernel's entry runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum WarpsPerCall {
    One,
    All,
    /// All of them, for each of several consecutive workgroups
    /// (`KernelPlan::many_workgroups`).
    AllOfEachWorkgroup,
}

/// The external entry of a kernel (`abi::KernelFn`): runs `kernel` for
/// the first of `count` consecutive contexts, or in a loop for each of
/// them, and returns how many it ran. The loop stops after a warp that
/// faulted or ran out of fuel, so the caller can look at it first. One
/// call for a workgroup's warps instead of one per warp: for a short warp,
/// the call, the frame and the caller's loop cost more than the warp.
/// Where nothing happens between two workgroups but a new id, the entry
/// runs the call's `workgroups` one after the other (see
/// [`many_workgroups`]).
///
/// A kernel split into `phases` runs the phase of the call's first context
/// (the scheduler gives every warp of a call the same one). Looping over
/// the warps, the entry switches on it once and runs a loop per phase that
/// passes it as a constant: inlined there, each loop keeps only its
/// phase's code, with no dispatch per warp, and LLVM hoists what every
/// warp of the phase shares out of the loop.
fn warp_entry<'ctx>(
    e: &Emit<'ctx, '_>,
    name: &str,
    kernel: FunctionValue<'ctx>,
    whole_warps: bool,
    runs: WarpsPerCall,
    phases: Option<usize>,
    shared: &[u32],
) -> Result<FunctionValue<'ctx>, JitError> {
    let cx = e.cx;
    let b = &e.b;
    let ptr = cx.ptr_type(inkwell::AddressSpace::default());
    let i64t = e.i64();
    let fty = i64t.fn_type(&[ptr.into(), i64t.into(), i64t.into()], false);
    let entry = e.module.add_function(name, fty, Some(Linkage::External));
    let contexts = nth_param(entry, 0)?.into_pointer_value();
    let count = nth_param(entry, 1)?.into_int_value();
    let start = cx.append_basic_block(entry, "entry");
    let first = cx.append_basic_block(entry, "first");
    let done = cx.append_basic_block(entry, "done");
    let zero = i64t.const_zero();

    b.position_at_end(start);
    let none = b.build_int_compare(IntPredicate::EQ, count, zero, "none")?;
    b.build_conditional_branch(none, done, first)?;
    let mut exits = vec![(zero, start)];

    b.position_at_end(first);
    let mut loop_ = WarpLoop {
        e,
        entry,
        kernel,
        contexts,
        count,
        whole_warps,
        runs,
        done,
        stopped: done,
        workgroup_id: [e.i32().const_zero(); 3],
    };
    // Read where each warp loop starts, so the code generator can fold
    // the loads into their uses.
    let load_id = |loop_: &mut WarpLoop<'ctx, '_>| -> Result<(), JitError> {
        for d in 0..3 {
            loop_.workgroup_id[d] = e
                .load_invariant(contexts, id_offset(d), e.i32().into(), 4)?
                .into_int_value();
        }
        Ok(())
    };
    if runs == WarpsPerCall::AllOfEachWorkgroup {
        many_workgroups(&mut loop_, phases, shared, &mut exits)?;
    } else {
        match phases {
            None => {
                load_id(&mut loop_)?;
                loop_.emit(None, &mut exits)?
            }
            Some(n) => {
                let phase = e
                    .load_field(contexts, offsets::PHASE, e.i32().into(), 4)?
                    .into_int_value();
                if runs == WarpsPerCall::One {
                    load_id(&mut loop_)?;
                    loop_.emit(Some(phase), &mut exits)?;
                } else {
                    let blocks: Vec<_> = (0..n)
                        .map(|i| cx.append_basic_block(entry, &format!("phase{i}")))
                        .collect();
                    // No phase of the kernel: none of it runs in any warp.
                    phases::switch_to_phase(e, phase, &blocks, done)?;
                    exits.push((count, first));
                    for (i, bb) in blocks.into_iter().enumerate() {
                        b.position_at_end(bb);
                        let constant = e.i32().const_int(i as u64, false);
                        load_id(&mut loop_)?;
                        loop_.emit(Some(constant), &mut exits)?;
                    }
                }
            }
        }
    }

    b.position_at_end(done);
    let result = b.build_phi(i64t, "ran")?;
    for (value, block) in &exits {
        result.add_incoming(&[(value, *block)]);
    }
    b.build_return(Some(&result.as_basic_value()))?;
    Ok(entry)
}

/// Ends the current block of an entry with a loop over up to `workgroups`
/// consecutive workgroups (the entry's third parameter), each running the
/// warp loop of each of its `phases` in turn with the workgroup's id in
/// registers. Between two workgroups it zeroes the `shared` memories (their
/// sizes) and counts the id up, x fastest, as the runtime does. The call
/// stops after a warp that faulted or ran out of fuel, or between
/// workgroups when the launch is cancelled. Before returning it stores the
/// id of the workgroup it ended in into the first context, and the phase
/// it ended in into its `phase` field, where the runtime looks for them.
/// Adds its exit (warps run in all, those of the phase it ended in for the
/// last workgroup) to `exits`.
fn many_workgroups<'ctx>(
    loop_: &mut WarpLoop<'ctx, '_>,
    phases: Option<usize>,
    shared: &[u32],
    exits: &mut Vec<(IntValue<'ctx>, BasicBlock<'ctx>)>,
) -> Result<(), JitError> {
    let e = loop_.e;
    let (cx, b, i32t, i64t) = (e.cx, &e.b, e.i32(), e.i64());
    let contexts = loop_.contexts;
    let workgroups = nth_param(loop_.entry, 2)?.into_int_value();
    let before = b
        .get_insert_block()
        .ok_or_else(|| JitError::Internal("workgroup loop outside a block".into()))?;
    // Plain loads: the entry writes the id back before it returns.
    let mut first_id = [i32t.const_zero(); 3];
    for (d, id) in first_id.iter_mut().enumerate() {
        *id = e
            .load_field(contexts, id_offset(d), i32t.into(), 4)?
            .into_int_value();
    }
    let grid_at = |d: u64| offsets::NUM_WORKGROUPS + 4 * d;
    let grid_x = e.load_invariant(contexts, grid_at(0), i32t.into(), 4)?;
    let grid_y = e.load_invariant(contexts, grid_at(1), i32t.into(), 4)?;
    let count = phases.unwrap_or(1);
    // Called with no workgroups, the entry runs only the phase in the first
    // context, for these contexts: the rest of a workgroup's warps after
    // one that stopped, as the runtime calls other entries.
    let single = b.build_int_compare(IntPredicate::EQ, workgroups, i64t.const_zero(), "single")?;
    let start_phase = match phases {
        Some(_) => {
            let asked = e.load_field(contexts, offsets::PHASE, i32t.into(), 4)?;
            b.build_select(single, asked.into_int_value(), i32t.const_zero(), "")?
                .into_int_value()
        }
        None => i32t.const_zero(),
    };
    let group = cx.append_basic_block(loop_.entry, "workgroup");
    let phase_blocks: Vec<_> = (0..count)
        .map(|p| cx.append_basic_block(loop_.entry, &format!("phase{p}")))
        .collect();
    let after = cx.append_basic_block(loop_.entry, "workgroup.end");
    let next = cx.append_basic_block(loop_.entry, "workgroup.next");
    let leave = cx.append_basic_block(loop_.entry, "workgroup.leave");
    let outer_done = loop_.done;
    b.build_unconditional_branch(group)?;

    b.position_at_end(group);
    let index = b.build_phi(i64t, "workgroup.index")?;
    let id_phis = [
        b.build_phi(i32t, "workgroup.x")?,
        b.build_phi(i32t, "workgroup.y")?,
        b.build_phi(i32t, "workgroup.z")?,
    ];
    let first_phase = b.build_phi(i32t, "workgroup.first.phase")?;
    let id = id_phis.map(|p| p.as_basic_value().into_int_value());
    let index_value = index.as_basic_value().into_int_value();
    let cases: Vec<_> = phase_blocks
        .iter()
        .enumerate()
        .map(|(p, bb)| (i32t.const_int(p as u64, false), *bb))
        .collect();
    b.build_switch(
        first_phase.as_basic_value().into_int_value(),
        phase_blocks[0],
        &cases,
    )?;
    loop_.workgroup_id = id;
    loop_.stopped = leave;
    // (warps run, its block, the phase) of each branch after a warp that
    // stopped, and of each phase's end in a call for one phase.
    let mut stops = Vec::new();
    for (p, &block) in phase_blocks.iter().enumerate() {
        b.position_at_end(block);
        let phase = phases.map(|_| i32t.const_int(p as u64, false));
        let end = cx.append_basic_block(loop_.entry, &format!("phase{p}.end"));
        loop_.done = end;
        let mut warp_exits = Vec::new();
        loop_.emit(phase, &mut warp_exits)?;
        // The loop's first exit is the one after a warp that stopped.
        let (ran, stop_block) = *warp_exits
            .first()
            .ok_or_else(|| JitError::Internal("a warp loop without exits".into()))?;
        stops.push((ran, stop_block, p));
        b.position_at_end(end);
        match phase_blocks.get(p + 1) {
            Some(&later) => {
                b.build_conditional_branch(single, leave, later)?;
                stops.push((loop_.count, end, p));
            }
            None => {
                b.build_unconditional_branch(after)?;
            }
        }
    }
    loop_.done = outer_done;
    loop_.stopped = outer_done;

    // Every warp of this workgroup ran.
    b.position_at_end(after);
    let ended = b.build_int_add(index_value, i64t.const_int(1, false), "")?;
    let last = b.build_int_compare(IntPredicate::UGE, ended, workgroups, "")?;
    let cancelled = e.cancel_raised(contexts)?;
    let leave_now = b.build_or(last, cancelled, "")?;
    b.build_conditional_branch(leave_now, leave, next)?;

    // The next workgroup starts with zeroed shared memory, as the runtime
    // leaves it before a call.
    b.position_at_end(next);
    for (i, &size) in shared.iter().enumerate() {
        let (base, _) = memory::span_fields(e, contexts, offsets::SHARED, i as u32)?;
        let bytes = i64t.const_int(u64::from(size), false);
        b.build_memset(base, 8, cx.i8_type().const_zero(), bytes)?;
    }
    // The next id, x fastest.
    let one = i32t.const_int(1, false);
    let x1 = b.build_int_add(id[0], one, "")?;
    let y1 = b.build_int_add(id[1], one, "")?;
    let z1 = b.build_int_add(id[2], one, "")?;
    let x_fits = b.build_int_compare(IntPredicate::ULT, x1, grid_x.into_int_value(), "")?;
    let y_fits = b.build_int_compare(IntPredicate::ULT, y1, grid_y.into_int_value(), "")?;
    let zero = i32t.const_zero();
    let nx = b.build_select(x_fits, x1, zero, "")?.into_int_value();
    let ny_carry = b.build_select(y_fits, y1, zero, "")?.into_int_value();
    let ny = b
        .build_select(x_fits, id[1], ny_carry, "")?
        .into_int_value();
    let nz_carry = b.build_select(y_fits, id[2], z1, "")?.into_int_value();
    let nz = b
        .build_select(x_fits, id[2], nz_carry, "")?
        .into_int_value();
    b.build_unconditional_branch(group)?;

    index.add_incoming(&[(&i64t.const_zero(), before), (&ended, next)]);
    for (d, (phi, n)) in id_phis.iter().zip([nx, ny, nz]).enumerate() {
        phi.add_incoming(&[(&first_id[d], before), (&n, next)]);
    }
    first_phase.add_incoming(&[(&start_phase, before), (&i32t.const_zero(), next)]);

    // Warps run: those of the earlier workgroups and this one's in the
    // phase it ended in.
    b.position_at_end(leave);
    let ran = b.build_phi(i64t, "workgroup.ran")?;
    for &(stop_ran, block, _) in &stops {
        ran.add_incoming(&[(&stop_ran, block)]);
    }
    ran.add_incoming(&[(&loop_.count, after)]);
    if phases.is_some() {
        let phase = b.build_phi(i32t, "workgroup.phase")?;
        for &(_, block, p) in &stops {
            phase.add_incoming(&[(&i32t.const_int(p as u64, false), block)]);
        }
        phase.add_incoming(&[(&i32t.const_int(count as u64 - 1, false), after)]);
        e.store_field(contexts, offsets::PHASE, phase.as_basic_value(), 4)?;
    }
    let earlier = b.build_int_mul(index_value, loop_.count, "")?;
    let total = b.build_int_add(earlier, ran.as_basic_value().into_int_value(), "warps")?;
    for (d, v) in id.iter().enumerate() {
        e.store_field(contexts, id_offset(d), (*v).into(), 4)?;
    }
    b.build_unconditional_branch(outer_done)?;
    exits.push((total, leave));
    Ok(())
}

/// The offset of the workgroup id's component `d` in a warp context.
fn id_offset(d: usize) -> u64 {
    offsets::WORKGROUP_ID + 4 * d as u64
}

/// What a kernel entry's loop over its warps needs (see [`warp_entry`]).
struct WarpLoop<'ctx, 'a> {
    e: &'a Emit<'ctx, 'a>,
    entry: FunctionValue<'ctx>,
    kernel: FunctionValue<'ctx>,
    contexts: PointerValue<'ctx>,
    count: IntValue<'ctx>,
    whole_warps: bool,
    runs: WarpsPerCall,
    done: BasicBlock<'ctx>,
    /// Where the loop goes after a warp that stopped: `done`, or a block of
    /// its own.
    stopped: BasicBlock<'ctx>,
    /// The id of the workgroup the warps belong to.
    workgroup_id: [IntValue<'ctx>; 3],
}

impl<'ctx> WarpLoop<'ctx, '_> {
    /// Ends the current block with a loop calling the kernel (with `phase`,
    /// if it is phased) for each warp, leaving to `done`; adds the loop's
    /// branches there, with the number of warps run, to `exits`: first the
    /// branch after a warp that stopped, then the loop's end.
    fn emit(
        &self,
        phase: Option<IntValue<'ctx>>,
        exits: &mut Vec<(IntValue<'ctx>, BasicBlock<'ctx>)>,
    ) -> Result<(), JitError> {
        let e = self.e;
        let (cx, b, i64t) = (e.cx, &e.b, e.i64());
        let zero = i64t.const_zero();
        let before = b
            .get_insert_block()
            .ok_or_else(|| JitError::Internal("warp loop outside a block".into()))?;
        let body = cx.append_basic_block(self.entry, "warp");
        let next = cx.append_basic_block(self.entry, "next");
        b.build_unconditional_branch(body)?;

        b.position_at_end(body);
        let index = b.build_phi(i64t, "index")?;
        let index_value = index.as_basic_value().into_int_value();
        let stride = i64t.const_int(std::mem::size_of::<abi::WarpContext>() as u64, false);
        let offset = b.build_int_mul(index_value, stride, "")?;
        // SAFETY: the caller passes `count` consecutive contexts.
        let ctxp = unsafe { b.build_gep(cx.i8_type(), self.contexts, &[offset], "ctx")? };
        let bits = warp_bits(e, ctxp, self.whole_warps, offsets::ENTRY_MASK)?;
        let mask = e.bits_to_mask(bits)?;
        // Every context of one call is of one workgroup: its fields read from
        // the first are the same in each warp, and LLVM hoists them out of
        // the loop.
        let mut args: Vec<BasicMetadataValueEnum> =
            vec![ctxp.into(), mask.into(), self.contexts.into()];
        args.extend(self.workgroup_id.map(BasicMetadataValueEnum::from));
        args.extend(phase.map(BasicMetadataValueEnum::from));
        b.build_call(self.kernel, &args, "")?;
        let ran = b.build_int_add(index_value, i64t.const_int(1, false), "ran")?;
        let stop = match self.runs {
            WarpsPerCall::One => cx.bool_type().const_all_ones(),
            WarpsPerCall::All | WarpsPerCall::AllOfEachWorkgroup => {
                let fault = e.load_field(ctxp, offsets::FIRST_FAULT_KIND, e.i32().into(), 4)?;
                let starved = e.load_field(ctxp, offsets::OUT_OF_FUEL, e.i32().into(), 4)?;
                let either = b.build_or(fault.into_int_value(), starved.into_int_value(), "")?;
                b.build_int_compare(IntPredicate::NE, either, e.i32().const_zero(), "stop")?
            }
        };
        b.build_conditional_branch(stop, self.stopped, next)?;

        b.position_at_end(next);
        let more = b.build_int_compare(IntPredicate::ULT, ran, self.count, "more")?;
        b.build_conditional_branch(more, body, self.done)?;
        index.add_incoming(&[(&zero, before), (&ran, next)]);
        exits.extend([(ran, body), (ran, next)]);
        Ok(())
    }
}

/// Where a function's masks start.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum KernelStart {
    /// From the caller's mask and the context's live lanes.
    FromContext,
    /// A kernel compiled for whole warps: every lane active and live. A
    /// phase after the first reloads the live lanes when the module can
    /// `kill` (an earlier phase may have).
    WholeWarp { may_kill: bool },
}

/// A remark at each call site of the functions level 2 inlines
/// (`inlined[f]`) or keeps as calls.
fn call_remarks(remarks: &mut Vec<Remark>, module: &VerifiedModule, inlined: &[bool]) {
    for f in &module.functions {
        warpjit_ir::walk_block(&f.body, &mut |s| {
            if let Stmt::Inst(i) = s {
                if let Op::Call(callee) = i.op {
                    let name = &module.functions[callee as usize].name;
                    let message = if inlined[callee as usize] {
                        format!("@{name} is inlined")
                    } else {
                        format!(
                            "@{name} stays a call (too large to copy into each caller, \
                             or to move into its one caller)"
                        )
                    };
                    remarks.push(Remark {
                        function: f.name.clone(),
                        span: i.span,
                        kind: RemarkKind::Call,
                        lane_by_lane: false,
                        message,
                    });
                }
            }
        });
    }
}

/// Whether any statement of any function of `module` satisfies `test`.
fn any_stmt(module: &VerifiedModule, test: impl Fn(&Stmt) -> bool) -> bool {
    module.functions.iter().any(|f| {
        let mut found = false;
        warpjit_ir::walk_block(&f.body, &mut |s| found |= test(s));
        found
    })
}

/// True when a block only moves lanes between masks (`break`, `continue`):
/// running it with no active lanes changes nothing.
fn only_mask_changes(block: &Block) -> bool {
    block
        .stmts
        .iter()
        .all(|s| matches!(s, Stmt::Break { .. } | Stmt::Continue { .. }))
}

pub(crate) struct FnLowering<'ctx, 'a> {
    pub e: &'a Emit<'ctx, 'a>,
    pub module: &'a VerifiedModule,
    pub f: &'a Function,
    pub func: FunctionValue<'ctx>,
    pub funcs: &'a [FunctionValue<'ctx>],
    /// This function's index in the module.
    pub func_index: u32,
    pub ctxp: PointerValue<'ctx>,
    /// The first warp context of the call, for the fields every warp of
    /// the workgroup shares (`workgroup_field`).
    pub group: PointerValue<'ctx>,
    /// The workgroup's id, from the caller (the entry for a kernel).
    pub workgroup_id: [IntValue<'ctx>; 3],
    pub values: Vec<Option<VectorValue<'ctx>>>,
    pub vars: Vec<PointerValue<'ctx>>,
    pub results: Vec<PointerValue<'ctx>>,
    pub mask: ExecMask<'ctx>,
    /// Private arrays: base of 32 lane-major copies, the size of one, the stride.
    pub privates: Vec<(PointerValue<'ctx>, u64, u64)>,
    /// Lane shapes for any workgroup, and for workgroups whose warps each
    /// lie in one row.
    shapes: FunctionShapes,
    row_shapes: FunctionShapes,
    /// Per loop entered and not left, outermost first: the shadows of
    /// variables (see [`loop_vars`]), by variable.
    shadow_frames: Vec<Vec<Option<(PointerValue<'ctx>, Shadow)>>>,
    /// Per loop entered and not left, outermost first: its exit block, if
    /// a `break` of every lane still in the loop may branch there at once
    /// (the loop has no `continue`, which would keep lanes in it).
    loop_exits: Vec<Option<BasicBlock<'ctx>>>,
    /// Reads of each variable in the whole function.
    var_reads: Vec<usize>,
    /// The loop frame whose lanes are all active at the builder's
    /// statement, if any: writes to its shadows skip the select.
    every_lane_frame: Option<usize>,
    /// Values computed from scalar loop shadows, constants and parameters
    /// alone: the same in all 32 lanes ([`scalar_shadows`]).
    same_values: Vec<bool>,
    /// Values computed in loops from those and from values whose lane
    /// shape holds in every lane: their shape holds in every lane too.
    shaped_values: Vec<bool>,
    /// Per buffer: its atomic updates may be posted ([`posted`]).
    posted: &'a [Option<(AtomOp, NumFormat)>],
    start: KernelStart,
    /// The module can `demote`; without it no lane is ever a helper.
    may_demote: bool,
    /// The statement being lowered, for its remarks.
    span: std::cell::Cell<warpjit_ir::Span>,
}

/// What the lowering of each function of a module shares.
struct ModuleLowering<'ctx, 'a> {
    module: &'a VerifiedModule,
    funcs: &'a [FunctionValue<'ctx>],
    posted: &'a [Option<(AtomOp, NumFormat)>],
    /// Where a kernel's masks start (other functions get their caller's).
    kernel_start: KernelStart,
    may_demote: bool,
    /// Per function: its phases, for a kernel split at its barriers.
    layouts: &'a [Option<phases::PhaseLayout>],
    /// Per kernel: how the scheduler runs it.
    plans: &'a [Option<KernelPlan>],
}

impl<'ctx, 'a> FnLowering<'ctx, 'a> {
    fn lower(
        e: &'a Emit<'ctx, 'a>,
        shared: &ModuleLowering<'ctx, 'a>,
        func_index: u32,
    ) -> Result<(), JitError> {
        let ModuleLowering {
            module,
            funcs,
            posted,
            may_demote,
            ..
        } = *shared;
        let f = &module.functions[func_index as usize];
        let func = funcs[func_index as usize];
        let start = if f.is_kernel() {
            shared.kernel_start
        } else {
            KernelStart::FromContext
        };
        let phased = shared.layouts[func_index as usize].as_ref();
        let entry_block = e.cx.append_basic_block(func, "entry");
        let body_block = e.cx.append_basic_block(func, "body");
        e.b.position_at_end(entry_block);
        let param = |n: u32| nth_param(func, n);
        let ctxp = param(0)?.into_pointer_value();
        let whole = matches!(start, KernelStart::WholeWarp { .. });
        let entry_mask = if whole {
            e.bits_to_mask(e.i32().const_all_ones())?
        } else {
            param(1)?.into_vector_value()
        };
        let mvec = e.i1().vec_type(LANES);
        let returned = e.b.build_alloca(mvec, "returned")?;
        let live = e.b.build_alloca(mvec, "live")?;
        let mut values = vec![None; f.values.len()];
        for (i, p) in f.params.iter().enumerate() {
            values[p.0 as usize] = Some(param(2 + i as u32)?.into_vector_value());
        }
        let mut vars = Vec::new();
        for v in &f.vars {
            let ty = e.vec_type(v.ty);
            let slot = e.b.build_alloca(ty, &v.name)?;
            e.b.build_store(slot, ty.const_zero())?;
            vars.push(slot);
        }
        let base = 2 + f.params.len() as u32;
        let results = (0..f.results.len() as u32)
            .map(|i| Ok(param(base + i)?.into_pointer_value()))
            .collect::<Result<Vec<_>, JitError>>()?;
        let group = param(base + f.results.len() as u32)?.into_pointer_value();
        let id_param = |d: u32| -> Result<IntValue<'ctx>, JitError> {
            Ok(param(base + f.results.len() as u32 + 1 + d)?.into_int_value())
        };
        let workgroup_id = [id_param(0)?, id_param(1)?, id_param(2)?];
        let live_now = e.bits_to_mask(warp_bits(e, ctxp, whole, offsets::LIVE_MASK)?)?;
        let mask = ExecMask::new(e, returned, live, entry_mask, live_now)?;
        let mut fl = FnLowering {
            e,
            module,
            f,
            func,
            funcs,
            func_index,
            ctxp,
            group,
            workgroup_id,
            values,
            vars,
            results,
            mask,
            privates: Vec::new(),
            shapes: FunctionShapes::analyse(module, f, IdLayout::known(e.workgroup)),
            row_shapes: FunctionShapes::analyse(module, f, IdLayout::WarpInOneRow),
            shadow_frames: Vec::new(),
            loop_exits: Vec::new(),
            var_reads: loop_vars::var_reads(f, &f.body),
            every_lane_frame: None,
            same_values: vec![false; f.values.len()],
            shaped_values: vec![false; f.values.len()],
            posted,
            start,
            may_demote,
            span: std::cell::Cell::new(f.span),
        };
        if f.is_kernel() {
            fl.kernel_remarks(shared.plans[func_index as usize].as_ref());
        }
        match phased {
            Some(layout) => {
                let phase = param(base + f.results.len() as u32 + 4)?.into_int_value();
                let ptr = e.cx.ptr_type(inkwell::AddressSpace::default());
                let state = e
                    .load_field(ctxp, offsets::PHASE_STATE, ptr.into(), 8)?
                    .into_pointer_value();
                fl.privates_in(state, &layout.privates)?;
                e.b.position_at_end(body_block);
                phases::lower_phases(&mut fl, layout, state, phase)?;
            }
            None => {
                fl.lower_privates()?;
                e.b.position_at_end(body_block);
                fl.block(&f.body)?;
            }
        }
        e.b.build_return(None)?;
        e.b.position_at_end(entry_block);
        e.b.build_unconditional_branch(body_block)?;
        Ok(())
    }

    /// The helper lanes (`demote`): none in a module that cannot demote.
    pub fn helper_bits(&self) -> Result<inkwell::values::IntValue<'ctx>, JitError> {
        let e = self.e;
        if !self.may_demote {
            return Ok(e.i32().const_zero());
        }
        Ok(
            e.load_field(self.ctxp, offsets::HELPER_MASK, e.i32().into(), 4)?
                .into_int_value(),
        )
    }

    /// Whether atomic updates of buffer `buffer` go to the SM's posted slot.
    pub fn posts_to(&self, buffer: u32) -> bool {
        self.posted
            .get(buffer as usize)
            .is_some_and(Option::is_some)
    }

    /// Private arrays, lane-major: lane `l`'s copy starts at `l * stride`
    /// of one 16-byte aligned entry-block alloca, zeroed; the stride is the
    /// size rounded up to 8 so every element stays naturally aligned.
    fn lower_privates(&mut self) -> Result<(), JitError> {
        let e = self.e;
        for p in &self.f.privates {
            let stride = u64::from(p.size).div_ceil(8) * 8;
            let bytes = stride * u64::from(LANES);
            let len = u32::try_from(bytes.max(1)).map_err(|_| {
                JitError::Unsupported(format!("private array @{} of {} bytes", p.name, p.size))
            })?;
            let ty = e.cx.i8_type().array_type(len);
            let slot = e.b.build_alloca(ty, &p.name)?;
            if let Some(inst) = slot.as_instruction() {
                inst.set_alignment(16)
                    .map_err(|m| JitError::Llvm(m.to_string()))?;
            }
            self.privates.push((slot, u64::from(p.size), stride));
        }
        self.zero_privates()
    }

    /// Private arrays laid out as [`FnLowering::lower_privates`] does, at
    /// `offsets` in a phase-split kernel's phase state `state` (64-byte
    /// aligned), not zeroed.
    fn privates_in(&mut self, state: PointerValue<'ctx>, offsets: &[u32]) -> Result<(), JitError> {
        let e = self.e;
        for (p, &offset) in self.f.privates.iter().zip(offsets) {
            let stride = u64::from(p.size).div_ceil(8) * 8;
            let at = e.i64().const_int(u64::from(offset), false);
            // SAFETY (for LLVM): the phase state holds the array at `offset`.
            let base = unsafe { e.b.build_gep(e.cx.i8_type(), state, &[at], &p.name)? };
            self.privates.push((base, u64::from(p.size), stride));
        }
        Ok(())
    }

    /// Zeroes every private array at the builder's position.
    fn zero_privates(&self) -> Result<(), JitError> {
        let e = self.e;
        for &(base, _, stride) in &self.privates {
            e.b.build_memset(
                base,
                16,
                e.cx.i8_type().const_zero(),
                e.i64().const_int(stride * u64::from(LANES), false),
            )?;
        }
        Ok(())
    }

    /// An alloca in the entry block (so LLVM can promote it).
    pub fn entry_alloca(
        &self,
        ty: impl BasicType<'ctx>,
        name: &str,
    ) -> Result<PointerValue<'ctx>, JitError> {
        self.e.entry_alloca(ty, name)
    }

    fn block(&mut self, block: &Block) -> Result<(), JitError> {
        for s in &block.stmts {
            self.stmt(s)?;
        }
        Ok(())
    }

    /// Lowers `block` with `frame` as the loop frame whose lanes are all
    /// active there.
    fn block_in(&mut self, frame: Option<usize>, block: &Block) -> Result<(), JitError> {
        let outer = std::mem::replace(&mut self.every_lane_frame, frame);
        let lowered = self.block(block);
        self.every_lane_frame = outer;
        lowered
    }

    fn new_block(&self, name: &str) -> BasicBlock<'ctx> {
        self.e.cx.append_basic_block(self.func, name)
    }

    fn stmt(&mut self, s: &Stmt) -> Result<(), JitError> {
        let e = self.e;
        self.span.set(s.span());
        match s {
            Stmt::Inst(i) => self.inst(i),
            Stmt::If {
                cond,
                then_body,
                else_body,
                ..
            } => {
                let c = self.operand(cond)?;
                // A condition the same in all 32 lanes: lane 0 decides for
                // the warp with a scalar test.
                let lane0 = if self.same_everywhere(cond) {
                    let lane = e.i32().const_zero();
                    Some(e.b.build_extract_element(c, lane, "")?.into_int_value())
                } else {
                    None
                };
                let uniform =
                    lane0.is_some() || self.shapes.condition(s) == Some(LaneShape::Uniform);
                if let Some(exit) = self.whole_loop_break(uniform, then_body, else_body) {
                    self.remark(
                        RemarkKind::Branch,
                        false,
                        "the same in every lane still in the loop: when it holds, the warp \
                         leaves the loop at once",
                    );
                    // Every lane still in the loop takes the same side, so
                    // the taken side leaves the loop: its mask stays as it
                    // was on the other side, where LLVM still knows it.
                    let taken = match lane0 {
                        Some(c0) => c0,
                        None => e.any(e.b.build_and(self.mask.current(e)?, c, "")?)?,
                    };
                    let stay = self.new_block("loop.stay");
                    e.b.build_conditional_branch(taken, exit, stay)?;
                    e.b.position_at_end(stay);
                    return Ok(());
                }
                if lane0.is_none() && else_body.stmts.is_empty() && only_mask_changes(then_body) {
                    self.remark(
                        RemarkKind::Branch,
                        !uniform,
                        "guards only a break or continue: it changes the masks, with no branch",
                    );
                    // `if c { break }` and the like only change masks, which
                    // is a no-op with no lanes: no test, no branch.
                    self.mask.push_cond(e, c)?;
                    self.block(then_body)?;
                    self.mask.pop_cond();
                    return Ok(());
                }
                self.remark(
                    RemarkKind::Branch,
                    !uniform,
                    if uniform {
                        "uniform condition: the warp takes one side as a whole (a scalar branch)"
                    } else {
                        "divergent condition: each side runs under its lanes' mask, and is \
                         skipped when it has none"
                    },
                );
                let taken = if uniform {
                    // All active lanes agree on `c`: the then side, if
                    // taken, has all of them, so its mask is the current
                    // one, not a new value.
                    let outer = self.mask.current(e)?;
                    let taken = match lane0 {
                        Some(c0) => c0,
                        None => e.any(e.b.build_and(outer, c, "")?)?,
                    };
                    self.mask.push_mask(outer);
                    taken
                } else {
                    self.mask.push_cond_tested(e, c)?
                };
                // Under a divergent condition, lanes still in the loop may
                // be inactive: writes must keep their values.
                let frame = if uniform { self.every_lane_frame } else { None };
                let then_bb = self.new_block("then");
                let else_test = self.new_block("else.test");
                e.b.build_conditional_branch(taken, then_bb, else_test)?;
                e.b.position_at_end(then_bb);
                self.block_in(frame, then_body)?;
                e.b.build_unconditional_branch(else_test)?;
                self.mask.pop_cond();
                e.b.position_at_end(else_test);
                if else_body.stmts.is_empty() {
                    return Ok(());
                }
                // The else lanes: active before the if and not `c`.
                let outer = self.mask.current(e)?;
                let (else_mask, else_taken) = match lane0 {
                    Some(c0) => (outer, e.b.build_not(c0, "")?),
                    None => {
                        let lanes = self.mask.without(e, outer, c)?;
                        (lanes, e.any(lanes)?)
                    }
                };
                let else_bb = self.new_block("else");
                let end = self.new_block("endif");
                e.b.build_conditional_branch(else_taken, else_bb, end)?;
                e.b.position_at_end(else_bb);
                self.mask.push_mask(else_mask);
                self.block_in(frame, else_body)?;
                self.mask.pop_cond();
                e.b.build_unconditional_branch(end)?;
                e.b.position_at_end(end);
                Ok(())
            }
            Stmt::Loop { body, .. } => {
                let mvec = e.i1().vec_type(LANES);
                let active = self.entry_alloca(mvec, "loop.active")?;
                let cont = self.entry_alloca(mvec, "loop.cont")?;
                self.mask.push_loop(e, active, cont)?;
                self.enter_shadows(body)?;
                let header = self.new_block("loop");
                let body_bb = self.new_block("loop.body");
                let exit = self.new_block("loop.exit");
                self.loop_exits
                    .push((!loop_vars::continues(body)).then_some(exit));
                e.b.build_unconditional_branch(header)?;
                e.b.position_at_end(header);
                self.spend_fuel()?;
                let m = self.mask.current(e)?;
                e.b.build_conditional_branch(e.any(m)?, body_bb, exit)?;
                e.b.position_at_end(body_bb);
                self.block_in(Some(self.shadow_frames.len() - 1), body)?;
                self.mask.end_iteration(e)?;
                e.b.build_unconditional_branch(header)?;
                self.mask.pop_loop();
                self.shadow_frames.pop();
                self.loop_exits.pop();
                e.b.position_at_end(exit);
                Ok(())
            }
            Stmt::Break { .. } => self.mask.break_loop(e),
            Stmt::Continue { .. } => self.mask.continue_loop(e),
            Stmt::Return { values, .. } => {
                let m = self.mask.current(e)?;
                for (i, v) in values.iter().enumerate() {
                    let new = self.operand(v)?;
                    let slot = *self
                        .results
                        .get(i)
                        .ok_or_else(|| JitError::Internal("too many return values".into()))?;
                    let old = e.b.build_load(new.get_type(), slot, "")?;
                    let merged = e.b.build_select(m, new, old.into_vector_value(), "")?;
                    e.b.build_store(slot, merged)?;
                }
                self.mask.return_lanes(e)
            }
            Stmt::Kill { .. } => {
                let live = self.mask.kill_lanes(e)?;
                let bits = e.mask_to_bits(live)?;
                e.store_field(self.ctxp, offsets::LIVE_MASK, bits.into(), 4)
            }
            Stmt::Ordered { key, body, .. } => {
                // Rounds: each pass runs the lanes that are first with their
                // key among the lanes still waiting, in lane order.
                let key = self.operand(key)?;
                let mvec = e.i1().vec_type(LANES);
                let remaining = self.entry_alloca(mvec, "ordered.waiting")?;
                let entered = self.mask.current(e)?;
                e.b.build_store(remaining, entered)?;
                let header = self.new_block("ordered");
                let body_bb = self.new_block("ordered.round");
                let exit = self.new_block("ordered.exit");
                e.b.build_unconditional_branch(header)?;
                e.b.position_at_end(header);
                let waiting = e.b.build_load(mvec, remaining, "")?.into_vector_value();
                e.b.build_conditional_branch(e.any(waiting)?, body_bb, exit)?;
                e.b.position_at_end(body_bb);
                let round = warp::first_of_each_key(self, key, waiting)?;
                let rest = self.mask.without(e, waiting, round)?;
                e.b.build_store(remaining, rest)?;
                self.mask.push_mask(round);
                self.block_in(None, body)?;
                self.mask.pop_cond();
                e.b.build_unconditional_branch(header)?;
                e.b.position_at_end(exit);
                Ok(())
            }
        }
    }

    /// One loop iteration's fuel. When none is left, or the launch's cancel
    /// flag is raised, every lane leaves the live mask and the function
    /// returns: its callers see no live lanes, so nothing more is written.
    /// Stopping is rare, so it is handled off the loop's straight path.
    fn spend_fuel(&mut self) -> Result<(), JitError> {
        let e = self.e;
        let b = &e.b;
        let fuel = e
            .load_field(self.ctxp, offsets::FUEL, e.i64().into(), 8)?
            .into_int_value();
        let empty =
            b.build_int_compare(inkwell::IntPredicate::EQ, fuel, e.i64().const_zero(), "")?;
        let stop = b.build_or(empty, self.e.cancel_raised(self.ctxp)?, "")?;
        let spend_bb = self.new_block("fuel.spend");
        let out_bb = self.new_block("fuel.out");
        let done_bb = self.new_block("fuel.done");
        b.build_conditional_branch(stop, out_bb, spend_bb)?;
        b.position_at_end(spend_bb);
        let left = b.build_int_sub(fuel, e.i64().const_int(1, false), "")?;
        e.store_field(self.ctxp, offsets::FUEL, left.into(), 8)?;
        b.build_unconditional_branch(done_bb)?;
        b.position_at_end(out_bb);
        e.store_field(
            self.ctxp,
            offsets::LIVE_MASK,
            e.i32().const_zero().into(),
            4,
        )?;
        // Out of fuel, or cancelled: only the former is the warp's fault.
        let flag = b.build_int_z_extend(empty, e.i32(), "")?;
        let old = e
            .load_field(self.ctxp, offsets::OUT_OF_FUEL, e.i32().into(), 4)?
            .into_int_value();
        let flag = b.build_or(old, flag, "")?;
        e.store_field(self.ctxp, offsets::OUT_OF_FUEL, flag.into(), 4)?;
        // Leaving now, rather than running on with no lanes, keeps the live
        // mask out of the loop's phis.
        b.build_return(None)?;
        b.position_at_end(done_bb);
        Ok(())
    }

    /// The value of an operand in all 32 lanes.
    pub fn operand(&self, o: &Operand) -> Result<VectorValue<'ctx>, JitError> {
        let e = self.e;
        match o {
            Operand::Value(v) => {
                self.values
                    .get(v.0 as usize)
                    .copied()
                    .flatten()
                    .ok_or_else(|| {
                        JitError::Internal(format!("value {} used before its definition", v.0))
                    })
            }
            Operand::Var(v) => self.read_var(v.0 as usize),
            Operand::Param(p) => {
                let ty = self.module.params[p.0 as usize].ty;
                let params = e
                    .load_invariant(
                        self.group,
                        offsets::PARAMS,
                        e.cx.ptr_type(Default::default()).into(),
                        8,
                    )?
                    .into_pointer_value();
                let bits = e
                    .load_invariant(params, 8 * u64::from(p.0), e.i64().into(), 8)?
                    .into_int_value();
                let narrow = if ty.bits() == 64 {
                    bits
                } else {
                    e.b.build_int_truncate(bits, e.int_of(ty), "")?
                };
                let scalar = e.b.build_bit_cast(narrow, e.elem_type(ty), "")?;
                e.splat(scalar)
            }
            Operand::Const(c) => Ok(e.splat_const(c.ty, c.bits)),
        }
    }

    /// What the lane-shape analysis knows about the address of `i`, a
    /// load or store of `access_bytes` per lane whose address has type
    /// `addr_ty`: one address, consecutive accesses, one run of them
    /// repeated in each group of lanes, or a store packed by a ballot.
    pub fn address_facts(&self, i: &Inst, access_bytes: u32, addr_ty: Type) -> AddressFacts {
        // Loop scalars can make the shape hold in lanes the analysis did
        // not vouch for.
        let shaped = matches!(i.args.first(), Some(Operand::Value(id))
            if self.shaped_values.get(id.0 as usize).copied().unwrap_or(false));
        // Helper lanes count in a ballot but do not store.
        if !self.may_demote && self.shapes.packed(i, u64::from(access_bytes)) {
            let every_lane = shaped || self.shapes.address(i).is_some_and(|a| a.every_lane);
            let packed = KnownAddress::Packed { every_lane };
            return AddressFacts {
                always: packed,
                in_one_row: packed,
            };
        }
        let consecutive = u64::from(access_bytes) & addr_ty.bit_mask();
        let known = |shapes: &FunctionShapes| match shapes.address(i) {
            Some(OperandShape { lanes, every_lane }) => {
                let every_lane = every_lane || shaped;
                match lanes {
                    LaneShape::Uniform => KnownAddress::Same { every_lane },
                    LaneShape::Affine { stride } if stride == consecutive => {
                        KnownAddress::Consecutive { every_lane }
                    }
                    LaneShape::Tiled { stride, width } if stride == consecutive => {
                        KnownAddress::Tiled { width, every_lane }
                    }
                    _ => KnownAddress::Unknown,
                }
            }
            None => KnownAddress::Unknown,
        };
        AddressFacts {
            always: known(&self.shapes),
            in_one_row: known(&self.row_shapes),
        }
    }

    pub fn operand_type(&self, o: &Operand) -> Type {
        self.module.operand_type(self.f, o)
    }

    /// Writes a result: defines an SSA value, or assigns a variable in the
    /// active lanes.
    pub fn write(&mut self, place: &Place, v: VectorValue<'ctx>) -> Result<(), JitError> {
        match place {
            Place::Value(id) => {
                self.values[id.0 as usize] = Some(v);
                Ok(())
            }
            Place::Var(id) => {
                let m = self.mask.current(self.e)?;
                self.write_var(id.0 as usize, v, m, true)
            }
        }
    }

    /// Writes a result only in the lanes of `lanes` (a guarded vote): SSA
    /// values get 0 elsewhere, variables keep their old value.
    pub fn write_masked(
        &mut self,
        place: &Place,
        v: VectorValue<'ctx>,
        lanes: VectorValue<'ctx>,
    ) -> Result<(), JitError> {
        let e = self.e;
        match place {
            Place::Value(id) => {
                let zero = v.get_type().const_zero();
                let masked = e.b.build_select(lanes, v, zero, "")?.into_vector_value();
                self.values[id.0 as usize] = Some(masked);
                Ok(())
            }
            Place::Var(id) => self.write_var(id.0 as usize, v, lanes, false),
        }
    }

    /// Whether `o` holds the same value in all 32 lanes, active or not, so
    /// that lane 0 stands for the warp.
    fn same_everywhere(&self, o: &Operand) -> bool {
        match o {
            Operand::Const(_) | Operand::Param(_) => true,
            Operand::Var(v) => self
                .innermost_shadow(v.0 as usize)
                .is_some_and(|(_, shadow)| shadow.scalar),
            Operand::Value(id) => {
                self.same_values
                    .get(id.0 as usize)
                    .copied()
                    .unwrap_or(false)
                    || self.shapes.same_in_every_lane(*id)
            }
        }
    }

    /// The innermost loop shadow of variable `v`, where reads of it go.
    fn innermost_shadow(&self, v: usize) -> Option<(PointerValue<'ctx>, Shadow)> {
        self.shadow_frames
            .iter()
            .rev()
            .find_map(|frame| frame.get(v).copied().flatten())
    }

    /// Variable `v` as it is read here: from the innermost loop shadow, or
    /// the variable itself.
    fn read_var(&self, v: usize) -> Result<VectorValue<'ctx>, JitError> {
        let e = self.e;
        let ty = self.f.vars[v].ty;
        Ok(match self.innermost_shadow(v) {
            Some((slot, shadow)) if shadow.scalar => {
                let scalar = e.b.build_load(e.elem_type(ty), slot, "")?;
                e.splat(scalar)?
            }
            Some((slot, _)) => {
                e.b.build_load(e.vec_type(ty), slot, "")?
                    .into_vector_value()
            }
            None => {
                e.b.build_load(e.vec_type(ty), self.vars[v], "")?
                    .into_vector_value()
            }
        })
    }

    /// Assigns variable `v` in the lanes of `lanes`: its innermost shadow
    /// in every lane where that is allowed (`lanes` is the active mask and
    /// the shadow's loop has all its lanes active here), and the outer
    /// copies that are read outside the inner loops with the select.
    fn write_var(
        &mut self,
        v: usize,
        value: VectorValue<'ctx>,
        lanes: VectorValue<'ctx>,
        lanes_are_active: bool,
    ) -> Result<(), JitError> {
        let e = self.e;
        let masked = |slot: PointerValue<'ctx>| -> Result<(), JitError> {
            let old =
                e.b.build_load(value.get_type(), slot, "")?
                    .into_vector_value();
            let merged = e.b.build_select(lanes, value, old, "")?;
            e.b.build_store(slot, merged)?;
            Ok(())
        };
        for (depth, frame) in self.shadow_frames.iter().enumerate().rev() {
            let Some((slot, shadow)) = frame.get(v).copied().flatten() else {
                continue;
            };
            let every_lane = lanes_are_active && self.every_lane_frame == Some(depth);
            if shadow.scalar {
                if !every_lane {
                    return Err(JitError::Internal(format!(
                        "a lane-masked write to the scalar shadow of {}",
                        self.f.vars[v].name
                    )));
                }
                // Every lane holds the same value (`scalar_shadows`).
                let lane0 = e.i32().const_zero();
                let scalar = e.b.build_extract_element(value, lane0, "")?;
                e.b.build_store(slot, scalar)?;
            } else if every_lane {
                e.b.build_store(slot, value)?;
            } else {
                masked(slot)?;
            }
            if !shadow.read_outside {
                return Ok(());
            }
        }
        masked(self.vars[v])
    }

    /// The innermost loop's exit block when `if` (`uniform` says whether
    /// its condition is the same in all active lanes) with these sides is
    /// `if c { break }` taken by all of the loop's lanes or none: every lane
    /// still in the loop is active here (`every_lane_frame`)
    /// and no `continue` has kept some in it.
    fn whole_loop_break(
        &self,
        uniform: bool,
        then_body: &Block,
        else_body: &Block,
    ) -> Option<BasicBlock<'ctx>> {
        let only_break = matches!(then_body.stmts[..], [Stmt::Break { .. }]);
        let innermost = self.shadow_frames.len().checked_sub(1)?;
        if !uniform
            || !only_break
            || !else_body.stmts.is_empty()
            || self.every_lane_frame != Some(innermost)
        {
            return None;
        }
        self.loop_exits.last().copied().flatten()
    }

    /// Whether the lowering records remarks: callers that build words for
    /// one test it first.
    pub fn wants_remarks(&self) -> bool {
        self.e.remarks.is_some()
    }

    /// Records what was decided for the statement being lowered, when
    /// remarks are asked for.
    pub fn remark(&self, kind: RemarkKind, lane_by_lane: bool, message: impl Into<String>) {
        if let Some(remarks) = &self.e.remarks {
            remarks.borrow_mut().push(Remark {
                function: self.f.name.clone(),
                span: self.span.get(),
                kind,
                lane_by_lane,
                message: message.into(),
            });
        }
    }

    /// Which of the variables a loop writes it carries as scalars.
    fn loop_remark(&self, shadows: &[Option<Shadow>], scalar: &[bool]) {
        if !self.wants_remarks() {
            return;
        }
        let names = |want: bool| -> Vec<String> {
            shadows
                .iter()
                .enumerate()
                .filter(|(v, s)| s.is_some() && scalar.get(*v).copied().unwrap_or(false) == want)
                .map(|(v, _)| format!("${}", self.f.vars[v].name))
                .collect()
        };
        let (scalars, vectors) = (names(true), names(false));
        let mut parts = Vec::new();
        if !scalars.is_empty() {
            parts.push(format!(
                "{} the same in every active lane: kept as scalars",
                scalars.join(", ")
            ));
        }
        if !vectors.is_empty() {
            parts.push(format!("{} carried as vectors", vectors.join(", ")));
        }
        if !parts.is_empty() {
            self.remark(RemarkKind::Loop, false, parts.join("; "));
        }
    }

    /// What kind of code a kernel is and how its warps are scheduled.
    fn kernel_remarks(&self, plan: Option<&KernelPlan>) {
        if !self.wants_remarks() {
            return;
        }
        let code = match (self.e.workgroup, self.start) {
            (Some([x, y, z]), _) => format!(
                "code for workgroups of {x}x{y}x{z}: the workgroup's sizes are constants, \
                 and so are the shapes of the IDs"
            ),
            (None, KernelStart::WholeWarp { .. }) => "code for workgroups of whole warps \
                 (a multiple of 32 invocations): every warp starts with its 32 lanes"
                .to_string(),
            (None, KernelStart::FromContext) => {
                "code for any workgroup size: each warp's lanes come from its context".to_string()
            }
        };
        self.remark(RemarkKind::Kernel, false, code);
        let Some(plan) = plan else { return };
        if plan.phases > 0 {
            self.remark(
                RemarkKind::Kernel,
                false,
                format!(
                    "split at its barriers into {} phases: the warps run each phase in turn \
                     on the SM's thread",
                    plan.phases
                ),
            );
        } else if plan.uses_barrier {
            self.remark(
                RemarkKind::Kernel,
                false,
                format!(
                    "reaches a barrier inside control flow or a call: each warp runs on a \
                     coroutine of its own ({} KiB of stack), switched at barriers",
                    plan.stack_bytes / 1024
                ),
            );
        }
        if plan.many_workgroups {
            self.remark(
                RemarkKind::Kernel,
                false,
                "short and without loops: one call of its entry runs a run of workgroups"
                    .to_string(),
            );
        }
    }

    /// Whether the builder is inside a loop of this function.
    pub fn in_loop(&self) -> bool {
        !self.shadow_frames.is_empty()
    }

    /// Before a loop's header: the shadows of the variables it writes in
    /// every lane, each starting as a copy of the variable's current value.
    fn enter_shadows(&mut self, body: &Block) -> Result<(), JitError> {
        let e = self.e;
        let shapes = &self.shapes;
        let uniform = |s: &Stmt| shapes.condition(s) == Some(LaneShape::Uniform);
        let shadows = loop_vars::loop_shadows(self.f, &self.var_reads, body, &uniform);
        let facts = scalar_shadows::Facts {
            uniform_condition: &uniform,
            same_in_every_lane: &|id| {
                self.same_values[id.0 as usize] || shapes.same_in_every_lane(id)
            },
            shape_in_every_lane: &|id| self.shaped_values[id.0 as usize] || shapes.every_lane(id),
            uniform_at_entry: &|v| {
                shapes.var_at_loop_entry(body, VarId(v as u32)) == LaneShape::Uniform
            },
            scalar_outside: &|v| self.innermost_shadow(v).is_some_and(|(_, s)| s.scalar),
        };
        let scalars = scalar_shadows::scalar_shadows(self.f, body, &shadows, &facts);
        self.loop_remark(&shadows, &scalars.vars);
        for (same, found) in self.same_values.iter_mut().zip(scalars.values) {
            *same |= found;
        }
        for (shaped, found) in self
            .shaped_values
            .iter_mut()
            .zip(scalars.shape_in_every_lane)
        {
            *shaped |= found;
        }
        let mut frame = Vec::new();
        for (v, shadow) in shadows.into_iter().enumerate() {
            frame.push(match shadow {
                Some(mut shadow) => {
                    shadow.scalar = scalars.vars[v];
                    let var = &self.f.vars[v];
                    let now = self.read_var(v)?;
                    let slot = if shadow.scalar {
                        // The value of the first active lane: all active
                        // lanes agree, the others never see the shadow.
                        let bits = e.mask_to_bits(self.mask.current(e)?)?;
                        let lane = e.lowest_lane(bits)?;
                        let first = e.b.build_extract_element(now, lane, "")?;
                        let slot = self
                            .entry_alloca(e.elem_type(var.ty), &format!("{}.scalar", var.name))?;
                        e.b.build_store(slot, first)?;
                        slot
                    } else {
                        let slot =
                            self.entry_alloca(e.vec_type(var.ty), &format!("{}.shadow", var.name))?;
                        e.b.build_store(slot, now)?;
                        slot
                    };
                    Some((slot, shadow))
                }
                None => None,
            });
        }
        self.shadow_frames.push(frame);
        Ok(())
    }

    fn inst(&mut self, i: &Inst) -> Result<(), JitError> {
        match i.op {
            Op::Call(callee) => return self.call(i, callee),
            Op::Barrier => return self.barrier(),
            _ => {}
        }
        let results = ops::lower_inst(self, i)?;
        for (place, v) in i.results.iter().zip(results) {
            self.write(place, v)?;
        }
        Ok(())
    }

    /// `barrier`: a warp with active lanes calls the scheduler's
    /// [`abi::BARRIER_SYMBOL`], which returns when the barrier opens. The
    /// call takes the context, so LLVM reloads shared and global memory
    /// after it.
    fn barrier(&mut self) -> Result<(), JitError> {
        let e = self.e;
        let barrier_fn = match e.module.get_function(abi::BARRIER_SYMBOL) {
            Some(f) => f,
            None => {
                let ptr = e.cx.ptr_type(inkwell::AddressSpace::default());
                let fty = e.cx.void_type().fn_type(&[ptr.into()], false);
                e.module
                    .add_function(abi::BARRIER_SYMBOL, fty, Some(Linkage::External))
            }
        };
        let m = self.mask.current(e)?;
        let wait = self.new_block("barrier");
        let after = self.new_block("barrier.after");
        e.b.build_conditional_branch(e.any(m)?, wait, after)?;
        e.b.position_at_end(wait);
        e.b.build_call(barrier_fn, &[self.ctxp.into()], "")?;
        e.b.build_unconditional_branch(after)?;
        e.b.position_at_end(after);
        Ok(())
    }

    fn call(&mut self, i: &Inst, callee: u32) -> Result<(), JitError> {
        let e = self.e;
        let target = *self
            .funcs
            .get(callee as usize)
            .ok_or_else(|| JitError::Internal(format!("call of unknown function {callee}")))?;
        let callee_fn = self.module.function(FuncId(callee));
        let m = self.mask.current(e)?;
        let mut args: Vec<BasicMetadataValueEnum> = vec![self.ctxp.into(), m.into()];
        for a in &i.args {
            args.push(self.operand(a)?.into());
        }
        let mut slots = Vec::new();
        for ty in &callee_fn.results {
            let vt = e.vec_type(*ty);
            let slot = self.entry_alloca(vt, "ret")?;
            e.b.build_store(slot, vt.const_zero())?;
            slots.push((slot, vt));
            args.push(slot.into());
        }
        args.push(self.group.into());
        args.extend(self.workgroup_id.map(BasicMetadataValueEnum::from));
        e.b.build_call(target, &args, "")?;
        let bits = e
            .load_field(self.ctxp, offsets::LIVE_MASK, e.i32().into(), 4)?
            .into_int_value();
        let live = e.bits_to_mask(bits)?;
        self.mask.set_live(e, live)?;
        for (place, (slot, vt)) in i.results.iter().zip(slots) {
            let v = e.b.build_load(vt, slot, "")?.into_vector_value();
            self.write(place, v)?;
        }
        Ok(())
    }
}
