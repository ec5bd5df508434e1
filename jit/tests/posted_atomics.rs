//! Posted atomics on the runtime: updates of buffers nothing reads are
//! collected per SM and applied when a run of workgroups ends. The final
//! memory must be the interpreter's, on any number of SMs, through every
//! path (one lane, lanes on one address, lanes on several, a slot that
//! changes address), and updates made before a launch stops must be in
//! memory after it.

mod support;
use support::*;
use warpjit_ir::interp::ExecError;
use warpjit_jit::{compile, JitOptions};
use warpjit_runtime::{Buffer, LaunchError, Runtime};

/// Every buffer but `@input` is only updated by atomics whose results are
/// unread, so all of them are posted:
/// - `@sums`: lane 0 adds its warp's sum at slot `workgroup % 3` (one lane;
///   consecutive workgroups move the SM's slot between addresses);
/// - `@counts`: every lane adds 1 at 0 (one address), then the odd lanes
///   add 1 at their own lane's word (several addresses);
/// - `@peaks`: signed max of the input seen as s32 (negative values
///   included), lanes 0-15 at 0 and lanes 16-31 at 4;
/// - `@lows`: unsigned min of the input;
/// - `@bits`: u64 sum of each lane's value shifted left by its lane.
/// - `@spread`: every lane adds its lane + 1 at word `lane % 8` (a whole
///   warp on several addresses, in the SM's copy of the buffer);
/// - `@mins`: signed min of the input at word `lane % 4`;
/// - `@wide`: every lane adds 1 at word `global_id % 8192`, a buffer too
///   big for a copy (32 KiB), so each lane is an atomic instruction.
const REDUCTIONS: &str = "
param %n: i32
buffer @input[0]: u32
buffer @sums[1]: u32
buffer @counts[2]: u32
buffer @peaks[3]: s32
buffer @bits[4]: u64
buffer @lows[5]: u32
buffer @spread[6]: u32
buffer @mins[7]: s32
buffer @wide[8]: u32

kernel @main workgroup(64) {
  var $x: i32
  %i = global_id.x
  %in_range = cmp.lt.u %i, %n
  if %in_range {
    %addr = shl %i, 2
    $x = load.u32 @input, %addr
  }
  %s16 = shuffle.xor $x, 16, width 32
  %a16 = add $x, %s16
  %s8 = shuffle.xor %a16, 8, width 32
  %a8 = add %a16, %s8
  %s4 = shuffle.xor %a8, 4, width 32
  %a4 = add %a8, %s4
  %s2 = shuffle.xor %a4, 2, width 32
  %a2 = add %a4, %s2
  %s1 = shuffle.xor %a2, 1, width 32
  %total = add %a2, %s1

  %lane = lane_id
  %first = cmp.eq %lane, 0
  if %first {
    %group = workgroup_id.x
    %slot = rem.u %group, 3
    %slot_addr = shl %slot, 2
    %u1 = atom.add.u32 @sums, %slot_addr, %total
  }

  %u2 = atom.add.u32 @counts, 0, 1
  %odd = and %lane, 1
  %is_odd = cmp.ne %odd, 0
  if %is_odd {
    %own = shl %lane, 2
    %u3 = atom.add.u32 @counts, %own, 1
  }

  %low_half = cmp.lt.u %lane, 16
  if %low_half {
    %u4 = atom.max.s32 @peaks, 0, $x
  } else {
    %u5 = atom.max.s32 @peaks, 4, $x
  }

  %wide = cvt.u64.u32 $x
  %shift = cvt.u64.u32 %lane
  %moved = shl %wide, %shift
  %u6 = atom.add.u64 @bits, 0, %moved
  %u7 = atom.min.u32 @lows, 0, $x

  %eighth = and %lane, 7
  %spread_addr = shl %eighth, 2
  %lane1 = add %lane, 1
  %u8 = atom.add.u32 @spread, %spread_addr, %lane1
  %quarter = and %lane, 3
  %mins_addr = shl %quarter, 2
  %u9 = atom.min.s32 @mins, %mins_addr, $x
  %wrapped = and %i, 8191
  %wide_addr = shl %wrapped, 2
  %u10 = atom.add.u32 @wide, %wide_addr, 1
}";

fn inputs(n: u32) -> Vec<u32> {
    // Large values, so signed max sees negative and positive ones.
    (0..n)
        .map(|i| i.wrapping_mul(2_654_435_761) ^ (i >> 3))
        .collect()
}

fn reduction_buffers(n: u32) -> Vec<Buffer> {
    vec![
        u32s(&inputs(n)),
        zeros_u32(3),
        zeros_u32(32),
        Buffer::from_slice(&[i32::MIN, i32::MIN]).expect("small"),
        Buffer::zeros(warpjit_ir::NumFormat::U64, 1).expect("small"),
        u32s(&[u32::MAX]),
        zeros_u32(8),
        Buffer::from_slice(&[i32::MAX; 4]).expect("small"),
        zeros_u32(8192),
    ]
}

/// The contents of every updated buffer after REDUCTIONS on `runtime`.
fn reductions_on(runtime: &Runtime, groups: u32, n: u32) -> Vec<Vec<u64>> {
    let kernel = kernel(runtime, REDUCTIONS);
    let mut buffers = reduction_buffers(n);
    run(
        runtime,
        &kernel,
        [groups, 1, 1],
        [64, 1, 1],
        &[u64::from(n)],
        &mut buffers,
    );
    // Every updated buffer's elements as u64, signed ones by their bits.
    let words = |b: &Buffer| -> Vec<u64> { b.to_vec::<u32>().into_iter().map(u64::from).collect() };
    let signed = |b: &Buffer| -> Vec<u64> {
        b.to_vec::<i32>()
            .into_iter()
            .map(|v| u64::from(v as u32))
            .collect()
    };
    vec![
        words(&buffers[1]),
        words(&buffers[2]),
        signed(&buffers[3]),
        buffers[4].to_vec::<u64>(),
        words(&buffers[5]),
        words(&buffers[6]),
        signed(&buffers[7]),
        words(&buffers[8]),
    ]
}

