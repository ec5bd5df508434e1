//! Names for the compiled code in Linux `perf`: with `WARPJIT_PERF_MAP`
//! set (to anything but `0`), every compile appends a line per function to
//! `/tmp/perf-PID.map` (start and size in hex, then the name), the file
//! `perf report` reads to name code that no object file on disk holds.
//! With `WARPJIT_PERF_MAP=jitdump` the code goes to perf's jitdump too
//! (`jitdump.rs`), for profiles by instruction.
//!
//! MCJIT tells where a kernel's code starts but not how long a function is
//! or where the module's internal functions are. So the same module is
//! compiled once more to an object file, which has every function's offset
//! and size in its code section; the engine's code section holds the same
//! code, so each kernel's address less its offset gives the section's
//! start. That costs a second code generation per compile, only when the
//! map is asked for.

use super::{build_llvm_module, machine, routines, CompileTimes};
use crate::lower::RoutineSpec;
use crate::{JitError, JitOptions, Target};
use inkwell::context::Context;
use inkwell::execution_engine::ExecutionEngine;
use inkwell::memory_buffer::MemoryBuffer;
use inkwell::targets::FileType;
use std::io::Write;
use std::sync::{Mutex, OnceLock};
use warpjit_ir::VerifiedModule;

/// The variable that turns the map on.
const PERF_MAP_VARIABLE: &str = "WARPJIT_PERF_MAP";

/// The variable's value, read once.
fn setting() -> Option<&'static std::ffi::OsStr> {
    static SETTING: OnceLock<Option<std::ffi::OsString>> = OnceLock::new();
    SETTING
        .get_or_init(|| std::env::var_os(PERF_MAP_VARIABLE))
        .as_deref()
}

/// Whether compiles write the map.
pub(super) fn enabled() -> bool {
    setting().is_some_and(|v| v != "0")
}

/// Whether compiles also write perf's jitdump, with the code
/// (`WARPJIT_PERF_MAP=jitdump`; see `jitdump.rs`).
fn with_code() -> bool {
    setting().is_some_and(|v| v == "jitdump")
}

/// One function of the compiled code.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Entry {
    pub start: usize,
    pub size: u64,
    pub name: String,
}

/// The functions `engine` holds for `module` compiled with `opts`, found
/// through `kernels` (entry names, each exported by the engine).
pub(super) fn entries(
    module: &VerifiedModule,
    opts: &JitOptions,
    engine: &ExecutionEngine<'_>,
    kernels: &[String],
) -> Result<Vec<Entry>, JitError> {
    let cx = Context::create();
    let (llmod, _) = build_llvm_module(&cx, module, opts, &mut CompileTimes::default())?;
    let m = machine(opts.target, opts.opt_level)?;
    let object =
        m.tm.write_to_memory_buffer(&llmod, FileType::Object)
            .map_err(|e| JitError::Llvm(e.to_string()))?;
    let functions = object_functions(&object)?;
    // Where the engine put the code section, from each kernel; they agree
    // unless the two code generations differ, and then only kernels are
    // named.
    let mut bases = kernels.iter().filter_map(|kernel| {
        let (_, offset, _) = functions.iter().find(|(n, _, _)| n == kernel)?;
        let start = engine.get_function_address(kernel).ok()?;
        Some(start.wrapping_sub(*offset as usize))
    });
    let first = bases.next();
    let base = first.filter(|&b| bases.all(|other| other == b));
    Ok(functions
        .into_iter()
        .filter_map(|(name, offset, size)| {
            let start = match base {
                Some(base) => base.wrapping_add(offset as usize),
                None if kernels.contains(&name) => engine.get_function_address(&name).ok()?,
                None => return None,
            };
            Some(Entry { start, size, name })
        })
        .collect())
}

