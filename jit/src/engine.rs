//! From a verified module to machine code: lowering, verification,
//! optimisation, and the MCJIT execution engine that owns the code.
//!
//! Compile time matters as much as code speed here (kernels are compiled
//! when they are launched), so:
//! - the optimisation pipeline is chosen for 32-lane vector code
//!   ([`pipeline`]), not LLVM's general `default<O2>`;
//! - target machines are created once per thread and target;
//! - the LLVM IR and assembly are produced only when asked for;
//! - a per-thread cache ([`cache`]) returns the code of a module compiled
//!   before with the same options.

mod cache;
mod divisibility;
mod jitdump;
mod mask_shuffles;
mod perf_map;
mod pipeline;
mod routines;
mod ternlog_guard;
mod wide_masks;

use crate::abi::KernelFn;
use crate::lower::RoutineSpec;
use crate::{lower, JitError, JitOptions, Target};
use inkwell::context::Context;
use inkwell::execution_engine::ExecutionEngine;
use inkwell::module::Module;
use inkwell::passes::PassBuilderOptions;
use inkwell::targets::{
    CodeModel, FileType, InitializationConfig, RelocMode, Target as LlvmTarget, TargetMachine,
};
use inkwell::values::{BasicValueEnum, InstructionValue};
use inkwell::OptimizationLevel;
use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;
use std::sync::Arc;
use std::sync::OnceLock;
use std::time::{Duration, Instant};
use warpjit_ir::{FuncId, VerifiedModule};

pub use cache::{clear_compile_cache, COMPILE_CACHE_ENTRIES};

/// Compiled kernels, ready to run. Cloning is cheap (the code is shared).
/// Not `Send`: the code belongs to an LLVM context of this thread.
#[derive(Clone)]
pub struct CompiledModule {
    // `Arc`, although `Code` is not `Send`: `JitKernel` hands a clone to SM
    // threads, and whichever thread drops the last clone (this thread's
    // cache holds another) must update the count atomically.
    #[allow(clippy::arc_with_non_send_sync)]
    code: Arc<Code>,
    times: CompileTimes,
}

/// What one compilation owns.
struct Code {
    // Field order is drop order: the engine (which owns the LLVM module and
    // the machine code) goes before the context it lives in.
    _engine: ExecutionEngine<'static>,
    _module: Module<'static>,
    _context: Box<Context>,
    kernels: HashMap<u32, KernelFn>,
    /// What was compiled, to print the IR or assembly on request.
    source: VerifiedModule,
    options: JitOptions,
    /// The shared routines the code calls (dropped after the engine).
    routines: Vec<(RoutineSpec, Arc<routines::Routine>)>,
}

/// Where the time of one [`compile`] went (wall clock). A cache hit has
/// `cache_hit` set, its own (tiny) `total`, and zeros elsewhere.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CompileTimes {
    /// Looking the module up in the compile cache (printing its text).
    pub cache_lookup: Duration,
    /// Building the LLVM IR from the warp IR.
    pub lower: Duration,
    /// LLVM's module verifier on the generated IR.
    pub verify: Duration,
    /// The optimisation pipeline.
    pub optimise: Duration,
    /// Instruction selection, register allocation and loading the code
    /// (MCJIT engine creation and symbol lookup).
    pub codegen: Duration,
    pub total: Duration,
    pub cache_hit: bool,
}

impl std::fmt::Debug for CompiledModule {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CompiledModule")
            .field("kernels", &self.code.kernels.len())
            .field("options", &self.code.options)
            .finish()
    }
}

fn opt_level(level: u8) -> Result<OptimizationLevel, JitError> {
    Ok(match level {
        0 => OptimizationLevel::None,
        1 => OptimizationLevel::Less,
        2 => OptimizationLevel::Default,
        3 => OptimizationLevel::Aggressive,
        n => {
            return Err(JitError::InvalidOptions(format!(
                "optimisation level {n} is not in 0..=3"
            )))
        }
    })
}

