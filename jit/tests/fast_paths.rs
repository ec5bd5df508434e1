//! The JIT's fast paths against the interpreter, on every target: loads whose
//! lanes share one address (scalar load and broadcast), shuffles with
//! lane-varying indices at every width (AVX-512 permutes), local and global
//! IDs of 1-, 2- and 3-D workgroups (f32 division), loads and stores at
//! scattered addresses (the lane-by-lane routine and its inline form) and
//! packed stores (stream compaction), helper lanes' private arrays, lane
//! masks' bit sets used in every lane, and divergent `if`s on float
//! compares (masked compares), each
//! under divergence and with out-of-bounds lanes where there is memory,
//! comparing memory and fault reports.

mod direct;

use direct::{agree, pattern};
use warpjit_ir::interp::LaunchConfig;
use warpjit_jit::PrefetchAhead;

/// Runs `@main` on the interpreter and on the JIT at every target (compiled
/// once), for each set of parameters; the memory and the fault reports
/// must be the same.
fn same_as_interpreter(
    text: &str,
    cfg: &LaunchConfig,
    param_sets: &[Vec<u64>],
    buffers: &[Vec<u8>],
) {
    agree(text, std::slice::from_ref(cfg), param_sets, buffers);
}

/// Every active lane reads element `$j` (one address) of a buffer that is
/// too short for the last iterations, in odd lanes only; x1, x2 and x4
/// formats; then a lane-varying load, and a load from an empty buffer.
const UNIFORM_LOADS: &str = "
param %n: i32
buffer @data[0]: u32
buffer @out[1]: u32
buffer @empty[2]: u32

kernel @main workgroup(48) {
  var $j: i32
  var $acc: i32
  var $wide: i32
  %i = global_id.x
  %lane = lane_id
  %bit = and %lane, 1
  %odd = cmp.eq %bit, 1
  if %odd {
    loop {
      %done = cmp.ge.s $j, %n
      if %done {
        break
      }
      %a = shl $j, 2
      %v = load.u32 @data, %a
      %a2 = shl $j, 3
      %v0, %v1 = load.u32x2 @data, %a2
      %a4 = shl $j, 4
      %w0, %w1, %w2, %w3 = load.u32x4 @data, %a4
      %b = load.u8 @data, $j
      %s1 = add %v, %v0
      %s2 = xor %s1, %v1
      %s3 = add %s2, %w3
      %s4 = xor %s3, %b
      %s5 = add %s4, %w0
      $acc = add $acc, %s5
      $wide = xor $wide, %w2
      $wide = add $wide, %w1
      $j = add $j, 1
    }
  }
  %own = shl %lane, 2
  %mine = load.u32 @data, %own
  %none = load.u32 @empty, 0
  %x = add $acc, %mine
  %y = add %x, %none
  %o = shl %i, 3
  store.u32 @out, %o, %y
  %o2 = add %o, 4
  store.u32 @out, %o2, $wide
}
";

#[test]
fn loads_of_one_address_broadcast_the_element() {
    let mut cfg = LaunchConfig::new([3, 1, 1], [48, 1, 1]);
    cfg.sm_count = 2;
    // 64 u32 elements: with n = 70 the last loads fall outside.
    let buffers = vec![pattern(256, 1), vec![0u8; 3 * 48 * 8], Vec::new()];
    let params: Vec<Vec<u64>> = [0u64, 5, 16, 70].iter().map(|n| vec![*n]).collect();
    same_as_interpreter(UNIFORM_LOADS, &cfg, &params, &buffers);
}

/// Loads of one address and of a tile (`(lane & 7) * 4`) in some lanes
/// only (lanes `l % 3 != 0`, then a nested subset), read across lanes:
/// shuffles, quad swizzles, derivatives, a ballot and a vote that reach
/// inactive lanes must see what the interpreter sees (0, or an inactive
/// member), whatever the inactive lanes of the loaded vector hold.
const UNIFORM_LOADS_ACROSS_LANES: &str = "
buffer @data[0]: u32
buffer @out[1]: u32
kernel @main workgroup(64) {
  %i = global_id.x
  %lane = lane_id
  %third = rem.u %lane, 3
  %some = cmp.ne %third, 0
  %o = shl %i, 5
  if %some {
    %v = load.u32 @data, 8
    %f = load.f32 @data, 12
    %from = add %lane, 1
    %r, %ok = shuffle.idx %v, %from, width 32
    %q = quad.x %f, %f
    %d = ddx.fine %f
    %big = cmp.gt.u %v, 7
    %bits = ballot %big
    %all = vote.all %big
    %rf = bitcast.i32 %q
    %df = bitcast.i32 %d
    %okw = select %ok, 1:i32, 0:i32
    %allw = select %all, 1:i32, 0:i32
    store.u32 @out, %o, %r
    %o1 = add %o, 4
    store.u32 @out, %o1, %okw
    %o2 = add %o, 8
    store.u32 @out, %o2, %rf
    %o3 = add %o, 12
    store.u32 @out, %o3, %df
    %o4 = add %o, 16
    store.u32 @out, %o4, %bits
    %o5 = add %o, 20
    store.u32 @out, %o5, %allw
    %k = and %lane, 7
    %ka = shl %k, 2
    %t = load.u32 @data, %ka
    %tr, %tok = shuffle.xor %t, 1, width 32
    %o7 = add %o, 28
    store.u32 @out, %o7, %tr
    %low = cmp.lt.u %lane, 20
    if %low {
      %w = load.u32 @data, 16
      %down, %okd = shuffle.down %w, 3, width 32
      %o6 = add %o, 24
      store.u32 @out, %o6, %down
    }
  }
}
";

#[test]
fn loads_of_one_address_read_across_lanes() {
    let mut cfg = LaunchConfig::new([2, 1, 1], [64, 1, 1]);
    cfg.sm_count = 2;
    let buffers = vec![pattern(64, 7), vec![0u8; 2 * 64 * 32]];
    same_as_interpreter(UNIFORM_LOADS_ACROSS_LANES, &cfg, &[vec![]], &buffers);
}

