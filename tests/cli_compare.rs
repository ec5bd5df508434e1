//! `warpjit compare`: two runs timed in alternating pairs, their outputs
//! compared, and the option errors.

mod cli_support;
use cli_support::{scratch, warpjit};

/// A kernel storing `gid OP gid` (or `gid OP k`) at `4 * gid + offset`.
fn program(op: &str, operand: &str, offset: u32) -> String {
    format!(
        "//! run: --grid 2 --buffer out=zeros:u32:64 --print out:0..4\n\
         buffer @out[0]: u32\n\
         \n\
         kernel @main workgroup(32) {{\n\
         \x20 %gid = global_id.x\n\
         \x20 %value = {op} %gid, {operand}\n\
         \x20 %shifted = shl %gid, 2\n\
         \x20 %addr = add %shifted, {offset}\n\
         \x20 store.u32 @out, %addr, %value\n\
         }}\n"
    )
}

fn files() -> Vec<(&'static str, String)> {
    vec![
        ("twice_mul.warp", program("mul", "2", 0)),
        ("twice_add.warp", program("add", "%gid", 0)),
        ("thrice.warp", program("mul", "3", 0)),
        ("out_of_bounds.warp", program("mul", "2", 4096)),
        (
            "broken.warp",
            "buffer @out[0]: u32\nkernel @main {\n  %x = frob 1\n}\n".into(),
        ),
    ]
}

fn dir(test: &str) -> std::path::PathBuf {
    let files = files();
    let refs: Vec<(&str, &str)> = files.iter().map(|(n, t)| (*n, t.as_str())).collect();
    scratch(test, &refs)
}