/// The CPU name and feature string for a target.
fn cpu_and_features(target: Target) -> (String, String) {
    let cpu = crate::host_cpu().to_string();
    let host = TargetMachine::get_host_cpu_features().to_string();
    // A later "-feature" overrides earlier ones and clears what implies it.
    let features = match target {
        Target::Native => host,
        Target::Avx2 => format!("{host},-avx512f"),
        Target::Sse42 => format!("{host},-avx"),
    };
    (cpu, features)
}

/// A target machine and the CPU description it was made for.
struct Machine {
    tm: TargetMachine,
    cpu: String,
    features: String,
}

thread_local! {
    /// Target machines by (target, optimisation level): creating one costs
    /// about as much as compiling a small kernel.
    static MACHINES: RefCell<HashMap<(u8, u8), Rc<Machine>>> = RefCell::new(HashMap::new());
}

fn target_index(target: Target) -> u8 {
    match target {
        Target::Native => 0,
        Target::Avx2 => 1,
        Target::Sse42 => 2,
    }
}

/// This thread's target machine for `target` at `level`.
fn machine(target: Target, level: u8) -> Result<Rc<Machine>, JitError> {
    let key = (target_index(target), level);
    if let Some(m) = MACHINES.with(|m| m.borrow().get(&key).cloned()) {
        return Ok(m);
    }
    let (cpu, features) = cpu_and_features(target);
    opt_level(level)?;
    let tm = new_target_machine(&cpu, &features, pipeline::codegen_level(level))?;
    let m = Rc::new(Machine { tm, cpu, features });
    MACHINES.with(|ms| ms.borrow_mut().insert(key, m.clone()));
    Ok(m)
}

fn new_target_machine(
    cpu: &str,
    features: &str,
    opt: OptimizationLevel,
) -> Result<TargetMachine, JitError> {
    // LLVM's target registry is global: initialise it once, not from
    // several threads at the same time.
    static INIT: OnceLock<Result<(), String>> = OnceLock::new();
    INIT.get_or_init(|| LlvmTarget::initialize_native(&InitializationConfig::default()))
        .clone()
        .map_err(JitError::Llvm)?;
    let triple = TargetMachine::get_default_triple();
    let target = LlvmTarget::from_triple(&triple).map_err(|e| JitError::Llvm(e.to_string()))?;
    target
        .create_target_machine(
            &triple,
            cpu,
            features,
            opt,
            RelocMode::Default,
            CodeModel::JITDefault,
        )
        .ok_or_else(|| JitError::Llvm(format!("no target machine for {triple}")))
}

/// Calls `f` on every instruction of `module` in order; `f` may erase the
/// instruction it is given.
fn each_instruction<'ctx>(module: &Module<'ctx>, mut f: impl FnMut(InstructionValue<'ctx>)) {
    for function in module.get_functions() {
        for block in function.get_basic_blocks() {
            let mut next = block.get_first_instruction();
            while let Some(inst) = next {
                next = inst.get_next_instruction();
                f(inst);
            }
        }
    }
}

/// Operand `i` of `inst`, if it is a value (not a block).
fn operand<'ctx>(inst: InstructionValue<'ctx>, i: u32) -> Option<BasicValueEnum<'ctx>> {
    inst.get_operand(i)?.value()
}

/// The rewrites of an optimised module, which the optimiser would undo or
/// the code generator miss: divisibility tests as a multiply and a compare,
/// steering LLVM 19 off a `vpternlog` and mask moves it miscompiles on
/// AVX-512, wide masks on AVX2.
fn rewrite_optimised<'ctx>(
    cx: &'ctx Context,
    llmod: &Module<'ctx>,
    features: &str,
) -> Result<(), JitError> {
    divisibility::rewrite(cx, llmod);
    if crate::emit::has_avx512(features) {
        ternlog_guard::guard(cx, llmod);
        mask_shuffles::rewrite(cx, llmod);
    }
    if wide_masks::wanted(features) {
        wide_masks::widen(cx, llmod);
    }
    // A rewrite's mistake is an error here rather than a crash in the code
    // generator.
    llmod
        .verify()
        .map_err(|e| JitError::Llvm(format!("the rewritten module does not verify: {e}")))
}

