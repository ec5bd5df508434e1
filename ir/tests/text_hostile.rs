//! Hostile input (RELIABILITY.md, "malformed text"): the parser never
//! panics or hangs, stops at its limits with an error, and whatever it
//! accepts round-trips through the printer.

use proptest::prelude::*;
use std::time::{Duration, Instant};
use warpjit_ir::text;

/// The error as `LINE:COL: message`, or "ok".
fn outcome(src: &str) -> String {
    match text::parse(src) {
        Ok(_) => "ok".into(),
        Err(d) => {
            let (line, col) = d.0[0].line_col(src);
            format!("{line}:{col}: {}", d.0[0].message)
        }
    }
}

/// Whatever parses must round-trip; whatever fails must point into the source.
fn check_accepted_round_trips(src: &str) -> Result<(), TestCaseError> {
    match text::parse(src) {
        Ok(m) => text::check_round_trip(&m).map_err(TestCaseError::fail),
        Err(d) => {
            prop_assert_eq!(d.0.len(), 1);
            let span = d.0[0].span;
            prop_assert!(span.start <= span.end && span.end as usize <= src.len());
            // Rendering must not panic either.
            let _ = d.render("input", src);
            Ok(())
        }
    }
}

const SEED: &str = "\
param %n: i32
buffer @data[0]: f32
shared @tile[64]

kernel @main workgroup(64) {
  var $acc: f32
  private @stack[16]
  %i = global_id.x
  %in = cmp.lt.u %i, %n
  if %in {
    %addr = shl %i, 2
    %x = load.f32 @data, %addr
    %y = mul %x, %x
    store.f32 @data, %addr, %y
  } else if false {
    kill
  } else {
    $acc = add $acc, 1.5
  }
  loop {
    %s, %ok = shuffle.idx %i, 1, width 16
    %v, %b = vote.any %in, guard true
    if %v {
      break
    }
    continue
  }
  ordered %i {
    %old = atom.add.u32 @tile, 0, 1
  }
  %r = call @f(1, 2.0)
}

func @f(%a: i32, %b: f32) -> f32 {
  %c = cvt.f32.s32 %a
  %d = add %c, %b
  return %d
}
";

const FRAGMENTS: &[&str] = &[
    "%a",
    "%b",
    "$v",
    "@f",
    "@data",
    "@tile",
    "{",
    "}",
    "(",
    ")",
    "[",
    "]",
    ",",
    ":",
    "=",
    "->",
    "if",
    "else",
    "loop",
    "break",
    "continue",
    "return",
    "kill",
    "ordered",
    "var",
    "private",
    "param",
    "buffer",
    "shared",
    "kernel",
    "func",
    "workgroup",
    "add",
    "mov",
    "cvt.f32.s32",
    "load.f32",
    "store.f32",
    "atom.add.u32",
    "shuffle.idx",
    "vote.any",
    "call",
    "width",
    "mask",
    "guard",
    "true",
    "false",
    "1",
    "-1",
    "0xff",
    "2.5",
    "1e40",
    "inf",
    "-nan",
    "i32",
    "f16",
    ":i64",
    "\n",
    " ",
    "//",
    "é",
    "\0",
    "65520",
    "-",
];

fn mutation() -> impl Strategy<Value = (usize, usize, usize)> {
    (0usize..SEED.len(), 0usize..8, 0usize..FRAGMENTS.len())
}

/// `SEED` with `edits` applied: each removes a few bytes at a position
/// and inserts a fragment there.
fn mutate(edits: &[(usize, usize, usize)]) -> String {
    let mut s = SEED.to_string();
    for &(at, remove, fragment) in edits {
        let mut at = at.min(s.len());
        while !s.is_char_boundary(at) {
            at -= 1;
        }
        let mut end = (at + remove).min(s.len());
        while !s.is_char_boundary(end) {
            end += 1;
        }
        s.replace_range(at..end, FRAGMENTS[fragment]);
    }
    s
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(3000))]

    #[test]
    fn random_strings_never_panic(src in any::<String>()) {
        check_accepted_round_trips(&src)?;
    }

    #[test]
    fn random_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..400)) {
        check_accepted_round_trips(&String::from_utf8_lossy(&bytes))?;
    }

    #[test]
    fn token_soup_never_panics(
        picks in prop::collection::vec(0usize..FRAGMENTS.len(), 0..80)
    ) {
        let src: Vec<&str> = picks.iter().map(|&i| FRAGMENTS[i]).collect();
        check_accepted_round_trips(&src.join(" "))?;
    }

    #[test]
    fn mutated_programs_never_panic_and_round_trip(
        edits in prop::collection::vec(mutation(), 1..4)
    ) {
        check_accepted_round_trips(&mutate(&edits))?;
    }
}

