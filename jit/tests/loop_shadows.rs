//! Loop shadows (`jit/src/lower/loop_vars.rs`): variables a loop writes in
//! every lane, so the loop's values do not wait for its break masks. Each
//! program puts lanes where a shadow and its variable differ (lanes that
//! broke, never entered, skipped an iteration's `if`, returned or ended)
//! and then reads the variable where that would show, against the
//! interpreter on every target, with partial warps. Uniform breaks that
//! leave a loop at once are tested here too.

mod direct;

use direct::{agree, module};
use warpjit_ir::interp::LaunchConfig;
use warpjit_jit::{JitOptions, Target};

/// Runs `@main` over `n` invocations in workgroups of 64 (the last one
/// partial when `n` is not a multiple of 32) on the interpreter and on the
/// JIT at every target; the memory and the fault reports must agree, and
/// `out` must not be all zeros (the program computed something).
fn same_as_interpreter(text: &str, n: u32, params: &[u64]) {
    let input: Vec<u8> = (0..n * 4)
        .map(|i| (i.wrapping_mul(2654435761) >> 11) as u8)
        .collect();
    let buffers = vec![input, vec![0u8; (n * 16) as usize]];
    let cfg = LaunchConfig::new([n.div_ceil(64), 1, 1], [64, 1, 1]);
    let mut all = params.to_vec();
    all.insert(0, u64::from(n));
    let expected = agree(text, &[cfg], &[all], &buffers);
    assert!(
        expected[1].iter().any(|&b| b != 0),
        "the program wrote nothing\n{text}"
    );
}

/// Mandelbrot's shape: a count read after the loop, values read only in it.
#[test]
fn counts_after_divergent_breaks() {
    same_as_interpreter(
        "
param %n: i32
param %limit: i32
buffer @in[0]: u32
buffer @out[1]: u32
kernel @main workgroup(64) {
  var $x: i32
  var $count: i32
  var $last: i32
  %g = global_id.x
  %inside = cmp.lt.u %g, %n
  if %inside {
    %a = shl %g, 2
    $x = load.u32 @in, %a
    loop {
      %done = cmp.ge.s $count, %limit
      if %done {
        break
      }
      %low = and $x, 15
      %stop = cmp.eq %low, 3
      if %stop {
        break
      }
      %m = mul $x, 1103515245
      $x = add %m, 12345
      $last = shr.u $x, 16
      $count = add $count, 1
    }
    %o = shl %g, 3
    store.u32x2 @out, %o, $count, $last
  }
}
",
        1000,
        &[40],
    );
}

/// Writes under `if`s: a divergent one (lanes stay in the loop without
/// running it, so their values must be kept) and a uniform one.
#[test]
fn writes_under_divergent_and_uniform_ifs() {
    same_as_interpreter(
        "
param %n: i32
param %flag: i32
buffer @in[0]: u32
buffer @out[1]: u32
kernel @main workgroup(64) {
  var $x: i32
  var $y: i32
  var $i: i32
  %g = global_id.x
  %a = shl %g, 2
  $x = load.u32 @in, %a
  $y = mov %g
  loop {
    %done = cmp.ge.u $i, 24
    if %done {
      break
    }
    %odd = and $x, 1
    %is_odd = cmp.ne %odd, 0
    if %is_odd {
      $y = add $y, $x
    } else {
      $y = xor $y, 0x5a5a
    }
    $y = add $y, 1
    %on = cmp.ne %flag, 0
    if %on {
      $x = shr.u $x, 1
    } else {
      $x = mul $x, 3
    }
    %big = cmp.gt.u $y, 4000000000
    if %big {
      break
    }
    $i = add $i, 1
  }
  %o = shl %g, 3
  store.u32x2 @out, %o, $x, $y
}
",
        200,
        &[1],
    );
}

