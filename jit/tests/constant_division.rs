//! Integer division and remainder by constants. A constant divisor that
//! needs no guard (not 0, and not -1 for the signed operations) is left to
//! LLVM, which multiplies by its reciprocal; 0 and -1 keep the guarded
//! path. Every operation, width and divisor below is compared with the
//! interpreter on every target, over dividends at the edges (0, 1, the
//! extremes, around multiples of the divisor) and spread over the range.

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

fn program(op: &str, ty: &str, divisor: u64) -> String {
    let fmt = if ty == "i32" { "u32" } else { "u64" };
    let shift = if ty == "i32" { 2 } else { 3 };
    format!(
        "
buffer @in[0]: {fmt}
buffer @out[1]: {fmt}
kernel @main workgroup(64) {{
  %g = global_id.x
  %a = shl %g, {shift}
  %x = load.{fmt} @in, %a
  %y = {op} %x, {divisor}:{ty}
  store.{fmt} @out, %a, %y
}}"
    )
}

fn check(op: &str, ty: &str, divisor: u64) {
    let bits = if ty == "i32" { 32 } else { 64 };
    let text = program(op, ty, divisor);
    let m = warpjit_ir::text::parse(&text).unwrap_or_else(|d| panic!("{d}\n{text}"));
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
            prefetch_ahead: true,
        };
        let compiled = compile(&m, &options).expect("compiles");
        let mut memory = buffers.clone();
        launch(&compiled, &m, kernel, &cfg, &[], &mut memory).expect("runs");
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

/// The reciprocal path is taken: W5's `rem.u %x, 3` compiles without the
/// f64 division of variable divisors.
#[test]
fn a_constant_divisor_needs_no_division_instruction() {
    let text = program("rem.u", "i32", 3);
    let m = warpjit_ir::text::parse(&text).expect("parses");
    let m = VerifiedModule::new(m).expect("verifies");
    let options = JitOptions {
        opt_level: 2,
        target: Target::Avx2,
        ..JitOptions::default()
    };
    let asm = compile(&m, &options)
        .expect("compiles")
        .assembly()
        .expect("assembly");
    // Variable divisors go through f64 (`vdivpd`); the kernel's other
    // divisions (local ids from the workgroup size) are f32 or scalar.
    assert!(!asm.contains("vdivpd"), "{asm}");
}
