//! From a verified module to machine code: lowering, verification,
//! optimisation, and the MCJIT execution engine that owns the code.

use crate::abi::KernelFn;
use crate::{lower, JitError, JitOptions, Target};
use inkwell::context::Context;
use inkwell::execution_engine::ExecutionEngine;
use inkwell::memory_buffer::MemoryBuffer;
use inkwell::module::Module;
use inkwell::passes::PassBuilderOptions;
use inkwell::targets::{
    CodeModel, FileType, InitializationConfig, RelocMode, Target as LlvmTarget, TargetMachine,
};
use inkwell::OptimizationLevel;
use std::collections::HashMap;
use std::sync::OnceLock;
use warpjit_ir::{FuncId, VerifiedModule};

/// Compiled kernels, ready to run. Not `Send`: the code belongs to an LLVM
/// context of this thread.
pub struct CompiledModule {
    // Field order is drop order: the engine (which owns the LLVM module and
    // the machine code) goes before the context it lives in.
    _engine: ExecutionEngine<'static>,
    _module: Module<'static>,
    _context: Box<Context>,
    kernels: HashMap<u32, KernelFn>,
    ir_text: String,
    cpu: String,
    features: String,
    opt: OptimizationLevel,
}

impl std::fmt::Debug for CompiledModule {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CompiledModule")
            .field("kernels", &self.kernels.len())
            .field("cpu", &self.cpu)
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
    let cpu = TargetMachine::get_host_cpu_name().to_string();
    let host = TargetMachine::get_host_cpu_features().to_string();
    // A later "-feature" overrides earlier ones and clears what implies it.
    let features = match target {
        Target::Native => host,
        Target::Avx2 => format!("{host},-avx512f"),
        Target::Sse42 => format!("{host},-avx"),
    };
    (cpu, features)
}

fn target_machine(
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

/// Compiles every kernel of `module`.
pub fn compile(module: &VerifiedModule, opts: &JitOptions) -> Result<CompiledModule, JitError> {
    let opt = opt_level(opts.opt_level)?;
    let (cpu, features) = cpu_and_features(opts.target);
    let tm = target_machine(&cpu, &features, opt)?;
    let context = Box::new(Context::create());
    // SAFETY: the context is boxed (its address never changes) and is dropped
    // after the engine and module that borrow it (field order of CompiledModule).
    let cx: &'static Context = unsafe { &*(&*context as *const Context) };
    let llmod = cx.create_module("warpjit");
    llmod.set_triple(&tm.get_triple());
    llmod.set_data_layout(&tm.get_target_data().get_data_layout());
    let kernel_names = lower::lower_module(cx, &llmod, module, &cpu, &features)?;
    llmod
        .verify()
        .map_err(|e| JitError::Llvm(format!("the generated module does not verify: {e}")))?;
    let passes = format!("default<O{}>", opts.opt_level);
    llmod
        .run_passes(&passes, &tm, PassBuilderOptions::create())
        .map_err(|e| JitError::Llvm(e.to_string()))?;
    let ir_text = llmod.print_to_string().to_string();
    let engine = llmod
        .create_jit_execution_engine(opt)
        .map_err(|e| JitError::Llvm(e.to_string()))?;
    if let Some(barrier) = llmod.get_function(crate::abi::BARRIER_SYMBOL) {
        engine.add_global_mapping(&barrier, crate::sched::barrier_address());
    }
    let mut kernels = HashMap::new();
    for (id, name) in kernel_names {
        let addr = engine
            .get_function_address(&name)
            .map_err(|e| JitError::Llvm(format!("kernel {name}: {e}")))?;
        if addr == 0 {
            return Err(JitError::Llvm(format!("kernel {name} has no code")));
        }
        // SAFETY: the function was generated with exactly this signature.
        let f: KernelFn = unsafe { std::mem::transmute::<usize, KernelFn>(addr) };
        kernels.insert(id.0, f);
    }
    Ok(CompiledModule {
        _engine: engine,
        _module: llmod,
        _context: context,
        kernels,
        ir_text,
        cpu,
        features,
        opt,
    })
}

impl CompiledModule {
    /// The optimised LLVM IR of the module.
    pub fn llvm_ir(&self) -> String {
        self.ir_text.clone()
    }

    /// The assembly the target produces for the module.
    pub fn assembly(&self) -> Result<String, JitError> {
        let tm = target_machine(&self.cpu, &self.features, self.opt)?;
        let cx = Context::create();
        let buf = MemoryBuffer::create_from_memory_range_copy(self.ir_text.as_bytes(), "warpjit");
        let module = cx
            .create_module_from_ir(buf)
            .map_err(|e| JitError::Llvm(e.to_string()))?;
        let out = tm
            .write_to_memory_buffer(&module, FileType::Assembly)
            .map_err(|e| JitError::Llvm(e.to_string()))?;
        Ok(String::from_utf8_lossy(out.as_slice()).into_owned())
    }

    /// The compiled entry point of a kernel: call it once per warp with a
    /// [`crate::abi::WarpContext`] whose pointers are valid for the call.
    /// The code stays valid while `self` lives.
    pub fn entry_point(&self, kernel: FuncId) -> Option<KernelFn> {
        self.kernels.get(&kernel.0).copied()
    }
}