/// Every shuffle mode on i32, f32 and bool data with lane-varying indices,
/// in the width form (width a parameter) and the mask form, with a third of
/// the lanes inactive.
const SHUFFLES: &str = "
param %w: i32
param %m: i32
buffer @out[0]: u32

kernel @main workgroup(64) {
  %gid = global_id.x
  %lane = lane_id
  %h = mul %gid, 0x9e3779b1
  %idx = shr.u %h, 27
  %x = xor %h, %gid
  %f = cvt.f32.u32 %x
  %hb = and %h, 0x100
  %p = cmp.ne %hb, 0
  %third = rem.u %lane, 3
  %on = cmp.ne %third, 1
  %o = mul %gid, 48
  if %on {
    %r0, %ok0 = shuffle.idx %x, %idx, width %w
    %r1, %ok1 = shuffle.up %x, %idx, width %w
    %r2, %ok2 = shuffle.down %x, %idx, width %w
    %r3, %ok3 = shuffle.xor %x, %idx, width %w
    %r4, %ok4 = shuffle.idx %x, %idx, mask %m
    %r5, %ok5 = shuffle.xor %x, %idx, mask %m
    %rf = shuffle.idx %f, %idx, width %w
    %rb = shuffle.down %p, %idx, width %w
    %rc = shuffle.xor %x, 5, width %w
    %ok01 = select %ok0, 1:i32, 0
    %ok1s = select %ok1, 2:i32, 0
    %ok2s = select %ok2, 4:i32, 0
    %ok3s = select %ok3, 8:i32, 0
    %ok4s = select %ok4, 16:i32, 0
    %ok5s = select %ok5, 32:i32, 0
    %rbs = select %rb, 64:i32, 0
    %k1 = or %ok01, %ok1s
    %k2 = or %k1, %ok2s
    %k3 = or %k2, %ok3s
    %k4 = or %k3, %ok4s
    %k5 = or %k4, %ok5s
    %k6 = or %k5, %rbs
    store.u32x4 @out, %o, %r0, %r1, %r2, %r3
    %o16 = add %o, 16
    store.u32x4 @out, %o16, %r4, %r5, %k6, %rc
    %o32 = add %o, 32
    store.f32 @out, %o32, %rf
  }
}
";

#[test]
fn shuffles_of_every_width_with_lane_varying_indices() {
    let cfg = LaunchConfig::new([2, 1, 1], [64, 1, 1]);
    let buffers = vec![vec![0u8; 2 * 64 * 48]];
    let mut params = Vec::new();
    for w in [1u64, 2, 4, 8, 16, 32, 0, 3, 33] {
        // Mask form: segment mask in bits 8..12, clamp in bits 0..4.
        for m in [0x1fu64, 0x0f07, 0x1c03, 0x0] {
            params.push(vec![w, m]);
        }
    }
    same_as_interpreter(SHUFFLES, &cfg, &params, &buffers);
}

/// local_id and global_id in every dimension of odd-sized workgroups, whose
/// warps straddle rows and slices.
const IDS: &str = "
buffer @out[0]: u32

kernel @main {
  %li = local_index
  %lx = local_id.x
  %ly = local_id.y
  %lz = local_id.z
  %gx = global_id.x
  %gy = global_id.y
  %gz = global_id.z
  %wx = workgroup_id.x
  %wy = workgroup_id.y
  %nx = num_workgroups.x
  %row = mul %wy, %nx
  %wg = add %row, %wx
  %base = mul %wg, 1024
  %slot = add %base, %li
  %o = mul %slot, 32
  store.u32x4 @out, %o, %lx, %ly, %lz, %li
  %o16 = add %o, 16
  store.u32x4 @out, %o16, %gx, %gy, %gz, %wg
}
";

#[test]
fn local_and_global_ids_of_odd_workgroup_shapes() {
    for workgroup in [
        [7u32, 5, 3],
        [33, 1, 1],
        [1, 33, 2],
        [3, 1, 100],
        [1024, 1, 1],
        [32, 32, 1],
        [32, 2, 4],
        [40, 3, 5],
        [64, 1, 3],
        [1, 1, 1],
    ] {
        let cfg = LaunchConfig::new([2, 2, 1], workgroup);
        let buffers = vec![vec![0u8; 4 * 1024 * 32]];
        same_as_interpreter(IDS, &cfg, &[Vec::new()], &buffers);
    }
}

/// Loads and stores of consecutive elements: runs that start misaligned,
/// run past the end of the buffer, use i64 addresses, skip lanes, or
/// include helper lanes (which must not store).
const RUNS: &str = "
param %shift: i32
param %skew: i32
buffer @src[0]: u32
buffer @dst[1]: u32
buffer @wide[2]: u32

kernel @main workgroup(64) {
  %i = global_id.x
  %lane = lane_id
  %k = add %i, %shift
  %a = shl %k, 2
  %a2 = add %a, %skew
  %v = load.u32 @src, %a2
  %h = load.u16 @src, %a
  %third = rem.u %lane, 3
  %on = cmp.ne %third, 2
  if %on {
    %w = xor %v, %h
    store.u32 @dst, %a2, %w
    %a64 = cvt.u64.u32 %a
    %x = load.u32 @src, %a64
    store.u32 @wide, %a64, %x
    %five = cmp.eq %third, 1
    if %five {
      demote
    }
    %b = add %a, 4
    store.u16 @wide, %b, %lane
  }
}
";

#[test]
fn consecutive_runs_in_and_out_of_bounds() {
    let cfg = LaunchConfig::new([2, 1, 1], [64, 1, 1]);
    let buffers = vec![pattern(512, 7), vec![0u8; 480], vec![0u8; 520]];
    let mut params = Vec::new();
    for shift in [0u64, 3, 100, 0xffff_fff0] {
        for skew in [0u64, 1, 4] {
            params.push(vec![shift, skew]);
        }
    }
    same_as_interpreter(RUNS, &cfg, &params, &buffers);
}

