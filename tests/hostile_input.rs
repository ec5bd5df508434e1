//! Hostile input end to end: through the command line (garbage bytes,
//! invalid UTF-8, absurd numbers, deep nesting, huge lines, huge launches,
//! runaway kernels, bad fuzz and replay arguments) and through the library
//! in one process (the JIT on the deepest nesting, out-of-bounds accesses
//! and a runaway loop, the runtime on absurd launches), each followed by a
//! good kernel that must still give the right answer.
//!
//! Parser-level and runtime-level hostile input have their own tests
//! (`ir/tests/text_hostile.rs`, `ir/tests/deep_nesting.rs`,
//! `runtime/tests/faults.rs`); this file covers what reaches the user.

mod cli_support;

use cli_support::{scratch, warpjit, Run};
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;
use warpjit_ir::interp::{self, LaunchConfig};
use warpjit_ir::text::{parse, MAX_NESTING};
use warpjit_ir::VerifiedModule;
use warpjit_jit::{compile, launch, JitBackend, JitError, JitOptions};
use warpjit_runtime::{Backend, Buffer, InterpreterBackend, LaunchError, Runtime, RuntimeConfig};

const GOOD: &str = "buffer @out[0]: u32
kernel @main workgroup(32) {
  %i = global_id.x
  %addr = shl %i, 2:i32
  %sq = mul %i, %i
  store.u32 @out, %addr, %sq
}
";

/// An error run: exit 1, one clear `error:` line, short stderr.
fn refused(run: &Run, needle: &str) {
    assert_eq!(run.code, 1, "stdout {}\nstderr {}", run.stdout, run.stderr);
    assert!(
        run.stderr.contains(needle),
        "wanted {needle:?} in:\n{}",
        run.stderr
    );
    assert!(
        run.stderr.len() < 4096,
        "stderr is {} bytes, too long to read",
        run.stderr.len()
    );
}

/// The good kernel still runs in `dir` (the CLI is one process per run, so
/// this checks nothing was left behind, like a half-written file).
fn good_run_works(dir: &Path) {
    std::fs::write(dir.join("good.warp"), GOOD).unwrap();
    let run = warpjit(
        dir,
        &[
            "run",
            "good.warp",
            "--buffer",
            "out=zeros:32",
            "--print",
            "out:5..6",
        ],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stdout.contains("25"), "{}", run.stdout);
}