/// Nested loops shadowing the same variable, a divergent inner break and
/// a variable also read before the loops.
#[test]
fn nested_loops() {
    same_as_interpreter(
        "
param %n: i32
buffer @in[0]: u32
buffer @out[1]: u32
kernel @main workgroup(64) {
  var $acc: i32
  var $i: i32
  var $j: i32
  %g = global_id.x
  %a = shl %g, 2
  $acc = load.u32 @in, %a
  %before = mul $acc, 7
  loop {
    %outer_done = cmp.ge.u $i, 6
    if %outer_done {
      break
    }
    $j = mov 0
    %lane = lane_id
    %some = cmp.lt.u %lane, 20
    if %some {
      loop {
        %lim = add $i, 3
        %inner_done = cmp.ge.u $j, %lim
        if %inner_done {
          break
        }
        $acc = add $acc, $j
        %bits = and $acc, 7
        %zero = cmp.eq %bits, 0
        if %zero {
          break
        }
        $acc = mul $acc, 5
        $j = add $j, 1
      }
    }
    $acc = xor $acc, $i
    $i = add $i, 1
  }
  %o = shl %g, 4
  store.u32x4 @out, %o, $acc, $i, $j, %before
}
",
        100,
        &[],
    );
}

/// Variables only an inner loop reads and writes: its next run, in the
/// outer loop's next iteration, starts from what the last one left, so the
/// shadows must reach the variables (`$seen`, `$count`, and `$deep` in a
/// loop under an `if`), except where the outer loop assigns them first
/// (`$fresh`). Per-lane trip counts leave lanes that ran the inner loop
/// once, several times or never; the same nest in a called function.
#[test]
fn inner_loop_variables_carry_to_the_next_outer_iteration() {
    same_as_interpreter(
        "
param %n: i32
buffer @in[0]: u32
buffer @out[1]: u32
func @nest(%lane: i32) -> (i32) {
  var $k: i32
  var $m: i32
  var $v: i32
  %outer = min.u %lane, 4
  %inner = rem.u %lane, 5
  loop {
    %k1 = add $k, 1
    $k = mov %k1
    %k_done = cmp.gt.u %k1, %outer
    if %k_done {
      break
    }
    $m = mov 0
    loop {
      %m1 = add $m, 1
      $m = mov %m1
      %m_go = cmp.le.u %m1, %inner
      if %m_go {} else {
        break
      }
      %v1 = mul $v, 3
      $v = add %v1, %m1
    }
  }
  return $v
}
kernel @main workgroup(64) {
  var $i: i32
  var $j: i32
  var $seen: i32
  var $count: i32
  var $fresh: i32
  var $deep: i32
  %g = global_id.x
  %a = shl %g, 2
  %x = load.u32 @in, %a
  %lane = lane_id
  %outer = and %x, 3
  %inner = rem.u %lane, 3
  %o = shl %g, 4
  %o4 = add %o, 4
  %o8 = add %o, 8
  %o12 = add %o, 12
  loop {
    %i_done = cmp.ge.u $i, %outer
    if %i_done {
      break
    }
    $j = mov 0
    $fresh = mov %x
    loop {
      %j_done = cmp.ge.u $j, %inner
      if %j_done {
        break
      }
      %s = xor $seen, $fresh
      $seen = add %s, $j
      store.u32 @out, %o, $seen
      store.u32 @out, %o4, $count
      $count = add $count, 1
      $fresh = add $fresh, $j
      $j = add $j, 1
    }
    %odd = and %lane, 1
    %is_odd = cmp.ne %odd, 0
    if %is_odd {
      loop {
        %d_done = cmp.ge.u $deep, 40
        if %d_done {
          break
        }
        store.u32 @out, %o8, $deep
        $deep = add $deep, 7
        %step = and $deep, 8
        %stop = cmp.ne %step, 0
        if %stop {
          break
        }
      }
    }
    $i = add $i, 1
  }
  %from_call = call @nest(%lane)
  store.u32 @out, %o12, %from_call
}
",
        100,
        &[],
    );
}