/// Atomic adds from many lanes: to one address (one atomic of the sum),
/// to two addresses, out of bounds, with helper lanes, on u32 and u64.
/// Every lane's old value is stored, so the order of the adds shows.
const ATOMIC_ADDS: &str = "
param %slot: i32
param %split: i32
buffer @counts[0]: u32
buffer @out[1]: u32
buffer @big[2]: u64

kernel @main workgroup(64) {
  %i = global_id.x
  %lane = lane_id
  %v = mul %i, 0x9e3779b1
  %third = rem.u %lane, 3
  %on = cmp.ne %third, 0
  %o = shl %i, 3
  if %on {
    %low = cmp.lt.u %lane, %split
    %other = select %low, 4:i32, 0
    %s4 = shl %slot, 2
    %addr = add %s4, %other
    %old = atom.add.u32 @counts, %addr, %v
    %w = cvt.u64.u32 %v
    %w20 = shl %w, 20:i64
    %s8 = shl %slot, 3
    %old64 = atom.add.u64 @big, %s8, %w20
    %lo, %hi = up64 %old64
    store.u32x2 @out, %o, %old, %hi
    %helper = cmp.eq %third, 2
    if %helper {
      demote
    }
    %again = atom.add.u32 @counts, %s4, %lane
    %o4 = add %o, 4
    store.u32 @out, %o4, %again
  }
}
";

#[test]
fn atomic_adds_to_one_address_keep_lane_order() {
    let mut cfg = LaunchConfig::new([3, 1, 1], [64, 1, 1]);
    cfg.sm_count = 2;
    let buffers = vec![pattern(16, 3), vec![0u8; 3 * 64 * 8], pattern(32, 5)];
    let mut params = Vec::new();
    for slot in [0u64, 2, 3, 1000] {
        for split in [0u64, 17, 64] {
            params.push(vec![slot, split]);
        }
    }
    same_as_interpreter(ATOMIC_ADDS, &cfg, &params, &buffers);
}

/// Loads and stores at lane-permuted addresses (lane `l` uses element
/// `7l mod 32` plus a shift), some out of bounds or wrapping around 2^32:
/// the lane-by-lane path. Kinds used more than once in the module (u32
/// loads and stores, in a buffer and in shared memory) call its routine;
/// the u8 and u32x2 loads and the u16 store are single and inline.
const SCATTERED: &str = "
param %shift: i32
param %fill: i32
buffer @src[0]: u32
buffer @dst[1]: u32
buffer @small[2]: u16
shared @scratch[256]

kernel @main workgroup(64) {
  %i = global_id.x
  %lane = lane_id
  %p = mul %lane, 7
  %q = and %p, 31
  %e = add %q, %shift
  %a4 = shl %e, 2
  %a8 = shl %e, 3
  %a2 = shl %e, 1
  %x = load.u32 @src, %a4
  %y = load.u32 @src, %a8
  %b = load.u8 @src, %a2
  %v0, %v1 = load.u32x2 @src, %a8
  %s = add %x, %y
  %t = add %s, %b
  %t2 = add %t, %v1
  %wq = add %q, %fill
  %wa = shl %wq, 2
  store.u32 @dst, %wa, %t2
  %wa2 = add %wa, 128
  store.u32 @dst, %wa2, %v0
  store.u16 @small, %a2, %t
  store.u32 @scratch, %wa, %t
  %back = load.u32 @scratch, %a4
  %oi = shl %i, 2
  %ob = add %oi, 256
  store.u32 @dst, %ob, %back
}
";

/// Where the target has no gather or scatter for an element size (bytes
/// and halves; anything without AVX-512), the lane-by-lane path is a loop
/// over the active lanes, not LLVM's expansion into a block per lane. The
/// results are checked against the interpreter on every target by
/// `run_time_shapes_inside_the_lane_routine`.
#[test]
fn gathers_the_target_lacks_are_lane_loops() {
    let m = direct::module(TABLED);
    let ir = |target| optimised_ir(&m, target);
    let native = ir(warpjit_jit::Target::Native);
    assert!(native.contains("lane.each"), "{native}");
    if std::arch::is_x86_feature_detected!("avx512f") {
        assert!(!native.contains("masked.gather.v32i8"), "{native}");
        assert!(!native.contains("masked.scatter.v32i16"), "{native}");
        assert!(native.contains("masked.gather.v32i32"), "{native}");
    }
    let avx2 = ir(warpjit_jit::Target::Avx2);
    assert!(!avx2.contains("llvm.masked.gather"), "{avx2}");
    assert!(!avx2.contains("llvm.masked.scatter"), "{avx2}");
}

#[test]
fn scattered_accesses_through_the_shared_lane_routine() {
    let cfg = LaunchConfig::new([2, 1, 1], [64, 1, 1]);
    let buffers = vec![pattern(200, 3), pattern(520, 5), pattern(40, 9)];
    let mut params = Vec::new();
    for shift in [0u64, 5, 20, 0x7fff_fff0, 0xffff_fffe] {
        for fill in [0u64, 40, 0xffff_fff0] {
            params.push(vec![shift, fill]);
        }
    }
    same_as_interpreter(SCATTERED, &cfg, &params, &buffers);
}

/// Loads and stores at addresses read from a table, so the lane shapes
/// know nothing and the shape is tested at run time, inside the module's
/// routine (u32 loads and stores, used more than once) or inline (the
/// single u8 and u32x2 loads and u16 store): lane `l` uses
/// `table[l] * stride + base`, one address for all lanes (stride 0), one
/// run (stride 4, aligned or not, in or past the end of the buffer, or
/// wrapping around 2^32) or scattered; a third of the lanes inactive.
const TABLED: &str = "
param %stride: i32
param %base: i32
buffer @table[0]: u32
buffer @src[1]: u32
buffer @dst[2]: u32
buffer @small[3]: u16

