//! Shared by the interpreter tests: parse, verify, launch, read buffers back.
#![allow(dead_code)]

use warpjit_ir::interp::{self, ExecError, LaunchConfig, LaunchReport};
use warpjit_ir::{FuncId, Module, VerifiedModule};

/// Parses and verifies `src`, panicking with the rendered diagnostics.
pub fn compile(src: &str) -> VerifiedModule {
    let module: Module = match warpjit_ir::text::parse(src) {
        Ok(m) => m,
        Err(d) => panic!("parse failed:\n{}", d.render("test.warp", src)),
    };
    match VerifiedModule::new(module) {
        Ok(m) => m,
        Err(d) => panic!("verify failed:\n{}", d.render("test.warp", src)),
    }
}

pub fn first_kernel(module: &Module) -> FuncId {
    module.kernels().next().expect("the module has a kernel").0
}

/// The result of a launch: the buffers after it and the report.
pub struct Run {
    pub buffers: Vec<Vec<u8>>,
    pub report: LaunchReport,
}

impl Run {
    pub fn u32s(&self, buffer: usize) -> Vec<u32> {
        u32s(&self.buffers[buffer])
    }
    pub fn i32s(&self, buffer: usize) -> Vec<i32> {
        self.u32s(buffer).into_iter().map(|v| v as i32).collect()
    }
    pub fn f32s(&self, buffer: usize) -> Vec<f32> {
        self.u32s(buffer).into_iter().map(f32::from_bits).collect()
    }
}

pub fn u32s(bytes: &[u8]) -> Vec<u32> {
    bytes
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

pub fn bytes_of_u32s(words: &[u32]) -> Vec<u8> {
    words.iter().flat_map(|w| w.to_le_bytes()).collect()
}

/// A buffer of `n` u32 words, all `fill`.
pub fn words(n: usize, fill: u32) -> Vec<u8> {
    bytes_of_u32s(&vec![fill; n])
}

/// Launches the first kernel of `src` over `grid` workgroups of the kernel's
/// declared size.
pub fn try_run(
    src: &str,
    grid: [u32; 3],
    params: &[u64],
    buffers: Vec<Vec<u8>>,
) -> Result<Run, ExecError> {
    let module = compile(src);
    let kernel = first_kernel(&module);
    let cfg = LaunchConfig::for_kernel(&module, kernel, grid);
    try_run_with(&module, kernel, &cfg, params, buffers)
}

pub fn try_run_with(
    module: &VerifiedModule,
    kernel: FuncId,
    cfg: &LaunchConfig,
    params: &[u64],
    mut buffers: Vec<Vec<u8>>,
) -> Result<Run, ExecError> {
    let report = interp::launch(module, kernel, cfg, params, &mut buffers)?;
    Ok(Run { buffers, report })
}

pub fn run(src: &str, grid: [u32; 3], params: &[u64], buffers: Vec<Vec<u8>>) -> Run {
    match try_run(src, grid, params, buffers) {
        Ok(r) => r,
        Err(e) => panic!("launch failed: {e}"),
    }
}

/// One workgroup, no parameters, one u32 buffer of `n` words initialised to 0.
pub fn run1(src: &str, n: usize) -> Vec<u32> {
    let r = run(src, [1, 1, 1], &[], vec![words(n, 0)]);
    assert!(
        r.report.faults.is_empty(),
        "unexpected faults: {}",
        r.report.faults
    );
    r.u32s(0)
}

/// Bits set for the lanes 0..32 where `f` holds.
pub fn lanes_where(f: impl Fn(u32) -> bool) -> u32 {
    (0..32).filter(|&l| f(l)).fold(0, |m, l| m | 1 << l)
}