/// A loop with `continue` keeps the select: lanes that continued come
/// back next iteration.
#[test]
fn loops_with_continue() {
    same_as_interpreter(
        "
param %n: i32
buffer @in[0]: u32
buffer @out[1]: u32
kernel @main workgroup(64) {
  var $x: i32
  var $i: i32
  var $sum: i32
  %g = global_id.x
  %a = shl %g, 2
  $x = load.u32 @in, %a
  loop {
    $i = add $i, 1
    %done = cmp.gt.u $i, 30
    if %done {
      break
    }
    %skip_bit = shr.u $x, $i
    %skip = and %skip_bit, 1
    %skipping = cmp.ne %skip, 0
    if %skipping {
      continue
    }
    $sum = add $sum, $i
    $x = add $x, $sum
  }
  %o = shl %g, 3
  store.u32x2 @out, %o, $x, $sum
}
",
        100,
        &[],
    );
}

/// Calls, returns inside loops, guarded votes, ordered sections and
/// `kill` inside loops whose variables are shadowed.
#[test]
fn calls_returns_votes_ordered_and_kill() {
    same_as_interpreter(
        "
param %n: i32
buffer @in[0]: u32
buffer @out[1]: u32

func @steps(%x: i32) -> i32 {
  var $v: i32
  var $k: i32
  $v = mov %x
  loop {
    %k3 = and $v, 3
    %back = cmp.eq %k3, 1
    if %back {
      return $k
    }
    %done = cmp.ge.u $k, 12
    if %done {
      break
    }
    $v = shr.u $v, 1
    $k = add $k, 1
  }
  %r = add $k, 100
  return %r
}

kernel @main workgroup(64) {
  var $x: i32
  var $votes: bool
  var $turns: i32
  var $order: i32
  %g = global_id.x
  %a = shl %g, 2
  $x = load.u32 @in, %a
  loop {
    %done = cmp.ge.u $turns, 5
    if %done {
      break
    }
    $x = call @steps($x)
    %odd = and $x, 1
    %p = cmp.ne %odd, 0
    %lane = lane_id
    %g2 = cmp.lt.u %lane, 24
    $votes = vote.any %p, guard %g2
    $order = add $order, 1
    %key = and $x, 3
    ordered %key {
      $order = add $order, $x
    }
    %last = cmp.eq $x, 100
    if %last {
      kill
    }
    $x = add $x, %g
    $turns = add $turns, 1
  }
  %o = shl %g, 4
  %v = select $votes, 1:i32, 0:i32
  store.u32x4 @out, %o, $x, %v, $turns, $order
}
",
        150,
        &[],
    );
}

/// In Mandelbrot's loop, `z` is read only inside the loop: its next value
/// comes straight from the `fadd`, with no select waiting for the escape
/// mask (the optimised LLVM IR's loop phis).
#[test]
fn mandelbrot_values_do_not_wait_for_the_mask() {
    let m = module(include_str!("../../examples/mandelbrot.warp"));
    let options = JitOptions {
        opt_level: 2,
        target: Target::Native,
        ..JitOptions::default()
    };
    let ir = direct::optimised_ir(&m, &options);
    let definition = |name: &str| {
        let prefix = format!("{name} = ");
        ir.lines()
            .map(str::trim)
            .find_map(|l| l.strip_prefix(&prefix))
            .unwrap_or_else(|| panic!("no definition of {name}\n{ir}"))
            .to_string()
    };
    // Where each block starts: a back edge comes from a block after the
    // loop header, the way in from one before it.
    let block_at = |label: &str| {
        let name = format!("{}:", label.trim_start_matches('%'));
        ir.lines()
            .position(|l| l.starts_with(&name))
            .unwrap_or_else(|| panic!("no block {label}\n{ir}"))
    };
    let mut carried = Vec::new();
    let mut header = None;
    for (at, line) in ir.lines().enumerate() {
        if line.starts_with("loop") && line.contains(':') {
            header = Some(at);
        }
        if !line.contains("= phi <32 x float>") {
            continue;
        }
        let Some(header) = header else { continue };
        // `%x = phi <32 x float> [ %first, %before ], [ %next, %latch ]`
        for incoming in line.split('[').skip(1) {
            let mut parts = incoming.split(',');
            let value = parts.next().unwrap_or("").trim();
            let block = parts
                .next()
                .unwrap_or("")
                .trim()
                .trim_end_matches(']')
                .trim();
            if block_at(block) > header {
                carried.push(definition(value));
            }
        }
    }
    assert_eq!(carried.len(), 2, "z's two loop phis\n{ir}");
    for def in &carried {
        assert!(def.starts_with("fadd"), "loop-carried z is `{def}`\n{ir}");
    }
}