kernel @main workgroup(64) {
  %i = global_id.x
  %lane = lane_id
  %own = shl %lane, 2
  %t = load.u32 @table, %own
  %third = rem.u %lane, 3
  %on = cmp.ne %third, 2
  if %on {
    %scaled = mul %t, %stride
    %a = add %scaled, %base
    %x = load.u32 @src, %a
    %b = load.u8 @src, %a
    %v0, %v1 = load.u32x2 @src, %a
    %s = add %x, %b
    %s2 = add %s, %v1
    store.u32 @dst, %a, %s2
    %a2 = add %a, 64
    store.u32 @dst, %a2, %v0
    store.u16 @small, %a, %s
  }
  %o = shl %i, 2
  %o2 = add %o, 512
  store.u32 @dst, %o2, %t
}
";

#[test]
fn run_time_shapes_inside_the_lane_routine() {
    let cfg = LaunchConfig::new([2, 1, 1], [64, 1, 1]);
    // table[l] = l for the first 32 entries, then 7l mod 32.
    let mut table = Vec::new();
    for l in 0..64u32 {
        let t = if l < 32 { l } else { (7 * l) % 32 };
        table.extend_from_slice(&t.to_le_bytes());
    }
    let buffers = vec![table, pattern(200, 3), pattern(1024, 5), pattern(64, 9)];
    let mut params = Vec::new();
    for stride in [0u64, 4, 8, 1] {
        for base in [0u64, 6, 40, 190, 0xffff_fff0] {
            params.push(vec![stride, base]);
        }
    }
    same_as_interpreter(TABLED, &cfg, &params, &buffers);
}

/// Stream compaction: the lanes that keep their element store it at
/// `base + rank * step`, `rank` counting the keeping lanes below (ballot
/// and popcount). With a step of the element size and 4-byte elements the
/// routine packs them (a compress and a masked store); any other step, the
/// u16 store, and runs that are unaligned, end past the memory or wrap
/// around 2^32 take the other paths with their faults.
fn packed() -> String {
    packed_kernel(
        "param %step: i32\nbuffer @narrow[2]: u16",
        "    %off = mul %rank, %step
    %o = add %off, %region
    %at = add %o, %base
    store.u32 @dst, %at, %x
    %f = bitcast.f32 %x
    %at2 = add %at, 512
    store.f32 @dst, %at2, %f
    store.u16 @narrow, %at, %x",
    )
}

/// The compaction kernel of [`packed`] and
/// [`packed_stores_known_in_every_lane_start_at_lane_0`]: each warp's
/// keeping lanes (`x % modulus == 0`) store, under `if %keep`, the code
/// `stores` at addresses from `%rank` (the keeping lanes below), `%region`
/// (128 bytes per warp) and `%base`; `decls` adds parameters and buffers.
fn packed_kernel(decls: &str, stores: &str) -> String {
    format!(
        "
param %base: i32
param %modulus: i32
buffer @src[0]: u32
buffer @dst[1]: u32
{decls}

kernel @main workgroup(64) {{
  %i = global_id.x
  %a = shl %i, 2
  %x = load.u32 @src, %a
  %r = rem.u %x, %modulus
  %keep = cmp.eq %r, 0
  %kept = ballot %keep
  %lt = lane_mask.lt
  %below = and %kept, %lt
  %rank = btc %below
  %li = local_index
  %warp = shr.u %li, 5
  %wg = workgroup_id.x
  %w2 = shl %wg, 1
  %slot = add %w2, %warp
  %region = shl %slot, 7
  if %keep {{
{stores}
  }}
}}"
    )
}

#[test]
fn packed_stores_of_the_lanes_that_keep() {
    let cfg = LaunchConfig::new([2, 1, 1], [64, 1, 1]);
    let buffers = vec![pattern(512, 41), pattern(1024, 43), pattern(600, 47)];
    let mut params = Vec::new();
    for (base, step) in [
        (0u64, 4u64),
        (2, 4),
        (0, 8),
        (0, 0),
        (500, 4),
        (0xffff_ffc0, 4),
    ] {
        // Every lane keeps (one run), about half, a third, almost none.
        for modulus in [1u64, 2, 3, 200] {
            params.push(vec![base, modulus, step]);
        }
    }
    same_as_interpreter(&packed(), &cfg, &params, &buffers);
}

/// A store packed by a ballot whose address is known to be packed (a
/// constant step of the element size) and computed from IDs, parameters
/// and the ballot, so it holds in every lane: its run starts at lane 0's
/// address, whose rank is 0, also when lane 0 does not store. Runs inside
/// the memory, unaligned, past its end and wrapping around 2^32.
fn packed_in_every_lane() -> String {
    packed_kernel(
        "",
        "    %off = shl %rank, 2
    %o = add %off, %region
    %at = add %o, %base
    store.u32 @dst, %at, %x",
    )
}

#[test]
fn packed_stores_known_in_every_lane_start_at_lane_0() {
    let text = packed_in_every_lane();
    let m = direct::module(&text);
    let ir = prefetching_ir(&m, warpjit_jit::Target::Native, PrefetchAhead::On);
    let kernel = direct::kernel_part(&ir);
    if std::arch::is_x86_feature_detected!("avx512f") {
        assert!(kernel.contains("compress"), "{kernel}");
    }
    let cfg = LaunchConfig::new([2, 1, 1], [64, 1, 1]);
    // Lane 0 keeps its element only when `pattern` gives it a multiple.
    let buffers = vec![pattern(512, 53), pattern(1024, 59)];
    let mut params = Vec::new();
    for base in [0u64, 2, 4, 500, 520, 0xffff_ffc0] {
        for modulus in [1u64, 2, 3, 200] {
            params.push(vec![base, modulus]);
        }
    }
    same_as_interpreter(&text, &cfg, &params, &buffers);
}

/// Packed stores of every count from 0 to 32, the keeping lanes spread over
/// the four 8-lane quarters in many ways: the lanes whose bit is set in
/// `%mask`, changed per warp. On AVX2 the quarters are packed on the stack
/// and copied out 8 elements at a time, the last copy ending at the run's
/// end, or with a mask under 8 elements: nothing past the run may change.
const PACKED_BY_MASK: &str = "
param %mask: i32
param %base: i32
buffer @dst[0]: u32

