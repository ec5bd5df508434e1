//! `warpjit dump`: the generated code of a file, and its errors.

use std::process::{Command, Output};

fn warpjit(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_warpjit"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("warpjit runs")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn llvm_ir_of_mandelbrot_is_32_wide_vector_code() {
    let out = warpjit(&["dump", "--llvm", "examples/mandelbrot.warp"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let ir = stdout(&out);
    assert!(
        ir.contains("<32 x float>"),
        "no 32-wide float vectors:\n{ir}"
    );
    assert!(ir.contains("<32 x i1>"), "no 32-lane masks:\n{ir}");
}

#[test]
fn native_assembly_uses_vector_and_mask_registers_and_avx2_does_not_use_zmm() {
    let native = warpjit(&["dump", "--asm", "examples/mandelbrot.warp"]);
    assert!(native.status.success(), "{}", stderr(&native));
    let asm = stdout(&native);
    let host_has_avx512 = std::fs::read_to_string("/proc/cpuinfo")
        .map(|c| c.contains("avx512f"))
        .unwrap_or(false);
    if host_has_avx512 {
        assert!(asm.contains("%zmm"), "no zmm registers:\n{asm}");
        assert!(asm.contains("{%k"), "no mask registers:\n{asm}");
    }
    let avx2 = warpjit(&[
        "dump",
        "--asm",
        "--target",
        "avx2",
        "examples/mandelbrot.warp",
    ]);
    assert!(avx2.status.success(), "{}", stderr(&avx2));
    assert!(!stdout(&avx2).contains("%zmm"), "avx2 code uses zmm");
}

#[test]
fn a_kernel_the_jit_cannot_compile_gives_one_line_and_exit_1() {
    let out = warpjit(&["dump", "--asm", "examples/histogram_atomics.warp"]);
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("examples/histogram_atomics.warp") && err.contains("barrier"),
        "{err}"
    );
}

#[test]
fn bad_options_name_the_option() {
    let out = warpjit(&["dump", "--target", "mmx", "examples/mandelbrot.warp"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("--target"), "{}", stderr(&out));
    let out = warpjit(&["dump", "-O", "7", "examples/mandelbrot.warp"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("opt-level"), "{}", stderr(&out));
}

#[test]
fn program_errors_are_rendered_with_their_position() {
    let dir = std::env::temp_dir().join(format!("warpjit-dump-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("bad.warp");
    std::fs::write(&path, "kernel @main {\n  %x = add %y, 1\n}\n").unwrap();
    let out = warpjit(&["dump", path.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("bad.warp:2:"), "{}", stderr(&out));
    std::fs::remove_dir_all(&dir).ok();
}
