//! Literal spellings through the formatter (docs/text-format.md, "Literal
//! spellings"): `warpjit fmt` writes every number as the file wrote it,
//! with only the spaces around a `:type` suffix dropped, while `print`
//! keeps writing the canonical form.

use proptest::prelude::*;
use warpjit_ir::generate::{generate, GenConfig, RngLike, SplitMix64};
use warpjit_ir::text::{format, parse, parse_with_comments, print, print_with_comments, Comments};
use warpjit_ir::types::Type;

fn fmt(src: &str) -> String {
    format(src).unwrap_or_else(|d| panic!("{}", d.render("test", src)))
}

/// Formatting keeps the program and is a fixed point.
fn check_preserved(src: &str, out: &str) -> Result<(), String> {
    let before = parse(src).map_err(|d| d.render("source", src))?;
    let after = parse(out).map_err(|d| format!("{}\n{out}", d.render("formatted", out)))?;
    if before != after {
        return Err(format!("the formatted text is another program:\n{out}"));
    }
    let again = fmt(out);
    if again != out {
        return Err(format!(
            "formatting again changes the text:\nfirst:\n{out}\nsecond:\n{again}"
        ));
    }
    Ok(())
}

fn check_format(src: &str, expected: &str) {
    let out = fmt(src);
    assert_eq!(out, expected, "\n--- formatted:\n{out}");
    check_preserved(src, &out).unwrap_or_else(|e| panic!("{e}"));
}

fn check_unchanged(src: &str) {
    check_format(src, src);
}

/// A literal spelled another way than the canonical form in every kind of
/// position: `T` slots, fixed slots (`bfe` offsets, `cvt` sources, call
/// arguments), addresses, stored values, the operands after `mask`,
/// `width` and `guard`, return values, `if` conditions, `ordered` keys,
/// and the numbers of declarations.
const EVERY_SLOT: &str = "\
param %n: i32
buffer @out[0x2]: u32
buffer @halves[03]: f16
shared @tile[0x400]

kernel @main workgroup(0x20, 0x2) {
  var $f: f32
  private @stack[0x40]
  %i = lane_id
  %t1 = add %i, 0x1f
  %t2 = and %i, 0xffffffff
  %t3 = sub %i, -0007
  %t4 = xor %i, 0XFF
  %t5 = add %i, -0
  %l = add 0x00000000ffffffff:i64, 1
  %g = mul 0x00800000:f32, 0.50
  $f = add 1e1, 0x3f800000
  %n1 = add %g, nan
  %n2 = add %g, -nan
  %n3 = max %g, inf
  %n4 = min %g, -inf
  %pi = mul %g, 3.14159265358979323846264338327950288
  %fixed = bfe.u %i, 0x4, 0x08
  %conv = cvt.s32.f32 nan
  %big = cvt.s32.f32 4294967296.0
  %third = cvt.f32.f16 0.333251953125
  %r, %ok = shuffle.down %i, 0x1, mask 0x1f
  %w, %ok2 = shuffle.idx %i, 0, width 0x20
  %v = vote.all %ok, guard 0x1:bool
  %x = load.u32 @out, 0xffffffff
  store.u32 @out, 0x10, 0xffffffff
  store.f16 @halves, 2, 1.00048828125
  store.f16 @halves, 4, 1.00048828125:f16
  store.u16 @halves, 6, 0x3c01
  %old = atom.add.u32 @out, 0, 0xffffffff
  %s = select %ok, 1:i32, 0:i32
  %call = call @half(0x3f800000)
  if 0x1:bool {
    kill
  }
  ordered 0x7 {}
}

func @half(%x: f32) -> f32 {
  %h = mul %x, 5e-1
  return 0x3f000000
}
";

/// EVERY_SLOT in the canonical form: the same constants.
const EVERY_SLOT_CANONICAL: &str = "\
param %n: i32
buffer @out[2]: u32
buffer @halves[3]: f16
shared @tile[1024]