kernel @main workgroup(64) {
  %lane = lane_id
  %li = local_index
  %warp = shr.u %li, 5
  %wg = workgroup_id.x
  %w2 = shl %wg, 1
  %slot = add %w2, %warp
  %salt = mul %slot, 0x5bd1e995
  %odd_warp = and %slot, 1
  %flip = cmp.ne %odd_warp, 0
  %salted = xor %mask, %salt
  %bits = select %flip, %salted, %mask
  %bit = shr.u %bits, %lane
  %one = and %bit, 1
  %keep = cmp.ne %one, 0
  %kept = ballot %keep
  %lt = lane_mask.lt
  %below = and %kept, %lt
  %rank = btc %below
  %region = shl %slot, 7
  %value = add %li, 1000
  if %keep {
    %off = shl %rank, 2
    %o = add %off, %region
    %at = add %o, %base
    store.u32 @dst, %at, %value
  }
}";

#[test]
fn packed_stores_of_every_count() {
    let cfg = LaunchConfig::new([2, 1, 1], [64, 1, 1]);
    let buffers = vec![pattern(600, 61)];
    let mut masks: Vec<u64> = (0..=32).map(|k| (1u64 << k) - 1).collect();
    // The same counts high in the word, every other lane, and scattered.
    masks.extend((0..=32).map(|k| (0xffff_ffff_u64 << (32 - k)) & 0xffff_ffff));
    masks.extend([
        0x5555_5555,
        0xaaaa_aaaa,
        0x0f0f_0f0f,
        0x8000_0001,
        0x0000_ff00,
    ]);
    let mut state = 0x2545_f491_u64;
    masks.extend((0..24).map(|_| {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        state >> 32
    }));
    let params: Vec<Vec<u64>> = masks
        .iter()
        .flat_map(|&m| [vec![m, 0], vec![m, 40]])
        .collect();
    same_as_interpreter(PACKED_BY_MASK, &cfg, &params, &buffers);
}

/// Bit sets of lane masks used as values in every lane: a ballot, the
/// active mask and a vote's ballot, under divergence, each shifted by the
/// lane index so that every lane's bit shows in memory.
const MASK_BITS: &str = "
param %modulus: i32
buffer @src[0]: u32
buffer @dst[1]: u32

kernel @main workgroup(64) {
  %i = global_id.x
  %a = shl %i, 2
  %x = load.u32 @src, %a
  %r = rem.u %x, %modulus
  %keep = cmp.eq %r, 0
  %lane = lane_id
  %odd = and %lane, 1
  %taken = cmp.ne %odd, 0
  if %taken {
    %kept = ballot %keep
    %active = active_mask
    %all, %voted = vote.all %keep
    %k = shr.u %kept, %lane
    %v = shl %voted, %lane
    %m = xor %active, %k
    %w = add %m, %v
    store.u32 @dst, %a, %w
  }
}
";

#[test]
fn mask_bit_sets_in_every_lane() {
    let cfg = LaunchConfig::new([2, 1, 1], [64, 1, 1]);
    let buffers = vec![pattern(512, 53), vec![0; 512]];
    let params: Vec<Vec<u64>> = [1u64, 2, 3, 7, 1000].iter().map(|&m| vec![m]).collect();
    same_as_interpreter(MASK_BITS, &cfg, &params, &buffers);
    // On AVX-512, a splat of a bit set is a mask move and `vpbroadcastd`, not
    // a trip through a 64-bit mask and a 2-lane vector.
    if std::arch::is_x86_feature_detected!("avx512f") {
        let m = direct::module(MASK_BITS);
        let asm = warpjit_jit::compile(&m, &warpjit_jit::JitOptions::default())
            .expect("compiles")
            .assembly()
            .expect("assembly");
        assert!(!asm.contains("kunpckdq"), "{asm}");
        assert!(!asm.contains("vpinsrd"), "{asm}");
    }
}

/// A grid-stride loop: each iteration's run of bytes lies a whole grid
/// further on.
const GRID_STRIDE_SUM: &str = "
param %n: i32
buffer @data[0]: u8
buffer @sums[1]: u32
kernel @main workgroup(64) {
  var $i: i32
  var $sum: i32
  %size = workgroup_size.x
  %groups = num_workgroups.x
  %stride = mul %size, %groups
  $i = global_id.x
  $sum = mov 0
  loop {
    %done = cmp.ge.u $i, %n
    if %done {
      break
    }
    %byte = load.u8 @data, $i
    $sum = add $sum, %byte
    $i = add $i, %stride
  }
  %at = global_id.x
  %addr = shl %at, 2
  store.u32 @sums, %addr, $sum
}";

