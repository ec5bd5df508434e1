//! Kernels whose barriers are all statements of the body run as phases
//! (`src/lower/phases.rs`): what crosses a barrier (values of every kind,
//! variables, private arrays, the lanes that returned or were killed or
//! demoted) must be what the interpreter sees, for every workgroup shape.

mod direct;
mod support;
use support::*;
use warpjit_runtime::Buffer;

/// Three phases. Phase 0 defines values of four types, writes a variable
/// and a private array, returns some lanes, kills others and demotes a
/// third group; phase 1 publishes through shared memory and reads the
/// active mask; phase 2 reads everything back.
const THREE_PHASES: &str = "
buffer @out[0]: u32
shared @board[4096]
kernel @main {
  var $acc: i32
  var $flag: bool
  private @notes[16]
  %local = local_index
  %lane = lane_id
  %gid = global_id.x
  %scaled = cvt.f32.u32 %gid
  %half = mul %scaled, 0.5
  %wide = cvt.u64.u32 %gid
  %big = shl %wide, 20
  %odd_bit = and %gid, 1
  %is_odd = cmp.ne %odd_bit, 0
  $acc = mul %gid, 3
  $flag = mov %is_odd
  store.u32 @notes, 4, %gid
  %quit = cmp.eq %lane, 5
  if %quit {
    return
  }
  %dead = cmp.eq %lane, 9
  if %dead {
    kill
  }
  %helper = cmp.eq %lane, 13
  if %helper {
    demote
  }
  barrier
  %slot = shl %local, 2
  store.u32 @board, %slot, $acc
  %active = active_mask
  $acc = add $acc, %active
  store.u32 @notes, 8, %active
  barrier
  %size = workgroup_size.x
  %next = add %local, 1
  %wrapped = rem.u %next, %size
  %naddr = shl %wrapped, 2
  %theirs = load.u32 @board, %naddr
  %back = cvt.u32.f32 %half
  %low = cvt.u32.u64 %big
  %first_note = load.u32 @notes, 4
  %second_note = load.u32 @notes, 8
  %picked = select $flag, %back, %low
  %sum1 = add %theirs, %picked
  %sum2 = add %sum1, %first_note
  %sum3 = add %sum2, %second_note
  %sum4 = add %sum3, $acc
  %still = active_mask
  %sum5 = xor %sum4, %still
  %odd_again = select %is_odd, 1000:i32, 0
  %total = add %sum5, %odd_again
  %oaddr = shl %gid, 2
  store.u32 @out, %oaddr, %total
}";

/// Per workgroup size, the faults and the output words of three
/// workgroups of `src`, on the JIT and on the interpreter (which must agree).
type Outputs = Vec<(u32, warpjit_runtime::FaultReport, Vec<u32>)>;

fn jit_and_interpreter_agree(src: &str) -> Outputs {
    let mut results = Vec::new();
    for backend in backends() {
        let name = backend.name().to_string();
        let runtime = runtime_on(backend, 2, 32);
        let kernel = kernel(&runtime, src);
        let mut per_size = Vec::new();
        for size in [1u32, 31, 32, 33, 64, 100, 257, 1024] {
            let mut buffers: Vec<Buffer> = vec![zeros_u32(3 * u64::from(size))];
            let report = run(
                &runtime,
                &kernel,
                [3, 1, 1],
                [size, 1, 1],
                &[],
                &mut buffers,
            );
            per_size.push((size, report.faults, buffers[0].to_vec::<u32>()));
        }
        results.push((name, per_size));
    }
    let (jit_name, jit) = &results[0];
    let (interp_name, interp) = &results[1];
    assert_eq!(jit, interp, "{jit_name} vs {interp_name}");
    results.swap_remove(1).1
}

#[test]
fn what_crosses_a_barrier_is_what_the_interpreter_sees() {
    let interp = jit_and_interpreter_agree(THREE_PHASES);
    // Lane 5 returned and lane 9 was killed before the first barrier: the
    // phases after it leave their words untouched.
    let (_, _, words) = &interp[3];
    assert_eq!((words[5], words[9]), (0, 0));
    assert_ne!(words[4], 0);
}

