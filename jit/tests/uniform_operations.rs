//! Operations whose operands are the same in every lane (parameters,
//! constants, loop counters kept as scalars) are done once on scalars:
//! their optimised IR has no vector operation for them, and they give the
//! interpreter's bits for NaNs, infinities, subnormals, signed zeros and
//! integer wrap-around.

mod direct;

use direct::{agree, module, optimised_ir};
use warpjit_ir::interp::LaunchConfig;
use warpjit_jit::JitOptions;

/// Every uniform operation the scalar path takes, stored by every lane
/// (lanes past `%n` inactive), and a loop whose test is uniform.
const UNIFORM: &str = "
param %a: f32
param %b: f32
param %i: i32
param %j: i32
param %n: i32
buffer @out[0]: u32

kernel @main workgroup(64) {
  var $k: i32
  var $acc: i32
  %g = global_id.x
  %in = cmp.lt.u %g, %n
  if %in {
    %base = mul %g, 80
    %sum = add %a, %b
    %diff = sub %a, %b
    %prod = mul %a, %b
    %quot = div %a, %b
    %lt = cmp.lt %a, %b
    %ne = cmp.ne %a, %b
    %ge = cmp.ge %b, %a
    %picked = select %lt, %sum, %diff
    %isum = add %i, %j
    %idiff = sub %i, %j
    %iprod = mul %i, %j
    %ibits = xor %i, %j
    %iboth = and %i, %j
    %ieither = or %i, %j
    %slt = cmp.lt.s %i, %j
    %ult = cmp.lt.u %i, %j
    %either = or %slt, %ne
    %flags = select %either, 1:i32, 0:i32
    %order = select %ult, 2:i32, 0:i32
    %sure = select %ge, 4:i32, 0:i32
    %f1 = or %flags, %order
    %f2 = or %f1, %sure
    %lane_sum = add %sum, 0.5:f32
    %neg = neg %a
    %mag = abs %diff
    %down = floor %quot
    %root = sqrt %a
    %inot = not %i
    %ineg = neg %j
    %ones = btc %i
    %fsum1 = add %neg, %mag
    %fsum2 = add %fsum1, %down
    %isum1 = add %inot, %ineg
    %isum2 = xor %isum1, %ones
    %shl = shl %i, %j
    %shru = shr.u %i, %j
    %shrs = shr.s %i, %j
    %lo = min.s %i, %j
    %hi = max.u %i, %j
    %shifts = xor %shl, %shru
    %extremes = sub %lo, %hi
    store.f32 @out, %base, %sum
    %o1 = add %base, 4
    store.f32 @out, %o1, %diff
    %o2 = add %base, 8
    store.f32 @out, %o2, %prod
    %o3 = add %base, 12
    store.f32 @out, %o3, %quot
    %o4 = add %base, 16
    store.f32 @out, %o4, %picked
    %o5 = add %base, 20
    store.u32 @out, %o5, %isum
    %o6 = add %base, 24
    store.u32 @out, %o6, %idiff
    %o7 = add %base, 28
    store.u32 @out, %o7, %iprod
    %o8 = add %base, 32
    store.u32 @out, %o8, %ibits
    %o9 = add %base, 36
    store.u32 @out, %o9, %iboth
    %o10 = add %base, 40
    store.u32 @out, %o10, %ieither
    %o11 = add %base, 44
    store.u32 @out, %o11, %f2
    %o12 = add %base, 48
    store.f32 @out, %o12, %lane_sum
    // A loop whose exit test and counter are uniform (a loop scalar:
    // `$k` is not read after the loop).
    $k = mov 0
    $acc = mov %g
    loop {
      %done = cmp.ge.s $k, %j
      if %done {
        break
      }
      $acc = mul $acc, 3
      $k = add $k, 1
      %stop = cmp.ge.s $k, 40
      if %stop {
        break
      }
    }
    %o13 = add %base, 52
    store.u32 @out, %o13, $acc
    %o14 = add %base, 56
    store.f32 @out, %o14, %fsum2
    %o15 = add %base, 60
    store.f32 @out, %o15, %root
    %o16 = add %base, 64
    store.u32 @out, %o16, %isum2
    %o17 = add %base, 68
    store.u32 @out, %o17, %shifts
    %o18 = add %base, 72
    store.u32 @out, %o18, %shrs
    %o19 = add %base, 76
    store.u32 @out, %o19, %extremes
  }
}
";

#[test]
fn uniform_operations_are_scalar_in_the_ir() {
    let ir = optimised_ir(&module(UNIFORM), &JitOptions::default());
    for scalar_op in [
        "fadd float",
        "fsub float",
        "fmul float",
        "fdiv float",
        "fcmp olt float",
        "mul i32",
        "xor i32",
        "@llvm.sqrt.f32(",
        "@llvm.floor.f32(",
        "@llvm.ctpop.i32(",
        "ashr i32",
        "@llvm.smin.i32(",
        "@llvm.umax.i32(",
    ] {
        assert!(ir.contains(scalar_op), "no `{scalar_op}` in\n{ir}");
    }
    // The loop's tests compare scalars, no lanes. (On AVX2, `%mask` lines
    // read a mask kept in 32-bit lanes: a sign test, not a loop's test.)
    let lane_compares: Vec<&str> = ir
        .lines()
        .filter(|l| !l.trim_start().starts_with("%mask"))
        .collect();
    for vector_op in [
        "icmp sge <32 x i32>",
        "icmp slt <32 x i32>",
        "icmp sgt <32 x i32>",
    ] {
        assert!(
            !lane_compares.iter().any(|l| l.contains(vector_op)),
            "`{vector_op}` in\n{ir}"
        );
    }
}

#[test]
fn uniform_operations_match_the_interpreter() {
    let f = |x: f32| u64::from(x.to_bits());
    let i = |x: i32| u64::from(x as u32);
    let param_sets = vec![
        vec![f(1.5), f(-0.25), i(7), i(-3), i(50)],
        // NaN, infinities, signed zeros, subnormals.
        vec![f(f32::NAN), f(2.0), i(i32::MAX), i(1), i(64)],
        vec![
            f(f32::INFINITY),
            f(f32::INFINITY),
            i(i32::MIN),
            i(-1),
            i(33),
        ],
        vec![f(0.0), f(-0.0), i(-5), i(65535), i(1)],
        vec![f(1.0e-40), f(3.0), i(0x1234_5678), i(0x7654_3210), i(64)],
        // Shift amounts in range (the others are past the width).
        vec![f(2.5), f(0.5), i(-123_456), i(5), i(64)],
        vec![f(-2.5), f(8.0), i(i32::MIN), i(31), i(40)],
        vec![f(-1.0e-45), f(f32::MIN_POSITIVE), i(12), i(45), i(10)],
    ];
    let configs: Vec<LaunchConfig> = [([1, 1, 1], [64, 1, 1]), ([2, 1, 1], [40, 1, 1])]
        .into_iter()
        .map(|(grid, workgroup)| LaunchConfig::new(grid, workgroup))
        .collect();
    let out = agree(UNIFORM, &configs, &param_sets, &[vec![0xa5u8; 64 * 80]]);
    // The launch did run: lane 0's sum of the last parameter set is in place.
    let first = f32::from_le_bytes(out[0][0..4].try_into().expect("4 bytes"));
    assert_eq!(first, -1.0e-45 + f32::MIN_POSITIVE);
}