#[test]
fn posted_updates_leave_the_interpreters_memory_on_any_number_of_sms() {
    // 200 workgroups, the last one partly past the end of the input.
    let (groups, n) = (200, 200 * 64 - 40);
    let expected = reductions_on(&runtime(1), groups, n);
    // Independent checks of two of them.
    let input = inputs(n);
    let total: u32 = input.iter().fold(0u32, |a, &v| a.wrapping_add(v));
    let sums = &expected[0];
    assert_eq!(
        sums.iter().fold(0u32, |a, &v| a.wrapping_add(v as u32)),
        total
    );
    assert_eq!(expected[1][0], u64::from(groups) * 64);
    // Lanes 0-7 of each warp add 1-8, lanes 8-15 add 9-16, and so on.
    let per_warp: Vec<u64> = (0..8)
        .map(|w| (0..4).map(|k| w + 1 + 8 * k).sum())
        .collect();
    let warps = u64::from(groups) * 2;
    let spread: Vec<u64> = per_warp.iter().map(|p| p * warps).collect();
    assert_eq!(expected[5], spread);
    // 200 * 64 invocations over 8192 words: the first 4608 get two.
    let wide = &expected[7];
    assert_eq!((wide[0], wide[4607], wide[4608], wide[8191]), (2, 2, 1, 1));
    for sm_count in [1, 2, 3] {
        let got = reductions_on(&runtime_on(jit(), sm_count, 64), groups, n);
        assert_eq!(got, expected, "{sm_count} SMs");
    }
}

/// Lane 0 of every warp adds 1 to `@total`, then the warp spins until its
/// fuel or the watchdog stops the launch.
const ADD_THEN_SPIN: &str = "
buffer @total[0]: u32
kernel @main workgroup(32) {
  %lane = lane_id
  %first = cmp.eq %lane, 0
  if %first {
    %old = atom.add.u32 @total, 0, 1
  }
  loop {
  }
}";

/// Launches four one-warp workgroups of `source` on one SM with little
/// fuel, insists that the fuel stops the launch, and returns the buffer of
/// `words` u32 words it updated.
fn after_a_fuel_stop(source: &str, words: u64) -> Vec<u32> {
    let mut config = config(1, 64);
    config.fuel = Some(1000);
    let runtime = Runtime::with_backend(config, jit()).expect("valid configuration");
    let kernel = kernel(&runtime, source);
    let mut buffers = vec![zeros_u32(words)];
    let outcome = runtime.launch(&kernel, [4, 1, 1], [32, 1, 1], &[], &mut buffers);
    assert!(
        matches!(
            outcome,
            Err(LaunchError::Exec(ExecError::FuelExhausted { .. }))
        ),
        "{outcome:?}"
    );
    buffers[0].to_vec::<u32>()
}

#[test]
fn updates_posted_before_a_fuel_stop_are_in_memory() {
    // One SM: the first warp posted its add, then ran out of fuel.
    assert_eq!(after_a_fuel_stop(ADD_THEN_SPIN, 1), vec![1]);
}

/// Every lane adds 1 at its own word (through the SM's copy of the
/// buffer), then the warp spins until its fuel stops the launch.
const SPREAD_THEN_SPIN: &str = "
buffer @counts[0]: u32
kernel @main workgroup(32) {
  %lane = lane_id
  %addr = shl %lane, 2
  %old = atom.add.u32 @counts, %addr, 1
  loop {
  }
}";

#[test]
fn updates_in_a_copy_before_a_fuel_stop_are_in_memory() {
    assert_eq!(after_a_fuel_stop(SPREAD_THEN_SPIN, 32), vec![1; 32]);
}

/// How often the -O0 IR of `source` mentions the posting code's blocks.
fn posting_blocks(source: &str) -> usize {
    let options = JitOptions {
        opt_level: 0,
        ..JitOptions::default()
    };
    compile(&module(source), &options)
        .expect("compiles")
        .llvm_ir()
        .expect("IR")
        .matches("post.slot")
        .count()
}

#[test]
fn only_buffers_nothing_reads_get_posted_code() {
    let all = posting_blocks(REDUCTIONS);
    assert!(all > 0);
    // Reading one atomic's result, or storing to the buffer, keeps that
    // buffer's updates direct; the others are still posted.
    let read_result = REDUCTIONS.replace(
        "%u6 = atom.add.u64 @bits, 0, %moved",
        "%u6 = atom.add.u64 @bits, 0, %moved\n  %back = cvt.u32.u64 %u6\n  store.u32 @input, 0, %back",
    );
    let stored = REDUCTIONS.replace(
        "%u1 = atom.add.u32 @sums, %slot_addr, %total",
        "%u1 = atom.add.u32 @sums, %slot_addr, %total\n    store.u32 @sums, 8, %total",
    );
    for variant in [read_result, stored] {
        let some = posting_blocks(&variant);
        assert!(0 < some && some < all, "{some} of {all}\n{variant}");
    }
    // A fence anywhere: nothing is posted.
    let fenced = REDUCTIONS.replace("%u6 = ", "membar\n  %u6 = ");
    assert_eq!(posting_blocks(&fenced), 0);
}