/// Variables carried only as far as they are read: `$early` is read in
/// phase 0 only, `$kept` is assigned in some lanes in phase 1 and read in
/// phase 2 (the other lanes keep phase 0's value), `$late` is assigned and
/// read in phase 1 only, and `$twice` is assigned in phases 0 and 2 and
/// read in phase 2 after some lanes reassign it.
const PARTLY_CARRIED: &str = "
buffer @out[0]: u32
kernel @main {
  var $early: i32
  var $kept: i32
  var $late: i32
  var $twice: i32
  %gid = global_id.x
  %lane = lane_id
  $early = add %gid, 7
  $kept = mul %gid, 5
  $twice = add %lane, 100
  %first = add $early, 1
  barrier
  %low = cmp.lt.u %lane, 12
  if %low {
    $kept = add $kept, 1000
  }
  $late = shl %lane, 3
  %late_sum = add $late, %first
  barrier
  %high = cmp.gt.u %lane, 20
  if %high {
    $twice = sub $twice, 50
  }
  %a = add $kept, %late_sum
  %b = add %a, $twice
  %oaddr = shl %gid, 2
  store.u32 @out, %oaddr, %b
}";

#[test]
fn variables_are_carried_as_far_as_a_phase_reads_them() {
    let interp = jit_and_interpreter_agree(PARTLY_CARRIED);
    // Workgroup size 64, lane 3 of the first warp and lane 25 of the second.
    let (size, _, words) = &interp[4];
    assert_eq!(*size, 64);
    let expect = |gid: u32, lane: u32| {
        let kept = gid * 5 + if lane < 12 { 1000 } else { 0 };
        let late_sum = (lane << 3) + gid + 8;
        let twice = lane + 100 - if lane > 20 { 50 } else { 0 };
        kept + late_sum + twice
    };
    assert_eq!(words[3], expect(3, 3));
    assert_eq!(words[57], expect(57, 25));
}

/// No lane returns before the first barrier, so in code for whole warps
/// phase 1 starts with all 32 lanes (killed lanes leave the live mask
/// only); lanes return in phase 1, so phase 2 must take the lanes that
/// remain from the phase state.
const LATE_RETURN: &str = "
buffer @out[0]: u32
kernel @main {
  %gid = global_id.x
  %lane = lane_id
  %oaddr = shl %gid, 2
  %dead = cmp.eq %lane, 9
  if %dead {
    kill
  }
  barrier
  %first = active_mask
  %quit = cmp.gt.u %lane, 27
  if %quit {
    return
  }
  barrier
  %second = active_mask
  %low = and %second, 0xffff
  %sum = add %first, %low
  store.u32 @out, %oaddr, %sum
}";

#[test]
fn lanes_that_return_after_the_first_barrier_stay_out() {
    let interp = jit_and_interpreter_agree(LATE_RETURN);
    // Workgroup size 64: every lane but 9 (killed) and 28-31 (returned)
    // stores the first phase's mask (all but lane 9) plus the low half of
    // the second's.
    let (size, _, words) = &interp[4];
    assert_eq!(*size, 64);
    let first = !(1u32 << 9);
    let second = first & 0x0fff_ffff;
    let expect = first.wrapping_add(second & 0xffff);
    assert_eq!(
        (words[0], words[27], words[32 + 27]),
        (expect, expect, expect)
    );
    assert_eq!(
        (words[9], words[28], words[31], words[32 + 31]),
        (0, 0, 0, 0)
    );
}

/// The body of `@kernel.main` in the optimised IR `ir`.
fn entry_body(ir: &str) -> &str {
    let start = ir.find("@kernel.main(").expect("the kernel's entry");
    let end = ir[start..].find("\n}").map_or(ir.len(), |e| start + e);
    &ir[start..end]
}

/// A kernel without loops runs a call's warps in a loop in its entry. Split
/// into phases, the entry switches on the phase once per call and has a
/// loop per phase, each holding only its phase's code: the warps do not
/// dispatch on the phase one by one.
#[test]
fn each_phase_loops_over_the_warps_on_its_own() {
    let text = include_str!("../../examples/scan_shuffle_up.warp");
    let m = direct::module(text);
    for options in direct::kinds([256, 1, 1]) {
        let ir = direct::optimised_ir(&m, &options);
        let entry = entry_body(&ir);
        let switches = entry.matches(" switch i32 ").count();
        // Loop headers: `warp:`, `warp1:` (not their preheaders).
        let loops = entry
            .lines()
            .filter_map(|l| l.split(':').next())
            .filter(|label| {
                label
                    .strip_prefix("warp")
                    .is_some_and(|n| n.bytes().all(|b| b.is_ascii_digit()))
            })
            .count();
        assert_eq!((switches, loops), (1, 2), "{options:?}\n{entry}");
    }
}