kernel @main workgroup(32, 2) {
  var $f: f32
  private @stack[64]
  %i = lane_id
  %t1 = add %i, 31
  %t2 = and %i, -1
  %t3 = sub %i, -7
  %t4 = xor %i, 255
  %t5 = add %i, 0
  %l = add 0xffffffff:i64, 1
  %g = mul 1.1754944e-38:f32, 0.5
  $f = add 10.0, 1.0
  %n1 = add %g, 0x7fc00000
  %n2 = add %g, 0xffc00000
  %n3 = max %g, inf
  %n4 = min %g, -inf
  %pi = mul %g, 3.1415927
  %fixed = bfe.u %i, 4, 8
  %conv = cvt.s32.f32 0x7fc00000
  %big = cvt.s32.f32 4294967300.0
  %third = cvt.f32.f16 0.33325195
  %r, %ok = shuffle.down %i, 1, mask 31
  %w, %ok2 = shuffle.idx %i, 0, width 32
  %v = vote.all %ok, guard true
  %x = load.u32 @out, -1
  store.u32 @out, 16, -1
  store.f16 @halves, 2, 1.0004883
  store.f16 @halves, 4, 1.0:f16
  store.u16 @halves, 6, 15361
  %old = atom.add.u32 @out, 0, -1
  %s = select %ok, 1:i32, 0
  %call = call @half(1.0)
  if true {
    kill
  }
  ordered 7 {}
}

func @half(%x: f32) -> f32 {
  %h = mul %x, 0.5
  return 0.5
}
";

#[test]
fn fmt_keeps_every_literal_as_written_in_every_kind_of_position() {
    check_unchanged(EVERY_SLOT);
}

#[test]
fn print_still_writes_the_canonical_form() {
    let module = parse(EVERY_SLOT).expect("parses");
    assert_eq!(print(&module), EVERY_SLOT_CANONICAL);
    assert_eq!(
        print_with_comments(&module, &Comments::default()),
        EVERY_SLOT_CANONICAL
    );
    // The two spellings are one program, and the canonical text formats
    // to itself.
    assert_eq!(parse(EVERY_SLOT_CANONICAL).expect("parses"), module);
    check_unchanged(EVERY_SLOT_CANONICAL);
}

#[test]
fn hex_bit_patterns_in_unsigned_positions_are_not_turned_negative() {
    // `mask 0x1f` is not `mask 31`, and an all-ones u32 is not `-1`.
    let src = "\
buffer @cells[0]: u32

kernel @main {
  %d = lane_id
  %r, %ok = shuffle.down %d, 1, mask 0x1f
  store.u32 @cells, 16, 0xffffffff
  %old = atom.iwrap.u32 @cells, 16, 0xffffffff
  %q = div.u 0xffffffff:i32, 2
}
";
    check_unchanged(src);
    let canonical = print(&parse(src).expect("parses"));
    assert!(canonical.contains("mask 31"), "{canonical}");
    assert!(
        canonical.contains("atom.iwrap.u32 @cells, 16, -1"),
        "{canonical}"
    );
}

#[test]
fn float_spellings_are_kept_nan_inf_hex_bits_and_long_decimals() {
    // Canonically `nan` is `0x7fc00000`, 4294967296.0 is 4294967300.0 (the
    // shortest text of the same f32), and 0x00800000 is 1.1754944e-38.
    check_unchanged(
        "\
kernel @main {
  %a = cvt.s32.f32 nan
  %b = cvt.s32.f32 -nan
  %c = cvt.s32.f32 inf
  %d = cvt.s32.f32 -inf
  %e = cvt.s32.f32 4294967296.0
  %f = cvt.s32.f32 2147483520.0
  %g = mul 0x00800000:f32, 0.5
  %h = add 0.1:f64, 0.30000000000000000000000000000001
  %i = add 1.00:f32, 1E3
  %j = add -0.0:f32, -0
}
",
    );
}

#[test]
fn exact_f16_decimals_are_kept() {
    // 1.00048828125 = 1 + 2^-11 is exact in f32 and ties to 1.0 in f16;
    // 0.333251953125 is the f16 0x3555 exactly.
    check_unchanged(
        "\
buffer @halves[0]: f16

kernel @main {
  store.f16 @halves, 0, 1.00048828125
  store.f16 @halves, 2, 1.00048828125:f16
  %third = cvt.f32.f16 0.333251953125
  %h = bitcast.i16 0.333251953125:f16
}
",
    );
}

