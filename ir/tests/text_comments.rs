//! Comments through the formatter (docs/text-format.md, "Comments and
//! blank lines"): `parse_with_comments` keeps them beside the module and
//! `print_with_comments` writes the canonical form with every comment on
//! or above the line it was on or above.

use proptest::prelude::*;
use warpjit_ir::generate::{generate, GenConfig, SplitMix64};
use warpjit_ir::text::{
    format, parse, parse_with_comments, print, print_with_comments, Comments, MAX_NESTING,
};

fn fmt(src: &str) -> String {
    format(src).unwrap_or_else(|d| panic!("{}", d.render("test", src)))
}

/// The comments of a text, sorted: every `//` starts one, as no token
/// contains a `/`.
fn comment_texts(text: &str) -> Vec<String> {
    let mut texts: Vec<String> = text
        .lines()
        .filter_map(|line| line.find("//").map(|at| line[at..].trim_end().to_string()))
        .collect();
    texts.sort();
    texts
}

/// What every formatting must keep: the program, every comment, and the
/// text itself when formatted again.
fn check_preserved(src: &str, out: &str) -> Result<(), String> {
    let before = parse(src).map_err(|d| d.render("source", src))?;
    let after = parse(out).map_err(|d| format!("{}\n{out}", d.render("formatted", out)))?;
    if before != after {
        return Err(format!("the formatted text is another program:\n{out}"));
    }
    if comment_texts(src) != comment_texts(out) {
        return Err(format!(
            "comments differ: {:?} became {:?}\n{out}",
            comment_texts(src),
            comment_texts(out)
        ));
    }
    let again = fmt(out);
    if again != out {
        return Err(format!(
            "formatting again changes the text:\nfirst:\n{out}\nsecond:\n{again}"
        ));
    }
    Ok(())
}

/// Formats `src`, expects `expected`, and checks what must be kept.
fn check_format(src: &str, expected: &str) {
    let out = fmt(src);
    assert_eq!(out, expected, "\n--- formatted:\n{out}");
    check_preserved(src, &out).unwrap_or_else(|e| panic!("{e}"));
}

fn check_unchanged(src: &str) {
    check_format(src, src);
}

#[test]
fn leading_comments_stay_above_their_statement() {
    check_unchanged(
        "\
kernel @main {
  // The lane, twice.
  %i = lane_id
  // Summed with itself:
  // no multiply needed.
  %j = add %i, %i
}
",
    );
}

#[test]
fn trailing_comments_stay_on_their_line_aligned_in_one_column() {
    check_format(
        "\
kernel @main {
%i = lane_id // the lane
%double = add %i, %i     // twice
%odd = and %i, 1
%c = cmp.eq %odd, 1  // odd?
}
",
        "\
kernel @main {
  %i = lane_id         // the lane
  %double = add %i, %i // twice
  %odd = and %i, 1
  %c = cmp.eq %odd, 1 // odd?
}
",
    );
}

#[test]
fn a_comment_line_under_a_trailing_comment_continues_it() {
    check_format(
        "\
param %width: i32    // a uniform scalar
buffer @out[0]: u32  // global memory at binding 0; u32 is the
                     // element type tools use
shared @tile[1024]   // bytes of shared memory
  // leads the kernel
kernel @main {}
",
        "\
param %width: i32   // a uniform scalar
buffer @out[0]: u32 // global memory at binding 0; u32 is the
                    // element type tools use
shared @tile[1024]  // bytes of shared memory

// leads the kernel
kernel @main {
}
",
    );
}

#[test]
fn comments_at_the_end_of_a_block_stay_before_its_brace() {
    check_format(
        "\
kernel @main {
  %i = lane_id
  loop {
    break
    // after the break
  }
  ordered %i {
    // nothing to do
  }
  // end of the body
}
",
        "\
kernel @main {
  %i = lane_id
  loop {
    break
    // after the break
  }
  ordered %i {
    // nothing to do
  }
  // end of the body
}
",
    );
}

#[test]
fn comments_in_if_and_else_branches_stay_in_their_branch() {
    check_format(
        "\
kernel @main {
  var $x: i32
  %c = is_helper
  if %c {   // the helpers
    // one
    $x = mov 1
    // end of then
  } else {  // the others
    // two
    $x = mov 2
    // end of else
  }   // after the if
}
",
        "\
kernel @main {
  var $x: i32
  %c = is_helper
  if %c { // the helpers
    // one
    $x = mov 1
    // end of then
  } else { // the others
    // two
    $x = mov 2
    // end of else
  } // after the if
}
",
    );
}