#[test]
fn the_seed_program_is_valid() {
    assert_eq!(outcome(SEED), "ok");
}

#[test]
fn deleting_any_word_of_a_program_round_trips_when_accepted() {
    let words: Vec<(usize, &str)> = SEED
        .split_inclusive(char::is_whitespace)
        .scan(0, |pos, w| {
            let at = *pos;
            *pos += w.len();
            Some((at, w))
        })
        .collect();
    let mut accepted = 0;
    for &(at, word) in &words {
        let src = format!("{}{}", &SEED[..at], &SEED[at + word.len()..]);
        if let Ok(m) = text::parse(&src) {
            accepted += 1;
            if let Err(e) = text::check_round_trip(&m) {
                panic!("without `{}` at {at}: {e}", word.trim());
            }
        }
    }
    // Dropping e.g. `break`, `continue`, an operand or a whole `, 1.5`
    // leaves valid syntax; the property must have been exercised.
    assert!(
        accepted >= 10,
        "only {accepted} of {} accepted",
        words.len()
    );
}

#[test]
fn ten_thousand_nested_ifs_hit_the_nesting_limit() {
    // Line 1 opens the body (level 1); line k opens level k.
    let depth = 10_000;
    let src = format!(
        "kernel @k {{\n{}{}}}\n",
        "if true {\n".repeat(depth),
        "}\n".repeat(depth)
    );
    assert_eq!(
        outcome(&src),
        "257:9: blocks nest too deeply: the limit is 256 levels"
    );
}

#[test]
fn ten_thousand_else_ifs_hit_the_nesting_limit() {
    let src = format!(
        "kernel @k {{ if true {{ }}{} }}",
        " else if true { }".repeat(10_000)
    );
    assert!(
        outcome(&src).ends_with(
            "blocks nest too deeply: the limit is 256 levels; each `else if` of a chain \
             counts as one more (this is the 255th)"
        ),
        "{}",
        outcome(&src)
    );
}

#[test]
fn unclosed_braces_report_the_innermost_block() {
    let src = format!("kernel @k {{\n{}", "loop {\n".repeat(100));
    assert_eq!(
        outcome(&src),
        "102:1: expected `}` to close the block opened at 101:6, found end of file"
    );
}

const TEN_MB: usize = 10 << 20;

fn assert_quick(what: &str, src: &str, expected_prefix: &str) {
    let start = Instant::now();
    let result = outcome(src);
    let elapsed = start.elapsed();
    assert!(
        result.starts_with(expected_prefix),
        "{what}: {}",
        &result[..result.len().min(200)]
    );
    // Linear work takes seconds even unoptimized; anything quadratic in
    // 10 MB would take hours.
    assert!(elapsed < Duration::from_secs(60), "{what} took {elapsed:?}");
}

#[test]
fn ten_megabyte_lines_are_handled_quickly() {
    // One instruction with millions of operands: it parses (the verifier
    // rejects the operand count).
    let mut operands = String::from("kernel @k { %i = lane_id %a = add %i");
    while operands.len() < TEN_MB {
        operands.push_str(", %i");
    }
    operands.push_str(" }");
    assert_quick("long operand list", &operands, "ok");

    let name = format!("kernel @k {{ %{} = lane_id }}", "a".repeat(TEN_MB));
    assert_quick(
        "long name",
        &name,
        "1:13: this name is 10485761 characters long; the limit is 1024",
    );

    let digits = format!("kernel @k {{ %a = mov {}:i32 }}", "9".repeat(TEN_MB));
    assert_quick(
        "long literal",
        &digits,
        "1:22: this literal is 10485760 characters long; the limit is 1024",
    );

    let braces = format!("kernel @k {}", "{".repeat(TEN_MB));
    assert_quick(
        "braces",
        &braces,
        "1:12: expected a statement or `}`, found `{`",
    );

    let commas = format!("kernel @k {{ %a = add 1:i32{} }}", ",".repeat(TEN_MB));
    assert_quick(
        "commas",
        &commas,
        "1:28: expected an operand (a value, variable or literal), found `,`",
    );

    let statements = "barrier ".repeat(TEN_MB / 8);
    let statements = format!("kernel @k {{ {statements}}}");
    assert_quick("many statements", &statements, "ok");

    let comment = format!("// {}\nkernel @k {{ }}", "x".repeat(TEN_MB));
    assert_quick("long comment", &comment, "ok");
}