/// A consecutive load in a loop prefetches where the next iteration's run
/// starts (hardware prefetchers do not follow a grid's stride) and where
/// the next workgroup's run of this iteration starts; loads and
/// stores of buffers outside loops prefetch each line of their block a page
/// ahead, for reading or for writing, unless the options turn that off.
/// Prefetches change no result: the sums match the interpreter for lengths
/// that end inside, at and past a warp's run.
#[test]
fn buffer_accesses_prefetch_where_the_next_warps_go() {
    let read = "i32 0, i32 3, i32 1)";
    let write = "i32 1, i32 3, i32 1)";
    let m = direct::module(GRID_STRIDE_SUM);
    for target in [warpjit_jit::Target::Native, warpjit_jit::Target::Avx2] {
        let ir = prefetching_ir(&m, target, PrefetchAhead::On);
        // The loop's byte load (its next run and the next workgroup's
        // block), and the two lines of the sums' store after the loop.
        assert_eq!(ir.matches(read).count(), 2, "{ir}");
        assert_eq!(ir.matches(write).count(), 2, "{ir}");
        // Without prefetches a page ahead, only the loop's.
        let ir = prefetching_ir(&m, target, PrefetchAhead::Off);
        assert_eq!(ir.matches(read).count(), 2, "{ir}");
        assert_eq!(ir.matches(write).count(), 0, "{ir}");
    }
    // Compiled for the declared size, the next workgroup's byte run is a
    // constant 64 bytes on, taken only where the run moved a page or more
    // (else 0: the run's own start).
    let sized = warpjit_jit::JitOptions {
        workgroup: Some([64, 1, 1]),
        ..warpjit_jit::JitOptions::default()
    };
    let ir = direct::optimised_ir(&m, &sized);
    let lines: Vec<&str> = ir.lines().collect();
    let next_group = lines
        .windows(3)
        .filter(|w| {
            w[0].contains("select i1") && w[0].ends_with(", i64 64, i64 0") && w[2].contains(read)
        })
        .count();
    assert_eq!(next_group, 1, "{ir}");
    let loop_free = direct::module(
        "buffer @data[0]: u32
buffer @wide[1]: f64
shared @tile[256]
kernel @main workgroup(64) {
  %i = global_id.x
  %addr = shl %i, 2
  %x = load.u32 @data, %addr
  %y = add %x, 1
  store.u32 @data, %addr, %y
  %l = local_id.x
  %s = shl %l, 2
  store.u32 @tile, %s, %y
  %w = shl %i, 3
  %z = load.f64 @wide, %w
  store.f64 @wide, %w, %z
}",
    );
    let ir = prefetching_ir(&loop_free, warpjit_jit::Target::Native, PrefetchAhead::On);
    // 128 bytes of u32 and 256 of f64, each read and written: 2 + 4 lines
    // each way. Shared memory is not prefetched.
    assert_eq!(ir.matches(read).count(), 6, "{ir}");
    assert_eq!(ir.matches(write).count(), 6, "{ir}");
    for offset in [4096, 4160, 4224, 4288] {
        assert!(ir.contains(&format!("i64 {offset}")), "{offset}: {ir}");
    }
    for only_without_stores in [PrefetchAhead::Off, PrefetchAhead::WithoutStores] {
        let ir = prefetching_ir(&loop_free, warpjit_jit::Target::Native, only_without_stores);
        assert!(!ir.contains("@llvm.prefetch"), "{ir}");
    }
    // A module that stores to no buffer (atomics are not stores) prefetches
    // its loads unless they are off.
    let read_only = direct::module(
        "buffer @data[0]: u32
buffer @total[1]: u32
kernel @main workgroup(64) {
  %i = global_id.x
  %addr = shl %i, 2
  %x = load.u32 @data, %addr
  %before = atom.add.u32 @total, 0, %x
}",
    );
    for (choice, lines) in [
        (PrefetchAhead::On, 2),
        (PrefetchAhead::WithoutStores, 2),
        (PrefetchAhead::Off, 0),
    ] {
        let ir = prefetching_ir(&read_only, warpjit_jit::Target::Native, choice);
        assert_eq!(ir.matches(read).count(), lines, "{choice:?}: {ir}");
        assert_eq!(ir.matches(write).count(), 0, "{choice:?}: {ir}");
    }
    // By default only programs without stores prefetch where the others
    // measured slower.
    assert_eq!(
        PrefetchAhead::for_cpu("znver4"),
        PrefetchAhead::WithoutStores
    );
    assert_eq!(PrefetchAhead::for_cpu("znver3"), PrefetchAhead::On);
    assert_eq!(PrefetchAhead::for_cpu("sapphirerapids"), PrefetchAhead::On);
    // Nor in a loop: a consecutive shared load there takes no prefetch.
    let shared_loop = direct::module(
        "buffer @out[0]: u32
shared @tile[256]
kernel @main workgroup(64) {
  var $k: i32
  var $sum: i32
  $k = mov 0
  $sum = mov 0
  loop {
    %done = cmp.ge.u $k, 4
    if %done {
      break
    }
    %l = local_id.x
    %s = shl %l, 2
    %x = load.u32 @tile, %s
    $sum = add $sum, %x
    $k = add $k, 1
  }
  %i = global_id.x
  %at = shl %i, 2
  store.u32 @out, %at, $sum
}",
    );
    let ir = prefetching_ir(&shared_loop, warpjit_jit::Target::Native, PrefetchAhead::On);
    assert_eq!(ir.matches(read).count(), 0, "{ir}");
    let cfg = LaunchConfig::new([3, 1, 1], [64, 1, 1]);
    let params: Vec<Vec<u64>> = [0u64, 1, 200, 383, 384, 1000, 1500]
        .map(|n| vec![n])
        .to_vec();
    let buffers = vec![pattern(1500, 7), vec![0; 3 * 64 * 4]];
    same_as_interpreter(GRID_STRIDE_SUM, &cfg, &params, &buffers);
}

/// The optimised LLVM IR of `m` for `target`, code for any workgroup, with
/// or without prefetches a page ahead.
fn prefetching_ir(
    m: &warpjit_ir::VerifiedModule,
    target: warpjit_jit::Target,
    ahead: PrefetchAhead,
) -> String {
    let opts = warpjit_jit::JitOptions {
        target,
        prefetch_ahead: ahead,
        ..warpjit_jit::JitOptions::default()
    };
    direct::optimised_ir(m, &opts)
}

/// The optimised LLVM IR of `m` for `target`, code for any workgroup.
fn optimised_ir(m: &warpjit_ir::VerifiedModule, target: warpjit_jit::Target) -> String {
    let opts = warpjit_jit::JitOptions {
        target,
        ..warpjit_jit::JitOptions::default()
    };
    direct::optimised_ir(m, &opts)
}

/// Atomics under `if lane_id == k`: the JIT takes lane `k`'s operands
/// without searching the mask for it. Nested in a run-time condition and
/// a loop, on the else side of such a test (many lanes), on shared memory,
/// and at addresses out of bounds.
const ONE_LANE_ATOMICS: &str = "
param %slot: i32
param %n: i32
buffer @out[0]: u32
buffer @sum[1]: u32
shared @scratch[64]