/// Lowers, verifies and optimises `module` into a new LLVM module of `cx`.
/// Returns the kernels' entry names and the shared routines the module
/// declares ([`routines`] supplies them).
fn build_llvm_module<'ctx>(
    cx: &'ctx Context,
    module: &VerifiedModule,
    opts: &JitOptions,
    times: &mut CompileTimes,
) -> Result<(Module<'ctx>, lower::Lowered), JitError> {
    let m = machine(opts.target, opts.opt_level)?;
    let started = Instant::now();
    let (llmod, lowered) = lower_new_module(cx, &m, module, opts, false)?;
    let lowered_at = Instant::now();
    llmod
        .verify()
        .map_err(|e| JitError::Llvm(format!("the generated module does not verify: {e}")))?;
    let verified = Instant::now();
    llmod
        .run_passes(
            pipeline::passes(opts.opt_level),
            &m.tm,
            PassBuilderOptions::create(),
        )
        .map_err(|e| JitError::Llvm(e.to_string()))?;
    rewrite_optimised(cx, &llmod, &m.features)?;
    times.lower = lowered_at - started;
    times.verify = verified - lowered_at;
    times.optimise = verified.elapsed();
    Ok((llmod, lowered))
}

/// `module` lowered into a new LLVM module of `cx` for machine `m`, with
/// the lowering's remarks when asked for.
fn lower_new_module<'ctx>(
    cx: &'ctx Context,
    m: &Machine,
    module: &VerifiedModule,
    opts: &JitOptions,
    remarks: bool,
) -> Result<(Module<'ctx>, lower::Lowered), JitError> {
    let llmod = cx.create_module("warpjit");
    llmod.set_triple(&m.tm.get_triple());
    llmod.set_data_layout(&m.tm.get_target_data().get_data_layout());
    let lowered = lower::lower_module(cx, &llmod, module, &m.cpu, &m.features, opts, remarks)?;
    Ok((llmod, lowered))
}

/// What compiling `module` with `opts` would decide for each kernel and
/// statement ([`CompiledModule::remarks`]), from the lowering alone: no
/// LLVM passes, no machine code.
pub fn remarks(module: &VerifiedModule, opts: &JitOptions) -> Result<Vec<lower::Remark>, JitError> {
    opt_level(opts.opt_level)?;
    let cx = Context::create();
    let m = machine(opts.target, opts.opt_level)?;
    let (_, lowered) = lower_new_module(&cx, &m, module, opts, true)?;
    Ok(lowered.remarks)
}

/// Compiles every kernel of `module`, or returns this thread's earlier
/// compilation of the same module with the same options.
pub fn compile(module: &VerifiedModule, opts: &JitOptions) -> Result<CompiledModule, JitError> {
    let started = Instant::now();
    opt_level(opts.opt_level)?;
    let key = cache::Key::new(module, opts);
    let cache_lookup = started.elapsed();
    if let Some(code) = cache::get(&key) {
        let times = CompileTimes {
            cache_lookup,
            total: started.elapsed(),
            cache_hit: true,
            ..CompileTimes::default()
        };
        return Ok(CompiledModule { code, times });
    }
    let mut times = CompileTimes {
        cache_lookup,
        ..CompileTimes::default()
    };
    #[allow(clippy::arc_with_non_send_sync)]
    let code = Arc::new(compile_uncached(module, opts, &mut times)?);
    cache::insert(key, code.clone());
    times.total = started.elapsed();
    Ok(CompiledModule { code, times })
}