#[test]
fn comments_in_else_if_chains_stay_in_their_branch() {
    check_unchanged(
        "\
kernel @main {
  var $x: i32
  %lane = lane_id
  %low = cmp.lt.u %lane, 8
  %mid = cmp.lt.u %lane, 20
  if %low {
    $x = mov 1
    // end of the first branch
  } else if %mid { // the middle lanes
    $x = mov 2
  } else {
    // the rest
    $x = mov 3
  }
}
",
    );
}

#[test]
fn an_else_block_holding_an_if_and_comments_is_not_joined_to_else_if() {
    // Without comments the same program prints as `else if`.
    let src = "\
kernel @main {
  var $x: i32
  %c = is_helper
  if %c {
    $x = mov 1
  } else {
    // Only the helpers' complement reaches here.
    if %c {
      $x = mov 2
    }
  }
}
";
    check_unchanged(src);
    assert!(print(&parse(src).unwrap()).contains("} else if %c {"));
    let trailing_brace = src.replace("    }\n  }\n}", "    }\n  } // done\n}");
    let trailing_brace =
        trailing_brace.replace("    // Only the helpers' complement reaches here.\n", "");
    check_unchanged(&trailing_brace);
}

#[test]
fn a_comment_between_the_brace_and_else_goes_to_the_end_of_the_then_block() {
    check_format(
        "\
kernel @main {
  var $x: i32
  %c = is_helper
  if %c {
    $x = mov 1
  }
  // otherwise
  else {
    $x = mov 2
  }
}
",
        "\
kernel @main {
  var $x: i32
  %c = is_helper
  if %c {
    $x = mov 1
    // otherwise
  } else {
    $x = mov 2
  }
}
",
    );
}

#[test]
fn empty_blocks_with_comments_open_up() {
    check_format(
        "\
kernel @main {
  %c = is_helper
  if %c {} // nothing yet
  loop { // forever
  }
  if %c {
  } else {
    // not here either
  }
  if %c {} else {}
}
",
        "\
kernel @main {
  %c = is_helper
  if %c {} // nothing yet
  loop {   // forever
  }
  if %c {} else {
    // not here either
  }
  if %c {}
}
",
    );
}

#[test]
fn module_items_keep_their_comments_when_the_canonical_order_moves_them() {
    check_format(
        "\
// The file's header.
//! run: --grid 1

// Results go here.
buffer @out[0]: u32 // binding 0

kernel @main {
  %i = lane_id
}

// The count,
// set at launch.
param %n: i32 // elements
",
        "\
// The file's header.
//! run: --grid 1

// The count,
// set at launch.
param %n: i32 // elements

// Results go here.
buffer @out[0]: u32 // binding 0

kernel @main {
  %i = lane_id
}
",
    );
}

#[test]
fn variable_and_private_declarations_take_their_comments_to_the_top() {
    check_format(
        "\
kernel @main {
  %i = lane_id
  // The running total.
  var $sum: i32 // starts at 0
  $sum = add $sum, %i
  private @stack[64] // spill space
}
",
        "\
kernel @main {
  // The running total.
  var $sum: i32      // starts at 0
  private @stack[64] // spill space
  %i = lane_id
  $sum = add $sum, %i
}
",
    );
}

#[test]
fn comments_at_the_end_of_the_file_stay_at_the_end() {
    check_format(
        "\
buffer @out[0]: u32
kernel @main {
  %i = lane_id
}   // end of main
// The result of a run:
//! expect: out[0] = 0

// Last words.
",
        "\
buffer @out[0]: u32

kernel @main {
  %i = lane_id
} // end of main
// The result of a run:
//! expect: out[0] = 0

// Last words.
",
    );
}

#[test]
fn directive_lines_stay_where_they_are() {
    check_unchanged(
        "\
// Header text.
//! run: --grid 1 --workgroup 8 --buffer out=zeros:8

buffer @out[0]: f32

kernel @main workgroup(8) {
  %i = global_id.x
  %x = cvt.f32.s32 %i
  %y = mul %x, %i //! expect-error: has type i32, expected f32
  %addr = shl %i, 2
  store.f32 @out, %addr, %y
}

//! expect: out[0] = 0
",
    );
}