/// Scalar shadows (`jit/src/lower/scalar_shadows.rs`): counters the same in
/// every lane of the loop. The loop under `if %odd` starts from a value its
/// active lanes share but lane 0 (inactive there) does not; the nested
/// counter is reset by its outer loop after some lanes left that loop, and
/// the outer loop's counter is tested inside it;
/// a variable written in every lane and under a divergent `if` (a vector);
/// f32 and bool counters; `if`s on conditions the whole warp shares, with
/// stores and an else side, after lanes left by divergent breaks.
#[test]
fn counters_the_same_in_every_lane() {
    same_as_interpreter(
        "
param %n: i32
param %limit: i32
buffer @in[0]: u32
buffer @out[1]: u32
kernel @main workgroup(64) {
  var $k: i32
  var $sum: i32
  var $round: i32
  var $j: i32
  var $inner: i32
  var $t: f32
  var $flip: bool
  var $flips: i32
  var $marks: i32
  var $skip: i32
  %g = global_id.x
  %inside = cmp.lt.u %g, %n
  if %inside {
    %lane = lane_id
    %odd_bit = and %lane, 1
    %odd = cmp.eq %odd_bit, 1
    if %odd {
      $k = mov 5
      loop {
        %k_done = cmp.ge.s $k, 9
        if %k_done {
          break
        }
        $sum = add $sum, $k
        $k = add $k, 1
      }
    }
    %a = shl %g, 2
    %x = load.u32 @in, %a
    %rounds = and %lane, 3
    loop {
      %out_of_rounds = cmp.gt.u $round, %rounds
      if %out_of_rounds {
        break
      }
      $j = mov 0
      $skip = mov 0
      loop {
        %wg = workgroup_id.x
        %j_limit = add %limit, %wg
        %j_done = cmp.ge.u $j, %j_limit
        if %j_done {
          break
        }
        %low = and %x, 31
        %early = cmp.eq %low, $j
        if %early {
          break
        }
        %j_addr = shl $j, 2
        %y = load.u32 @in, %j_addr
        $inner = add $inner, %y
        // Written in every lane and, below, in some: a vector.
        $skip = add $skip, 1
        %x_odd_bit = and %x, 1
        %x_odd = cmp.eq %x_odd_bit, 1
        if %x_odd {
          $skip = add $skip, 2
        }
        $inner = add $inner, $skip
        // The outer loop's scalar, read in the inner loop.
        %first_round = cmp.eq $round, 0
        if %first_round {
          $marks = add $marks, 1000
        }
        // A variable no loop shadows, different between lanes.
        %k_big = cmp.gt.s $k, 4
        if %k_big {
          $marks = add $marks, 10000
        }
        %half = cmp.ge.u $j, 3
        if %half {
          $marks = add $marks, 1
        } else {
          $marks = add $marks, 100
        }
        $j = add $j, 1
      }
      $round = add $round, 1
    }
    loop {
      %t_done = cmp.ge $t, 3.0
      if %t_done {
        break
      }
      $flip = not $flip
      if $flip {
        $flips = add $flips, 1
      }
      $t = add $t, 0.5
    }
    %o = shl %g, 4
    store.u32x4 @out, %o, $sum, $inner, $marks, $flips
  }
}
",
        1000,
        &[7],
    );
}

