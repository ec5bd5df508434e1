//! Barriers in compiled code on the runtime: a tree reduction in shared
//! memory for every workgroup size from 1 to 1024, and barriers inside
//! loops, ifs and called functions, each compared with the interpreter.

mod support;
use support::*;
use warpjit_runtime::Buffer;

#[test]
fn tree_reduction_is_right_for_every_workgroup_size_from_1_to_1024() {
    // 32 warp slots: exactly enough for 1024 invocations.
    check_tree_sum_for_every_workgroup_size(&runtime_on(jit(), 2, 32));
}

/// Barriers under a loop whose trip count differs per warp, under an `if`
/// that only some warps enter, and inside a called function (called from a
/// loop), with warps exchanging values through shared memory between them.
/// Warps that have returned early must not hold the others up.
const NESTED: &str = "
buffer @out[0]: u32
shared @board[4096]
func @publish(%slot: i32, %value: i32) -> i32 {
  %addr = shl %slot, 2
  store.u32 @board, %addr, %value
  barrier
  %size = workgroup_size.x
  %next = add %slot, 1
  %wrapped = rem.u %next, %size
  %naddr = shl %wrapped, 2
  %read = load.u32 @board, %naddr
  barrier
  return %read
}
kernel @main {
  var $acc: i32
  var $round: i32
  var $i: i32
  %local = local_index
  %warp = warp_id
  %gid = global_id.x
  $acc = mov %gid
  loop {
    %stop = cmp.ge.u $round, 3
    if %stop {
      break
    }
    %got = call @publish(%local, $acc)
    $acc = add $acc, %got
    $round = add $round, 1
  }
  %odd = and %warp, 1
  %is_odd = cmp.ne %odd, 0
  if %is_odd {
    %lane = lane_id
    %early = cmp.lt.u %lane, 3
    if %early {
      return
    }
  }
  %two = cmp.lt.u %warp, 2
  if %two {
    loop {
      %enough = cmp.ge.u $i, %warp
      if %enough {
        break
      }
      barrier
      $i = add $i, 1
    }
  }
  %oaddr = shl %gid, 2
  store.u32 @out, %oaddr, $acc
}";

#[test]
fn barriers_in_loops_ifs_and_calls_match_the_interpreter() {
    let sources = [NESTED, TREE_SUM];
    for source in sources {
        let mut results = Vec::new();
        for backend in backends() {
            let name = backend.name().to_string();
            let runtime = runtime_on(backend, 2, 32);
            let kernel = kernel(&runtime, source);
            let mut per_size = Vec::new();
            for size in [1u32, 31, 32, 33, 64, 100, 257, 1024] {
                let values: Vec<u32> = (0..4 * size).map(|i| i * 7 + 1).collect();
                let mut buffers: Vec<Buffer> = if source == TREE_SUM {
                    vec![u32s(&values), zeros_u32(4)]
                } else {
                    vec![zeros_u32(4 * u64::from(size))]
                };
                let report = run(
                    &runtime,
                    &kernel,
                    [4, 1, 1],
                    [size, 1, 1],
                    &[],
                    &mut buffers,
                );
                per_size.push((
                    report.faults,
                    buffers.iter().map(Buffer::to_bytes).collect::<Vec<_>>(),
                ));
            }
            results.push((name, per_size));
        }
        let (jit_name, jit) = &results[0];
        let (interp_name, interp) = &results[1];
        assert_eq!(jit, interp, "{jit_name} vs {interp_name}");
    }
}

/// The largest private arrays (16 KiB per lane) in a kernel and in the
/// function it calls: their stack bound exceeds what the SM thread's own
/// stack is trusted with, so the warps run on coroutine stacks even
/// without a barrier, and with one.
const BIG_PRIVATES: &str = "
buffer @out[0]: u32
func @fill(%seed: i32) -> i32 {
  private @inner[16384]
  var $i: i32
  var $sum: i32
  loop {
    %done = cmp.ge.u $i, 4096
    if %done {
      break
    }
    %addr = shl $i, 2
    %v = add %seed, $i
    store.u32 @inner, %addr, %v
    $i = add $i, 97
  }
  %last = load.u32 @inner, 16380
  %first = load.u32 @inner, 0
  $sum = add %last, %first
  return $sum
}
kernel @main {
  private @outer[16384]
  %gid = global_id.x
  store.u32 @outer, 16380, %gid
  %got = call @fill(%gid)
  BARRIER
  %mine = load.u32 @outer, 16380
  %total = add %got, %mine
  %oaddr = shl %gid, 2
  store.u32 @out, %oaddr, %total
}";

#[test]
fn kernels_with_the_largest_private_arrays_run_on_warp_stacks() {
    for barrier in ["barrier", ""] {
        let source = BIG_PRIVATES.replace("BARRIER", barrier);
        let mut results = Vec::new();
        for backend in backends() {
            let runtime = runtime_on(backend, 2, 8);
            let kernel = kernel(&runtime, &source);
            let mut buffers = vec![zeros_u32(3 * 70)];
            let report = run(&runtime, &kernel, [3, 1, 1], [70, 1, 1], &[], &mut buffers);
            assert!(report.faults.is_empty(), "{}", report.faults);
            results.push(buffers[0].to_vec::<u32>());
        }
        assert_eq!(results[0], results[1], "barrier: {barrier:?}");
        assert!(results[0].iter().any(|&v| v != 0));
    }
}
