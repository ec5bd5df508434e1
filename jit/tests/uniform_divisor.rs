//! Unsigned 32-bit division and remainder by a divisor that is the same in
//! every lane but known only at run time (a parameter) multiply by a
//! reciprocal computed once per warp: the optimised IR has one scalar
//! division and no vector one, and every quotient and remainder is the
//! interpreter's, at the edges of the divisor and dividend ranges and for
//! division by zero.

mod direct;

use direct::{agree, module, optimised_ir, pattern};
use warpjit_ir::interp::LaunchConfig;
use warpjit_jit::JitOptions;

/// Per lane: `x / d`, `x % d` for a loaded `x`, and the quotient and
/// remainder of a multiple of `d` and of the value just below it.
const BY_PARAMETER: &str = "
param %d: i32
param %n: i32
buffer @in[0]: u32
buffer @out[1]: u32

kernel @main workgroup(64) {
  %g = global_id.x
  %in_range = cmp.lt.u %g, %n
  if %in_range {
    %addr = shl %g, 2
    %x = load.u32 @in, %addr
    %q = div.u %x, %d
    %r = rem.u %x, %d
    %lane = lane_id
    %multiple = mul %d, %lane
    %below = sub %multiple, 1
    %qm = div.u %multiple, %d
    %rm = rem.u %multiple, %d
    %qb = div.u %below, %d
    %rb = rem.u %below, %d
    %base = mul %g, 24
    store.u32 @out, %base, %q
    %o1 = add %base, 4
    store.u32 @out, %o1, %r
    %o2 = add %base, 8
    store.u32 @out, %o2, %qm
    %o3 = add %base, 12
    store.u32 @out, %o3, %rm
    %o4 = add %base, 16
    store.u32 @out, %o4, %qb
    %o5 = add %base, 20
    store.u32 @out, %o5, %rb
  }
}
";

#[test]
fn division_by_a_parameter_has_no_vector_division() {
    let ir = optimised_ir(&module(BY_PARAMETER), &JitOptions::default());
    assert!(ir.contains("udiv i64"), "no scalar reciprocal in\n{ir}");
    for vector_division in ["fdiv <32 x double>", "udiv <", "urem <"] {
        assert!(
            !ir.contains(vector_division),
            "`{vector_division}` in\n{ir}"
        );
    }
}

#[test]
fn division_by_a_parameter_matches_the_interpreter() {
    let mut divisors: Vec<u32> = vec![
        0,
        1,
        2,
        3,
        5,
        7,
        10,
        641,
        768,
        1000,
        6_700_417,
        0x1_0001,
        0x5555_5555,
        0x7fff_ffff,
        0x8000_0000,
        0x8000_0001,
        0xffff_fffe,
        0xffff_ffff,
    ];
    // Powers of two and their neighbours, and scattered values.
    for k in [4, 13, 16, 24, 31] {
        divisors.extend([(1u32 << k) - 1, 1 << k, (1 << k) + 1]);
    }
    let mut seed = 0x9e37_79b9u32;
    for _ in 0..16 {
        seed = seed.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
        divisors.push(seed >> (seed % 29));
    }
    let param_sets: Vec<Vec<u64>> = divisors
        .iter()
        .flat_map(|&d| [vec![u64::from(d), 64], vec![u64::from(d), 37]])
        .collect();
    let mut dividends = pattern(64 * 4, 11);
    let edges = [
        0u32,
        1,
        2,
        3,
        767,
        768,
        0x7fff_ffff,
        0x8000_0000,
        0xffff_fffe,
        0xffff_ffff,
    ];
    for (slot, value) in dividends.chunks_exact_mut(4).zip(edges) {
        slot.copy_from_slice(&value.to_le_bytes());
    }
    let configs: Vec<LaunchConfig> = [([1, 1, 1], [64, 1, 1]), ([2, 1, 1], [40, 1, 1])]
        .into_iter()
        .map(|(grid, workgroup)| LaunchConfig::new(grid, workgroup))
        .collect();
    let out = agree(
        BY_PARAMETER,
        &configs,
        &param_sets,
        &[dividends, vec![0xa5u8; 64 * 24]],
    );
    // The launch did run: with the last divisor, lane 1's dividend (1)
    // gives quotient 0 and remainder 1 unless the divisor is 1.
    let last = *divisors.last().expect("divisors");
    let word = |i: usize| u32::from_le_bytes(out[1][i * 4..i * 4 + 4].try_into().expect("4"));
    assert_eq!((word(6), word(7)), (1 / last, 1 % last));
}
