//! Float `min` and `max` of values LLVM knows something about: `abs x`,
//! `neg x`, signed zeros and other constants, against each other and
//! against a second variable, over NaN, zeros and infinities. LLVM 19's
//! `instcombine` turned `min(abs x, 0.0)` into `abs x` for negative `x`
//! from the select chain the lowering used to emit; the JIT's results must
//! be the interpreter's on every target and warp kind.
//!
//! Each pair is computed in its own branch (on a parameter that is always
//! true), from operands defined there: LLVM then cannot share one `abs x`
//! between the pairs, and each sees the shape it would see alone.

mod direct;

use direct::agree;
use warpjit_ir::interp::LaunchConfig;

/// The operand shapes, as `(name, statements defining %name_S from %x)`.
const SHAPES: [(&str, &str); 9] = [
    ("x", "%x_S = mov %x"),
    ("y", "%y_S = mov %y"),
    ("ax", "%ax_S = abs %x"),
    ("nx", "%nx_S = neg %x"),
    ("nax", "%a_S = abs %x\n    %nax_S = neg %a_S"),
    ("zero", "%zero_S = mov 0.0:F"),
    ("nzero", "%nzero_S = mov -0.0:F"),
    ("one", "%one_S = mov 1.0:F"),
    ("inf", "%inf_S = div 1.0:F, 0.0:F"),
];

/// Lane values: NaN, zeros, infinities, and numbers of both signs.
const VALUES: [f64; 10] = [
    f64::NAN,
    -0.0,
    0.0,
    2.5,
    -2.5,
    1.0,
    -1.0,
    f64::INFINITY,
    f64::NEG_INFINITY,
    0.5,
];

/// A kernel that stores `min` and `max` of every pair of shapes, for the
/// float type `ty` (`f32` or `f64`).
fn kernel(ty: &str) -> (String, usize) {
    let bytes = if ty == "f32" { 4 } else { 8 };
    let mut body = format!(
        "param %on: i32\nbuffer @input[0]: {ty}\nbuffer @out[1]: {ty}\n\nkernel @main workgroup(64) {{\n  \
         %branch = cmp.ne %on, 0\n  %li = local_index\n  %n = rem.u %li, {count}\n  %m = div.u %li, {count}\n  \
         %xa = mul %n, {bytes}\n  %ya = mul %m, {bytes}\n  \
         %x = load.{ty} @input, %xa\n  %y = load.{ty} @input, %ya\n",
        count = VALUES.len(),
    );
    let results = SHAPES.len() * SHAPES.len() * 2;
    body += &format!("  %base = mul %li, {}\n", results * bytes);
    let mut slot = 0;
    for (a, define_a) in SHAPES {
        for (b, define_b) in SHAPES {
            for op in ["min", "max"] {
                let s = format!("{slot}");
                let define = |d: &str, side: &str| {
                    d.replace("_S", &format!("_{side}{s}"))
                        .replace(":F", &format!(":{ty}"))
                };
                body += &format!(
                    "  if %branch {{\n    {}\n    {}\n    \
                     %r{s} = {op} %{a}_a{s}, %{b}_b{s}\n    %at{s} = add %base, {}\n    \
                     store.{ty} @out, %at{s}, %r{s}\n  }}\n",
                    define(define_a, "a"),
                    define(define_b, "b"),
                    slot * bytes
                );
                slot += 1;
            }
        }
    }
    body += "}\n";
    (body, results)
}

fn check(ty: &str) {
    let (text, results) = kernel(ty);
    let input: Vec<u8> = if ty == "f32" {
        VALUES
            .iter()
            .flat_map(|&v| (v as f32).to_le_bytes())
            .collect()
    } else {
        VALUES.iter().flat_map(|&v| v.to_le_bytes()).collect()
    };
    let bytes = if ty == "f32" { 4 } else { 8 };
    let configs = [
        LaunchConfig::new([2, 1, 1], [64, 1, 1]),
        LaunchConfig::new([1, 1, 1], [40, 1, 1]),
    ];
    let out = agree(
        &text,
        &configs,
        &[vec![1]],
        &[input, vec![0; 64 * results * bytes]],
    );
    // min(abs x, 0.0) is +0.0 for every x, NaN included.
    let slot = (2 * SHAPES.len() + 5) * 2;
    for li in 0..40 {
        let at = (li * results + slot) * bytes;
        assert!(
            out[1][at..at + bytes].iter().all(|&b| b == 0),
            "{ty} min(abs x, 0.0) of invocation {li}: {:?}",
            &out[1][at..at + bytes]
        );
    }
}

#[test]
fn min_and_max_of_abs_neg_and_constants_match_the_interpreter_f32() {
    check("f32");
}

#[test]
fn min_and_max_of_abs_neg_and_constants_match_the_interpreter_f64() {
    check("f64");
}
