//! The per-thread compile cache: the same module with the same options
//! comes back without compiling; anything else compiles.

mod direct;

use direct::module;
use warpjit_jit::{clear_compile_cache, compile, JitOptions, Target};

const STORE_INDEX: &str = "buffer @out[0]: u32\nkernel @main workgroup(32) {\n  %i = local_index\n  %a = shl %i, 2\n  store.u32 @out, %a, %i\n}\n";

#[test]
fn the_same_module_and_options_hit_the_cache() {
    clear_compile_cache();
    let m = module(STORE_INDEX);
    let main = m.find_function("main").expect("@main");
    let first = compile(&m, &JitOptions::default()).expect("compiles");
    assert!(!first.compile_times().cache_hit);
    // A module parsed again from the same text is the same module.
    let again = compile(&module(STORE_INDEX), &JitOptions::default()).expect("compiles");
    assert!(again.compile_times().cache_hit);
    let address = |c: &warpjit_jit::CompiledModule| c.entry_point(main).map(|f| f as usize);
    assert_eq!(address(&first), address(&again), "the same code");
}

#[test]
fn other_options_or_programs_compile_anew() {
    clear_compile_cache();
    let m = module(STORE_INDEX);
    compile(&m, &JitOptions::default()).expect("compiles");
    let avx2 = JitOptions {
        target: Target::Avx2,
        ..JitOptions::default()
    };
    assert!(
        !compile(&m, &avx2)
            .expect("compiles")
            .compile_times()
            .cache_hit
    );
    let o1 = JitOptions {
        opt_level: 1,
        ..JitOptions::default()
    };
    assert!(
        !compile(&m, &o1)
            .expect("compiles")
            .compile_times()
            .cache_hit
    );
    let other = module(&STORE_INDEX.replace("shl %i, 2", "shl %i, 3"));
    assert!(
        !compile(&other, &JitOptions::default())
            .expect("compiles")
            .compile_times()
            .cache_hit
    );
    clear_compile_cache();
    assert!(
        !compile(&m, &JitOptions::default())
            .expect("compiles")
            .compile_times()
            .cache_hit
    );
}

#[test]
fn code_outlives_its_cache_entry() {
    clear_compile_cache();
    let m = module(STORE_INDEX);
    let main = m.find_function("main").expect("@main");
    let compiled = compile(&m, &JitOptions::default()).expect("compiles");
    clear_compile_cache();
    let cfg = warpjit_ir::interp::LaunchConfig::new([1, 1, 1], [32, 1, 1]);
    let mut buffers = vec![vec![0u8; 128]];
    warpjit_jit::launch(&compiled, main, &cfg, &[], &mut buffers).expect("runs");
    let words: Vec<u32> = buffers[0]
        .chunks(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    assert_eq!(words, (0..32).collect::<Vec<u32>>());
    assert!(compiled.llvm_ir().expect("IR").contains("<32 x i32>"));
}
