//! Fuel running out in compiled code: the warp stops at the loop test that
//! finds no fuel, in a called function too, and nothing after that point
//! is written, not even by the callers. (The interpreter counts fuel in
//! statements, the JIT in loop tests, so the two stop at different points
//! and are not compared here.)

mod direct;

use direct::module;
use warpjit_ir::interp::LaunchConfig;
use warpjit_jit::{compile, launch, JitError, JitOptions, Target};

/// `@main` stores before and after calling `@count`, whose loop runs
/// `%steps` iterations in lane 0 and fewer in the others; `@main` then
/// loops itself before its last store.
const CALLER_AFTER_A_STOP: &str = "
param %steps: i32
buffer @out[0]: u32

func @count(%limit: i32) -> i32 {
  var $i: i32
  loop {
    %done = cmp.ge.u $i, %limit
    if %done {
      break
    }
    $i = add $i, 1
  }
  return $i
}

kernel @main workgroup(32) {
  var $j: i32
  %lane = lane_id
  %addr = shl %lane, 2
  store.u32 @out, %addr, 1
  %limit = sub %steps, %lane
  %n = call @count(%limit)
  %after = add %addr, 128
  store.u32 @out, %after, %n
  loop {
    %done = cmp.ge.u $j, 3
    if %done {
      break
    }
    $j = add $j, 1
  }
  %last = add %addr, 256
  store.u32 @out, %last, $j
}";

/// Runs CALLER_AFTER_A_STOP with `fuel` loop tests per warp (the
/// JIT's fuel unit: one per loop test) on every target; they must agree.
fn run(steps: u32, fuel: u64) -> (Result<(), String>, Vec<u8>) {
    let m = module(CALLER_AFTER_A_STOP);
    let kernel = m.find_function("main").expect("@main");
    let mut cfg = LaunchConfig::new([1, 1, 1], [32, 1, 1]);
    cfg.fuel = Some(fuel);
    let params = [u64::from(steps)];
    let mut first: Option<(Result<(), String>, Vec<u8>)> = None;
    for target in [Target::Native, Target::Avx2, Target::Sse42] {
        let options = JitOptions {
            opt_level: 2,
            target,
            whole_warps: true,
            ..JitOptions::default()
        };
        let compiled = compile(&m, &options).expect("compiles");
        let mut memory = vec![vec![0xffu8; 384]];
        let outcome = launch(&compiled, kernel, &cfg, &params, &mut memory)
            .map(|_| ())
            .map_err(|e| match e {
                JitError::FuelExhausted(message) => message,
                other => format!("not a fuel stop: {other}"),
            });
        let memory = memory.remove(0);
        match &first {
            None => first = Some((outcome, memory)),
            Some((o, mem)) => {
                assert_eq!(&outcome, o, "{target:?}: outcome");
                assert!(&memory == mem, "{target:?}: memory differs");
            }
        }
    }
    first.expect("three targets ran")
}

/// Memory starts as all ones, so a store of any value shows.
const UNWRITTEN: u32 = u32::MAX;

fn stop_after(fuel: u64) -> String {
    format!(
        "kernel @main: fuel exhausted in workgroup (0, 0, 0), warp 0 after {fuel} loop tests (runaway kernel?)"
    )
}

fn words(bytes: &[u8]) -> Vec<u32> {
    bytes
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes(c.try_into().expect("4 bytes")))
        .collect()
}

#[test]
fn a_stop_inside_a_call_ends_the_caller_too() {
    let (outcome, memory) = run(40, 20);
    assert_eq!(outcome, Err(stop_after(20)));
    let w = words(&memory);
    assert_eq!(&w[..32], &[1; 32], "the store before the call happens");
    assert_eq!(
        &w[32..],
        &[UNWRITTEN; 64],
        "nothing after the stop is written"
    );
}

#[test]
fn a_stop_in_the_caller_after_the_call() {
    let (outcome, memory) = run(40, 43);
    assert_eq!(outcome, Err(stop_after(43)));
    let w = words(&memory);
    let counts: Vec<u32> = (0..32).map(|lane| 40 - lane).collect();
    assert_eq!(&w[32..64], &counts[..], "the call's results are stored");
    assert_eq!(&w[64..], &[UNWRITTEN; 32], "the last store is not");
}

#[test]
fn enough_fuel_runs_to_the_end() {
    // A loop test per iteration started, and one more finding no lanes
    // left: 42 in the callee's loop (lane 0 breaks in the 41st). The
    // caller's loop breaks on a uniform condition, which leaves without
    // that last test: 4.
    let (outcome, memory) = run(40, 46);
    assert_eq!(outcome, Ok(()));
    assert_eq!(&words(&memory)[64..], &[3; 32]);
    let (outcome, memory) = run(40, 45);
    assert_eq!(outcome, Err(stop_after(45)));
    assert_eq!(&words(&memory)[64..], &[UNWRITTEN; 32]);
}
