//! `warpjit dump`: the generated code of a file, and its errors.

mod cli_support;
use cli_support::{scratch, warpjit as warpjit_in, Run};
use std::path::Path;

fn warpjit(args: &[&str]) -> Run {
    warpjit_in(Path::new(env!("CARGO_MANIFEST_DIR")), args)
}

#[test]
fn llvm_ir_of_mandelbrot_is_32_wide_vector_code() {
    let out = warpjit(&["dump", "--llvm", "examples/mandelbrot.warp"]);
    assert!(out.code == 0, "{}", out.stderr);
    let ir = &out.stdout;
    assert!(
        ir.contains("<32 x float>"),
        "no 32-wide float vectors:\n{ir}"
    );
    assert!(ir.contains("<32 x i1>"), "no 32-lane masks:\n{ir}");
}

#[test]
fn native_assembly_uses_vector_and_mask_registers_and_avx2_does_not_use_zmm() {
    let native = warpjit(&["dump", "--asm", "examples/mandelbrot.warp"]);
    assert!(native.code == 0, "{}", native.stderr);
    let asm = &native.stdout;
    let host_has_avx512 = std::fs::read_to_string("/proc/cpuinfo")
        .map(|c| c.contains("avx512f"))
        .unwrap_or(false);
    if host_has_avx512 {
        assert!(asm.contains("%zmm"), "no zmm registers:\n{asm}");
        assert!(asm.contains("{%k"), "no mask registers:\n{asm}");
    } else {
        assert!(
            !asm.contains("%zmm"),
            "zmm registers on a host without:\n{asm}"
        );
        assert!(asm.contains("%xmm"), "no vector registers:\n{asm}");
    }
    let avx2 = warpjit(&[
        "dump",
        "--asm",
        "--target",
        "avx2",
        "examples/mandelbrot.warp",
    ]);
    assert!(avx2.code == 0, "{}", avx2.stderr);
    assert!(!avx2.stdout.contains("%zmm"), "avx2 code uses zmm");
    // Dumping compiles for the target named, whatever the host has.
    assert!(avx2.stdout.contains("%ymm"), "avx2 code without ymm");
}