/// Each function of an object file's code section: name, offset, size.
fn object_functions(object: &MemoryBuffer) -> Result<Vec<(String, u64, u64)>, JitError> {
    let binary = object
        .create_binary_file(None)
        .map_err(|e| JitError::Llvm(e.to_string()))?;
    // The code: `.ltext` in the JIT's large code model (`.text` is then
    // empty), `.text` otherwise.
    let is_text = |s: &inkwell::object_file::Section<'_>| {
        s.get_size() > 0
            && s.get_name()
                .is_some_and(|n| matches!(n.to_bytes(), b".text" | b".ltext"))
    };
    let no_text = || JitError::Llvm("the object file has no code section".into());
    let text_index = {
        let mut sections = binary.get_sections().ok_or_else(no_text)?;
        let mut index = 0;
        loop {
            match sections.next_section() {
                Some(s) if is_text(&s) => break index,
                Some(_) => index += 1,
                None => return Err(no_text()),
            }
        }
    };
    let mut sections = binary.get_sections().ok_or_else(no_text)?;
    for _ in 0..text_index {
        sections.next_section();
    }
    let text = sections.next_section().ok_or_else(no_text)?;
    let mut functions = Vec::new();
    if let Some(mut symbols) = binary.get_symbols() {
        while let Some(symbol) = symbols.next_symbol() {
            let name = symbol.get_name().map(|n| n.to_string_lossy().into_owned());
            if let Some(name) = name.filter(|n| !n.is_empty()) {
                if symbol.get_size() > 0 && text.contains_symbol(&symbol) {
                    functions.push((name, symbol.get_address(), symbol.get_size()));
                }
            }
        }
    }
    Ok(functions)
}

/// `entries` as lines of a perf map.
pub(super) fn lines(entries: &[Entry]) -> String {
    entries
        .iter()
        .map(|e| format!("{:x} {:x} warpjit {}\n", e.start, e.size, e.name))
        .collect()
}

/// Appends the functions of a compile to this process's map. A map that
/// cannot be written is reported once on stderr, and compiling goes on.
pub(super) fn record(
    module: &VerifiedModule,
    opts: &JitOptions,
    engine: &ExecutionEngine<'_>,
    kernels: &[String],
) {
    append(entries(module, opts, engine, kernels));
}

/// Appends a shared routine compiled to `address` to the map.
pub(super) fn record_routine(spec: &RoutineSpec, target: Target, level: u8, address: usize) {
    append(routine_entry(spec, target, level, address).map(|e| vec![e]));
}

/// A shared routine compiled to `address`; its size comes from an
/// object file of the same module, as in [`entries`].
pub(super) fn routine_entry(
    spec: &RoutineSpec,
    target: Target,
    level: u8,
    address: usize,
) -> Result<Entry, JitError> {
    let cx = Context::create();
    let llmod = routines::build(&cx, spec, target, level)?;
    let m = machine(target, level)?;
    let object =
        m.tm.write_to_memory_buffer(&llmod, FileType::Object)
            .map_err(|e| JitError::Llvm(e.to_string()))?;
    let (_, _, size) = object_functions(&object)?
        .into_iter()
        .find(|(name, _, _)| *name == spec.name)
        .ok_or_else(|| JitError::Llvm(format!("no {} in its object file", spec.name)))?;
    Ok(Entry {
        start: address,
        size,
        name: spec.name.clone(),
    })
}

fn append(entries: Result<Vec<Entry>, JitError>) {
    static FILE: Mutex<()> = Mutex::new(());
    static WARNED: OnceLock<()> = OnceLock::new();
    let path = format!("/tmp/perf-{}.map", std::process::id());
    let written = entries.map_err(|e| e.to_string()).and_then(|entries| {
        let _one_writer = FILE.lock().unwrap_or_else(|e| e.into_inner());
        std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .and_then(|mut f| f.write_all(lines(&entries).as_bytes()))
            .map_err(|e| e.to_string())?;
        if with_code() {
            super::jitdump::append(&entries)?;
        }
        Ok(())
    });
    if let Err(e) = written {
        WARNED.get_or_init(|| {
            eprintln!("warpjit: {PERF_MAP_VARIABLE} is set but {path} was not written: {e}");
        });
    }
}