#[test]
fn typed_literals_keep_their_suffix_even_where_it_is_redundant() {
    // The canonical form drops the second suffix of each `select`.
    check_unchanged(
        "\
kernel @main {
  %i = lane_id
  %c = cmp.eq %i, 0:i32
  %s = select %c, 1:i32, 0:i32
  %f = select %c, 1.0:f32, 0.0:f32
  %t = add %i, 1:i32
  %w = mov 5:i64
}
",
    );
}

#[test]
fn only_the_spaces_around_a_suffix_are_dropped() {
    check_format(
        "\
kernel @main {
  %a = add 0x1f : i32, 07
  %b = mov 1.50 :f32
  %c = mov 2:  i64
  %d = mov 0x1
    :
    bool
}
",
        "\
kernel @main {
  %a = add 0x1f:i32, 07
  %b = mov 1.50:f32
  %c = mov 2:i64
  %d = mov 0x1:bool
}
",
    );
}

#[test]
fn spellings_survive_a_relayout_with_comments() {
    check_format(
        "\
kernel @main workgroup(0x40) { // entry
  %i = lane_id
  %m = and %i,   // low bits
     0x1f
  ordered 0x3 { } // one round per key
}
",
        "\
kernel @main workgroup(0x40) { // entry
  %i = lane_id
  // low bits
  %m = and %i, 0x1f
  ordered 0x3 {} // one round per key
}
",
    );
}

#[test]
fn declaration_numbers_keep_their_spelling_and_trailing_sizes_of_one_still_go() {
    check_format(
        "kernel @main workgroup(0x10, 0x1, 01) { private @p[0x10] }\nshared @s[010]\n",
        "shared @s[010]\n\nkernel @main workgroup(0x10) {\n  private @p[0x10]\n}\n",
    );
}

#[test]
fn a_spelling_that_no_longer_reads_back_gives_way_to_the_canonical_suffix() {
    // `add 0x10, 1` into an f32 variable: both literals are f32. Once the
    // variable is i32, the bare `0x10` would read as an i32 there, so it is
    // written with its type; its digits still say the same f32.
    let src = "kernel @main {\n  var $x: f32\n  $x = add 0x10, 1\n}\n";
    let (mut module, comments) = parse_with_comments(src).expect("parses");
    module.functions[0].vars[0].ty = Type::I32;
    let out = print_with_comments(&module, &comments);
    assert_eq!(
        out,
        "kernel @main {\n  var $x: i32\n  $x = add 0x10:f32, 1\n}\n"
    );
    assert_eq!(parse(&out).expect("parses"), module);
}

#[test]
fn spellings_of_another_text_are_used_only_where_they_read_back() {
    // Same layout, other constants: each spelling is checked against the
    // constant it would stand for.
    let (_, comments) =
        parse_with_comments("kernel @main {\n  %a = add 0x1f:i32, nan:f32\n}\n").expect("parses");
    let other = parse("kernel @main {\n  %a = add 31:i64, 2.5:f32\n}\n").expect("parses");
    let out = print_with_comments(&other, &comments);
    assert_eq!(out, "kernel @main {\n  %a = add 0x1f:i64, 2.5:f32\n}\n");
    assert_eq!(parse(&out).expect("parses"), other);
}

#[test]
fn a_file_whose_literals_are_all_canonical_formats_as_print_does() {
    let module = parse(EVERY_SLOT_CANONICAL).expect("parses");
    let (same, comments) = parse_with_comments(EVERY_SLOT_CANONICAL).expect("parses");
    assert_eq!(same, module);
    assert_eq!(print_with_comments(&module, &comments), print(&module));
}

