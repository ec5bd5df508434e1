//! Integer division and remainder by constants. A constant divisor that
//! needs no guard (not 0, and not -1 for the signed operations) is left to
//! LLVM, which multiplies by its reciprocal; 0 and -1 keep the guarded
//! path. A test of an unsigned remainder against 0 under a lane mask is a
//! multiply and a compare (`engine/divisibility.rs`). Every operation, width and divisor below is compared with the
//! interpreter on every target, over dividends at the edges (0, 1, the
//! extremes, around multiples of the divisor) and spread over the range.

mod direct;

use warpjit_ir::interp::{self, LaunchConfig};
use warpjit_ir::VerifiedModule;
use warpjit_jit::{compile, launch, JitOptions, Target};

const OPS: [&str; 4] = ["div.u", "rem.u", "div.s", "rem.s"];

/// Divisors as bit patterns of the width (so `u64::MAX` is -1 in i64).
const DIVISORS_32: [u64; 12] = [
    0,
    1,
    2,
    3,
    7,
    10,
    641,
    0x7fff_ffff,
    0x8000_0000,
    0x8000_0001,
    0xffff_fffd,
    0xffff_ffff,
];
const DIVISORS_64: [u64; 8] = [
    0,
    1,
    3,
    10,
    0x1_0000_0001,
    0x8000_0000_0000_0000,
    0xffff_ffff_ffff_fff9,
    u64::MAX,
];

/// Dividends for 64 lanes, as bit patterns of `bits` width.
fn dividends(bits: u32, divisor: u64) -> Vec<u64> {
    let mask = u64::MAX >> (64 - bits);
    let top = 1u64 << (bits - 1);
    let mut v = vec![0, 1, 2, mask, mask - 1, top, top - 1, top + 1];
    let d = divisor.max(1) & mask;
    for k in [1u64, 2, 3, 1000] {
        let m = d.wrapping_mul(k) & mask;
        v.extend([m, m.wrapping_sub(1) & mask, m.wrapping_add(1) & mask]);
    }
    let mut x = 0x9e37_79b9_7f4a_7c15u64 ^ divisor;
    while v.len() < 64 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        v.push(x & mask);
    }
    v
}

/// A kernel of 64 lanes that loads `%x` from `@in`, runs `body`, which
/// leaves `%y`, and stores `%y` to `@out` at the same element (`ty` is
/// `i32` or `i64`).
fn kernel(ty: &str, vars: &str, body: &str) -> String {
    let fmt = if ty == "i32" { "u32" } else { "u64" };
    let shift = if ty == "i32" { 2 } else { 3 };
    format!(
        "
buffer @in[0]: {fmt}
buffer @out[1]: {fmt}
kernel @main workgroup(64) {{
{vars}
  %g = global_id.x
  %a = shl %g, {shift}
  %x = load.{fmt} @in, %a
{body}
  store.{fmt} @out, %a, %y
}}"
    )
}

fn program(op: &str, ty: &str, divisor: u64) -> String {
    kernel(ty, "", &format!("  %y = {op} %x, {divisor}:{ty}"))
}

/// `x % divisor == 0` (or `!=`) in three lanes of four, as a masked
/// `if` gives it; 1 where it holds, 0 where not and in the other lanes.
fn divisibility_program(ty: &str, divisor: u64, compare: &str) -> String {
    let body = format!(
        "  %lane = lane_id
  %quarter = and %lane, 3
  %some = cmp.ne %quarter, 0
  if %some {{
    %r = rem.u %x, {divisor}:{ty}
    $holds = {compare} %r, 0:{ty}
  }}
  %y = select $holds, 1:{ty}, 0:{ty}"
    );
    kernel(ty, "  var $holds: bool", &body)
}

fn check(op: &str, ty: &str, divisor: u64) {
    check_program(&program(op, ty, divisor), op, ty, divisor);
}