#[test]
fn comments_inside_a_statement_written_on_several_lines_go_above_it() {
    check_format(
        "\
kernel @main {
  %i = lane_id
  %sum = add %i,   // the lane
             %i    // and again
  if               // the test
     %i {}
}
",
        "\
kernel @main {
  %i = lane_id
  // the lane
  %sum = add %i, %i // and again
  // the test
  if %i {}
}
",
    );
}

#[test]
fn blank_lines_between_statements_are_kept_one_at_most() {
    check_format(
        "\
param %n: i32

buffer @out[0]: u32
kernel @main {

  %i = lane_id


  %j = add %i, 1
  // about k

  %k = add %j, 1

}
",
        "\
param %n: i32

buffer @out[0]: u32

kernel @main {
  %i = lane_id

  %j = add %i, 1
  // about k

  %k = add %j, 1
}
",
    );
}

#[test]
fn a_file_of_comments_only_keeps_them() {
    check_format("// nothing\n\n\n// here\n", "// nothing\n\n// here\n");
    check_format("", "");
}

#[test]
fn without_comments_or_blank_lines_the_text_is_the_canonical_form() {
    let src = "kernel @main { %i = lane_id %j = add %i, 1 if %i { kill } }";
    let (module, comments) = parse_with_comments(src).unwrap();
    assert!(comments.is_empty());
    assert_eq!(print_with_comments(&module, &comments), print(&module));
    assert_eq!(
        print_with_comments(&module, &Comments::default()),
        print(&module)
    );
}

#[test]
fn the_side_table_counts_the_comments() {
    let src = "// a\nkernel @main { // b\n  kill // c\n  // d\n}\n// e\n";
    let (_, comments) = parse_with_comments(src).unwrap();
    assert_eq!(comments.len(), 5);
    assert!(!comments.is_empty());
    assert_eq!(comment_texts(&fmt(src)).len(), 5);
}

#[test]
fn crlf_text_formats_like_lf_text() {
    let lf = "// head\n\nkernel @main { // entry\n  %i = lane_id\n  kill // out\n}\n";
    let crlf = lf.replace('\n', "\r\n");
    assert_eq!(fmt(&crlf), fmt(lf));
    assert_eq!(fmt(lf), lf);
}

#[test]
fn a_header_after_a_byte_order_mark_stays_on_top() {
    let plain = "//! run: --buffer out=zeros:32\nbuffer @out[0]: u32\n\nkernel @main workgroup(32) {\n  membar\n}\n";
    for header_gap in ["", "\n"] {
        let src = format!(
            "\u{feff}{}",
            plain.replacen('\n', &format!("\n{header_gap}"), 1)
        );
        let out = fmt(&src);
        assert!(out.starts_with("//! run: --buffer out=zeros:32\n"), "{out}");
        assert_eq!(out.matches("//!").count(), 1, "{out}");
    }
}

#[test]
fn lone_carriage_returns_are_refused_where_they_are() {
    // Old Mac line endings: a comment would run to the end of the file.
    let err = |src: &str| {
        let d = parse_with_comments(src).unwrap_err();
        let d = &d.0[0];
        (d.line_col(src), d.message.clone())
    };
    let (at, message) = err("// head\rkernel @main {\r  kill\r}\r");
    assert_eq!(at, (1, 8));
    assert!(
        message.starts_with("a carriage return without a line feed"),
        "{message}"
    );
    assert_eq!(err("kernel @main {\r  kill\r\n}\n").0, (1, 15));
    // At the end of the file too, in a comment or not.
    assert_eq!(err("kernel @main {\n}\n// last\r").0, (3, 8));
    assert_eq!(err("kernel @main {\n}\r").0, (2, 2));
}

#[test]
fn parse_errors_are_the_same_as_without_comments() {
    let src = "// c\nkernel @main {\n  %x = frobnicate 1\n}\n";
    assert_eq!(
        parse_with_comments(src).unwrap_err(),
        parse(src).unwrap_err()
    );
}