/// Accesses whose address is a loop scalar plus the lane (a compaction
/// tile's chunks): the run starts from lane 0's address even where lane 0
/// is inactive, and chunks past the end of `in` fault as on the per-lane
/// path.
#[test]
fn consecutive_accesses_from_a_loop_scalar() {
    same_as_interpreter(
        "
param %n: i32
param %limit: i32
buffer @in[0]: u32
buffer @out[1]: u32
kernel @main workgroup(64) {
  var $chunk: i32
  var $sum: i32
  var $shifted: i32
  %g = global_id.x
  %inside = cmp.lt.u %g, %n
  if %inside {
    %lane = lane_id
    %high_lanes = cmp.ge.u %lane, 5
    %wg = workgroup_id.x
    %base = mul %wg, 64
    loop {
      %done = cmp.ge.u $chunk, %limit
      if %done {
        break
      }
      %offset = shl $chunk, 5
      %start = add %base, %offset
      %i = add %start, %lane
      %addr = shl %i, 2
      if %high_lanes {
        %x = load.u32 @in, %addr
        $sum = add $sum, %x
        store.u32 @out, %addr, %x
        // The same in the active lanes, not in lane 0.
        $shifted = add %start, 7
        %j = add $shifted, %lane
        %j_addr = shl %j, 2
        %y = load.u32 @in, %j_addr
        $sum = add $sum, %y
      }
      $chunk = add $chunk, 1
    }
    %o = shl %g, 2
    %sum_at = add %o, 12000
    store.u32 @out, %sum_at, $sum
  }
}
",
        1000,
        &[40],
    );
}

/// The tile counter of n-body is a scalar: its loop compares it with a
/// scalar `icmp` and keeps no `<32 x i32>` phi for it.
#[test]
fn nbody_tile_counter_is_a_scalar() {
    let m = module(include_str!("../../benches/workloads/nbody.warp"));
    let options = JitOptions {
        opt_level: 2,
        target: Target::Native,
        ..JitOptions::default()
    };
    let ir = direct::optimised_ir(&m, &options);
    let vector_j = ir
        .lines()
        .any(|l| l.contains("%j.shadow") && l.contains("phi <32 x i32>"));
    assert!(!vector_j, "j is a vector\n{ir}");
    assert!(
        ir.lines()
            .any(|l| l.contains("icmp") && l.contains("i32 %j.scalar") && !l.contains('<')),
        "no scalar compare of j\n{ir}"
    );
}

/// Uniform breaks taken by every lane still in the loop leave it at once
/// (`whole_loop_break` in `jit/src/lower.rs`). Not so after lanes
/// `continue`d this iteration (they come back for the next one, so they
/// see `$i` one higher) or under a divergent `if` (the other lanes stay).
#[test]
fn uniform_breaks_leave_only_with_every_lane() {
    same_as_interpreter(
        "
param %n: i32
param %limit: i32
buffer @in[0]: u32
buffer @out[1]: u32
kernel @main workgroup(64) {
  var $i: i32
  var $j: i32
  var $sum: i32
  var $inner: i32
  var $k: i32
  %g = global_id.x
  %inside = cmp.lt.u %g, %n
  if %inside {
    %a = shl %g, 2
    %x = load.u32 @in, %a
    %odd_bit = and %x, 1
    %odd = cmp.ne %odd_bit, 0
    loop {
      $i = add $i, 1
      %mixed = xor %x, $i
      %low = and %mixed, 3
      %skip = cmp.eq %low, 0
      if %skip {
        continue
      }
      %done = cmp.ge.u $i, %limit
      if %done {
        break
      }
      $sum = add $sum, $i
    }
    loop {
      $k = add $k, 1
      %first = cmp.eq $k, 1
      %wait = and %first, %odd
      if %wait {
        continue
      }
      // The same in every lane: the lanes here leave on the first
      // iteration, the odd ones on the second.
      %now = cmp.ge.u %limit, 5
      if %now {
        break
      }
    }
    $sum = add $sum, $k
    loop {
      $j = add $j, 1
      if %odd {
        %early = cmp.ge.u $j, 5
        if %early {
          break
        }
      }
      %late = cmp.ge.u $j, 9
      if %late {
        break
      }
      $inner = mov 0
      loop {
        %full = cmp.ge.u $inner, $j
        if %full {
          break
        }
        $inner = add $inner, 1
      }
      $sum = add $sum, $inner
    }
    %o = shl %g, 4
    store.u32x4 @out, %o, $i, $j, $sum, $inner
  }
}
",
        1000,
        &[7],
    );
}
