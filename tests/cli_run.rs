//! `warpjit run` end to end: the built binary on small temporary programs.

use std::path::{Path, PathBuf};
use warpjit::buffers::SplitMix64;

mod cli_support;
use cli_support::{scratch as scratch_dir, warpjit};

fn scratch(test: &str, files: &[(&str, &str)]) -> PathBuf {
    scratch_dir(&format!("run-{test}"), files)
}

fn ok(dir: &Path, args: &[&str]) -> String {
    let run = warpjit(dir, args);
    assert_eq!(run.code, 0, "warpjit {args:?} failed:\n{}", run.stderr);
    run.stdout
}

/// Runs, expects failure, and returns the single stderr line.
fn fails(dir: &Path, args: &[&str]) -> String {
    let run = warpjit(dir, args);
    assert_ne!(run.code, 0, "warpjit {args:?} succeeded:\n{}", run.stdout);
    let lines: Vec<&str> = run.stderr.trim_end().lines().collect();
    assert_eq!(lines.len(), 1, "not one line for {args:?}:\n{}", run.stderr);
    assert!(lines[0].starts_with("error: "), "{}", lines[0]);
    lines[0].to_string()
}

/// The numbers printed in the rows of a `--print` block for `@name`.
fn printed(stdout: &str, name: &str) -> Vec<String> {
    let header = format!("@{name}[");
    let mut lines = stdout.lines().skip_while(|l| !l.starts_with(&header));
    assert!(lines.next().is_some(), "no print of @{name} in:\n{stdout}");
    lines
        .take_while(|l| l.starts_with("  ") && l.contains(':') && !l.contains(" printed "))
        .flat_map(|l| {
            let (_, values) = l.split_once(':').expect("row has an index");
            values
                .split_whitespace()
                .map(str::to_string)
                .collect::<Vec<_>>()
        })
        .collect()
}

/// dst[i] = src[i] for eight invocations.
const COPY: &str = "\
buffer @src[0]: u32
buffer @dst[1]: u32

kernel @main workgroup(8) {
  %i = global_id.x
  %addr = shl %i, 2
  %v = load.u32 @src, %addr
  store.u32 @dst, %addr, %v
}
";

/// data[i] = data[i] * scale + offset for i < n.
const AXPB: &str = "\
param %n: i32
param %scale: f32
param %offset: i32
buffer @data[0]: f32
buffer @ints[1]: s32

kernel @main workgroup(16) {
  %i = global_id.x
  %in = cmp.lt.u %i, %n
  if %in {
    %addr = shl %i, 2
    %x = load.f32 @data, %addr
    %y = mul %x, %scale
    store.f32 @data, %addr, %y
    %k = load.s32 @ints, %addr
    %m = add %k, %offset
    store.s32 @ints, %addr, %m
  }
}
";

