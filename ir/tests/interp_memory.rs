//! Memory: atomics in lane order (HARDWARE.md 28), the alignment and
//! out-of-bounds rule, shared memory with barriers, private memory.

mod interp_support;
use interp_support::*;
use warpjit_ir::interp::{self, AccessKind, ExecError};

#[test]
fn same_address_atomic_add_returns_ascending_values_by_lane() {
    // HARDWARE.md 28: within a warp, same-address atomicAdd returns are
    // consecutive and ascending by lane; warps run in order.
    let r = run(
        "buffer @out[0]: u32
        buffer @count[1]: u32
        kernel @main workgroup(64) {
          %i = local_index
          %a = shl %i, 2
          %old = atom.add.u32 @count, 0, 1
          store.u32 @out, %a, %old
          %bit = and %i, 1
          %odd = cmp.ne %bit, 0
          if %odd {
            %old2 = atom.add.u32 @count, 4, 1
            %a2 = add %a, 256
            store.u32 @out, %a2, %old2
          }
        }",
        [1, 1, 1],
        &[],
        vec![words(128, 0), words(2, 0)],
    );
    let out = r.u32s(0);
    for i in 0..64u32 {
        assert_eq!(out[i as usize], i, "index {i}");
        if i % 2 == 1 {
            assert_eq!(out[64 + i as usize], i / 2, "index {i}");
        }
    }
    assert_eq!(r.u32s(1), vec![64, 32]);
}

#[test]
fn atomic_ops_follow_the_pseudo_code_in_lane_order() {
    // HARDWARE.md 29: IWRAP(9) on 100 returns 100 and stores 0; CSWAP uses
    // the first operand as compare: exactly one lane sees the old 0.
    let r = run(
        "buffer @out[0]: u32
        buffer @cells[1]: u32
        kernel @main workgroup(32) {
          %lane = lane_id
          %a = shl %lane, 2
          %w = atom.iwrap.u32 @cells, 0, 9
          store.u32 @out, %a, %w
          %v = add %lane, 1
          %c = atom.cswap.u32 @cells, 4, 0, %v
          %a1 = add %a, 128
          store.u32 @out, %a1, %c
          %neg = sub 0, %lane
          %mn = atom.min.s32 @cells, 8, %neg
          %mx = atom.max.u32 @cells, 12, %neg
        }",
        [1, 1, 1],
        &[],
        vec![words(64, 0), bytes_of_u32s(&[100, 0, 0, 0])],
    );
    let out = r.u32s(0);
    // 100 -> 0, then 0, 1, ..., 9, 0, 1, ...
    assert_eq!(out[0], 100);
    for lane in 1..32u32 {
        assert_eq!(out[lane as usize], (lane - 1) % 10, "iwrap lane {lane}");
    }
    assert_eq!(out[32], 0, "lane 0 sees the 0 and swaps in 1");
    for lane in 1..32 {
        assert_eq!(out[32 + lane], 1, "later lanes see lane 0's value");
    }
    let cells = r.u32s(1);
    assert_eq!(cells[0], 1);
    assert_eq!(cells[1], 1);
    assert_eq!(cells[2] as i32, -31, "signed min");
    assert_eq!(cells[3], (-1i32) as u32, "unsigned max of 0 and -1..-31");
}

#[test]
fn out_of_bounds_loads_stores_and_atomics_are_counted() {
    let r = run(
        "buffer @data[0]: u32
        buffer @out[1]: u32
        kernel @main workgroup(8) {
          %lane = lane_id
          %a = shl %lane, 2
          %v = load.u32 @data, %a
          %a1 = add %a, 64
          store.u32 @out, %a1, %v
          %big = add %a, 16
          store.u32 @data, %big, 0x55
          %old = atom.add.u32 @data, %big, 1
          %a2 = add %a, 96
          store.u32 @out, %a2, %old
        }",
        [1, 1, 1],
        &[],
        vec![
            bytes_of_u32s(&[11, 12, 13, 14, 15, 16]),
            words(32, 0xffff_ffff),
        ],
    );
    let faults = &r.report.faults;
    // data has 6 words: lanes 6, 7 load out of bounds; stores and atomics
    // at word lane+4 are out of bounds for lanes 2..7.
    assert_eq!(faults.loads, 2);
    assert_eq!(faults.stores, 6);
    assert_eq!(faults.atomics, 6);
    let first = faults.first.as_ref().expect("a first fault");
    assert_eq!(first.access, AccessKind::Load);
    assert_eq!(first.memory, "data");
    assert_eq!(first.address, 24);
    assert_eq!(first.lane, 6);
    assert_eq!(first.warp, 0);
    assert_eq!(first.workgroup, [0, 0, 0]);
    assert_eq!(first.kernel, "main");
    let out = r.u32s(1);
    assert_eq!(
        &out[16..24],
        &[11, 12, 13, 14, 15, 16, 0, 0],
        "out-of-bounds loads give 0"
    );
    assert_eq!(
        &out[24..32],
        &[0x55, 0x55, 0, 0, 0, 0, 0, 0],
        "out-of-bounds atomics give 0"
    );
    // In-bounds stores of lanes 0, 1 hit words 4, 5 and the atomics then added 1.
    assert_eq!(r.u32s(0), vec![11, 12, 13, 14, 0x56, 0x56]);
}