#[test]
fn equal_programs_give_identical_outputs_and_a_table_of_both() {
    let dir = dir("compare-table");
    let run = warpjit(
        &dir,
        &[
            "compare",
            "twice_mul.warp",
            "twice_add.warp",
            "--pairs",
            "3",
            "--warmups",
            "1",
            "--sms",
            "1",
        ],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    let out = &run.stdout;
    assert!(out.contains("A: twice_mul.warp\n"), "{out}");
    assert!(out.contains("B: twice_add.warp\n"), "{out}");
    assert!(
        out.contains("@main on jit with 1 SM, grid 2x1x1 x workgroup 32x1x1, compiled in"),
        "{out}"
    );
    assert!(
        out.contains("outputs after the first launch: @out identical"),
        "{out}"
    );
    assert!(
        out.contains("3 pairs after 1 warm-up launch of each side"),
        "{out}"
    );
    for side in ["A ", "B "] {
        let row = out
            .lines()
            .find(|l| l.starts_with(side))
            .unwrap_or_else(|| panic!("{out}"));
        assert_eq!(row.matches(" ms").count(), 5, "{row}");
    }
    // Three pairs can never be significant: the least p is 2/8.
    let verdict = out.lines().last().unwrap();
    assert!(verdict.contains("of 3 pairs"), "{verdict}");
    assert!(
        verdict.ends_with("no difference beyond the noise"),
        "{verdict}"
    );
    assert!(
        run.stderr.contains("compare: timed pairs"),
        "{}",
        run.stderr
    );
}

#[test]
fn different_outputs_are_reported_with_the_first_differing_byte() {
    let dir = dir("compare-differ");
    let run = warpjit(
        &dir,
        &[
            "compare",
            "twice_mul.warp",
            "thrice.warp",
            "--pairs",
            "1",
            "--warmups",
            "1",
        ],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    // Lane 0 stores 0 on both sides; lane 1 stores 2 against 3.
    assert!(
        run.stdout.contains("@out differs (first at byte 4)"),
        "{}",
        run.stdout
    );
}

#[test]
fn side_options_apply_to_one_side_only() {
    let dir = dir("compare-sides");
    let run = warpjit(
        &dir,
        &[
            "compare",
            "twice_mul.warp",
            "--a",
            "--backend interp",
            "--b",
            "--sms 2 --opt-level 1",
            "--pairs",
            "2",
            "--warmups",
            "1",
        ],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    let out = &run.stdout;
    assert!(
        out.contains("A: twice_mul.warp --backend interp\n   @main on interp with"),
        "{out}"
    );
    assert!(
        out.contains("B: twice_mul.warp --sms 2 --opt-level 1\n   @main on jit with 2 SMs"),
        "{out}"
    );
    assert!(out.contains("@out identical"), "{out}");
    // B compiles what A compiled, with other launch options: a cache hit,
    // which is not shown as a compile time.
    let run = warpjit(
        &dir,
        &[
            "compare",
            "twice_mul.warp",
            "--b",
            "--sms 2",
            "--pairs",
            "1",
            "--warmups",
            "1",
        ],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    let out = &run.stdout;
    assert_eq!(out.matches(", compiled in ").count(), 1, "A only: {out}");
    assert!(
        out.contains(
            "with 2 SMs, grid 2x1x1 x workgroup 32x1x1, code from the compile cache \
             (the same module and JIT options as A)"
        ),
        "{out}"
    );
    // A side's options are split like a `//! run:` line: quotes group.
    let run = warpjit(
        &dir,
        &[
            "compare",
            "twice_mul.warp",
            "--b",
            "--buffer 'out=zeros:u32:64'",
            "--pairs",
            "1",
            "--warmups",
            "1",
        ],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
}

#[test]
fn json_has_every_timed_launch() {
    let dir = dir("compare-json");
    let run = warpjit(
        &dir,
        &[
            "compare",
            "twice_mul.warp",
            "thrice.warp",
            "--pairs",
            "4",
            "--warmups",
            "1",
            "--json",
        ],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    let json = run.stdout.trim();
    assert!(
        json.starts_with("{\"pairs\": 4, \"warmups\": 1, "),
        "{json}"
    );
    assert_eq!(json.matches("\"times\": [").count(), 2, "{json}");
    for side in json.split("\"times\": [").skip(1) {
        let list = &side[..side.find(']').unwrap()];
        assert_eq!(list.split(", ").count(), 4, "{list}");
    }
    assert!(
        json.contains("{\"name\": \"out\", \"first_difference\": 4}"),
        "{json}"
    );
    // Each side carries what the text report shows.
    for key in [
        "\"grid\": [2, 1, 1], \"workgroup\": [32, 1, 1], ",
        "\"compile_cache_hit\": false, \"min\": ",
        ", \"q1\": ",
        ", \"median\": ",
        ", \"q3\": ",
        ", \"max\": ",
    ] {
        assert_eq!(json.matches(key).count(), 2, "{key} in {json}");
    }
    assert!(json.contains("\"median_ratio_b_over_a\": "), "{json}");
    // Four pairs can never be significant: the least p is 2/16.
    assert!(
        json.contains("\"verdict\": \"no difference beyond the noise\""),
        "{json}"
    );
    assert!(
        run.stderr.is_empty(),
        "no progress with --json: {}",
        run.stderr
    );
}

#[test]
fn bad_options_and_programs_are_clear_errors() {
    let dir = dir("compare-errors");
    let cases: [(&[&str], &str); 7] = [
        (
            &["compare", "twice_mul.warp", "--print", "out"],
            "error: --print is not used by compare",
        ),
        (
            &["compare", "twice_mul.warp", "--b", "--output out=x.txt"],
            "error: --b: --output is not used by compare",
        ),
        (
            &["compare", "twice_mul.warp", "--b", "--smz 2"],
            "error: --b: unexpected argument '--smz'",
        ),
        (
            &["compare", "twice_mul.warp", "--pairs", "0"],
            "'--pairs <N>': 0 is not in 1..=100000",
        ),
        (
            &["compare", "twice_mul.warp", "missing.warp"],
            "error: cannot read missing.warp",
        ),
        (
            &["compare", "twice_mul.warp", "broken.warp"],
            "broken.warp:3:",
        ),
        (
            &[
                "compare",
                "twice_mul.warp",
                "out_of_bounds.warp",
                "--pairs",
                "1",
            ],
            "error: B: the kernel faulted:",
        ),
    ];
    for (args, expected) in cases {
        let run = warpjit(&dir, args);
        assert_ne!(run.code, 0, "{args:?} succeeded:\n{}", run.stdout);
        assert!(run.stderr.contains(expected), "{args:?}: {}", run.stderr);
    }
}
