//! The repository's examples on the JIT: same memory as the interpreter, and
//! the Native target really uses 512-bit vectors with mask registers.

use warpjit_ir::interp::{self, LaunchConfig};
use warpjit_ir::VerifiedModule;
use warpjit_jit::{compile, launch, JitError, JitOptions, Target};

fn load(name: &str) -> VerifiedModule {
    let path = format!("{}/../examples/{name}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let module = warpjit_ir::text::parse(&text).unwrap_or_else(|d| panic!("{name}: {d}"));
    VerifiedModule::new(module).unwrap_or_else(|d| panic!("{name}: {d}"))
}

fn mandelbrot_case() -> (VerifiedModule, LaunchConfig, Vec<u64>, Vec<Vec<u8>>) {
    let module = load("mandelbrot.warp");
    let (width, height, max_iter) = (96u32, 64u32, 64u32);
    let pixels = width * height;
    let mut cfg = LaunchConfig::new([pixels.div_ceil(256), 1, 1], [256, 1, 1]);
    cfg.sm_count = 2;
    let params = vec![u64::from(width), u64::from(height), u64::from(max_iter)];
    let buffers = vec![vec![0u8; pixels as usize * 4]];
    (module, cfg, params, buffers)
}

#[test]
fn mandelbrot_matches_the_interpreter_on_every_target() {
    let (module, cfg, params, buffers) = mandelbrot_case();
    let kernel = module.find_function("main").expect("@main");
    let mut expected = buffers.clone();
    interp::launch(&module, kernel, &cfg, &params, &mut expected).expect("interpreter");
    let counts: Vec<u32> = expected[0]
        .chunks(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    // The image shows the set: points that stay and points that escape at once.
    assert!(counts.contains(&64) && counts.contains(&0));
    for target in [Target::Native, Target::Avx2, Target::Sse42] {
        for opt_level in [0, 2] {
            let any = JitOptions {
                opt_level,
                target,
                ..JitOptions::default()
            };
            let kinds = [
                any,
                any.for_sizes_like(cfg.workgroup),
                any.for_workgroup(cfg.workgroup),
            ];
            for options in kinds {
                let compiled = compile(&module, &options).expect("compiles");
                let mut memory = buffers.clone();
                launch(&compiled, kernel, &cfg, &params, &mut memory).expect("runs");
                assert!(memory == expected, "{options:?}: counts differ");
            }
        }
    }
}

/// On an AVX-512 host the 32-lane f32 vectors live in zmm registers and
/// the execution mask in k registers (`{%k1}` style operands); on an AVX2
/// host in ymm registers.
#[test]
fn mandelbrot_native_asm_uses_zmm_and_mask_registers() {
    let (module, ..) = mandelbrot_case();
    let compiled = compile(&module, &JitOptions::default()).expect("compiles");
    let asm = compiled.assembly().expect("assembly");
    if std::arch::is_x86_feature_detected!("avx512f") {
        assert!(asm.contains("%zmm"), "no zmm registers:\n{asm}");
        assert!(asm.contains("{%k"), "no mask registers:\n{asm}");
    } else if std::arch::is_x86_feature_detected!("avx2") {
        assert!(asm.contains("%ymm"), "no ymm registers:\n{asm}");
        assert!(
            !asm.contains("%zmm"),
            "zmm registers without AVX-512:\n{asm}"
        );
    }
    let avx2 = compile(
        &module,
        &JitOptions {
            opt_level: 2,
            target: Target::Avx2,
            ..JitOptions::default()
        },
    )
    .expect("compiles")
    .assembly()
    .expect("assembly");
    assert!(!avx2.contains("%zmm"), "Avx2 target used zmm registers");
    assert!(avx2.contains("%ymm"), "Avx2 target used no ymm registers");
    assert!(compiled.llvm_ir().expect("IR").contains("<32 x float>"));
}

/// `launch` runs a barrier kernel's warps in the interpreter's schedule:
/// each invocation reads what the mirror invocation, in the other warp,
/// stored before the barrier.
#[test]
fn warps_meet_at_barriers() {
    let text = "buffer @out[0]: u32\nshared @s[256]\nkernel @main workgroup(64) {\n  %l = local_index\n  %a = shl %l, 2\n  store.u32 @s, %a, %l\n  barrier\n  %m = sub 63, %l\n  %ma = shl %m, 2\n  %v = load.u32 @s, %ma\n  store.u32 @out, %a, %v\n}\n";
    let module =
        VerifiedModule::new(warpjit_ir::text::parse(text).expect("parses")).expect("verifies");
    let kernel = module.find_function("main").expect("@main");
    let compiled = compile(&module, &JitOptions::default()).expect("compiles");
    let cfg = LaunchConfig::new([1, 1, 1], [64, 1, 1]);
    let mut memory = vec![vec![0u8; 256]];
    launch(&compiled, kernel, &cfg, &[], &mut memory).expect("runs");
    let expected: Vec<u8> = (0..64u32).rev().flat_map(u32::to_le_bytes).collect();
    assert_eq!(memory[0], expected);
}

#[test]
fn opt_level_above_three_is_an_error() {
    let (module, ..) = mandelbrot_case();
    let err = compile(
        &module,
        &JitOptions {
            opt_level: 4,
            ..JitOptions::default()
        },
    )
    .expect_err("level 4 is rejected");
    assert!(matches!(err, JitError::InvalidOptions(_)), "{err}");
}

/// A runaway loop is stopped by the launch's fuel (one unit per loop
/// iteration in compiled code) with an error, and the process carries on.
#[test]
fn runaway_loop_runs_out_of_fuel() {
    let text = "buffer @out[0]: u32\nkernel @main workgroup(40) {\n  %i = lane_id\n  loop {\n    store.u32 @out, 0, %i\n  }\n}\n";
    let module =
        VerifiedModule::new(warpjit_ir::text::parse(text).expect("parses")).expect("verifies");
    let kernel = module.find_function("main").expect("@main");
    let compiled = compile(&module, &JitOptions::default()).expect("compiles");
    let cfg = LaunchConfig::new([1, 1, 1], [40, 1, 1]).with_fuel(1000);
    let mut memory = vec![vec![0u8; 4]];
    match launch(&compiled, kernel, &cfg, &[], &mut memory) {
        Err(JitError::FuelExhausted(msg)) => assert!(msg.contains("warp 0"), "{msg}"),
        other => panic!("expected FuelExhausted, got {other:?}"),
    }
    // The loop did run: the highest lane's store stayed.
    assert_eq!(memory[0], 31u32.to_le_bytes());
}

/// Every example kernel on the JIT against the interpreter, with small
/// synthetic inputs (every buffer 8 KiB of a byte pattern, small parameter
/// values), barrier kernels included.
#[test]
fn every_example_matches_the_interpreter() {
    let dir = format!("{}/../examples", env!("CARGO_MANIFEST_DIR"));
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .expect("examples directory")
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".warp"))
        .collect();
    names.sort();
    assert!(names.len() >= 5, "examples: {names:?}");
    for name in names {
        let module = load(&name);
        let kernel = module.find_function("main").expect("examples have @main");
        let workgroup = match &module.function(kernel).kind {
            warpjit_ir::FuncKind::Kernel {
                workgroup: Some(size),
            } => *size,
            _ => [32, 1, 1],
        };
        let params: Vec<u64> = module
            .params
            .iter()
            .map(|p| match p.name.as_str() {
                "width" => 16,
                "height" => 8,
                "max_iter" => 32,
                _ => 1024,
            })
            .collect();
        let buffers: Vec<Vec<u8>> = module
            .buffers
            .iter()
            .map(|_| {
                (0..8192u32)
                    .map(|i| (i.wrapping_mul(37) >> 2) as u8)
                    .collect()
            })
            .collect();
        let mut cfg = LaunchConfig::new([4, 1, 1], workgroup);
        cfg.sm_count = 2;
        let mut expected = buffers.clone();
        interp::launch(&module, kernel, &cfg, &params, &mut expected)
            .unwrap_or_else(|e| panic!("{name}: interpreter: {e}"));
        let compiled =
            compile(&module, &JitOptions::default()).unwrap_or_else(|e| panic!("{name}: {e}"));
        let mut memory = buffers.clone();
        launch(&compiled, kernel, &cfg, &params, &mut memory)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(memory == expected, "{name}: memory differs");
    }
}