kernel @main workgroup(64) {
  var $old: i32
  var $j: i32
  %i = global_id.x
  %lane = lane_id
  %v = mul %i, 2654435761
  %is5 = cmp.eq %lane, 5
  if %is5 {
    $old = atom.add.u32 @sum, %slot, %v
  }
  %in = cmp.lt.u %i, %n
  if %in {
    loop {
      %done = cmp.ge.s $j, 3
      if %done {
        break
      }
      %is31 = cmp.eq %lane, 31
      if %is31 {
        %w = add %v, $j
        %o = atom.max.u32 @sum, 4, %w
        $old = xor $old, %o
      }
      $j = add $j, 1
    }
  }
  %is7 = cmp.eq %lane, 7
  if %is7 {
  } else {
    %x = atom.add.u32 @sum, 8, %lane
    $old = add $old, %x
  }
  %is2 = cmp.eq %lane, 2
  if %is2 {
    %s = atom.add.u32 @scratch, 0, %v
    %t = atom.cswap.u32 @sum, 12, 0, %v
    %u = add %s, %t
    $old = add $old, %u
  }
  %a = shl %i, 2
  store.u32 @out, %a, $old
}
";

#[test]
fn atomics_of_one_constant_lane() {
    let mut cfg = LaunchConfig::new([3, 1, 1], [64, 1, 1]);
    cfg.sm_count = 2;
    let buffers = vec![vec![0u8; 3 * 64 * 4], pattern(16, 9)];
    let params: Vec<Vec<u64>> = [[0u64, 0], [4, 40], [12, 192], [1000, 100]]
        .map(|p| p.to_vec())
        .to_vec();
    same_as_interpreter(ONE_LANE_ATOMICS, &cfg, &params, &buffers);
    let ir = optimised_ir(
        &direct::module(ONE_LANE_ATOMICS),
        warpjit_jit::Target::Native,
    );
    // Each one-lane update reads its lane's value at a constant index.
    let extracts = |lane: u32| {
        ir.lines()
            .filter(|l| l.contains("extractelement") && l.ends_with(&format!(", i64 {lane}")))
            .count()
    };
    for lane in [5, 31, 2] {
        assert!(extracts(lane) > 0, "no extract at lane {lane}: {ir}");
    }
}

/// Runs guarded by `i < n` over buffers of exactly `n` elements: the last
/// warp's run leaves the buffer in its inactive lanes only, which must not
/// fault; i32 and i64 addresses.
const GUARDED_RUNS: &str = "
param %n: i32
buffer @src[0]: u32
buffer @dst[1]: u32
buffer @wide[2]: u16

kernel @main workgroup(64) {
  %i = global_id.x
  %in = cmp.lt.u %i, %n
  if %in {
    %a = shl %i, 2
    %v = load.u32 @src, %a
    %w = add %v, %i
    store.u32 @dst, %a, %w
    %h = shl %i, 1
    %h64 = cvt.u64.u32 %h
    %x = load.u16 @wide, %h64
    %y = xor %x, %w
    store.u16 @wide, %h64, %y
  }
}
";

#[test]
fn runs_that_leave_the_buffer_in_inactive_lanes() {
    for n in [0usize, 1, 31, 33, 100, 128, 192] {
        let cfg = LaunchConfig::new([3, 1, 1], [64, 1, 1]);
        let buffers = vec![pattern(4 * n, 3), vec![0u8; 4 * n], pattern(2 * n, 5)];
        same_as_interpreter(GUARDED_RUNS, &cfg, &[vec![n as u64]], &buffers);
    }
}

/// Divergent `if`s on each float compare (AVX-512: compares under the
/// active lanes' write mask), with NaNs, signed zeros, infinities and
/// subnormals, an else side, and a break from a loop, in lanes of which a
/// third are inactive and a warp of 16.
const FLOAT_COMPARE_IFS: &str = "
buffer @data[0]: f32
buffer @out[1]: u32

kernel @main workgroup(48) {
  var $flags: i32
  var $k: i32
  %i = global_id.x
  %lane = lane_id
  %at = shl %i, 3
  %a = load.f32 @data, %at
  %bt = add %at, 4
  %b = load.f32 @data, %bt
  %third = rem.u %lane, 3
  %on = cmp.ne %third, 2
  if %on {
    %lt = cmp.lt %a, %b
    if %lt {
      $flags = or $flags, 1
    } else {
      $flags = or $flags, 2
    }
    %le = cmp.le %a, %b
    if %le {
      $flags = or $flags, 4
    }
    %gt = cmp.gt %a, %b
    if %gt {
      $flags = or $flags, 8
    }
    %ge = cmp.ge %a, %b
    if %ge {
      $flags = or $flags, 16
    }
    %eq = cmp.eq %a, %b
    if %eq {
      $flags = or $flags, 32
    }
    %ne = cmp.ne %a, %b
    if %ne {
      $flags = or $flags, 64
    }
    loop {
      %kf = cvt.f32.s32 $k
      %past = cmp.ge %kf, %b
      if %past {
        $flags = or $flags, 128
        break
      }
      %limit = cmp.ge.s $k, 9
      if %limit {
        break
      }
      $k = add $k, 1
    }
  }
  store.u32 @out, %at, $flags
  %kt = add %at, 4
  store.u32 @out, %kt, $k
}
";

#[test]
fn divergent_ifs_on_float_compares() {
    let values: [f32; 12] = [
        f32::NEG_INFINITY,
        -1.5,
        -0.0,
        0.0,
        1.0,
        2.5,
        7.0,
        f32::INFINITY,
        f32::NAN,
        3.0,
        1e30,
        -1e-40,
    ];
    let pairs = 2 * 48;
    let mut data = Vec::with_capacity(pairs * 8);
    for i in 0..pairs as u32 {
        let h = i.wrapping_mul(2654435761);
        for pick in [h >> 8, h >> 20] {
            data.extend_from_slice(&values[pick as usize % values.len()].to_le_bytes());
        }
    }
    for workgroup in [48, 16] {
        let cfg = LaunchConfig::new([pairs as u32 / workgroup, 1, 1], [workgroup, 1, 1]);
        let text = FLOAT_COMPARE_IFS.replace("workgroup(48)", &format!("workgroup({workgroup})"));
        let buffers = vec![data.clone(), vec![0u8; pairs * 8]];
        let out = agree(&text, std::slice::from_ref(&cfg), &[vec![]], &buffers);
        // Not every lane took the same sides.
        let flags: std::collections::BTreeSet<u8> = out[1].chunks(8).map(|c| c[0]).collect();
        assert!(flags.len() > 4, "flags {flags:?}");
    }
}