#[test]
fn barriers_split_the_body_into_phases_or_call_the_warp_scheduler() {
    // Barriers only in the kernel's body: one phase per barrier-free run.
    let out = warpjit(&["dump", "--llvm", "examples/histogram_atomics.warp"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stdout.contains("label %phase2"), "{}", out.stdout);
    assert!(!out.stdout.contains("@warpjit_barrier"), "{}", out.stdout);
    // A barrier inside a loop: a call that suspends the warp.
    let out = warpjit(&["dump", "--llvm", "runtime/tests/kernels/tree_sum.warp"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stdout.contains("call void @warpjit_barrier(ptr"),
        "{}",
        out.stdout
    );
}

#[test]
fn prefetches_a_page_ahead_as_asked() {
    let dump = |choice: &str| {
        let out = warpjit(&[
            "dump",
            "--llvm",
            "--prefetch-ahead",
            choice,
            "benches/workloads/saxpy.warp",
        ]);
        assert_eq!(out.code, 0, "{}", out.stderr);
        out.stdout.matches("call void @llvm.prefetch").count()
    };
    // Two loads and a store of 128 bytes each: two lines each. Saxpy
    // stores, so it does not prefetch where only programs without stores
    // do.
    assert_eq!(dump("on"), 6);
    assert_eq!(dump("off"), 0);
    assert_eq!(dump("without-stores"), 0);
}

#[test]
fn bad_options_name_the_option() {
    let out = warpjit(&["dump", "--target", "mmx", "examples/mandelbrot.warp"]);
    assert_eq!(out.code, 2);
    assert!(out.stderr.contains("--target"), "{}", out.stderr);
    let out = warpjit(&["dump", "-O", "7", "examples/mandelbrot.warp"]);
    assert_eq!(out.code, 2);
    assert!(out.stderr.contains("opt-level"), "{}", out.stderr);
}

#[test]
fn program_errors_are_rendered_with_their_position() {
    let dir = scratch(
        "dump-errors",
        &[("bad.warp", "kernel @main {\n  %x = add %y, 1\n}\n")],
    );
    let out = warpjit_in(&dir, &["dump", "bad.warp"]);
    assert_eq!(out.code, 1);
    assert!(out.stderr.contains("bad.warp:2:"), "{}", out.stderr);
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn warps_picks_the_code_for_whole_warps_or_for_any_workgroup() {
    let dump = |extra: &[&str]| {
        let mut args = vec!["dump", "--asm", "examples/reduce_shuffle_xor.warp"];
        args.extend(extra);
        let out = warpjit(&args);
        assert_eq!(out.code, 0, "{}", out.stderr);
        out.stdout
    };
    // The kernel declares 256 invocations: the code for that size by default.
    let default = dump(&[]);
    let exact = dump(&["--workgroup", "256"]);
    let whole = dump(&["--warps", "whole"]);
    let partial = dump(&["--warps", "partial"]);
    assert_eq!(default, exact);
    // Code for any size of whole warps finds local ids for workgroups
    // narrower than a warp with a division; code for 256 needs none.
    assert!(
        whole.contains("vdivps") || whole.contains("divps"),
        "{whole}"
    );
    assert!(!exact.contains("divps"), "{exact}");
    assert!(exact.len() < whole.len());
    assert!(whole.len() < partial.len());
    let host_has_avx512 = std::fs::read_to_string("/proc/cpuinfo")
        .map(|c| c.contains("avx512f"))
        .unwrap_or(false);
    if host_has_avx512 {
        // Only code for partial warps tests that each shuffle's source
        // lane is active.
        assert!(partial.contains("vptestmd"), "{partial}");
        assert!(!whole.contains("vptestmd"), "{whole}");
    }
    // Another size is other code: 16 wide, each warp spans two rows.
    assert_ne!(dump(&["--workgroup", "16,16"]), exact);
    for (option, value) in [
        ("--warps", "half"),
        ("--workgroup", "64,32"),
        ("--workgroup", "0"),
    ] {
        let bad = warpjit(&["dump", option, value, "examples/reduce_shuffle_xor.warp"]);
        assert_ne!(bad.code, 0);
        assert!(bad.stderr.contains(option), "{}", bad.stderr);
    }
}

/// The lowering never claims what the semantics do not promise: integer
/// operations wrap (no `nsw`, `nuw` or `exact`) and float operations are
/// IEEE (no fast-math flag), so LLVM may not assume otherwise. At level 0
/// the IR is the lowering's own.
#[test]
fn the_lowering_adds_no_wrap_exact_or_fast_math_flags() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    for dir in ["examples", "benches/workloads"] {
        for entry in std::fs::read_dir(root.join(dir)).expect("listed") {
            let path = entry.expect("entry").path();
            if path.extension().is_some_and(|e| e == "warp") {
                files.push(path);
            }
        }
    }
    assert!(files.len() >= 11, "{files:?}");
    let flags = [
        "nsw", "nuw", "exact", "fast", "contract", "reassoc", "nnan", "ninf", "nsz", "arcp", "afn",
    ];
    for file in files {
        let shown = file.display().to_string();
        let out = warpjit(&["dump", "--llvm", "-O", "0", &shown]);
        assert_eq!(out.code, 0, "{shown}: {}", out.stderr);
        assert!(out.stdout.contains("define"), "{shown}: no functions");
        for line in out.stdout.lines() {
            let words: Vec<&str> = line.split_whitespace().collect();
            assert!(!flags.iter().any(|f| words.contains(f)), "{shown}: {line}");
        }
    }
}

#[test]
fn remarks_say_what_each_statement_became_at_its_position() {
    let out = warpjit(&["dump", "--remarks", "examples/histogram_atomics.warp"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let text = &out.stdout;
    for expected in [
        "examples/histogram_atomics.warp:26:1: @main: kernel: code for workgroups of 256x1x1",
        "examples/histogram_atomics.warp:26:1: @main: kernel: split at its barriers into 3 phases",
        "examples/histogram_atomics.warp:46:5: @main: memory: @data: consecutive addresses: \
         one vector load of the warp's 32 bytes",
        "    %byte = load.u8 @data, $i\n",
        "examples/histogram_atomics.warp:48:5: @main: atomic (per lane): @local_bins: plain \
         loads and stores",
        "examples/histogram_atomics.warp:57:5: @main: atomic: @bins: results unused",
        "10 remarks, 3 per lane (lane by lane or under a divergent mask)\n",
    ] {
        assert!(text.contains(expected), "no {expected:?} in\n{text}");
    }
    // One listing at a time.
    let both = warpjit(&[
        "dump",
        "--remarks",
        "--asm",
        "examples/histogram_atomics.warp",
    ]);
    assert_eq!(both.code, 2, "{}", both.stderr);
    assert!(both.stderr.contains("--remarks"), "{}", both.stderr);
}
