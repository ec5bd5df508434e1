//! Code for workgroups of whole warps (`JitOptions::whole_warps`): its
//! masks start as constants, it refuses a launch with a partial warp, and
//! the runtime backend runs the kind each launch's workgroup size needs.

mod support;
use support::*;
use warpjit_ir::interp::LaunchConfig;
use warpjit_jit::{compile, launch, JitError, JitKernel, JitOptions};

/// A butterfly sum: each step's shuffle reads another lane, which the code
/// for any workgroup must test for being active.
const BUTTERFLY: &str = "
buffer @out[0]: u32
kernel @main workgroup(64) {
  %i = global_id.x
  %x = mul %i, 2654435761:i32
  %a = shuffle.xor %x, 16, width 32
  %s1 = add %x, %a
  %b = shuffle.xor %s1, 8, width 32
  %s2 = add %s1, %b
  %c = shuffle.xor %s2, 1, width 32
  %s3 = add %s2, %c
  %addr = shl %i, 2
  store.u32 @out, %addr, %s3
}";

fn options(whole_warps: bool) -> JitOptions {
    JitOptions {
        whole_warps,
        ..JitOptions::default()
    }
}

#[test]
fn whole_warp_code_tests_no_shuffle_source() {
    let m = module(BUTTERFLY);
    let asm = |whole| {
        compile(&m, &options(whole))
            .expect("compiles")
            .assembly()
            .expect("assembly")
    };
    // On AVX-512 the source test of a constant shuffle is a `vptestmd`
    // of the active lanes' bits; with every lane active there is none.
    if std::arch::is_x86_feature_detected!("avx512f") {
        assert!(asm(false).contains("vptestmd"));
        assert!(!asm(true).contains("vptestmd"), "{}", asm(true));
    }
    assert!(asm(true).len() < asm(false).len());
}

#[test]
fn whole_warp_code_refuses_a_partial_warp() {
    let m = module(BUTTERFLY);
    let main = m.find_function("main").expect("@main");
    let compiled = compile(&m, &options(true)).expect("compiles");
    for (workgroup, whole) in [([48, 1, 1], false), ([8, 3, 1], false), ([16, 2, 1], true)] {
        let cfg = LaunchConfig::new([1, 1, 1], workgroup);
        let mut memory = vec![vec![0u8; 4 * 64]];
        let outcome = launch(&compiled, main, &cfg, &[], &mut memory);
        match outcome {
            Ok(_) => assert!(whole, "{workgroup:?} ran"),
            Err(JitError::Launch(why)) => {
                assert!(!whole, "{workgroup:?}: {why}");
                assert!(why.contains("whole warps"), "{why}");
            }
            Err(e) => panic!("{workgroup:?}: {e}"),
        }
    }
}

/// The declared size is whole warps; launches of 64, 48 and 96 lanes per
/// workgroup run whichever kind they need and match the interpreter.
#[test]
fn the_backend_runs_the_kind_each_workgroup_size_needs() {
    let jit = runtime_on(jit(), 2, 32);
    let reference = runtime_on(
        std::sync::Arc::new(warpjit_runtime::InterpreterBackend),
        2,
        32,
    );
    let on_jit = kernel(&jit, BUTTERFLY);
    let on_reference = kernel(&reference, BUTTERFLY);
    let code = on_jit
        .code()
        .downcast_ref::<JitKernel>()
        .expect("a JIT kernel");
    let declared = code.compile_time();
    assert!(declared > std::time::Duration::ZERO);
    for size in [64u32, 48, 96, 33] {
        let words = 3 * u64::from(size);
        let mut got = vec![zeros_u32(words)];
        let mut want = vec![zeros_u32(words)];
        run(&jit, &on_jit, [3, 1, 1], [size, 1, 1], &[], &mut got);
        run(
            &reference,
            &on_reference,
            [3, 1, 1],
            [size, 1, 1],
            &[],
            &mut want,
        );
        assert_eq!(got[0].to_vec::<u32>(), want[0].to_vec::<u32>(), "{size}");
        // Compiled by now: asking again compiles nothing.
        let first = code.compile_for([size, 1, 1]).expect("compiled");
        assert_eq!(code.compile_for([size, 1, 1]).expect("compiled"), first);
    }
    // What `prepare` compiled is still what it reports.
    assert_eq!(code.compile_time(), declared);
}