/// Inserts comments and blank lines into `text` at places a seed picks:
/// after a token in mid-line (the rest moves to the next line), at the end
/// of a line, and on lines of their own at random indentation. Not inside
/// `} else if %c {`, which would make the else block explicit.
fn sprinkle(text: &str, seed: u64) -> String {
    let mut rng = SplitMix64::new(seed);
    let mut out = String::new();
    let mut count = 0;
    let mut in_else_if = false;
    for (i, c) in text.char_indices() {
        if i == 0 || text.as_bytes()[i - 1] == b'\n' {
            let line = text[i..].lines().next().unwrap_or("");
            in_else_if = line.contains("} else if ");
        }
        let roll = rng.next_u64() % 16;
        match c {
            ' ' if roll == 0 && !in_else_if => {
                count += 1;
                out.push_str(&format!(" // mid {count}\n"));
            }
            '\n' if roll <= 2 => {
                count += 1;
                out.push_str(&format!("  // trailing {count}\n"));
            }
            '\n' if roll == 3 => {
                count += 1;
                let indent = " ".repeat((rng.next_u64() % 9) as usize);
                out.push_str(&format!("\n{indent}// own line {count}\n"));
            }
            '\n' if roll == 4 => out.push_str("\n\n"),
            _ => out.push(c),
        }
    }
    out
}

/// The code of a text without spaces, and each comment with the length of
/// that code before it.
fn code_and_comments(text: &str) -> (String, Vec<(usize, String)>) {
    let mut code = String::new();
    let mut comments = Vec::new();
    for line in text.lines() {
        let (code_part, comment) = match line.find("//") {
            Some(at) => (&line[..at], Some(line[at..].trim_end())),
            None => (line, None),
        };
        code.extend(code_part.chars().filter(|c| !c.is_whitespace()));
        if let Some(comment) = comment {
            comments.push((code.len(), comment.to_string()));
        }
    }
    (code, comments)
}

/// Formatting a canonical program with comments changes only the layout:
/// the code is the same, the comments come in the same order, and none
/// moves past code (a comment inside a joined line moves up above it).
fn check_nothing_moves_down(src: &str, out: &str) -> Result<(), String> {
    let (src_code, src_comments) = code_and_comments(src);
    let (out_code, out_comments) = code_and_comments(out);
    if src_code != out_code {
        let at = src_code
            .bytes()
            .zip(out_code.bytes())
            .position(|(a, b)| a != b)
            .unwrap_or(src_code.len().min(out_code.len()));
        let from = at.saturating_sub(40);
        return Err(format!(
            "the code changed: `{}` became `{}`\n{out}",
            &src_code[from..(at + 40).min(src_code.len())],
            &out_code[from..(at + 40).min(out_code.len())]
        ));
    }
    let texts = |c: &[(usize, String)]| c.iter().map(|(_, t)| t.clone()).collect::<Vec<_>>();
    if texts(&src_comments) != texts(&out_comments) {
        return Err(format!("the comments changed order:\n{out}"));
    }
    for ((before, text), (after, _)) in src_comments.iter().zip(&out_comments) {
        if after > before {
            return Err(format!("`{text}` moved down past code:\n{out}"));
        }
    }
    Ok(())
}

fn sprinkled_program_keeps_everything(seed: u64, cfg: &GenConfig) -> Result<(), String> {
    let module = generate(&mut SplitMix64::new(seed), cfg);
    let src = sprinkle(&print(&module), seed);
    let out = format(&src).map_err(|d| format!("seed {seed}: {}", d.render("sprinkled", &src)))?;
    check_preserved(&src, &out)
        .and_then(|()| check_nothing_moves_down(&src, &out))
        .map_err(|e| format!("seed {seed}:\n{src}\n---\n{e}"))
}

#[test]
fn generated_programs_with_comments_sprinkled_in_keep_them_for_a_seed_range() {
    let cfg = GenConfig::default();
    for seed in 0..150 {
        sprinkled_program_keeps_everything(seed, &cfg).unwrap_or_else(|e| panic!("{e}"));
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 100, ..ProptestConfig::default() })]

    #[test]
    fn generated_programs_with_comments_sprinkled_in_keep_them(
        seed in any::<u64>(),
        stmts in 1usize..80,
    ) {
        let cfg = GenConfig { max_stmts: stmts, ..GenConfig::default() };
        sprinkled_program_keeps_everything(seed, &cfg).map_err(TestCaseError::fail)?;
    }
}

