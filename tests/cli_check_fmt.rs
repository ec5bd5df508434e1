//! `warpjit check` and `warpjit fmt` end to end.

use std::path::{Path, PathBuf};
use warpjit::ir::text;
use warpjit::{directives, filetest};

mod cli_support;
use cli_support::{scratch as scratch_dir, warpjit};

fn scratch(test: &str, files: &[(&str, &str)]) -> PathBuf {
    scratch_dir(&format!("check-{test}"), files)
}

const GOOD: &str = "\
param %n: i32
buffer @data[0]: f32

kernel @main workgroup(64) {
  %i = global_id.x
  %in = cmp.lt.u %i, %n
  if %in {
    %addr = shl %i, 2
    %x = load.f32 @data, %addr
    %y = mul %x, %x
    store.f32 @data, %addr, %y
  }
}
";

/// Line 5 adds an f32 to an i32; line 7 stores an i32 as f32.
const BAD: &str = "\
buffer @data[0]: f32

kernel @main workgroup(64) {
  %i = global_id.x
  %y = add %i, 1.5:f32
  %addr = shl %i, 2
  store.f32 @data, %addr, %i
}
";

#[test]
fn check_accepts_a_valid_file() {
    let dir = scratch("good", &[("good.warp", GOOD)]);
    let run = warpjit(&dir, &["check", "good.warp"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stdout.starts_with("ok: good.warp (1 kernel"),
        "{}",
        run.stdout
    );
}

#[test]
fn check_reports_every_error_with_file_line_col_and_caret() {
    let dir = scratch("bad", &[("bad.warp", BAD)]);
    let run = warpjit(&dir, &["check", "bad.warp"]);
    assert_eq!(run.code, 1, "{}", run.stdout);
    assert!(run.stderr.contains("--> bad.warp:5:"), "{}", run.stderr);
    assert!(run.stderr.contains("--> bad.warp:7:"), "{}", run.stderr);
    assert!(run.stderr.contains('^'), "{}", run.stderr);
    assert!(
        run.stderr.contains("2 errors in bad.warp"),
        "{}",
        run.stderr
    );
    assert!(!run.stdout.contains("ok"), "{}", run.stdout);
}

#[test]
fn check_reports_parse_errors_with_position() {
    let dir = scratch(
        "parse",
        &[("syntax.warp", "kernel @main {\n  %x = frobnicate 1\n}\n")],
    );
    let run = warpjit(&dir, &["check", "syntax.warp"]);
    assert_eq!(run.code, 1);
    assert!(run.stderr.contains("syntax.warp:2:"), "{}", run.stderr);
}

#[test]
fn check_of_several_files_fails_if_any_fails() {
    let dir = scratch("several", &[("good.warp", GOOD), ("bad.warp", BAD)]);
    let run = warpjit(&dir, &["check", "good.warp", "bad.warp"]);
    assert_eq!(run.code, 1);
    assert!(run.stdout.contains("ok: good.warp"), "{}", run.stdout);
    assert!(
        run.stderr.contains("error: 1 of 2 files have errors"),
        "{}",
        run.stderr
    );
    let run = warpjit(&dir, &["check", "good.warp", "good.warp"]);
    assert_eq!(run.code, 0);
    assert!(run.stdout.contains("ok: 2 files checked"), "{}", run.stdout);
}

#[test]
fn check_of_a_missing_file_names_it() {
    let dir = scratch("missing", &[]);
    let run = warpjit(&dir, &["check", "absent.warp"]);
    assert_eq!(run.code, 1);
    assert_eq!(run.stderr.trim_end().lines().count(), 1, "{}", run.stderr);
    assert!(
        run.stderr.contains("cannot read absent.warp"),
        "{}",
        run.stderr
    );
    let run = warpjit(&dir, &["check"]);
    assert_ne!(run.code, 0);
}

/// GOOD with odd spacing and layout, and a directive to keep.
const MESSY: &str = "//! run: --param n=4 --buffer data=iota:4\n\
param   %n :i32\nbuffer @data[0]:f32\nkernel @main workgroup(64){\n%i=global_id.x\n\
%in = cmp.lt.u %i,%n\nif %in { %addr = shl %i, 2\n %x = load.f32 @data, %addr\n\
%y = mul %x,%x\nstore.f32 @data,%addr,%y } }\n";

#[test]
fn fmt_prints_canonical_text_that_is_a_fixed_point() {
    let dir = scratch("fmt", &[("messy.warp", MESSY), ("good.warp", GOOD)]);
    let run = warpjit(&dir, &["fmt", "messy.warp"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let canonical = run.stdout;
    // Same program, same canonical text, whatever the layout; the
    // directive stays on its line above the parameter.
    let from_good = warpjit(&dir, &["fmt", "good.warp"]).stdout;
    assert_eq!(from_good, GOOD);
    assert_eq!(
        canonical,
        format!("//! run: --param n=4 --buffer data=iota:4\n{GOOD}")
    );
    std::fs::write(dir.join("canonical.warp"), &canonical).expect("write");
    let run = warpjit(&dir, &["fmt", "--check", "canonical.warp"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.stdout, "ok: canonical.warp is in canonical form\n");
    let run = warpjit(&dir, &["fmt", "canonical.warp"]);
    assert_eq!(run.stdout, canonical);
}

#[test]
fn fmt_check_fails_on_non_canonical_text_and_shows_the_first_difference() {
    let dir = scratch("fmt-check", &[("messy.warp", MESSY)]);
    let run = warpjit(&dir, &["fmt", "--check", "messy.warp"]);
    assert_eq!(run.code, 1);
    assert_eq!(
        run.stderr,
        "messy.warp:2: first difference (- file, + formatted):\n\
         - param   %n :i32\n\
         + param %n: i32\n\
         error: messy.warp:2: not in canonical form (run `warpjit fmt --write messy.warp`)\n"
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("messy.warp")).expect("read"),
        MESSY
    );
}

#[test]
fn fmt_check_names_a_difference_in_line_ends_only() {
    let crlf = GOOD.replace('\n', "\r\n");
    let unterminated = GOOD.trim_end();
    let extra_blank = format!("{GOOD}\n");
    let dir = scratch(
        "fmt-line-ends",
        &[
            ("crlf.warp", &crlf),
            ("unterminated.warp", unterminated),
            ("extra.warp", &extra_blank),
        ],
    );
    let run = warpjit(&dir, &["fmt", "--check", "crlf.warp"]);
    assert_eq!(run.code, 1);
    assert!(
        run.stderr
            .contains("crlf.warp:1: first difference (- file, + formatted):\n- param %n: i32 (a CRLF line end)\n+ param %n: i32\n"),
        "{}",
        run.stderr
    );
    let run = warpjit(&dir, &["fmt", "--check", "unterminated.warp"]);
    assert_eq!(run.code, 1);
    assert!(
        run.stderr.contains("unterminated.warp:13:"),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr
            .contains("- } (no newline at the end of the file)\n+ }\n"),
        "{}",
        run.stderr
    );
    let run = warpjit(&dir, &["fmt", "--check", "extra.warp"]);
    assert_eq!(run.code, 1);
    assert!(
        run.stderr.contains("extra.warp:14: first difference (- file, + formatted):\n- (a blank line)\n+ (end of file)\n"),
        "{}",
        run.stderr
    );
}

/// GOOD with comments in every kind of place and loose blank lines.
const COMMENTED: &str = "\
// Squares every element.
//! run: --param n=4 --buffer data=iota:4

param %n: i32 // the element count
buffer @data[0]: f32

kernel @main workgroup(64) {
  %i = global_id.x
  // Lanes past the end do nothing.
  %in = cmp.lt.u %i, %n
  if %in { // in range
    %addr = shl %i, 2
    %x = load.f32 @data, %addr

    %y = mul %x, %x
    store.f32 @data, %addr, %y
    // done
  }
}
//! expect: data[0..4] = 0 1 4 9
";

#[test]
fn fmt_write_rewrites_in_place_and_keeps_every_comment() {
    let messy_commented = COMMENTED
        .replace("  %in = cmp.lt.u %i, %n", "%in = cmp.lt.u %i,\n   %n")
        .replace("\n\nkernel", "\n\n\n\nkernel")
        .replace("    %y = mul", "  %y   = mul");
    let dir = scratch(
        "fmt-write",
        &[("messy.warp", MESSY), ("commented.warp", &messy_commented)],
    );
    let run = warpjit(&dir, &["fmt", "--write", "messy.warp"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.stdout, "formatted messy.warp\n");
    let run = warpjit(&dir, &["fmt", "--check", "messy.warp"]);
    assert_eq!(run.code, 0, "{}", run.stderr);

    let run = warpjit(&dir, &["fmt", "--write", "commented.warp"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(
        std::fs::read_to_string(dir.join("commented.warp")).expect("read"),
        COMMENTED
    );
    let run = warpjit(&dir, &["fmt", "--write", "commented.warp"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(
        run.stdout,
        "ok: commented.warp is already in canonical form\n"
    );

    let run = warpjit(&dir, &["fmt", "--write", "--check", "commented.warp"]);
    assert_ne!(run.code, 0);
    assert_eq!(run.stderr.trim_end().lines().count(), 1, "{}", run.stderr);
}

/// Numbers written another way than the canonical form: `fmt` keeps them
/// (docs/text-format.md, "Literal spellings").
const SPELLED: &str = "\
buffer @cells[0x0]: u32

kernel @main workgroup(0x20) {
  %i = lane_id
  %r, %ok = shuffle.down %i, 1, mask 0x1f
  store.u32 @cells, 0x10, 0xffffffff
  %n = cvt.s32.f32 nan
  %g = mul 0x00800000:f32, 4294967296.0
  %s = select %ok, 1:i32, 0:i32
}
";

#[test]
fn fmt_keeps_how_each_number_is_written() {
    let messy = SPELLED
        .replace("0x00800000:f32", "0x00800000 : f32")
        .replace("  %n = cvt.s32.f32", "%n = cvt.s32.f32\n   ");
    let dir = scratch(
        "fmt-spelled",
        &[("spelled.warp", SPELLED), ("messy.warp", &messy)],
    );
    let run = warpjit(&dir, &["fmt", "--check", "spelled.warp"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let run = warpjit(&dir, &["fmt", "messy.warp"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.stdout, SPELLED);
    assert_eq!(literal_tokens(&messy), literal_tokens(SPELLED));
}

/// The literals of a text's code in order, with any `:type` suffix, the
/// spaces around it dropped; workgroup sizes are left out (`fmt` drops
/// trailing sizes of 1).
fn literal_tokens(text: &str) -> Vec<String> {
    let mut code = String::new();
    for line in text.lines() {
        code.push_str(line.split("//").next().unwrap_or(""));
        code.push('\n');
    }
    while let Some(at) = code.find("workgroup(") {
        let end = code[at..].find(')').map_or(code.len(), |n| at + n + 1);
        code.replace_range(at..end, " ");
    }
    let mut joined = String::new();
    for piece in code.split(':') {
        if !joined.is_empty() {
            joined.truncate(joined.trim_end().len());
            joined.push(':');
        }
        joined.push_str(if joined.is_empty() {
            piece
        } else {
            piece.trim_start()
        });
    }
    joined
        .split(|c: char| c.is_whitespace() || ",()[]{}=".contains(c))
        .filter(|token| {
            let body = token.strip_prefix('-').unwrap_or(token);
            body.starts_with(|c: char| c.is_ascii_digit())
                || body.starts_with("inf")
                || body.starts_with("nan")
        })
        .map(str::to_string)
        .collect()
}

#[test]
fn literal_tokens_sees_every_number_and_its_suffix() {
    assert_eq!(
        literal_tokens("buffer @b[0x2]: u32 // 5\nkernel @k workgroup(64, 1) {\n  %a = add 0x1f : i32, -nan\n  %p = quad.0 %a\n}\n"),
        ["0x2", "0x1f:i32", "-nan"]
    );
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

/// The examples and filetests, formatted on copies: the program, every
/// comment, every directive and the spelling of every number stay; a
/// second run changes nothing; the filetests still meet their
/// expectations.
#[test]
fn fmt_write_on_copies_of_the_examples_and_filetests_keeps_everything() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    for dir in ["examples", "tests/filetests"] {
        for entry in std::fs::read_dir(root.join(dir)).expect("directory lists") {
            let path = entry.expect("entry").path();
            if path.extension().is_some_and(|e| e == "warp") {
                files.push(path);
            }
        }
    }
    assert!(files.len() >= 7, "{files:?}");
    let dir = scratch("fmt-corpus", &[]);
    for original in files {
        let name = original.file_name().expect("file name").to_string_lossy();
        let source = std::fs::read_to_string(&original).expect("read");
        // A filetest of a parse error has nothing to format.
        if warpjit::ir::text::parse(&source).is_err() {
            assert!(
                source.contains("//! expect-error:"),
                "{name} does not parse"
            );
            continue;
        }
        std::fs::write(dir.join(&*name), &source).expect("copy");
        let run = warpjit(&dir, &["fmt", "--write", &name]);
        assert_eq!(run.code, 0, "{name}: {}", run.stderr);
        let run = warpjit(&dir, &["fmt", "--check", &name]);
        assert_eq!(run.code, 0, "{name}: {}", run.stderr);
        let formatted = std::fs::read_to_string(dir.join(&*name)).expect("read");
        assert_eq!(comment_texts(&formatted), comment_texts(&source), "{name}");
        assert_eq!(
            literal_tokens(&formatted),
            literal_tokens(&source),
            "{name}: a number is written another way"
        );
        let parse =
            |text: &str| text::parse(text).unwrap_or_else(|d| panic!("{}", d.render(&name, text)));
        assert_eq!(parse(&formatted), parse(&source), "{name}");
        let kinds = |text: &str| -> Vec<directives::DirectiveKind> {
            directives::scan(text)
                .expect("directives parse")
                .into_iter()
                .map(|d| d.kind)
                .collect()
        };
        assert_eq!(kinds(&formatted), kinds(&source), "{name}");
        let is_filetest = original.parent().is_some_and(|p| p.ends_with("filetests"));
        if is_filetest && formatted != source && filetest::has_expectations(&formatted) {
            filetest::run_source(&name, &formatted)
                .unwrap_or_else(|e| panic!("formatted {name}: {e}"));
        }
    }
}

#[test]
fn fmt_of_invalid_text_reports_the_position() {
    let dir = scratch(
        "fmt-bad",
        &[("syntax.warp", "kernel @main {\n  %x = frobnicate 1\n}\n")],
    );
    let run = warpjit(&dir, &["fmt", "syntax.warp"]);
    assert_eq!(run.code, 1);
    assert!(run.stderr.contains("syntax.warp:2:"), "{}", run.stderr);
}

#[test]
fn help_and_version_succeed() {
    let dir = scratch("help", &[]);
    let run = warpjit(&dir, &["--help"]);
    assert_eq!(run.code, 0);
    for command in ["check", "fmt", "run"] {
        assert!(run.stdout.contains(command), "{}", run.stdout);
    }
    let run = warpjit(&dir, &["run", "--help"]);
    assert!(
        run.stdout.contains("--buffer <NAME|BINDING=SPEC>"),
        "{}",
        run.stdout
    );
    assert_eq!(warpjit(&dir, &["--version"]).code, 0);
    let run = warpjit(&dir, &["frobnicate"]);
    assert_eq!(run.code, 2);
    assert_eq!(run.stderr.trim_end().lines().count(), 1, "{}", run.stderr);
}