fn check_program(text: &str, op: &str, ty: &str, divisor: u64) {
    let bits = if ty == "i32" { 32 } else { 64 };
    let m = warpjit_ir::text::parse(text).unwrap_or_else(|d| panic!("{d}\n{text}"));
    let m = VerifiedModule::new(m).unwrap_or_else(|d| panic!("{d}\n{text}"));
    let kernel = m.find_function("main").expect("@main");
    let bytes = bits as usize / 8;
    let input: Vec<u8> = dividends(bits, divisor)
        .iter()
        .flat_map(|x| x.to_le_bytes()[..bytes].to_vec())
        .collect();
    let buffers = vec![input.clone(), vec![0xa5; input.len()]];
    let cfg = LaunchConfig::new([1, 1, 1], [64, 1, 1]);
    let mut expected = buffers.clone();
    interp::launch(&m, kernel, &cfg, &[], &mut expected).expect("interpreter");
    for target in [Target::Native, Target::Avx2, Target::Sse42] {
        let options = JitOptions {
            opt_level: 2,
            target,
            whole_warps: true,
            workgroup: None,
            prefetch_ahead: warpjit_jit::PrefetchAhead::On,
        };
        let compiled = compile(&m, &options).expect("compiles");
        let mut memory = buffers.clone();
        launch(&compiled, kernel, &cfg, &[], &mut memory).expect("runs");
        assert!(
            memory == expected,
            "{target:?}: {op} {ty} by {divisor:#x} differs from the interpreter"
        );
    }
}

#[test]
fn division_by_constants_matches_the_interpreter_i32() {
    for op in OPS {
        for d in DIVISORS_32 {
            check(op, "i32", d);
        }
    }
}

#[test]
fn division_by_constants_matches_the_interpreter_i64() {
    for op in OPS {
        for d in DIVISORS_64 {
            check(op, "i64", d);
        }
    }
}

/// Divisibility tests by odd, even and power-of-two divisors, equal and not
/// equal, on both widths, against the interpreter on every target.
#[test]
fn divisibility_tests_under_a_mask_match_the_interpreter() {
    for compare in ["cmp.eq", "cmp.ne"] {
        for d in DIVISORS_32.iter().chain(&[6, 12, 96, 4096, 0xfff0]) {
            let text = divisibility_program("i32", *d, compare);
            check_program(&text, compare, "i32", *d);
        }
        for d in DIVISORS_64.iter().chain(&[6, 1 << 40]) {
            let text = divisibility_program("i64", *d, compare);
            check_program(&text, compare, "i64", *d);
        }
    }
}

/// Such a test is a multiply and a compare, with no remainder left: on
/// AVX-512 LLVM would otherwise expand `x % 3` into a multiply-high
/// sequence (`vpmuludq`) before it saw the compare.
#[test]
fn a_masked_divisibility_test_is_a_multiply_and_a_compare() {
    for (d, rotated) in [(3, false), (12, true)] {
        let text = divisibility_program("i32", d, "cmp.eq");
        let m = warpjit_ir::text::parse(&text).expect("parses");
        let m = VerifiedModule::new(m).expect("verifies");
        for target in [Target::Native, Target::Avx2] {
            let options = JitOptions {
                target,
                ..JitOptions::default()
            };
            let ir = compile(&m, &options)
                .expect("compiles")
                .llvm_ir()
                .expect("IR");
            // The module's own text, before the shared routines'.
            let kernel = direct::kernel_part(&ir);
            assert!(!kernel.contains(" urem "), "{target:?} {d}: {kernel}");
            assert!(
                kernel.contains("mul <32 x i32>"),
                "{target:?} {d}: {kernel}"
            );
            assert_eq!(
                kernel.contains("@llvm.fshr"),
                rotated,
                "{target:?} {d}: {kernel}"
            );
        }
    }
}

/// The reciprocal path is taken: W5's `rem.u %x, 3` compiles without the
/// f64 division of variable divisors.
#[test]
fn a_constant_divisor_needs_no_division_instruction() {
    let options = JitOptions {
        opt_level: 2,
        target: Target::Avx2,
        ..JitOptions::default()
    };
    let assembly = |text: &str| {
        let m = warpjit_ir::text::parse(text).expect("parses");
        let m = VerifiedModule::new(m).expect("verifies");
        compile(&m, &options)
            .expect("compiles")
            .assembly()
            .expect("assembly")
    };
    // Variable divisors go through f64 (`vdivpd`); the kernel's other
    // divisions (local ids from the workgroup size) are f32 or scalar.
    let asm = assembly(&program("rem.u", "i32", 3));
    assert!(!asm.contains("vdivpd"), "{asm}");
    // The probe sees the division when the divisor varies per lane.
    let variable = assembly(&kernel(
        "i32",
        "",
        "  %d = or %x, 1
  %y = rem.u %x, %d",
    ));
    assert!(variable.contains("vdivpd"), "{variable}");
}