#[test]
fn addresses_round_down_to_the_access_size() {
    let r = run(
        "buffer @out[0]: u32
        kernel @main workgroup(1) {
          store.u32 @out, 5, 7
          %wide = mov 0x1ab:i32
          store.u8 @out, 11, %wide
          store.u32x2 @out, 20, 21, 22
          %x, %y = load.u32x2 @out, 12
          store.u32 @out, 32, %x
          store.u32 @out, 36, %y
          %s = load.s16 @out, 11
          store.u32 @out, 40, %s
          %z0, %z1, %z2, %z3 = load.u32x4 @out, 63
          store.u32 @out, 44, %z3
          %w = load.u32 @out, 47
          store.u32 @out, 48, %w
        }",
        [1, 1, 1],
        &[],
        vec![bytes_of_u32s(&[
            0,
            0,
            0x8000_0000,
            0,
            0,
            0,
            0,
            0,
            0,
            0,
            0,
            0,
            0,
            0,
            0,
            0x77,
        ])],
    );
    assert!(r.report.faults.is_empty(), "{}", r.report.faults);
    let out = r.u32s(0);
    assert_eq!(out[1], 7, "address 5 rounds down to 4");
    assert_eq!(
        out[2], 0xab00_0000,
        "the u8 store replaced byte 11 (was 0x80) by 0xab"
    );
    assert_eq!(
        &out[4..6],
        &[21, 22],
        "address 20 rounds down to 16 for 8 bytes"
    );
    assert_eq!(out[8], 0xab00_0000, "x2 load at 12 reads words 2, 3");
    assert_eq!(out[9], 0);
    assert_eq!(
        out[10], 0xffff_ab00,
        "s16 at 11 reads bytes 10, 11 and sign-extends"
    );
    assert_eq!(out[11], 0x77, "u32x4 at 63 reads words 12..15");
    assert_eq!(out[12], 0x77, "u32 at 47 reads word 11");
}

#[test]
fn shared_memory_tree_reduction_over_256_threads() {
    let out = run1(
        "buffer @out[0]: u32
        shared @sums[1024]
        kernel @main workgroup(256) {
          var $stride: i32
          %i = local_index
          %a = shl %i, 2
          %v = add %i, 1
          store.u32 @sums, %a, %v
          barrier
          $stride = mov 128
          loop {
            %done = cmp.eq $stride, 0
            if %done {
              break
            }
            %active = cmp.lt.u %i, $stride
            if %active {
              %other = add %i, $stride
              %oa = shl %other, 2
              %x = load.u32 @sums, %a
              %y = load.u32 @sums, %oa
              %s = add %x, %y
              store.u32 @sums, %a, %s
            }
            barrier
            $stride = shr.u $stride, 1
          }
          %total = load.u32 @sums, 0
          store.u32 @out, %a, %total
        }",
        256,
    );
    assert_eq!(out, vec![256 * 257 / 2; 256]);
}

#[test]
fn barrier_makes_other_warps_writes_visible() {
    // The last warp writes, every warp reads after the barrier. Without a
    // working barrier warp 0 would run to the end first and read zeros.
    let out = run1(
        "buffer @out[0]: u32
        shared @cell[4]
        kernel @main workgroup(128) {
          %i = local_index
          %a = shl %i, 2
          %last = cmp.eq %i, 127
          if %last {
            store.u32 @cell, 0, 4242
          }
          barrier
          %v = load.u32 @cell, 0
          store.u32 @out, %a, %v
        }",
        128,
    );
    assert_eq!(out, vec![4242; 128]);
}

#[test]
fn finished_warps_do_not_hold_a_barrier() {
    // Warp 0 returns before the barrier; warps 1 and 2 still meet there.
    let out = run1(
        "buffer @out[0]: u32
        shared @cell[4]
        kernel @main workgroup(96) {
          %i = local_index
          %a = shl %i, 2
          %w = warp_id
          %first = cmp.eq %w, 0
          if %first {
            store.u32 @out, %a, 1
            return
          }
          %writer = cmp.eq %i, 95
          if %writer {
            store.u32 @cell, 0, 9
          }
          barrier
          %v = load.u32 @cell, 0
          store.u32 @out, %a, %v
        }",
        96,
    );
    for (i, &w) in out.iter().enumerate() {
        assert_eq!(w, if i < 32 { 1 } else { 9 }, "index {i}");
    }
}

