//! On AVX2 the lane masks that cross blocks are 32-bit lanes
//! (`src/engine/wide_masks.rs`); the results stay the interpreter's.

use warpjit_ir::interp::{self, LaunchConfig};
use warpjit_ir::VerifiedModule;
use warpjit_jit::{compile, launch, JitOptions, Target};

fn load(name: &str) -> VerifiedModule {
    let path = format!("{}/../examples/{name}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let module = warpjit_ir::text::parse(&text).unwrap_or_else(|d| panic!("{name}: {d}"));
    VerifiedModule::new(module).unwrap_or_else(|d| panic!("{name}: {d}"))
}

fn options(target: Target) -> JitOptions {
    JitOptions {
        opt_level: 2,
        target,
        ..JitOptions::default()
    }
}

/// The histogram's grid-stride loop keeps its active lanes in a phi: on
/// AVX2 a phi of 32-bit lanes, read as a sign test; on SSE4.2 (no 256-bit
/// integer vectors) it stays `<32 x i1>`.
#[test]
fn avx2_loop_masks_are_words() {
    let module = load("histogram_atomics.warp");
    let avx2 = compile(&module, &options(Target::Avx2)).expect("compiles");
    let ir = avx2.llvm_ir().expect("IR");
    assert!(!ir.contains("phi <32 x i1>"), "a narrow mask phi:\n{ir}");
    assert!(ir.contains("phi <32 x i32>"), "no wide mask phi:\n{ir}");
    assert!(
        ir.contains("@llvm.x86.avx.movmsk.ps.256"),
        "no vmovmskps:\n{ir}"
    );
    let sse = compile(&module, &options(Target::Sse42)).expect("compiles");
    let ir = sse.llvm_ir().expect("IR");
    assert!(ir.contains("phi <32 x i1>"), "SSE4.2 widened:\n{ir}");
}

/// Divergent loops, `if`s, a ballot and atomics under widened masks, at
/// every optimisation level (the optimiser's output, which is widened,
/// differs by level), in a partial warp and in whole ones.
#[test]
fn widened_masks_match_the_interpreter() {
    let text = r#"
buffer @out[0]: u32
shared @bins[128]

kernel @main {
  var $i: i32
  var $sum: i32
  %l = local_index
  %a = shl %l, 2
  %bin = and %l, 31
  %bin_addr = shl %bin, 2
  $i = mov 0
  $sum = mov 0
  loop {
    %more = cmp.lt.u $i, %l
    %go = not %more
    if %go {
      break
    }
    %odd = and $i, 1
    %is_odd = cmp.ne %odd, 0
    if %is_odd {
      $sum = add $sum, $i
    } else {
      %lanes = ballot %is_odd
      $sum = xor $sum, %lanes
    }
    %seen = atom.add.u32 @bins, %bin_addr, 1
    $i = add $i, 1
  }
  %total = load.u32 @bins, %bin_addr
  %r = add $sum, %total
  store.u32 @out, %a, %r
}
"#;
    let module =
        VerifiedModule::new(warpjit_ir::text::parse(text).expect("parses")).expect("verifies");
    let kernel = module.find_function("main").expect("@main");
    for size in [64, 45] {
        // Fuel: a wrong loop mask fails the run instead of hanging it.
        let cfg = LaunchConfig::new([1, 1, 1], [size, 1, 1]).with_fuel(1_000_000);
        let mut expected = vec![vec![0u8; size as usize * 4]];
        interp::launch(&module, kernel, &cfg, &[], &mut expected).expect("interpreter");
        for opt_level in 0..=3 {
            let opts = JitOptions {
                opt_level,
                ..options(Target::Avx2)
            };
            let compiled = compile(&module, &opts).expect("compiles");
            let mut memory = vec![vec![0u8; size as usize * 4]];
            launch(&compiled, kernel, &cfg, &[], &mut memory).expect("runs");
            assert_eq!(memory, expected, "workgroup {size}, O{opt_level}");
        }
    }
}