/// Shared-memory accesses at addresses computed from the warp's index: a
/// scan's per-warp totals (`4 * (local_index >> 5)`, 8 warps of a
/// workgroup of 256) and a table of one slot per warp of the largest
/// workgroup (32).
const PER_WARP_SLOTS: &str = "
buffer @out[0]: u32
shared @totals[32]
shared @slots[128]

kernel @main workgroup(256) {
  %local = local_index
  %warp = shr.u %local, 5
  %lane = lane_id
  %slot = shl %warp, 2
  %last = cmp.eq %lane, 31
  if %last {
    store.u32 @totals, %slot, %local
    store.u32 @slots, %slot, %warp
  }
  barrier
  %below = and %local, 7
  %read = shl %below, 2
  %t = load.u32 @totals, %read
  %s = load.u32 @slots, %read
  %v = xor %t, %s
  %i = global_id.x
  %a = shl %i, 2
  store.u32 @out, %a, %v
}
";

/// Calls of the fault routine in the kernel's own code.
fn fault_calls(ir: &str) -> usize {
    direct::kernel_part(ir)
        .matches("call void @warpjit_fault")
        .count()
}

#[test]
fn shared_slots_of_warps_need_no_bounds_test() {
    let m = direct::module(PER_WARP_SLOTS);
    let any = warpjit_jit::JitOptions::default();
    // Code for workgroups of 256: both stores lie inside their arrays.
    let declared = direct::optimised_ir(&m, &any.for_workgroup([256, 1, 1]));
    assert_eq!(fault_calls(&declared), 0, "{declared}");
    // Code for any workgroup: a warp's index is below 32, so the slots
    // store stays inside too, while the totals store needs its test.
    let undeclared = direct::optimised_ir(&m, &any);
    assert_eq!(fault_calls(&undeclared), 1, "{undeclared}");
    let buffers = vec![vec![0u8; 4 * 3 * 256]];
    same_as_interpreter(
        PER_WARP_SLOTS,
        &LaunchConfig::new([3, 1, 1], [256, 1, 1]),
        &[Vec::new()],
        &buffers,
    );
}

/// Helper lanes store to their private arrays, in the kernel and in a called
/// function, and their neighbours read those values through quad swizzles
/// and derivatives; their shared-memory and buffer stores are dropped. The
/// filetest pins the interpreter's results to the spec.
#[test]
fn helper_lanes_write_their_private_arrays() {
    let text = include_str!("../../tests/filetests/demote_private_arrays.warp");
    let memory = agree(
        text,
        &[LaunchConfig::new([1, 1, 1], [32, 1, 1])],
        &[Vec::new()],
        &[vec![0u8; 4 * 160]],
    );
    // Lane 0's quad.1 of 10 * lane: the helper's (lane 1's) private value.
    assert_eq!(memory[0][..4], 10u32.to_le_bytes());
}

/// Vector formats (x2, x4) at consecutive addresses under partial masks,
/// in a kernel with barriers (its warps run on coroutine stacks). Below
/// AVX2 these go lane by lane in runs of 32 elements: LLVM's expansion of
/// a masked load of 128 elements took a 361 KiB frame at level 0, past the
/// end of a warp's stack.
const VECTOR_RUNS: &str = "
buffer @src[0]: u64
buffer @out[1]: u64
buffer @narrow[2]: u32

kernel @main workgroup(48) {
  var $i: i32
  loop {
    %d = cmp.ge.u $i, 2
    if %d {
      break
    }
    barrier
    $i = add $i, 1
  }
  %l = local_index
  %bit = and %l, 1
  %odd = cmp.eq %bit, 1
  %a32 = shl %l, 5
  %a16 = shl %l, 4
  %a8 = shl %l, 3
  if %odd {
    %x0, %x1, %x2, %x3 = load.u64x4 @src, %a32
    %y0, %y1 = load.u64x2 @src, %a16
    %z0, %z1, %z2, %z3 = load.u32x4 @src, %a16
    %w0, %w1 = load.u32x2 @src, %a8
    %s = add %x3, %y1
    %t = add %z2, %w1
    %u = cvt.u64.u32 %t
    %v = add %s, %u
    store.u64x2 @out, %a16, %v, %x0
    store.u32x4 @narrow, %a16, %z3, %z0, %w0, %t
  }
}
";

#[test]
fn vector_runs_under_partial_masks_fit_the_stack_at_every_level() {
    let m = direct::module(VECTOR_RUNS);
    let kernel = m.find_function("main").expect("@main");
    let cfg = LaunchConfig::new([2, 1, 1], [48, 1, 1]);
    // The last warp's runs go past the end of each buffer.
    let buffers = vec![pattern(40 * 32, 3), vec![0u8; 40 * 16], vec![0u8; 44 * 16]];
    let mut expected = buffers.clone();
    let want =
        warpjit_ir::interp::launch(&m, kernel, &cfg, &[], &mut expected).expect("interpreter");
    assert!(want.faults.total() > 0, "some runs are out of bounds");
    for target in direct::TARGETS {
        for opt_level in [0, 2] {
            let options = warpjit_jit::JitOptions {
                opt_level,
                target,
                ..warpjit_jit::JitOptions::default()
            };
            let compiled = warpjit_jit::compile(&m, &options).expect("compiles");
            let mut memory = buffers.clone();
            let got = warpjit_jit::launch(&compiled, kernel, &cfg, &[], &mut memory).expect("runs");
            assert!(
                memory == expected,
                "{target:?} -O{opt_level}: memory differs"
            );
            assert_eq!(got.faults, want.faults, "{target:?} -O{opt_level}: faults");
        }
    }
}
