//! 32-bit division and remainder, unsigned and signed, by a divisor that is
//! the same in every lane but known only at run time (a parameter)
//! multiply by a reciprocal computed once per warp: the optimised IR has
//! one scalar division and no vector one, and every quotient and remainder
//! is the interpreter's, at the edges of the divisor and dividend ranges,
//! for division by zero and for MIN / -1. Outside loops the quotient is a
//! call of a shared routine, one per dividend; inside loops it is inline.

mod direct;

use direct::{agree, module, optimised_ir, pattern};
use warpjit_ir::interp::LaunchConfig;
use warpjit_jit::JitOptions;

/// Per lane: `x / d`, `x % d` for a loaded `x`, and the quotient and
/// remainder of a multiple of `d` and of the value just below it; `div.u`
/// and `rem.u` (`div.s` and `rem.s` in [`signed`]).
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

/// The kernel with signed division and remainder.
fn signed() -> String {
    BY_PARAMETER
        .replace("div.u", "div.s")
        .replace("rem.u", "rem.s")
}

/// `text` (a kernel of this file) with its body in a loop that runs once.
fn in_a_loop(text: &str) -> String {
    let looped = text
        .replace(
            "kernel @main workgroup(64) {\n",
            "kernel @main workgroup(64) {\n  var $round: i32\n",
        )
        .replace(
            "  if %in_range {\n",
            "  loop {\n  %done = cmp.ge.u $round, 1\n  if %done {\n    break\n  }\n  \
             $round = add $round, 1\n  if %in_range {\n",
        )
        .replace("  }\n}\n", "  }\n  }\n}\n");
    assert_ne!(looped, text, "no loop added");
    looped
}

const ROUTINE_CALL: &str = "call <32 x i32> @warpjit.div.uniform.u32(";

#[test]
fn division_by_a_parameter_has_no_vector_division() {
    for text in [
        BY_PARAMETER.to_string(),
        signed(),
        in_a_loop(BY_PARAMETER),
        in_a_loop(&signed()),
    ] {
        let ir = optimised_ir(&module(&text), &JitOptions::default());
        assert!(ir.contains("udiv i64"), "no scalar reciprocal in\n{ir}");
        for vector_division in ["fdiv <32 x double>", "udiv <", "sdiv <", "urem <", "srem <"] {
            assert!(
                !ir.contains(vector_division),
                "`{vector_division}` in\n{ir}"
            );
        }
    }
}

#[test]
fn the_quotient_is_a_call_outside_loops_one_per_dividend() {
    for text in [BY_PARAMETER.to_string(), signed()] {
        let ir = optimised_ir(&module(&text), &JitOptions::default());
        // Three dividends (x, the multiple, the value below it), each with
        // a division and a remainder.
        assert_eq!(ir.matches(ROUTINE_CALL).count(), 3, "in\n{ir}");
    }
    for text in [in_a_loop(BY_PARAMETER), in_a_loop(&signed())] {
        let ir = optimised_ir(&module(&text), &JitOptions::default());
        assert!(!ir.contains(ROUTINE_CALL), "a call in the loop in\n{ir}");
    }
}

/// Divisors at the edges: 0, 1, powers of two and their neighbours, the
/// largest ones, and scattered values.
fn divisors() -> Vec<u32> {
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
    for k in [4, 13, 16, 24, 31] {
        divisors.extend([(1u32 << k) - 1, 1 << k, (1 << k) + 1]);
    }
    let mut seed = 0x9e37_79b9u32;
    for _ in 0..16 {
        seed = seed.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
        divisors.push(seed >> (seed % 29));
    }
    divisors
}

/// Runs `text` for every divisor, with dividends at the edges in the first
/// lanes, and returns the output buffer of the last divisor.
fn compare(text: &str, divisors: &[u32]) -> Vec<u8> {
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
        0x8000_0001,
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
    let mut out = agree(
        text,
        &configs,
        &param_sets,
        &[dividends, vec![0xa5u8; 64 * 24]],
    );
    out.remove(1)
}

/// Word `i` of `out`.
fn word(out: &[u8], i: usize) -> u32 {
    u32::from_le_bytes(out[i * 4..i * 4 + 4].try_into().expect("4 bytes"))
}

#[test]
fn unsigned_division_by_a_parameter_matches_the_interpreter() {
    let divisors = divisors();
    for text in [BY_PARAMETER.to_string(), in_a_loop(BY_PARAMETER)] {
        let out = compare(&text, &divisors);
        // The launch did run: with the last divisor, lane 1's dividend (1)
        // gives quotient 0 and remainder 1 unless the divisor is 1.
        let last = *divisors.last().expect("divisors");
        assert_eq!((word(&out, 6), word(&out, 7)), (1 / last, 1 % last));
    }
}

#[test]
fn signed_division_by_a_parameter_matches_the_interpreter() {
    let mut divisors = divisors();
    // Negative divisors, -1 (MIN is among the dividends) and MIN last.
    divisors.extend([-1i32, -2, -3, -7, -641, -768, i32::MIN + 1].map(|d| d as u32));
    divisors.push(i32::MIN as u32);
    for text in [signed(), in_a_loop(&signed())] {
        let out = compare(&text, &divisors);
        // The launch did run: by MIN, lane 7's dividend (MIN) gives
        // quotient 1 and remainder 0, lane 8's (MIN + 1) quotient 0 and
        // itself.
        assert_eq!((word(&out, 7 * 6), word(&out, 7 * 6 + 1)), (1, 0));
        assert_eq!((word(&out, 8 * 6), word(&out, 8 * 6 + 1)), (0, 0x8000_0001));
    }
}
