//! What the tests that compile and launch kernels themselves (without the
//! runtime) share: modules from text, input bytes, and the comparison of
//! the JIT on every target with the interpreter.

#![allow(dead_code)]

use warpjit_ir::interp::{self, LaunchConfig};
use warpjit_ir::VerifiedModule;
use warpjit_jit::{compile, launch, JitOptions, Target};

/// Every instruction set the JIT compiles for.
pub const TARGETS: [Target; 3] = [Target::Native, Target::Avx2, Target::Sse42];

/// A verified module from program text; panics with the diagnostic.
pub fn module(text: &str) -> VerifiedModule {
    let m = warpjit_ir::text::parse(text).unwrap_or_else(|d| panic!("{d}\n{text}"));
    VerifiedModule::new(m).unwrap_or_else(|d| panic!("{d}\n{text}"))
}

/// The optimised LLVM IR the JIT gives for `m` with `options`.
pub fn optimised_ir(m: &VerifiedModule, options: &JitOptions) -> String {
    compile(m, options)
        .expect("compiles")
        .llvm_ir()
        .expect("IR")
}

/// The module's own part of `ir` (from [`optimised_ir`]), before the
/// text of the shared routines it calls.
pub fn kernel_part(ir: &str) -> &str {
    ir.split("; ModuleID = 'warpjit.lanes").next().unwrap_or(ir)
}

/// A byte pattern that is different at every position.
pub fn pattern(len: usize, salt: u32) -> Vec<u8> {
    (0..len as u32)
        .map(|i| (i.wrapping_mul(2654435761).wrapping_add(salt) >> 13) as u8)
        .collect()
}

/// The kinds of code a launch with workgroups of `workgroup` can run:
/// code for any workgroup, for whole warps when it is whole warps, and for
/// exactly its size.
pub fn kinds(workgroup: [u32; 3]) -> Vec<JitOptions> {
    let any = JitOptions {
        opt_level: 2,
        ..JitOptions::default()
    };
    let mut kinds = vec![any];
    if warpjit_jit::whole_warps(workgroup) {
        kinds.push(any.for_sizes_like(workgroup));
    }
    kinds.push(any.for_workgroup(workgroup));
    kinds
}

/// Runs `@main` of `text` on the interpreter and on the JIT at every
/// target, in each kind of code the launch can run (`kinds`), for each
/// launch configuration and parameter set, each time from `buffers`: the
/// memory and the fault reports must be the same. Gives the interpreter's
/// memory after the last launch.
pub fn agree(
    text: &str,
    configs: &[LaunchConfig],
    param_sets: &[Vec<u64>],
    buffers: &[Vec<u8>],
) -> Vec<Vec<u8>> {
    let m = module(text);
    let kernel = m.find_function("main").expect("@main");
    let mut last = buffers.to_vec();
    for target in TARGETS {
        for cfg in configs {
            for kind in kinds(cfg.workgroup) {
                let options = JitOptions { target, ..kind };
                // The compile cache compiles each kind once per target.
                let compiled = compile(&m, &options).expect("compiles");
                for params in param_sets {
                    let mut expected = buffers.to_vec();
                    let want = interp::launch(&m, kernel, cfg, params, &mut expected)
                        .expect("interpreter");
                    let mut memory = buffers.to_vec();
                    let got = launch(&compiled, kernel, cfg, params, &mut memory).expect("runs");
                    let at = format!(
                        "{target:?} whole warps {} for {:?} grid {:?} workgroup {:?} params {params:?}",
                        options.whole_warps, options.workgroup, cfg.grid, cfg.workgroup
                    );
                    assert!(memory == expected, "{at}: memory differs\n{text}");
                    assert_eq!(got.faults, want.faults, "{at}: faults\n{text}");
                    last = expected;
                }
            }
        }
    }
    last
}
