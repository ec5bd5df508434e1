//! Resolving run options against a module: which kernel, the launch shape,
//! parameter bit patterns, buffer contents, and what to print and write.
//! Everything that can be wrong is found here, before the kernel runs.

use super::options::{describe, BufferRef, Dims, ElemRange, ImageSize, Radix, RunOptions};
use super::Backend;
use std::path::PathBuf;
use std::time::Duration;
use warpjit_ir::{FuncId, FuncKind, Module, NumFormat};
use warpjit_jit::JitOptions;

/// A run, fully resolved.
#[derive(Clone, Debug)]
pub struct RunPlan {
    pub kernel: FuncId,
    pub kernel_name: String,
    pub grid: Dims,
    pub workgroup: Dims,
    /// Parameter bit patterns in the module's parameter order.
    pub params: Vec<u64>,
    /// Buffer bytes in the module's buffer order.
    pub buffers: Vec<Vec<u8>>,
    pub prints: Vec<PrintPlan>,
    pub outputs: Vec<OutputPlan>,
    pub backend: Backend,
    /// How the JIT compiles (used when the backend is the JIT).
    pub jit: JitOptions,
    pub sm_count: Option<u32>,
    pub warps_per_sm: Option<u32>,
    pub fuel: Option<u64>,
    /// Wall-time budget of the launch (None: no limit).
    pub watchdog: Option<Duration>,
}