fn compile_uncached(
    module: &VerifiedModule,
    opts: &JitOptions,
    times: &mut CompileTimes,
) -> Result<Code, JitError> {
    let context = Box::new(Context::create());
    // SAFETY: the context is boxed (its address never changes) and is dropped
    // after the engine and module that borrow it (field order of Code).
    let cx: &'static Context = unsafe { &*(&*context as *const Context) };
    let (llmod, lowered) = build_llvm_module(cx, module, opts, times)?;
    let kernel_names = lowered.kernels;
    let started = Instant::now();
    let engine = llmod
        .create_jit_execution_engine(pipeline::codegen_level(opts.opt_level))
        .map_err(|e| JitError::Llvm(e.to_string()))?;
    map_runtime_symbols(&llmod, &engine);
    let mut used = Vec::new();
    for spec in lowered.routines {
        // The optimiser drops declarations whose calls it removed.
        let Some(declared) = llmod.get_function(&spec.name) else {
            continue;
        };
        let routine = routines::get(&spec, opts.target, opts.opt_level)?;
        engine.add_global_mapping(&declared, routine.address);
        used.push((spec, routine));
    }
    let mut kernels = HashMap::new();
    for (id, name) in &kernel_names {
        let addr = engine
            .get_function_address(name)
            .map_err(|e| JitError::Llvm(format!("kernel {name}: {e}")))?;
        if addr == 0 {
            return Err(JitError::Llvm(format!("kernel {name} has no code")));
        }
        // SAFETY: the function was generated with exactly this signature.
        let f: KernelFn = unsafe { std::mem::transmute::<usize, KernelFn>(addr) };
        kernels.insert(id.0, f);
    }
    times.codegen = started.elapsed();
    if perf_map::enabled() {
        let names: Vec<String> = kernel_names.into_iter().map(|(_, n)| n).collect();
        perf_map::record(module, opts, &engine, &names);
    }
    Ok(Code {
        _engine: engine,
        _module: llmod,
        _context: context,
        kernels,
        source: module.clone(),
        options: *opts,
        routines: used,
    })
}

/// Points the module's calls into warpjit itself (barrier, fault record)
/// at their code.
fn map_runtime_symbols(llmod: &Module<'_>, engine: &ExecutionEngine<'_>) {
    if let Some(barrier) = llmod.get_function(crate::abi::BARRIER_SYMBOL) {
        engine.add_global_mapping(&barrier, crate::sched::barrier_address());
    }
    if let Some(fault) = llmod.get_function(crate::abi::FAULT_SYMBOL) {
        let record = crate::abi::warpjit_fault as unsafe extern "C" fn(_, _, _, _, _, _);
        engine.add_global_mapping(&fault, record as usize);
    }
}

impl CompiledModule {
    /// The optimised LLVM IR of the module, then of each shared routine
    /// it calls. Built on request (the same lowering and pipeline again),
    /// so it costs about a compile.
    pub fn llvm_ir(&self) -> Result<String, JitError> {
        let cx = Context::create();
        let opts = &self.code.options;
        let (llmod, _) =
            build_llvm_module(&cx, &self.code.source, opts, &mut CompileTimes::default())?;
        let mut text = llmod.print_to_string().to_string();
        for (spec, _) in &self.code.routines {
            text.push('\n');
            text.push_str(&routines::text(spec, opts.target, opts.opt_level, false)?);
        }
        Ok(text)
    }

    /// What the lowering decided for each kernel and statement (how each
    /// access reaches memory, which conditions are uniform, ...), in
    /// program order. Built on request (the lowering again, without LLVM's
    /// passes), as `warpjit dump --remarks` shows them.
    pub fn remarks(&self) -> Result<Vec<lower::Remark>, JitError> {
        remarks(&self.code.source, &self.code.options)
    }