fn strings(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

#[test]
fn iota_copies_through_and_prints_decimal() {
    let dir = scratch("iota", &[("copy.warp", COPY)]);
    let out = ok(
        &dir,
        &[
            "run",
            "copy.warp",
            "--buffer",
            "src=iota:8:5:2",
            "--buffer",
            "dst=zeros:8",
            "--print",
            "dst",
        ],
    );
    assert_eq!(
        printed(&out, "dst"),
        strings(&["5", "7", "9", "11", "13", "15", "17", "19"])
    );
    assert!(
        out.contains("ran @main on jit: grid 1x1x1 x workgroup 8x1x1"),
        "{out}"
    );
    // Compiled code counts no statements; the time line says how long
    // compiling took instead.
    assert!(!out.contains("statements executed"), "{out}");
    assert!(out.contains("compiled in"), "{out}");
    assert!(out.contains("faults: none"), "{out}");
    assert!(out.contains("printed @dst[0..8] as u32"), "{out}");
}

#[test]
fn zeros_and_const_fill_every_element() {
    let dir = scratch("const", &[("copy.warp", COPY)]);
    let out = ok(
        &dir,
        &[
            "run",
            "copy.warp",
            "--buffer",
            "src=const:u32:8:0xdeadbeef",
            "--buffer",
            "dst=zeros:u32:8",
            "--print",
            "dst:hex",
            "--print",
            "src:6..8",
        ],
    );
    assert_eq!(printed(&out, "dst"), vec!["0xdeadbeef".to_string(); 8]);
    assert_eq!(printed(&out, "src"), vec!["3735928559".to_string(); 2]);
}

#[test]
fn random_is_splitmix64_of_the_seed() {
    let dir = scratch("random", &[("copy.warp", COPY)]);
    let args = [
        "run",
        "copy.warp",
        "--buffer",
        "src=random:8:42",
        "--buffer",
        "dst=zeros:8",
        "--print",
        "dst",
    ];
    let first = printed(&ok(&dir, &args), "dst");
    let mut rng = SplitMix64::new(42);
    let expected: Vec<String> = (0..8)
        .map(|_| (rng.next_u64() as u32).to_string())
        .collect();
    assert_eq!(first, expected);
    assert_eq!(
        printed(&ok(&dir, &args), "dst"),
        first,
        "same seed, same data"
    );
}

#[test]
fn file_buffers_are_little_endian_bytes() {
    let dir = scratch("file", &[("copy.warp", COPY)]);
    let bytes: Vec<u8> = (1u32..=8).flat_map(|v| v.to_le_bytes()).collect();
    std::fs::write(dir.join("in.bin"), &bytes).expect("write input");
    let out = ok(
        &dir,
        &[
            "run",
            "copy.warp",
            "--buffer",
            "src=file:in.bin",
            "--buffer",
            "dst=zeros:8",
            "--print",
            "dst",
        ],
    );
    assert_eq!(
        printed(&out, "dst"),
        strings(&["1", "2", "3", "4", "5", "6", "7", "8"])
    );
    // With a TYPE the length only has to be whole elements of that type.
    std::fs::write(dir.join("odd.bin"), [1u8, 2, 3]).expect("write input");
    let out = ok(
        &dir,
        &[
            "run",
            "copy.warp",
            "--buffer",
            "src=file:odd.bin:u8",
            "--buffer",
            "dst=zeros:8",
            "--print",
            "src:u8",
        ],
    );
    assert_eq!(printed(&out, "src"), strings(&["1", "2", "3"]));
    let err = fails(
        &dir,
        &[
            "run",
            "copy.warp",
            "--buffer",
            "src=file:odd.bin",
            "--buffer",
            "dst=zeros:8",
        ],
    );
    assert!(err.contains("--buffer src=file:odd.bin"), "{err}");
    assert!(err.contains("3 bytes"), "{err}");
}

#[test]
fn params_are_read_in_their_declared_types() {
    let dir = scratch("params", &[("axpb.warp", AXPB)]);
    let out = ok(
        &dir,
        &[
            "run",
            "axpb.warp",
            "--param",
            "n=3",
            "--param",
            "%scale=0.5",
            "--param",
            "offset=-10",
            "--buffer",
            "data=iota:f32:4:1",
            "--buffer",
            "ints=iota:4",
            "--print",
            "data",
            "--print",
            "ints",
        ],
    );
    // Only the first n = 3 elements change.
    assert_eq!(printed(&out, "data"), strings(&["0.5", "1", "1.5", "4"]));
    assert_eq!(printed(&out, "ints"), strings(&["-10", "-9", "-8", "3"]));
    // Hex is the bit pattern, for floats too.
    let out = ok(
        &dir,
        &[
            "run",
            "axpb.warp",
            "--param",
            "n=0x1",
            "--param",
            "scale=0x40000000",
            "--param",
            "offset=0",
            "--buffer",
            "data=const:2:3",
            "--buffer",
            "ints=zeros:2",
            "--print",
            "data",
        ],
    );
    assert_eq!(printed(&out, "data"), strings(&["6", "3"]));
}

#[test]
fn print_ranges_radix_and_type() {
    let dir = scratch("print", &[("copy.warp", COPY)]);
    let base = [
        "run",
        "copy.warp",
        "--buffer",
        "src=iota:8:5:2",
        "--buffer",
        "dst=zeros:8",
    ];
    let with = |extra: &[&str]| {
        let mut args = base.to_vec();
        args.extend_from_slice(extra);
        ok(&dir, &args)
    };
    let out = with(&["--print", "dst:2..4:hex"]);
    assert_eq!(printed(&out, "dst"), strings(&["0x00000009", "0x0000000b"]));
    assert!(out.contains("@dst[2..4] u32:"), "{out}");
    let out = with(&["--print", "1:3"]);
    assert_eq!(printed(&out, "dst"), strings(&["11"]));
    let out = with(&["--print", "@dst:0..4:u16:dec"]);
    assert_eq!(printed(&out, "dst"), strings(&["5", "0", "7", "0"]));
    let out = with(&["--print", "dst:6..:i8:hex"]);
    assert_eq!(printed(&out, "dst").len(), 26);
    // Rows of eight, each starting with its first index.
    let out = with(&["--print", "dst:u16"]);
    assert!(out.contains("\n   8: "), "{out}");
}

#[test]
fn outputs_are_raw_text_or_pgm() {
    let dir = scratch("outputs", &[("copy.warp", COPY)]);
    let out = ok(
        &dir,
        &[
            "run",
            "copy.warp",
            "--buffer",
            "src=iota:8:0:32",
            "--buffer",
            "dst=zeros:8",
            "--output",
            "dst=raw.bin",
            "--output",
            "dst=sub/values.txt",
            "--output",
            "dst=img/picture.pgm",
            "--image",
            "4x2",
        ],
    );
    let raw = std::fs::read(dir.join("raw.bin")).expect("raw output");
    let expected: Vec<u8> = (0u32..8).flat_map(|v| (v * 32).to_le_bytes()).collect();
    assert_eq!(raw, expected);
    let text = std::fs::read_to_string(dir.join("sub/values.txt")).expect("text output");
    assert_eq!(text, "0\n32\n64\n96\n128\n160\n192\n224\n");
    let pgm = std::fs::read(dir.join("img/picture.pgm")).expect("pgm output");
    let header = b"P5\n4 2\n255\n";
    assert_eq!(&pgm[..header.len()], header);
    // 0..224 scaled onto 0..255.
    let grey: Vec<u8> = (0..8u32)
        .map(|i| ((i * 32) as f64 / 224.0 * 255.0).round() as u8)
        .collect();
    assert_eq!(&pgm[header.len()..], &grey[..]);
    assert!(out.contains("wrote @dst to raw.bin: 32 bytes"), "{out}");
    assert!(
        out.contains("wrote @dst to img/picture.pgm: a 4x2 grey image"),
        "{out}"
    );
}

#[test]
fn file_run_lines_are_defaults_the_command_line_overrides() {
    let program = format!(
        "//! run: --buffer src=iota:8 --buffer dst=zeros:8\n//! run: --print dst:0..2 --grid 1\n{COPY}"
    );
    let dir = scratch("defaults", &[("copy.warp", &program)]);
    let out = ok(&dir, &["run", "copy.warp"]);
    assert_eq!(printed(&out, "dst"), strings(&["0", "1"]));
    let out = ok(&dir, &["run", "copy.warp", "--buffer", "src=const:8:7"]);
    assert_eq!(printed(&out, "dst"), strings(&["7", "7"]));
    // A later single-valued option wins: two workgroups of 4 cover 8 elements.
    let out = ok(
        &dir,
        &[
            "run",
            "copy.warp",
            "--workgroup",
            "2",
            "--workgroup",
            "4",
            "--grid",
            "2",
        ],
    );
    assert!(out.contains("grid 2x1x1 x workgroup 4x1x1"), "{out}");
    // Errors in a run line name the file and line.
    let broken = format!("//! run: --grid nope\n{COPY}");
    let dir = scratch("defaults-broken", &[("copy.warp", &broken)]);
    let err = fails(&dir, &["run", "copy.warp"]);
    assert!(
        err.contains("copy.warp:1:") && err.contains("--grid"),
        "{err}"
    );
}

#[test]
fn out_of_bounds_accesses_are_counted_with_the_first_fault() {
    let dir = scratch("faults", &[("copy.warp", COPY)]);
    let out = ok(
        &dir,
        &[
            "run",
            "copy.warp",
            "--buffer",
            "src=iota:8",
            "--buffer",
            "dst=zeros:6",
        ],
    );
    assert!(out.contains("faults: 2 out-of-bounds accesses"), "{out}");
    assert!(
        out.contains("first: out-of-bounds store of @dst at byte 24"),
        "{out}"
    );
}

#[test]
fn runaway_kernel_is_stopped_by_fuel() {
    let program = "kernel @spin workgroup(1) {\n  loop {\n  }\n}\n";
    let dir = scratch("fuel", &[("spin.warp", program)]);
    let err = fails(&dir, &["run", "spin.warp", "--fuel", "1000"]);
    assert!(err.contains("fuel exhausted"), "{err}");
    assert!(err.contains("--fuel 1000 loop tests per warp"), "{err}");
    let err = fails(
        &dir,
        &["run", "spin.warp", "--fuel", "1000", "--backend", "interp"],
    );
    assert!(err.contains("after 1000 statements"), "{err}");
    assert!(err.contains("--fuel 1000 statements per warp"), "{err}");
}

#[test]
fn runaway_kernel_is_stopped_by_the_watchdog() {
    let program = "kernel @spin workgroup(64) {\n  loop {\n  }\n}\n";
    let dir = scratch("watchdog", &[("spin.warp", program)]);
    let err = fails(
        &dir,
        &[
            "run",
            "spin.warp",
            "--grid",
            "5",
            "--sms",
            "2",
            "--watchdog",
            "0.2",
        ],
    );
    assert!(
        err.contains(
            "kernel @spin: stopped by the watchdog after 0.2 s with 0 of 5 workgroups finished"
        ),
        "{err}"
    );
    assert!(err.contains("--watchdog SECONDS"), "{err}");
}

#[test]
fn the_summary_says_how_many_sms_ran() {
    let dir = scratch("sms", &[("copy.warp", COPY)]);
    let buffers = ["--buffer", "src=iota:8", "--buffer", "dst=zeros:8"];
    let with = |extra: &[&str]| {
        let mut args = vec!["run", "copy.warp"];
        args.extend_from_slice(&buffers);
        args.extend_from_slice(extra);
        ok(&dir, &args)
    };
    let out = with(&["--sms", "1"]);
    assert!(out.contains(" on 1 SM, "), "{out}");
    // One workgroup keeps all but one SM idle.
    let out = with(&["--sms", "3", "--warps-per-sm", "1", "--watchdog", "0"]);
    assert!(out.contains(" on 1 of 3 SMs, "), "{out}");
}

#[test]
fn verbose_logs_go_to_stderr() {
    let dir = scratch("verbose", &[("copy.warp", COPY)]);
    let run = warpjit(
        &dir,
        &[
            "-v",
            "run",
            "copy.warp",
            "--buffer",
            "src=zeros:8",
            "--buffer",
            "dst=zeros:8",
        ],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stderr.contains("launch"), "{}", run.stderr);
    // The JIT's compile time, and no statement count (it keeps none).
    assert!(run.stderr.contains("compiled"), "{}", run.stderr);
    assert!(!run.stderr.contains("statements"), "{}", run.stderr);
    assert!(!run.stdout.contains("launch finished"), "{}", run.stdout);
}

#[test]
fn bad_options_give_one_line_naming_the_option() {
    let dir = scratch("bad", &[("copy.warp", COPY), ("axpb.warp", AXPB)]);
    let copy = |extra: &[&str]| {
        let mut args = vec![
            "run",
            "copy.warp",
            "--buffer",
            "src=zeros:8",
            "--buffer",
            "dst=zeros:8",
        ];
        args.extend_from_slice(extra);
        fails(&dir, &args)
    };
    let cases: &[(&[&str], &[&str])] = &[
        (&["--grid", "0"], &["--grid", "at least 1"]),
        (&["--grid", "-2"], &["--grid", "`-2`"]),
        (&["--grid", "a,b"], &["--grid", "`a`"]),
        (&["--workgroup", "1,2,3,4"], &["--workgroup", "three"]),
        (
            &["--buffer", "src=ones:4"],
            &["--buffer", "unknown buffer kind `ones`"],
        ),
        (
            &["--buffer", "nosuch=zeros:4"],
            &["--buffer nosuch=zeros:4", "no buffer @nosuch"],
        ),
        (
            &["--buffer", "src=const:u8:4:300"],
            &["--buffer src=const:u8:4:300", "300"],
        ),
        (
            &["--buffer", "src=file:missing.bin"],
            &["--buffer src=file:missing.bin", "cannot read"],
        ),
        (&["--buffer", "src"], &["--buffer", "NAME|BINDING=SPEC"]),
        (
            &["--print", "dst:0..100"],
            &["--print dst:0..100", "outside"],
        ),
        (&["--print", "dst:bogus"], &["--print", "`bogus`"]),
        (&["--output", "dst"], &["--output", "NAME|BINDING=PATH"]),
        (
            &["--output", "dst=x.pgm"],
            &["--output dst=x.pgm", "--image"],
        ),
        (&["--backend", "cuda"], &["--backend", "jit", "interp"]),
        (&["-O", "4"], &["--opt-level", "not in 0..=3"]),
        (
            &["--target", "neon"],
            &["--target", "native, avx2 or sse4.2"],
        ),
        (
            &["--prefetch-ahead", "maybe"],
            &["--prefetch-ahead", "on, off or without-stores"],
        ),
        (&["--kernel", "nope"], &["--kernel nope", "@main"]),
        (&["--sms", "0"], &["--sms"]),
        (&["--sms", "-1"], &["--sms", "-1"]),
        (&["--warps-per-sm", "0"], &["--warps-per-sm"]),
        (&["--fuel", "-5"], &["--fuel", "-5"]),
        (&["--fuel", "lots"], &["--fuel"]),
        (&["--sms", "2000"], &["--sms", "2000", "at most 1024 SMs"]),
        (&["--watchdog", "-1"], &["--watchdog", "-1"]),
        (&["--watchdog", "soon"], &["--watchdog", "seconds"]),
        (&["--watchdog", "nan"], &["--watchdog"]),
        (&["--param", "x=1"], &["--param x=1", "no parameter %x"]),
        (&["--frobnicate"], &["--frobnicate"]),
    ];
    for (extra, needles) in cases {
        let err = copy(extra);
        for needle in *needles {
            assert!(err.contains(needle), "{extra:?}: `{needle}` not in: {err}");
        }
    }
    let axpb = |extra: &[&str]| {
        let mut args = vec![
            "run",
            "axpb.warp",
            "--buffer",
            "data=zeros:4",
            "--buffer",
            "ints=zeros:4",
        ];
        args.extend_from_slice(extra);
        fails(&dir, &args)
    };
    let err = axpb(&[
        "--param", "n=abc", "--param", "scale=1", "--param", "offset=0",
    ]);
    assert!(
        err.contains("--param n=abc") && err.contains("i32"),
        "{err}"
    );
    let err = axpb(&[
        "--param", "n=1", "--param", "scale=x", "--param", "offset=0",
    ]);
    assert!(
        err.contains("--param scale=x") && err.contains("f32"),
        "{err}"
    );
    let err = axpb(&["--param", "n=1", "--param", "scale=1"]);
    assert!(
        err.contains("%offset") && err.contains("--param offset=VALUE"),
        "{err}"
    );
    let err = fails(&dir, &["run", "copy.warp", "--buffer", "src=zeros:8"]);
    assert!(
        err.contains("buffer @dst[1]") && err.contains("--buffer dst=SPEC"),
        "{err}"
    );
    let err = fails(&dir, &["run", "no-such-file.warp"]);
    assert!(err.contains("no-such-file.warp"), "{err}");
}

/// With `WARPJIT_PERF_MAP` set, a run leaves `/tmp/perf-PID.map` naming the
/// kernel's code for `perf`; without it, no map.
#[test]
fn a_run_with_the_perf_map_variable_writes_perf_names_for_the_kernel() {
    let run = |map: Option<&str>| {
        let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_warpjit"));
        command
            .args(["run", "examples/reduce_shuffle_xor.warp"])
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .env_remove("WARPJIT_PERF_MAP");
        if let Some(value) = map {
            command.env("WARPJIT_PERF_MAP", value);
        }
        let child = command
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("the warpjit binary starts");
        let path = format!("/tmp/perf-{}.map", child.id());
        let out = child.wait_with_output().expect("warpjit finishes");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let map = std::fs::read_to_string(&path).ok();
        let _ = std::fs::remove_file(&path);
        map
    };
    let map = run(Some("1")).expect("the map is written");
    let kernel = map
        .lines()
        .find(|l| l.ends_with(" warpjit kernel.main"))
        .unwrap_or_else(|| panic!("no kernel line in:\n{map}"));
    let fields: Vec<&str> = kernel.split(' ').collect();
    let start = u64::from_str_radix(fields[0], 16).expect("a hex start");
    let size = u64::from_str_radix(fields[1], 16).expect("a hex size");
    assert!(start > 0 && size > 0, "{kernel}");
    assert_eq!(run(None), None);
    assert_eq!(run(Some("0")), None);
}

/// A `file:` input on a `//! run:` line is found next to the program, from
/// any working directory; one given on the command line is relative to the
/// working directory.
#[test]
fn run_line_input_files_are_beside_the_program() {
    let dir = scratch("input-beside", &[]);
    std::fs::create_dir_all(dir.join("sub")).unwrap();
    std::fs::write(
        dir.join("sub/copy.warp"),
        "//! run: --buffer src=file:in.bin --buffer out=zeros:2\n\
         buffer @src[0]: u32\n\
         buffer @out[1]: u32\n\
         kernel @main workgroup(32) {\n\
         \x20 %i = lane_id\n\
         \x20 %a = shl %i, 2\n\
         \x20 %v = load.u32 @src, %a\n\
         \x20 store.u32 @out, %a, %v\n\
         }\n",
    )
    .unwrap();
    let words = |a: u32, b: u32| [a.to_le_bytes(), b.to_le_bytes()].concat();
    std::fs::write(dir.join("sub/in.bin"), words(7, 9)).unwrap();
    std::fs::write(dir.join("in.bin"), words(1, 2)).unwrap();
    let out = ok(&dir, &["run", "sub/copy.warp", "--print", "out"]);
    assert_eq!(printed(&out, "out"), ["7", "9"]);
    let out = ok(
        &dir,
        &[
            "run",
            "sub/copy.warp",
            "--buffer",
            "src=file:in.bin",
            "--print",
            "out",
        ],
    );
    assert_eq!(printed(&out, "out"), ["1", "2"]);
}
