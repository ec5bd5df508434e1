//! The routines of `lower/routine.rs` (lane paths of loads and stores,
//! math functions), compiled once per thread, target and optimisation
//! level, and called by every module that declares them.
//!
//! A lane path is the same few hundred instructions whichever kernel calls
//! it, and code generation for it costs about as much as for a small
//! kernel (4-5 ms on the development machine). Compiled into each module,
//! it was a third of the cold compile of the kernels that need one.

use super::{machine, map_runtime_symbols, perf_map, pipeline, target_index};
use crate::lower::{define_routine, RoutineSpec};
use crate::{JitError, Target};
use inkwell::context::Context;
use inkwell::execution_engine::ExecutionEngine;
use inkwell::module::Module;
use inkwell::passes::PassBuilderOptions;
use inkwell::targets::FileType;
use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::Arc;

/// One compiled routine. Modules that call it hold it (an `Arc`, as
/// [`super::Code`] is held) so that its code outlives theirs.
pub(super) struct Routine {
    // Field order is drop order, as in `Code`.
    _engine: ExecutionEngine<'static>,
    _module: Module<'static>,
    _context: Box<Context>,
    pub address: usize,
}

/// The routine, the target's index and the optimisation level.
type Key = (RoutineSpec, u8, u8);

thread_local! {
    static ROUTINES: RefCell<HashMap<Key, Arc<Routine>>> = RefCell::new(HashMap::new());
}

/// This thread's compiled `spec` for `target` at `level`, compiled on
/// first use.
pub(super) fn get(spec: &RoutineSpec, target: Target, level: u8) -> Result<Arc<Routine>, JitError> {
    let key = (spec.clone(), target_index(target), level);
    if let Some(r) = ROUTINES.with(|r| r.borrow().get(&key).cloned()) {
        return Ok(r);
    }
    #[allow(clippy::arc_with_non_send_sync)]
    let routine = Arc::new(compile(spec, target, level)?);
    ROUTINES.with(|r| r.borrow_mut().insert(key, routine.clone()));
    Ok(routine)
}

/// The optimised module holding only `spec`, in `cx`.
pub(super) fn build<'ctx>(
    cx: &'ctx Context,
    spec: &RoutineSpec,
    target: Target,
    level: u8,
) -> Result<Module<'ctx>, JitError> {
    let m = machine(target, level)?;
    let llmod = cx.create_module(&spec.name);
    llmod.set_triple(&m.tm.get_triple());
    llmod.set_data_layout(&m.tm.get_target_data().get_data_layout());
    define_routine(cx, &llmod, spec, &m.cpu, &m.features)?;
    llmod
        .verify()
        .map_err(|e| JitError::Llvm(format!("the routine {} does not verify: {e}", spec.name)))?;
    llmod
        .run_passes(pipeline::passes(level), &m.tm, PassBuilderOptions::create())
        .map_err(|e| JitError::Llvm(e.to_string()))?;
    super::rewrite_optimised(cx, &llmod, &m.features)?;
    Ok(llmod)
}

fn compile(spec: &RoutineSpec, target: Target, level: u8) -> Result<Routine, JitError> {
    let context = Box::new(Context::create());
    // SAFETY: as in `compile_uncached`: the context is boxed and dropped
    // after the engine and module that borrow it.
    let cx: &'static Context = unsafe { &*(&*context as *const Context) };
    let llmod = build(cx, spec, target, level)?;
    let engine = llmod
        .create_jit_execution_engine(pipeline::codegen_level(level))
        .map_err(|e| JitError::Llvm(e.to_string()))?;
    map_runtime_symbols(&llmod, &engine);
    let address = engine
        .get_function_address(&spec.name)
        .map_err(|e| JitError::Llvm(format!("routine {}: {e}", spec.name)))?;
    if address == 0 {
        return Err(JitError::Llvm(format!("routine {} has no code", spec.name)));
    }
    if perf_map::enabled() {
        perf_map::record_routine(spec, target, level, address);
    }
    Ok(Routine {
        _engine: engine,
        _module: llmod,
        _context: context,
        address,
    })
}

/// The routine's optimised LLVM IR (`asm` false) or assembly, for dumps.
pub(super) fn text(
    spec: &RoutineSpec,
    target: Target,
    level: u8,
    asm: bool,
) -> Result<String, JitError> {
    let cx = Context::create();
    let llmod = build(&cx, spec, target, level)?;
    if !asm {
        return Ok(llmod.print_to_string().to_string());
    }
    let m = machine(target, level)?;
    let out =
        m.tm.write_to_memory_buffer(&llmod, FileType::Assembly)
            .map_err(|e| JitError::Llvm(e.to_string()))?;
    Ok(String::from_utf8_lossy(out.as_slice()).into_owned())
}