    /// The assembly the target produces for the module, then for each
    /// shared routine it calls. Built on request.
    pub fn assembly(&self) -> Result<String, JitError> {
        let cx = Context::create();
        let opts = &self.code.options;
        let (llmod, _) =
            build_llvm_module(&cx, &self.code.source, opts, &mut CompileTimes::default())?;
        let m = machine(opts.target, opts.opt_level)?;
        let out =
            m.tm.write_to_memory_buffer(&llmod, FileType::Assembly)
                .map_err(|e| JitError::Llvm(e.to_string()))?;
        let mut text = String::from_utf8_lossy(out.as_slice()).into_owned();
        for (spec, _) in &self.code.routines {
            text.push('\n');
            text.push_str(&routines::text(spec, opts.target, opts.opt_level, true)?);
        }
        Ok(text)
    }

    /// The compiled entry point of a kernel: call it once per warp with a
    /// [`crate::abi::WarpContext`] whose pointers are valid for the call.
    /// The code stays valid while `self` (or a clone of it) lives.
    pub fn entry_point(&self, kernel: FuncId) -> Option<KernelFn> {
        self.code.kernels.get(&kernel.0).copied()
    }

    /// The module this code was compiled from: launches run its kernels.
    pub fn module(&self) -> &VerifiedModule {
        &self.code.source
    }

    /// The options this module was compiled with.
    pub fn options(&self) -> JitOptions {
        self.code.options
    }