#[test]
fn binary_garbage_and_invalid_utf8_are_refused_with_a_position() {
    let mut garbage: Vec<u8> = (0..4096u32).map(|i| (i * 167 + 13) as u8).collect();
    garbage[0] = 0xff;
    let dir = scratch("hostile-garbage", &[]);
    std::fs::write(dir.join("garbage.warp"), &garbage).unwrap();
    std::fs::write(
        dir.join("bad.warp"),
        b"kernel @k {\n  %x = add 1:i32, 2\xfe\n}\n",
    )
    .unwrap();
    for cmd in ["check", "fmt", "run", "dump"] {
        refused(
            &warpjit(&dir, &[cmd, "garbage.warp"]),
            "garbage.warp:1:1: not UTF-8",
        );
        refused(
            &warpjit(&dir, &[cmd, "bad.warp"]),
            "bad.warp:2:20: not UTF-8",
        );
    }
    // Valid UTF-8 that is not a program: NULs and control characters.
    std::fs::write(dir.join("nul.warp"), "kernel @k {\0\u{7}}\n").unwrap();
    refused(&warpjit(&dir, &["check", "nul.warp"]), "nul.warp:1:");
    // Line endings of old Macs: refused where the first one is, rather
    // than a comment swallowing the file.
    std::fs::write(dir.join("cr.warp"), "// head\rkernel @k {\r}\r").unwrap();
    refused(
        &warpjit(&dir, &["check", "cr.warp"]),
        "a carriage return without a line feed",
    );
    refused(&warpjit(&dir, &["check", "cr.warp"]), "cr.warp:1:8");
    // A byte order mark is dropped: columns on line 1 are an editor's, and
    // fmt keeps the header on top.
    std::fs::write(
        dir.join("bom.warp"),
        "\u{feff}//! run: --buffer out=zeros:32\nbuffer @out[0]: u32\nkernel @k workgroup(32) {\n  membar\n}\n",
    )
    .unwrap();
    let run = warpjit(&dir, &["fmt", "bom.warp"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stdout.starts_with("//! run: --buffer out=zeros:32\n"),
        "{}",
        run.stdout
    );
    std::fs::write(dir.join("bom_first.warp"), "\u{feff}kernal @k {\n}\n").unwrap();
    refused(
        &warpjit(&dir, &["check", "bom_first.warp"]),
        "bom_first.warp:1:1",
    );
    good_run_works(&dir);
}

#[test]
fn numbers_out_of_range_are_refused_at_their_position() {
    let cases = [
        (
            "lit.warp",
            "kernel @k {\n  %x = add 99999999999999999999999:i32, 2:i32\n}\n",
            "lit.warp:2:",
        ),
        (
            "narrow.warp",
            "kernel @k {\n  %x = add 300:i8, 2:i8\n}\n",
            "narrow.warp:2:",
        ),
        (
            "binding.warp",
            "buffer @b[4294967296]: u32\nkernel @k {\n}\n",
            "binding.warp:1:",
        ),
        (
            "wg.warp",
            "kernel @k workgroup(4294967296) {\n}\n",
            "wg.warp:1:",
        ),
        ("wg0.warp", "kernel @k workgroup(0) {\n}\n", "wg0.warp:1:"),
        (
            "shared.warp",
            "shared @s[4294967295]\nkernel @k {\n}\n",
            "shared.warp:1:",
        ),
        (
            "private.warp",
            "kernel @k {\n  private @p[99999999]\n}\n",
            "private.warp:2:",
        ),
    ];
    let dir = scratch("hostile-numbers", &[]);
    for (name, text, position) in cases {
        std::fs::write(dir.join(name), text).unwrap();
        let run = warpjit(&dir, &["check", name]);
        assert_eq!(run.code, 1, "{name} was accepted");
        assert!(run.stderr.contains(position), "{name}:\n{}", run.stderr);
    }
    std::fs::write(dir.join("good.warp"), GOOD).unwrap();
    for bad in [
        ["--grid", "99999999999"],
        ["--grid", "-1"],
        ["--workgroup", "1,2,3,4"],
        ["--sms", "99999"],
        ["--fuel", "1e99"],
    ] {
        let mut args = vec!["run", "good.warp", "--buffer", "out=zeros:32"];
        args.extend(bad);
        let run = warpjit(&dir, &args);
        assert_ne!(run.code, 0, "{bad:?} was accepted");
        assert!(run.stderr.contains(bad[0]), "{bad:?}:\n{}", run.stderr);
    }
    good_run_works(&dir);
}

#[test]
fn ten_thousand_nested_blocks_and_a_ten_megabyte_line_are_handled() {
    let mut deep = String::from("kernel @k {\n  %c = cmp.eq 1:i32, 1:i32\n");
    for _ in 0..10_000 {
        deep.push_str("if %c {\n");
    }
    for _ in 0..10_000 {
        deep.push_str("}\n");
    }
    deep.push_str("}\n");
    let long_ok = format!(
        "kernel @k {{\n  %x = add 1:i32, 2:i32 {}\n}}\n",
        " ".repeat(10 << 20)
    );
    let long_bad = format!(
        "kernel @k {{\n  %x = add 1:i32, {}:i32\n}}\n",
        "9".repeat(10 << 20)
    );
    // The error a megabyte into its line: the message shows the part of
    // the line around it (`refused` keeps stderr short).
    let far_bad = format!(
        "kernel @k {{\n  %x = add 1:i32, 2:i32{}frob\n}}\n",
        " ".repeat(1 << 20)
    );
    let dir = scratch(
        "hostile-deep",
        &[
            ("deep.warp", &deep),
            ("long.warp", &long_ok),
            ("bad.warp", &long_bad),
            ("far.warp", &far_bad),
        ],
    );
    for cmd in ["check", "fmt", "run", "dump"] {
        refused(&warpjit(&dir, &[cmd, "deep.warp"]), "nest too deeply");
    }
    let run = warpjit(&dir, &["check", "long.warp"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    refused(&warpjit(&dir, &["check", "bad.warp"]), "bad.warp:2:");
    let run = warpjit(&dir, &["check", "far.warp"]);
    refused(&run, "far.warp:2:1048600");
    let shown = format!(
        "2 | ...{}frob\n  | {}^^^^\n",
        " ".repeat(40),
        " ".repeat(43)
    );
    assert!(run.stderr.contains(&shown), "{}", run.stderr);
    good_run_works(&dir);
}

#[test]
fn huge_dispatches_and_bindings_beyond_memory_are_refused_or_stopped() {
    let dir = scratch("hostile-huge", &[("good.warp", GOOD)]);
    let run = |extra: &[&str]| {
        let mut args = vec!["run", "good.warp"];
        args.extend_from_slice(extra);
        warpjit(&dir, &args)
    };
    refused(
        &run(&[
            "--buffer",
            "out=zeros:4",
            "--grid",
            "4294967295,4294967295,4294967295",
        ]),
        "grid",
    );
    refused(
        &run(&["--buffer", "out=zeros:4", "--workgroup", "1024,1024,1"]),
        "workgroup",
    );
    refused(
        &run(&["--buffer", "out=zeros:99999999999999"]),
        "more than 4 GiB",
    );
    refused(&run(&["--buffer", "7=zeros:4"]), "no buffer binding 7");
    refused(
        &run(&["--buffer", "out=file:/nonexistent/x.bin"]),
        "cannot read",
    );
    // A device reports no size and never ends: the read stops at the limit.
    refused(
        &warpjit(&dir, &["check", "/dev/zero"]),
        "larger than 64 MiB",
    );
    // A float too large for its format is refused, as in program text.
    refused(
        &run(&["--buffer", "out=const:f32:4:1e40"]),
        "`1e40` overflows f32",
    );
    // A hundred million workgroups would take hours: the watchdog stops them.
    refused(
        &run(&[
            "--buffer",
            "out=zeros:4",
            "--grid",
            "134217727",
            "--watchdog",
            "0.5",
        ]),
        "watchdog",
    );
    good_run_works(&dir);
}

#[test]
fn fuzz_and_replay_refuse_bad_arguments_and_bad_reproducers() {
    let dir = scratch("hostile-fuzz", &[("program.warp", "kernel @k {\0")]);
    for (args, needle) in [
        (vec!["fuzz", "--time", "soon"], "--time"),
        (vec!["fuzz", "--time=-5s"], "--time"),
        (vec!["fuzz", "--jobs", "0"], "--jobs"),
        (vec!["fuzz", "--cases=-1"], "--cases"),
        (vec!["fuzz", "--cases", "0"], "--cases"),
        (vec!["fuzz", "--time", "0s"], "a campaign needs some time"),
        (vec!["fuzz", "--seed", "0xg"], "is not a seed"),
        (vec!["fuzz", "--reduce-time", "1e300h"], "--reduce-time"),
        (vec!["fuzz", "--target", "avx3"], "--target"),
        (vec!["fuzz", "-O", "4"], "--opt-level"),
    ] {
        let run = warpjit(&dir, &args);
        assert_eq!(run.code, 2, "{args:?}: {}", run.stderr);
        assert!(run.stderr.contains(needle), "{args:?}:\n{}", run.stderr);
    }
    // The reproducers' directory is checked before the campaign starts.
    std::fs::write(dir.join("a_file"), "").unwrap();
    refused(
        &warpjit(&dir, &["fuzz", "--cases", "1", "--out", "a_file"]),
        "--out a_file: not a directory",
    );
    refused(&warpjit(&dir, &["replay", "missing"]), "cannot read");
    refused(&warpjit(&dir, &["replay", "."]), "does not check");
    // A reproducer whose run line lost an option: the file is named, and
    // the option goes on its run line (replay has no --param).
    let norun = dir.join("norun");
    std::fs::create_dir_all(&norun).unwrap();
    std::fs::write(
        norun.join("program.warp"),
        "param %n: i32\nbuffer @out[0]: u32\nkernel @main {\n  %x = add %n, 1\n}\n",
    )
    .unwrap();
    // A finding's result files keep the buffers' sizes: an input of
    // another length does not belong to them.
    let sized = dir.join("sized");
    std::fs::create_dir_all(&sized).unwrap();
    std::fs::write(
        sized.join("program.warp"),
        "//! run: --grid 1 --workgroup 32 --buffer out=file:input-out.bin\n\
         buffer @out[0]: u32\nkernel @main workgroup(32) {\n  %i = lane_id\n  \
         %a = shl %i, 2\n  store.u32 @out, %a, %i\n}\n",
    )
    .unwrap();
    std::fs::write(sized.join("input-out.bin"), [0u8; 128]).unwrap();
    std::fs::write(sized.join("reference-out.bin"), [0u8; 128]).unwrap();
    let run = warpjit(&dir, &["replay", "sized"]);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    std::fs::write(sized.join("input-out.bin"), [0u8; 64]).unwrap();
    refused(
        &warpjit(&dir, &["replay", "sized"]),
        "sized: @out starts with 64 bytes, but sized/reference-out.bin has 128",
    );
    refused(
        &warpjit(&dir, &["replay", "norun"]),
        "norun/program.warp: parameter %n: i32 has no value; give --param n=VALUE \
         (replay takes its options from the file's `//! run:` lines)",
    );
    good_run_works(&dir);
}

fn verified(src: &str) -> VerifiedModule {
    VerifiedModule::new(parse(src).expect("parses")).expect("verifies")
}

/// The good kernel on the JIT: squares of the global ids.
fn jit_good_kernel_works() {
    let m = verified(GOOD);
    let code = compile(&m, &JitOptions::default()).expect("compiles");
    let kernel = m.find_function("main").unwrap();
    let mut buffers = vec![vec![0u8; 256]];
    let cfg = LaunchConfig::new([2, 1, 1], [32, 1, 1]);
    launch(&code, kernel, &cfg, &[], &mut buffers).expect("runs");
    let word = |i: usize| u32::from_le_bytes(buffers[0][i * 4..i * 4 + 4].try_into().unwrap());
    assert_eq!((word(7), word(63)), (49, 63 * 63));
}

#[test]
fn the_jit_survives_the_deepest_nesting_out_of_bounds_and_runaway_loops() {
    // On a small stack, like an embedder's thread.
    std::thread::Builder::new()
        .stack_size(4 << 20)
        .spawn(|| {
            let mut deep = String::from(
                "buffer @out[0]: u32\nkernel @main workgroup(32) {\n  var $n: i32\n  %lane = lane_id\n  %c = cmp.lt.u %lane, 31:i32\n",
            );
            for _ in 1..MAX_NESTING {
                deep.push_str("if %c {\n$n = add $n, 1:i32\n");
            }
            deep.push_str("%addr = shl %lane, 2:i32\nstore.u32 @out, %addr, $n\n");
            for _ in 1..MAX_NESTING {
                deep.push_str("}\n");
            }
            deep.push_str("}\n");
            let m = verified(&deep);
            let kernel = m.find_function("main").unwrap();
            let cfg = LaunchConfig::new([1, 1, 1], [32, 1, 1]);
            let mut want = vec![vec![0u8; 128]];
            interp::launch(&m, kernel, &cfg, &[], &mut want).expect("interpreter runs");
            let code = compile(&m, &JitOptions::default()).expect("the deepest nesting compiles");
            let mut got = vec![vec![0u8; 128]];
            launch(&code, kernel, &cfg, &[], &mut got).expect("runs");
            assert_eq!(got, want);
            assert_eq!(u32::from_le_bytes(got[0][0..4].try_into().unwrap()), 255);
            assert_eq!(u32::from_le_bytes(got[0][124..128].try_into().unwrap()), 0);
        })
        .unwrap()
        .join()
        .expect("no stack overflow");

    // Out-of-bounds loads, stores and atomics at the ends of memory.
    let oob = verified(
        "buffer @out[0]: u32
kernel @main workgroup(64) {
  private @p[16]
  %i = global_id.x
  %a = shl %i, 4:i32
  %far = add %a, 4294967280:i32
  %v = load.u32 @out, %far
  store.u32 @out, %a, %v
  %w = atom.add.u32 @out, %far, 1:i32
  store.u32 @p, %a, %w
  %x = load.u32 @p, %a
  store.u32 @out, %far, %x
}
",
    );
    let kernel = oob.find_function("main").unwrap();
    let cfg = LaunchConfig::new([2, 1, 1], [64, 1, 1]);
    let mut want = vec![vec![0xabu8; 100]];
    let w = interp::launch(&oob, kernel, &cfg, &[], &mut want).expect("interpreter runs");
    assert!(w.faults.total() > 0);
    let code = compile(&oob, &JitOptions::default()).expect("compiles");
    let mut got = vec![vec![0xabu8; 100]];
    let g = launch(&code, kernel, &cfg, &[], &mut got).expect("runs");
    assert_eq!(got, want, "canary bytes and in-bounds results");
    assert_eq!(g.faults, w.faults);

    // A loop that never ends runs out of fuel.
    let runaway = verified("kernel @main workgroup(32) {\n  loop {\n  }\n}\n");
    let kernel = runaway.find_function("main").unwrap();
    let code = compile(&runaway, &JitOptions::default()).expect("compiles");
    let cfg = LaunchConfig::new([1, 1, 1], [32, 1, 1]).with_fuel(100_000);
    match launch(&code, kernel, &cfg, &[], &mut []) {
        Err(JitError::FuelExhausted(m)) => assert!(m.contains("fuel"), "{m}"),
        other => panic!("expected running out of fuel, got {other:?}"),
    }
    jit_good_kernel_works();
}

#[test]
fn a_kernel_id_not_of_the_compiled_module_is_refused() {
    // The launch takes its module from the code, so only the function id
    // can come from elsewhere: one past the compiled module's functions.
    let one = verified("buffer @x[0]: u32\nkernel @main workgroup(32) {\n  membar\n}\n");
    let two = verified(
        "buffer @x[0]: u32\nkernel @a workgroup(32) {\n  membar\n}\n\
         kernel @b workgroup(32) {\n  membar\n}\n",
    );
    let code = compile(&one, &JitOptions::default()).expect("compiles");
    let cfg = LaunchConfig::new([1, 1, 1], [32, 1, 1]);
    let foreign = two.find_function("b").unwrap();
    let err = launch(&code, foreign, &cfg, &[], &mut [vec![0u8; 128]]).unwrap_err();
    assert!(matches!(err, JitError::Launch(_)), "{err:?}");
    // A launch error reads as one message, not two prefixes.
    let with_func = verified("func @helper() {\n}\nkernel @main workgroup(32) {\n}\n");
    let code = compile(&with_func, &JitOptions::default()).expect("compiles");
    let helper = code.module().find_function("helper").unwrap();
    let err = launch(&code, helper, &cfg, &[], &mut []).unwrap_err();
    assert_eq!(err.to_string(), "launch failed: @helper is not a kernel");
    jit_good_kernel_works();
}

#[test]
fn a_call_chain_as_long_as_the_module_is_refused_without_a_stack_overflow() {
    // 60000 functions, each calling the next: the JIT's stack estimate
    // walks the chain on a small stack, like an embedder's thread.
    let mut source = String::from("buffer @out[0]: u32\n");
    for f in 0..60_000 {
        source.push_str(&format!("func @f{f}() {{\n  call @f{}()\n}}\n", f + 1));
    }
    source.push_str("func @f60000() {\n  membar\n}\n");
    source.push_str("kernel @main workgroup(32) {\n  call @f0()\n}\n");
    let module = Arc::new(verified(&source));
    let kernel = module.find_function("main").unwrap();
    std::thread::Builder::new()
        .stack_size(1 << 20)
        .spawn(move || {
            let runtime = Runtime::with_backend(
                RuntimeConfig {
                    sm_count: 1,
                    ..RuntimeConfig::default()
                },
                Arc::new(JitBackend::default()),
            )
            .expect("valid configuration");
            let err = runtime
                .prepare_function(module, kernel)
                .expect_err("far more stack than a warp may have");
            assert!(
                err.to_string()
                    .contains("MiB of stack per warp; the JIT allows 256 MiB"),
                "{err}"
            );
        })
        .unwrap()
        .join()
        .expect("no stack overflow");
}

#[test]
fn one_interpreter_runtime_refuses_absurd_launches_stops_runaways_and_carries_on() {
    runtime_carries_on(Arc::new(InterpreterBackend));
}

#[test]
fn one_jit_runtime_refuses_absurd_launches_stops_runaways_and_carries_on() {
    runtime_carries_on(Arc::new(JitBackend::new(JitOptions::default())));
}

fn runtime_carries_on(backend: Arc<dyn Backend>) {
    let runtime = Runtime::with_backend(
        RuntimeConfig {
            sm_count: 2,
            warps_per_sm: 8,
            fuel: None,
            watchdog: Some(Duration::from_millis(500)),
        },
        backend,
    )
    .expect("runtime");
    let good = runtime
        .prepare(Arc::new(verified(GOOD)), "main")
        .expect("prepares");
    let run_good = || {
        let mut buffers = vec![Buffer::zeroed(256).unwrap()];
        runtime
            .launch(&good, [2, 1, 1], [32, 1, 1], &[], &mut buffers)
            .expect("the good kernel runs");
        assert_eq!(buffers[0].to_vec::<u32>()[9], 81);
    };
    let mut small = vec![Buffer::zeroed(16).unwrap()];
    for (grid, workgroup) in [
        ([u32::MAX, u32::MAX, u32::MAX], [32, 1, 1]),
        ([1, 1, 1], [1024, 1024, 1]),
        ([1, 1, 1], [0, 1, 1]),
        // 32 warps do not fit 8 warp slots.
        ([1, 1, 1], [1024, 1, 1]),
    ] {
        match runtime.launch(&good, grid, workgroup, &[], &mut small) {
            Err(LaunchError::Invalid(m)) => assert!(!m.is_empty()),
            other => panic!("{grid:?} x {workgroup:?}: expected a refusal, got {other:?}"),
        }
        run_good();
    }
    assert!(Buffer::zeroed(u64::MAX).is_err());
    assert!(Buffer::zeroed(1 << 46).is_err());
    // A hundred million workgroups: the watchdog stops the launch.
    match runtime.launch(&good, [1 << 27, 1, 1], [32, 1, 1], &[], &mut small) {
        Err(LaunchError::Watchdog { .. }) => {}
        other => panic!("expected the watchdog, got {other:?}"),
    }
    run_good();
    let runaway = runtime
        .prepare(
            Arc::new(verified("kernel @main workgroup(64) {\n  loop {\n  }\n}\n")),
            "main",
        )
        .expect("prepares");
    match runtime.launch(&runaway, [4, 1, 1], [64, 1, 1], &[], &mut []) {
        Err(LaunchError::Watchdog { .. }) => {}
        other => panic!("expected the watchdog, got {other:?}"),
    }
    run_good();
}