/// Print elements `start..end` of buffer `buffer` after the run.
#[derive(Clone, Debug, PartialEq)]
pub struct PrintPlan {
    pub buffer: usize,
    pub range: ElemRange,
    pub format: NumFormat,
    pub radix: Radix,
    pub label: String,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OutputKind {
    /// The buffer's bytes as they are.
    Raw,
    /// One decimal element per line.
    Text,
    /// An 8-bit grey image (binary PGM) of the first width x height elements.
    Pgm(ImageSize),
}

#[derive(Clone, Debug, PartialEq)]
pub struct OutputPlan {
    pub buffer: usize,
    pub path: PathBuf,
    pub kind: OutputKind,
    pub label: String,
}

/// Wall-time budget of a run unless `--watchdog` says otherwise.
pub const DEFAULT_WATCHDOG: Duration = Duration::from_secs(60);

/// Workgroup size when the kernel declares none: one full warp.
pub const DEFAULT_WORKGROUP: [u32; 3] = [32, 1, 1];

pub fn plan(module: &Module, options: &RunOptions) -> Result<RunPlan, String> {
    let (kernel, kernel_name) = choose_kernel(module, options.kernel.as_deref())?;
    let workgroup = options
        .workgroup
        .unwrap_or_else(|| match &module.function(kernel).kind {
            FuncKind::Kernel {
                workgroup: Some(size),
            } => Dims(*size),
            _ => Dims(DEFAULT_WORKGROUP),
        });
    let grid = options.grid.unwrap_or(Dims([1, 1, 1]));
    let params = resolve_params(module, options)?;
    let buffers = resolve_buffers(module, options)?;
    let prints = resolve_prints(module, options, &buffers)?;
    let outputs = resolve_outputs(module, options, &buffers)?;
    Ok(RunPlan {
        kernel,
        kernel_name,
        grid,
        workgroup,
        params,
        buffers,
        prints,
        outputs,
        backend: options.backend.unwrap_or_default(),
        jit: JitOptions {
            opt_level: options.opt_level.unwrap_or(JitOptions::default().opt_level),
            target: options.target.unwrap_or_default(),
            prefetch_ahead: options.prefetch.prefetch_ahead(),
            ..JitOptions::default()
        },
        sm_count: options.sms,
        warps_per_sm: options.warps_per_sm,
        fuel: options.fuel,
        watchdog: Some(options.watchdog.unwrap_or(DEFAULT_WATCHDOG)).filter(|d| !d.is_zero()),
    })
}

/// The kernel `requested` names, or without a name the only kernel, else
/// `@main`; the error lists the kernels.
pub(crate) fn choose_kernel(
    module: &Module,
    requested: Option<&str>,
) -> Result<(FuncId, String), String> {
    let kernels: Vec<(FuncId, String)> = module
        .kernels()
        .map(|(id, f)| (id, f.name.clone()))
        .collect();
    let listing = || {
        let names: Vec<String> = kernels.iter().map(|(_, n)| format!("@{n}")).collect();
        if names.is_empty() {
            "the module has no kernels".to_string()
        } else {
            format!("kernels: {}", names.join(", "))
        }
    };
    match requested {
        Some(name) => {
            let bare = name.strip_prefix('@').unwrap_or(name);
            kernels
                .iter()
                .find(|(_, n)| n == bare)
                .cloned()
                .ok_or_else(|| format!("--kernel {name}: no such kernel ({})", listing()))
        }
        None => match kernels.as_slice() {
            [only] => Ok(only.clone()),
            _ => kernels
                .iter()
                .find(|(_, n)| n == "main")
                .cloned()
                .ok_or_else(|| format!("choose a kernel with --kernel ({})", listing())),
        },
    }
}

fn resolve_params(module: &Module, options: &RunOptions) -> Result<Vec<u64>, String> {
    let mut values: Vec<Option<u64>> = vec![None; module.params.len()];
    for arg in &options.params {
        let what = describe("param", &arg.text, &arg.origin);
        let id = module.find_param(&arg.name).ok_or_else(|| {
            let names: Vec<String> = module
                .params
                .iter()
                .map(|p| format!("%{}: {}", p.name, p.ty))
                .collect();
            let known = if names.is_empty() {
                "the module has no parameters".to_string()
            } else {
                format!("parameters: {}", names.join(", "))
            };
            format!("{what}: no parameter %{} ({known})", arg.name)
        })?;
        let decl = &module.params[id.0 as usize];
        let bits = crate::values::parse_param(decl.ty, &arg.value)
            .map_err(|e| format!("{what}: %{} is {}: {e}", decl.name, decl.ty))?;
        values[id.0 as usize] = Some(bits);
    }
    values
        .into_iter()
        .zip(&module.params)
        .map(|(value, decl)| {
            value.ok_or_else(|| {
                format!(
                    "parameter %{}: {} has no value; give --param {}=VALUE",
                    decl.name, decl.ty, decl.name
                )
            })
        })
        .collect()
}

/// Index of a buffer in the module's buffer order.
pub fn find_buffer(module: &Module, target: &BufferRef) -> Result<usize, String> {
    let found = match target {
        BufferRef::Name(name) => module.find_buffer(name).map(|i| i as usize),
        BufferRef::Binding(binding) => module.buffers.iter().position(|b| b.binding == *binding),
    };
    found.ok_or_else(|| {
        let names: Vec<String> = module
            .buffers
            .iter()
            .map(|b| format!("@{}[{}]: {}", b.name, b.binding, b.elem.name()))
            .collect();
        let known = if names.is_empty() {
            "the module has no buffers".to_string()
        } else {
            format!("buffers: {}", names.join(", "))
        };
        format!("no buffer {target} ({known})")
    })
}

/// Buffer bytes in the module's buffer order.
fn resolve_buffers(module: &Module, options: &RunOptions) -> Result<Vec<Vec<u8>>, String> {
    // Resolve every argument first so the last one for a buffer wins
    // without materializing the ones it replaces.
    let mut chosen: Vec<Option<&super::options::BufferArg>> = vec![None; module.buffers.len()];
    for arg in &options.buffers {
        let what = describe("buffer", &arg.text, &arg.origin);
        let index = find_buffer(module, &arg.target).map_err(|e| format!("{what}: {e}"))?;
        chosen[index] = Some(arg);
    }
    let mut bytes = Vec::with_capacity(chosen.len());
    for (arg, decl) in chosen.into_iter().zip(&module.buffers) {
        let arg = arg.ok_or_else(|| {
            format!(
                "buffer @{}[{}]: {} has no contents; give --buffer {}=SPEC (e.g. zeros:1024) \
                 on the command line or on a `//! run:` line",
                decl.name,
                decl.binding,
                decl.elem.name(),
                decl.name
            )
        })?;
        let what = describe("buffer", &arg.text, &arg.origin);
        bytes.push(
            arg.spec
                .materialize(decl.elem)
                .map_err(|e| format!("{what}: {e}"))?,
        );
    }
    Ok(bytes)
}

fn resolve_prints(
    module: &Module,
    options: &RunOptions,
    buffers: &[Vec<u8>],
) -> Result<Vec<PrintPlan>, String> {
    options
        .prints
        .iter()
        .map(|arg| {
            let what = describe("print", &arg.text, &arg.origin);
            let buffer = find_buffer(module, &arg.target).map_err(|e| format!("{what}: {e}"))?;
            let format = arg.format.unwrap_or(module.buffers[buffer].elem);
            let len = buffers[buffer].len() as u64 / format.bytes() as u64;
            let (start, end) = arg.range.within(len).map_err(|e| format!("{what}: {e}"))?;
            Ok(PrintPlan {
                buffer,
                range: ElemRange {
                    start,
                    end: Some(end),
                },
                format,
                radix: arg.radix,
                label: arg.text.clone(),
            })
        })
        .collect()
}

fn resolve_outputs(
    module: &Module,
    options: &RunOptions,
    buffers: &[Vec<u8>],
) -> Result<Vec<OutputPlan>, String> {
    options
        .outputs
        .iter()
        .map(|arg| {
            let what = describe("output", &arg.text, &arg.origin);
            let buffer = find_buffer(module, &arg.target).map_err(|e| format!("{what}: {e}"))?;
            let extension = arg
                .path
                .extension()
                .and_then(|e| e.to_str())
                .map(str::to_ascii_lowercase);
            let kind = match extension.as_deref() {
                Some("txt") => OutputKind::Text,
                Some("pgm") => {
                    let image = options.image.ok_or_else(|| {
                        format!("{what}: a .pgm output needs --image WIDTHxHEIGHT")
                    })?;
                    let elem = module.buffers[buffer].elem;
                    let len = buffers[buffer].len() as u64 / elem.bytes() as u64;
                    let pixels = image.width as u64 * image.height as u64;
                    if pixels > len {
                        return Err(format!(
                            "{what}: the {}x{} image needs {pixels} elements; the buffer has {len}",
                            image.width, image.height
                        ));
                    }
                    OutputKind::Pgm(image)
                }
                _ => OutputKind::Raw,
            };
            Ok(OutputPlan {
                buffer,
                path: arg.path.clone(),
                kind,
                label: arg.text.clone(),
            })
        })
        .collect()
}