    /// Where the time of the [`compile`] call that returned this went.
    pub fn compile_times(&self) -> CompileTimes {
        self.times
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two modules that need the same access routine call one compiled
    /// copy of it; another target gets its own, and a dump shows it after
    /// the module's code.
    #[test]
    fn modules_share_each_access_routine() {
        let kernel = |shift: u32| {
            let text = format!(
                "
buffer @b[0]: u32
kernel @main workgroup(32) {{
  %i = local_index
  %a = shl %i, {shift}
  %v = load.u32 @b, %a
  %x = xor %a, 4
  %y = load.u32 @b, %x
  %s = add %v, %y
  store.u32 @b, %a, %s
}}
"
            );
            VerifiedModule::new(warpjit_ir::text::parse(&text).expect("parses")).expect("verifies")
        };
        let opts = JitOptions::default();
        let first = compile(&kernel(3), &opts).expect("compiles");
        let second = compile(&kernel(4), &opts).expect("compiles");
        let narrow = JitOptions {
            target: Target::Sse42,
            ..opts
        };
        let other = compile(&kernel(3), &narrow).expect("compiles");
        let routines = |m: &CompiledModule| -> Vec<(String, usize)> {
            m.code
                .routines
                .iter()
                .map(|(spec, r)| (spec.name.clone(), r.address))
                .collect()
        };
        assert_eq!(
            routines(&first)
                .iter()
                .map(|r| r.0.as_str())
                .collect::<Vec<_>>(),
            ["warpjit.lanes.load.i32x1"]
        );
        assert_eq!(routines(&first), routines(&second));
        assert_eq!(routines(&other).len(), 1);
        assert_ne!(routines(&other)[0].1, routines(&first)[0].1);
        let asm = first.assembly().expect("assembly");
        let kernel_at = asm.find("kernel.main:").expect("the kernel");
        let routine_at = asm.find("warpjit.lanes.load.i32x1:").expect("the routine");
        assert!(kernel_at < routine_at, "{asm}");
        let ir = first.llvm_ir().expect("IR");
        assert!(
            ir.contains("declare <32 x i32> @warpjit.lanes.load.i32x1("),
            "{ir}"
        );
        assert!(
            ir.contains("define <32 x i32> @warpjit.lanes.load.i32x1("),
            "{ir}"
        );
    }

    /// A module's only access of a kind calls the shared routine for its
    /// known shape's fallback, but not inside a loop (where the call would
    /// change the loop's register allocation) or for an unknown shape (the
    /// path is then every run's).
    #[test]
    fn single_accesses_call_the_routine_only_for_fallbacks_outside_loops() {
        let routines = |body: &str| {
            let text = format!(
                "
param %n: i32
buffer @b[0]: u32
kernel @main workgroup(32) {{
  var $j: i32
{body}
}}
"
            );
            let m = VerifiedModule::new(warpjit_ir::text::parse(&text).expect("parses"))
                .expect("verifies");
            let compiled = compile(&m, &JitOptions::default()).expect("compiles");
            compiled
                .code
                .routines
                .iter()
                .map(|(spec, _)| spec.name.clone())
                .collect::<Vec<_>>()
        };
        let known = "  %i = global_id.x\n  %a = shl %i, 2\n  %v = load.u32 @b, %a\n  $j = mov %v";
        assert_eq!(routines(known), ["warpjit.lanes.load.i32x1"]);
        let in_loop = "  %i = global_id.x
  %a = shl %i, 2
  loop {
    %done = cmp.ge.u $j, %n
    if %done {
      break
    }
    %v = load.u32 @b, %a
    $j = add $j, %v
  }";
        assert!(routines(in_loop).is_empty());
        let unknown =
            "  %i = global_id.x\n  %a = mul %i, %n\n  %v = load.u32 @b, %a\n  $j = mov %v";
        assert!(routines(unknown).is_empty());
    }

    /// The map names every function of the code, each at its place: the
    /// kernels where the engine says they start, and the shared routine
    /// they call where its own engine put it.
    #[test]
    fn the_perf_map_places_every_function_of_the_engine() {
        let text = "
buffer @b[0]: u32
kernel @first workgroup(32) {
  %i = local_index
  %a = shl %i, 2
  %v = load.u32 @b, %a
  %w = add %v, 1
  store.u32 @b, %a, %w
}
kernel @second workgroup(32) {
  %i = local_index
  %a = shl %i, 3
  %v = load.u32 @b, %a
  store.u32 @b, %a, %v
  %x = xor %a, 4
  %y = load.u32 @b, %x
  store.u32 @b, %x, %y
}
";
        let parsed = warpjit_ir::text::parse(text).expect("parses");
        let module = VerifiedModule::new(parsed).expect("verifies");
        let opts = JitOptions::default();
        let compiled = compile(&module, &opts).expect("compiles");
        let kernels = ["kernel.first".to_string(), "kernel.second".to_string()];
        let mut entries = perf_map::entries(&module, &opts, &compiled.code._engine, &kernels)
            .expect("the map is built");
        for kernel in &kernels {
            let id = module
                .find_function(kernel.trim_start_matches("kernel."))
                .expect("declared");
            let start = compiled.entry_point(id).expect("compiled") as usize;
            let entry = entries
                .iter()
                .find(|e| &e.name == kernel)
                .unwrap_or_else(|| panic!("{kernel} in {entries:?}"));
            assert_eq!(entry.start, start, "{kernel}");
            assert!(entry.size > 16, "{kernel}: {entry:?}");
        }
        // The routines are not in the module: they come from their own
        // engines, each named where it was loaded.
        assert!(
            !entries.iter().any(|e| e.name.starts_with("warpjit.lanes.")),
            "{entries:?}"
        );
        assert!(!compiled.code.routines.is_empty());
        for (spec, routine) in &compiled.code.routines {
            let entry = perf_map::routine_entry(spec, opts.target, opts.opt_level, routine.address)
                .expect("the routine's entry is built");
            assert_eq!(entry.start, routine.address, "{spec:?}");
            assert!(entry.size > 16, "{entry:?}");
            entries.push(entry);
        }
        // No two functions overlap.
        let mut spans: Vec<_> = entries
            .iter()
            .map(|e| (e.start, e.start + e.size as usize))
            .collect();
        spans.sort();
        assert!(spans.windows(2).all(|w| w[0].1 <= w[1].0), "{entries:?}");
        let map = perf_map::lines(&entries);
        assert_eq!(map.lines().count(), entries.len());
        let first = entries
            .iter()
            .find(|e| e.name == "kernel.first")
            .expect("named");
        assert!(
            map.contains(&format!(
                "{:x} {:x} warpjit kernel.first\n",
                first.start, first.size
            )),
            "{map}"
        );
    }
}
