//! The fuzzer's bytes drive the program generator (`ByteRng`): every input
//! is a valid, terminating program with its launch. It runs on the
//! reference interpreter and on the JIT; memory and fault counts must be
//! identical.
#![no_main]

use libfuzzer_sys::fuzz_target;
use warpjit_ir::generate::{generate_case, ByteRng, GenConfig};
use warpjit_ir::interp::{self, LaunchConfig};
use warpjit_ir::VerifiedModule;
use warpjit_jit::{compile, launch, JitError, JitOptions};

fuzz_target!(|data: &[u8]| {
    let cfg = GenConfig {
        max_stmts: 30,
        ..GenConfig::default()
    };
    let case = generate_case(&mut ByteRng::new(data), &cfg);
    let module = VerifiedModule::new(case.module).expect("generated modules verify");
    let kernel = module.find_function("main").expect("generated kernels are @main");
    let mut launch_cfg = LaunchConfig::new(case.grid, case.workgroup);
    launch_cfg.sm_count = 3;
    launch_cfg.fuel = Some(5_000_000);
    let mut expected = case.buffer_data.clone();
    let want = interp::launch(&module, kernel, &launch_cfg, &case.params, &mut expected)
        .expect("generated programs run on the interpreter");
    let compiled = match compile(&module, &JitOptions::default()) {
        Ok(c) => c,
        Err(JitError::Unsupported(_)) => return,
        Err(e) => panic!("JIT refused a verified program: {e}"),
    };
    let mut memory = case.buffer_data.clone();
    let got = launch(&compiled, kernel, &launch_cfg, &case.params, &mut memory)
        .expect("generated programs run on the JIT");
    assert!(memory == expected, "memory differs from the interpreter's");
    assert_eq!(
        (got.faults.loads, got.faults.stores, got.faults.atomics),
        (want.faults.loads, want.faults.stores, want.faults.atomics),
        "fault counts differ"
    );
});