#[test]
fn shared_memory_is_zero_at_each_workgroup_start() {
    let r = run(
        "buffer @out[0]: u32
        shared @cell[4]
        kernel @main workgroup(1) {
          %g = workgroup_id.x
          %old = load.u32 @cell, 0
          store.u32 @cell, 0, 5
          %a = shl %g, 2
          store.u32 @out, %a, %old
        }",
        [3, 1, 1],
        &[],
        vec![words(3, 9)],
    );
    assert_eq!(r.u32s(0), vec![0, 0, 0]);
    assert_eq!(r.report.workgroups, 3);
}

#[test]
fn shared_atomics_and_out_of_bounds_shared_and_private() {
    let r = run(
        "buffer @out[0]: u32
        shared @count[8]
        kernel @main workgroup(32) {
          private @p[8]
          %lane = lane_id
          %a = shl %lane, 2
          %old = atom.add.u32 @count, 4, 2
          store.u32 @out, %a, %old
          %bad = load.u32 @count, 8
          %a1 = add %a, 128
          store.u32 @out, %a1, %bad
          store.u32 @p, 8, 1
          %pv = load.u32 @p, 7
          %a2 = add %a, 256
          store.u32 @out, %a2, %pv
        }",
        [1, 1, 1],
        &[],
        vec![words(96, 3)],
    );
    let out = r.u32s(0);
    for lane in 0..32u32 {
        assert_eq!(out[lane as usize], 2 * lane);
        assert_eq!(out[32 + lane as usize], 0);
        assert_eq!(
            out[64 + lane as usize],
            0,
            "private word 1 is never written"
        );
    }
    assert_eq!(r.report.faults.loads, 32);
    assert_eq!(r.report.faults.stores, 32);
    let first = r.report.faults.first.as_ref().expect("a fault");
    assert_eq!(
        (first.memory.as_str(), first.address, first.lane),
        ("count", 8, 0)
    );
}

#[test]
fn narrow_and_float_stores_convert() {
    let out = run1(
        "buffer @out[0]: u32
        kernel @main workgroup(1) {
          %h = mov 1.5:f32
          store.f16 @out, 0, %h
          %n = mov 0x7fc00001:f32
          store.f32 @out, 4, %n
          %m = mov -2:i32
          store.s8 @out, 8, %m
          %back = load.s8 @out, 8
          store.u32 @out, 12, %back
          %hf = load.f16 @out, 0
          store.f32 @out, 16, %hf
        }",
        5,
    );
    assert_eq!(out[0], 0x3e00, "1.5 as f16");
    assert_eq!(
        out[1], 0x7fff_ffff,
        "canonical NaN on store (HARDWARE.md 23)"
    );
    assert_eq!(out[2], 0xfe);
    assert_eq!(out[3], (-2i32) as u32, "s8 loads sign-extend");
    assert_eq!(out[4], 1.5f32.to_bits(), "f16 loads widen exactly");
}

#[test]
fn killed_warps_and_barriers_in_functions() {
    // Warp 1 kills all its lanes before the barrier; warps 0 and 2 meet at a
    // barrier inside a function and see each other's shared writes.
    let out = run1(
        "buffer @out[0]: u32
        shared @cells[8]
        func @exchange(%w: i32) -> i32 {
          %first = cmp.eq %w, 0
          %slot = select %first, 0:i32, 4:i32
          %other = select %first, 4:i32, 0:i32
          %v = add %w, 100
          store.u32 @cells, %slot, %v
          barrier
          %seen = load.u32 @cells, %other
          return %seen
        }
        kernel @main workgroup(96) {
          %i = local_index
          %a = shl %i, 2
          %w = warp_id
          %middle = cmp.eq %w, 1
          if %middle {
            kill
          }
          %seen = call @exchange(%w)
          store.u32 @out, %a, %seen
        }",
        96,
    );
    for (i, &w) in out.iter().enumerate() {
        let expected = match i / 32 {
            0 => 102,
            1 => 0,
            _ => 100,
        };
        assert_eq!(w, expected, "index {i}");
    }
}

/// A chain of calls whose private arrays pass the budget of a warp
/// (`MAX_WARP_PRIVATE_BYTES`, as the JIT's stack) stops with an error
/// naming the call, instead of taking the host's memory.
#[test]
fn private_arrays_of_deep_calls_have_a_budget() {
    let per_call = 16 * 1024 * 32u64;
    let allowed = interp::MAX_WARP_PRIVATE_BYTES / per_call;
    let depth = allowed + 2;
    let mut src = String::from(
        "buffer @out[0]: u32
        kernel @main workgroup(32) {
          call @f1()
          store.u32 @out, 0, 1
        }
        ",
    );
    for i in 1..=depth {
        src.push_str(&format!("func @f{i}() {{\n  private @p[16384]\n"));
        if i < depth {
            src.push_str(&format!("  call @f{}()\n", i + 1));
        }
        src.push_str("}\n");
    }
    let err = try_run(&src, [1, 1, 1], &[], vec![words(1, 0)])
        .err()
        .expect("the launch stops");
    let text = err.to_string();
    assert!(
        matches!(err, ExecError::OutOfMemory { .. })
            && text.contains(&format!("@f{}", allowed + 1)),
        "{text}"
    );
}