/// Rewrites every literal of a canonical text another way that means the
/// same in any position: zeros after the sign or `0x`, upper-case hex
/// digits, zeros at the end of a decimal fraction. Returns the text with
/// spaces put around some `:type` suffixes, and the text without them.
fn respell(text: &str, seed: u64) -> (String, String) {
    let mut rng = SplitMix64::new(seed);
    let bytes = text.as_bytes();
    let mut spaced = String::new();
    let mut plain = String::new();
    let mut i = 0;
    while i < text.len() {
        let after_separator = i == 0 || b" ,([".contains(&bytes[i - 1]);
        let starts_literal = after_separator
            && (bytes[i].is_ascii_digit()
                || (bytes[i] == b'-' && bytes.get(i + 1).is_some_and(|b| b.is_ascii_digit()))
                || ["inf", "nan", "-inf", "-nan"]
                    .iter()
                    .any(|w| text[i..].starts_with(w)));
        if !starts_literal {
            spaced.push(bytes[i] as char);
            plain.push(bytes[i] as char);
            i += 1;
            continue;
        }
        let end = text[i..]
            .find([':', ',', ')', ']', ' ', '\n'])
            .map_or(text.len(), |n| i + n);
        let literal = respelled(&text[i..end], &mut rng);
        spaced.push_str(&literal);
        plain.push_str(&literal);
        i = end;
        if bytes.get(i) == Some(&b':') {
            let spaces = [":", " : ", " :", ": ", "\n:\n"];
            spaced.push_str(spaces[rng.below(spaces.len() as u64) as usize]);
            plain.push(':');
            i += 1;
        }
    }
    (spaced, plain)
}

fn respelled(literal: &str, rng: &mut SplitMix64) -> String {
    let zeros = "0".repeat(rng.below(3) as usize);
    if let Some(digits) = literal.strip_prefix("0x") {
        let digits = if rng.below(2) == 0 {
            digits.to_ascii_uppercase()
        } else {
            digits.to_string()
        };
        return format!("0x{zeros}{digits}");
    }
    let (sign, body) = match literal.strip_prefix('-') {
        Some(rest) => ("-", rest),
        None => ("", literal),
    };
    if body == "inf" || body == "nan" {
        return literal.to_string();
    }
    if body.bytes().all(|b| b.is_ascii_digit()) {
        return format!("{sign}{zeros}{body}");
    }
    let (mantissa, exponent) = match body.find(['e', 'E']) {
        Some(at) => body.split_at(at),
        None => (body, ""),
    };
    if mantissa.contains('.') {
        format!("{sign}{mantissa}{zeros}{exponent}")
    } else {
        format!("{sign}{mantissa}.0{zeros}{exponent}")
    }
}

fn respelled_program_keeps_its_spellings(seed: u64, cfg: &GenConfig) -> Result<(), String> {
    let module = generate(&mut SplitMix64::new(seed), cfg);
    let (src, expected) = respell(&print(&module), seed);
    let parsed =
        parse(&src).map_err(|d| format!("seed {seed}: {}", d.render("respelled", &src)))?;
    if parsed != module {
        return Err(format!(
            "seed {seed}: respelling changed the program:\n{src}"
        ));
    }
    let out = format(&src).map_err(|d| d.render("respelled", &src))?;
    if out != expected {
        return Err(format!(
            "seed {seed}: the formatted text is not the respelled one:\n{expected}\n---\n{out}"
        ));
    }
    check_preserved(&src, &out).map_err(|e| format!("seed {seed}: {e}"))
}

#[test]
fn generated_programs_keep_every_respelled_literal_for_a_seed_range() {
    let cfg = GenConfig::default();
    for seed in 0..150 {
        respelled_program_keeps_its_spellings(seed, &cfg).unwrap_or_else(|e| panic!("{e}"));
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 100, ..ProptestConfig::default() })]

    #[test]
    fn generated_programs_keep_every_respelled_literal(
        seed in any::<u64>(),
        stmts in 1usize..80,
    ) {
        let cfg = GenConfig { max_stmts: stmts, ..GenConfig::default() };
        respelled_program_keeps_its_spellings(seed, &cfg).map_err(TestCaseError::fail)?;
    }
}

/// The respelling really changes the text, so the tests above see
/// non-canonical spellings.
#[test]
fn the_respelling_changes_literals() {
    let text =
        "kernel @main workgroup(64) {\n  %a = add 0x10000:i32, -5\n  %b = mul 1.5:f32, 1e-10\n}\n";
    let changed = (0..20).any(|seed| respell(text, seed).1 != text);
    assert!(changed);
    let (spaced, plain) = respell(text, 3);
    assert_eq!(
        parse(&spaced).expect("parses"),
        parse(text).expect("parses")
    );
    assert_eq!(fmt(&spaced), plain);
}