#[test]
fn a_long_single_line_program_formats_in_linear_time() {
    // Line lookups must not scan from the start of the line each time.
    let mut src = String::from("kernel @main { %v0 = lane_id ");
    for i in 1..100_000 {
        src.push_str(&format!("%v{i} = add %v{}, 1 ", i - 1));
    }
    src.push_str("} // end\n");
    let out = fmt(&src);
    assert_eq!(out.lines().count(), 100_002);
    assert!(out.ends_with("} // end\n"), "{}", &out[out.len() - 40..]);
}

#[test]
fn the_deepest_nesting_with_comments_formats_on_a_small_stack() {
    let handle = std::thread::Builder::new()
        .stack_size(2 << 20)
        .spawn(|| {
            let mut src = String::from("kernel @main {\n  var $n: i32\n");
            for level in 1..MAX_NESTING {
                src.push_str(&format!("// level {level}\nif true {{ // open {level}\n"));
                src.push_str("$n = add $n, 1\n");
            }
            src.push_str("kill\n");
            for level in 1..MAX_NESTING {
                src.push_str(&format!("// close {level}\n}} // closed {level}\n"));
            }
            src.push_str("}\n");
            let out = fmt(&src);
            assert_eq!(comment_texts(&out), comment_texts(&src));
            assert_eq!(fmt(&out), out);
        })
        .expect("thread starts");
    handle.join().expect("no stack overflow");
}

#[test]
fn a_comment_at_the_end_of_a_then_block_without_else_stays_there() {
    check_unchanged(
        "\
kernel @main {
  %c = is_helper
  if %c {
    kill
    // done
  } // after
  if %c {
    // nothing
  }
}
",
    );
}

#[test]
fn an_empty_else_block_is_left_out_and_its_trailing_comment_kept() {
    check_format(
        "\
kernel @main {
  %c = is_helper
  if %c {
    kill
  } else { // never
  }
  if %c {
    kill
  } else {
  } // after
  if %c {
    kill
  } else { // never
  } // after
}
",
        "\
kernel @main {
  %c = is_helper
  if %c {
    kill
  } // never
  if %c {
    kill
  } // after
  if %c {
    kill
  } else { // never
  }        // after
}
",
    );
}

/// A program with comments in many kinds of places, for mutation.
const LAYOUT_SAMPLE: &str = "\
// Header.
//! run: --grid 1

param %n: i32 // count
buffer @out[0]: u32
kernel @main workgroup(32) { // entry
  var $x: i32
  %lane = lane_id // lane
                  // more
  %low = cmp.lt.u %lane, %n
  if %low { // low lanes
    $x = mov 1
  } else if %low {
    // never
  } else {
    loop {
      break
    }
    // end of else
  }
  ordered %lane {}

  %addr = shl %lane, 2
  store.u32 @out, %addr, $x
}
// The end.
";

/// Spaces, line breaks and comments dropped into random places of a
/// commented program: it formats to the same program with the same
/// comments, and formatting again changes nothing.
#[test]
fn randomly_relaid_programs_keep_program_and_comments() {
    let pieces = [
        "\n",
        " ",
        "\n\n",
        " // x\n",
        "\n// y\n",
        "\t",
        "\n   // z\n",
    ];
    for seed in 0..400u64 {
        let mut rng = SplitMix64::new(seed);
        let mut src = LAYOUT_SAMPLE.to_string();
        for _ in 0..1 + rng.next_u64() % 6 {
            // Spaces and line ends outside comments.
            let mut boundaries = Vec::new();
            let mut line_start = 0;
            for line in src.split_inclusive('\n') {
                let code_end = line.find("//").unwrap_or(line.len());
                boundaries.extend(
                    line.char_indices()
                        .filter(|&(i, c)| c == '\n' || (c == ' ' && i < code_end))
                        .map(|(i, _)| line_start + i),
                );
                line_start += line.len();
            }
            let at = boundaries[(rng.next_u64() % boundaries.len() as u64) as usize];
            let piece = pieces[(rng.next_u64() % pieces.len() as u64) as usize];
            src.insert_str(at, piece);
        }
        let out = fmt(&src);
        check_preserved(&src, &out).unwrap_or_else(|e| panic!("seed {seed}:\n{src}\n---\n{e}"));
    }
}
