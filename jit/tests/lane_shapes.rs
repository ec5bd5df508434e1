//! The lane-shape analysis (`warpjit_jit::shape`): its classification of
//! small programs, and the loads and stores it makes static (one address,
//! consecutive runs of x1/x2/x4 elements) against the interpreter on every
//! target: partial warps, first or last active lane out of bounds, runs
//! that wrap around the 32-bit address space, unaligned bases, workgroups
//! whose warps do not lie in one row (2-D with an x size that is not a
//! multiple of 32), variables made varying by divergent control flow, and
//! tiled loads (`lane_id & 7` and the like).

mod direct;

use direct::{agree, module, pattern};
use warpjit_ir::interp::LaunchConfig;
use warpjit_ir::{Function, VerifiedModule};
use warpjit_jit::shape::{FunctionShapes, IdLayout, LaneShape};

/// The shape of value `%name` of `@main` under `layout`.
fn shape_of(m: &VerifiedModule, layout: IdLayout, name: &str) -> LaneShape {
    let f: &Function = m.function(m.find_function("main").expect("@main"));
    let shapes = FunctionShapes::analyse(m, f, layout);
    let v = f
        .values
        .iter()
        .position(|d| d.name == name)
        .unwrap_or_else(|| panic!("no value %{name}"));
    shapes.value(warpjit_ir::ValueId(v as u32))
}

const UNIFORM: LaneShape = LaneShape::Uniform;
const VARYING: LaneShape = LaneShape::Varying;
fn affine(stride: u64) -> LaneShape {
    LaneShape::Affine { stride }
}

#[test]
fn ids_and_arithmetic_have_the_expected_shapes() {
    let m = module(
        "
param %n: i32
buffer @b[0]: u32
shared @s[64]
kernel @main workgroup(64) {
  %gx = global_id.x
  %gy = global_id.y
  %li = local_index
  %lane = lane_id
  %wg = workgroup_id.x
  %a4 = shl %gx, 2
  %a16 = mul %li, 16
  %back = sub %n, %li
  %neg = neg %lane
  %sum = add %li, %lane
  %twice = add %a4, %wg
  %sq = mul %li, %li
  %masked = and %li, 7
  %half_warp = shr.u %li, 4
  %thirds = div.u %li, 48
  %row_warp = shr.u %gx, 5
  %u = load.u32 @b, %n
  %v = load.u32 @b, %a4
  %c = cmp.lt.u %li, %n
  %cu = cmp.lt.u %wg, %n
  %pick = select %cu, %a4, %twice
  %mixed = select %cu, %a4, %n
  %sh = load.u32 @s, %wg
}
",
    );
    let any = |name: &str| shape_of(&m, IdLayout::Any, name);
    let rows = |name: &str| shape_of(&m, IdLayout::WarpInOneRow, name);
    assert_eq!(any("gx"), VARYING);
    assert_eq!(rows("gx"), affine(1));
    assert_eq!(any("gy"), VARYING);
    assert_eq!(rows("gy"), UNIFORM);
    assert_eq!(any("li"), affine(1));
    assert_eq!(any("lane"), affine(1));
    assert_eq!(any("wg"), UNIFORM);
    assert_eq!(rows("a4"), affine(4));
    assert_eq!(any("a16"), affine(16));
    assert_eq!(any("back"), affine(u64::from(u32::MAX)));
    assert_eq!(any("neg"), affine(u64::from(u32::MAX)));
    assert_eq!(any("sum"), affine(2));
    assert_eq!(rows("twice"), affine(4));
    assert_eq!(any("sq"), VARYING);
    assert_eq!(any("half_warp"), VARYING);
    assert_eq!(any("thirds"), VARYING);
    assert_eq!(rows("row_warp"), VARYING);
    assert_eq!(
        any("masked"),
        LaneShape::Tiled {
            stride: 1,
            width: 8
        }
    );
    assert_eq!(any("u"), UNIFORM);
    assert_eq!(rows("v"), VARYING);
    assert_eq!(any("c"), VARYING);
    assert_eq!(any("cu"), UNIFORM);
    assert_eq!(rows("pick"), affine(4));
    assert_eq!(rows("mixed"), VARYING);
    assert_eq!(any("sh"), UNIFORM);
}

#[test]
fn variables_follow_control_flow() {
    let m = module(
        "
param %n: i32
buffer @b[0]: u32
kernel @main workgroup(64) {
  var $j: i32
  var $k: i32
  var $d: i32
  var $e: i32
  var $p: i32
  %li = local_index
  %odd = and %li, 1
  %c = cmp.eq %odd, 1
  %wg = workgroup_id.x
  %cu = cmp.lt.u %wg, %n
  $p = shl %li, 2
  if %cu {
    $k = mov 3
  }
  if %c {
    $d = mov 5
  }
  loop {
    %done = cmp.ge.u $j, %n
    if %done {
      break
    }
    %at_j = shl $j, 4
    %w0, %w1, %w2, %w3 = load.f32x4 @b, %at_j
    %at_p = add $p, 0
    $j = add $j, 1
  }
  loop {
    %stop = cmp.ge.u $e, %li
    if %stop {
      break
    }
    %e_in = add $e, 0
    $e = add $e, 1
  }
  %j_after = add $j, 0
  %k_after = add $k, 0
  %d_after = add $d, 0
  %e_after = add $e, 0
}
",
    );
    let any = |name: &str| shape_of(&m, IdLayout::Any, name);
    // A uniform loop counter, and a uniform load from its address.
    assert_eq!(any("at_j"), UNIFORM);
    assert_eq!(any("w3"), UNIFORM);
    assert_eq!(any("j_after"), UNIFORM);
    // An affine variable assigned before the loop stays affine in it.
    assert_eq!(any("at_p"), affine(4));
    // Assigned under a uniform condition: uniform.
    assert_eq!(any("k_after"), UNIFORM);
    // Assigned under a varying condition: varying after the if.
    assert_eq!(any("d_after"), VARYING);
    // Assigned in a loop that lanes leave at different iterations: the
    // lanes still in it are in one iteration, but after it they differ.
    assert_eq!(any("e_in"), UNIFORM);
    assert_eq!(any("e_after"), VARYING);
}

#[test]
fn divergent_continue_makes_loop_variables_varying() {
    let m = module(
        "
param %n: i32
kernel @main workgroup(64) {
  var $i: i32
  var $x: i32
  %li = local_index
  loop {
    %top = add $x, 0
    %done = cmp.ge.u $i, %n
    if %done {
      break
    }
    $i = add $i, 1
    %low = cmp.lt.u %li, $i
    if %low {
      continue
    }
    $x = add $x, 1
  }
}
",
    );
    let any = |name: &str| shape_of(&m, IdLayout::Any, name);
    assert_eq!(any("top"), VARYING);
    assert_eq!(any("done"), VARYING);
}

/// A grid-stride loop that lanes leave at different iterations, by its
/// bound and by a data-dependent `break`: the loop's index stays affine and
/// its iteration count uniform inside the loop, so its loads and stores are
/// consecutive; after the loop both vary, and a variable assigned under a
/// varying `if` in the loop varies at the top of the next iteration.
const GRID_STRIDE: &str = "
param %n: i32
param %base: i32
buffer @src[0]: u32
buffer @dst[1]: u32

kernel @main workgroup(64) {
  var $i: i32
  var $k: i32
  var $m: i32
  %g = global_id.x
  %size = workgroup_size.x
  %groups = num_workgroups.x
  %stride = mul %size, %groups
  $i = mov %g
  loop {
    %done = cmp.ge.u $i, %n
    if %done {
      break
    }
    %a = shl $i, 2
    %at = add %a, %base
    %v = load.u32 @src, %at
    %m_top = add $m, 0
    %w0 = add %v, $k
    %w = add %w0, %m_top
    store.u32 @dst, %at, %w
    $k = add $k, 1
    %low = and %v, 7
    %small = cmp.eq %low, 3
    if %small {
      $m = add $m, %v
    }
    %rare = cmp.eq %low, 5
    if %rare {
      break
    }
    $i = add $i, %stride
  }
  %ga = shl %g, 2
  %out = add %ga, 3072
  %back = and $i, 255
  %back4 = shl %back, 2
  %r = load.u32 @src, %back4
  %i_after = add $i, %r
  %k_after = add %i_after, $k
  store.u32 @dst, %out, %k_after
}
";

#[test]
fn grid_stride_loops_keep_their_shapes_inside_the_loop() {
    let m = module(GRID_STRIDE);
    let rows = |name: &str| shape_of(&m, IdLayout::WarpInOneRow, name);
    assert_eq!(rows("a"), affine(4));
    assert_eq!(rows("m_top"), VARYING);
    assert_eq!(rows("w0"), VARYING);
    assert_eq!(rows("back"), VARYING);
    assert_eq!(rows("k_after"), VARYING);
    assert_eq!(shape_of(&m, IdLayout::Any, "a"), VARYING);

    let shapes = [
        ([3, 1, 1], [64, 1, 1]),
        // 1-D with a partial last warp.
        ([2, 1, 1], [40, 1, 1]),
        // 2-D with rows of 40: the index is not affine.
        ([1, 1, 1], [40, 2, 1]),
    ];
    // 4096 bytes of source: 1024 words; the destination's last 1024 bytes
    // hold what each invocation saw after the loop.
    let buffers = vec![pattern(4096, 31), pattern(4096, 37)];
    let params: Vec<Vec<u64>> = [
        // Several rounds, the last one partial.
        (700u64, 0u64),
        (191, 0),
        // Unaligned base: rounded down.
        (300, 2),
        // The last rounds run past the end of the source.
        (1000, 1024),
        (0, 0),
    ]
    .iter()
    .map(|(n, b)| vec![*n, *b])
    .collect();
    same_as_interpreter(GRID_STRIDE, &shapes, &params, &buffers);
}

/// Runs `@main` on the interpreter and on the JIT at every target (compiled
/// once) for each workgroup shape (on two SMs) and parameter set; memory
/// and fault reports must be the same.
fn same_as_interpreter(
    text: &str,
    shapes: &[([u32; 3], [u32; 3])],
    param_sets: &[Vec<u64>],
    buffers: &[Vec<u8>],
) {
    let configs: Vec<LaunchConfig> = shapes
        .iter()
        .map(|(grid, workgroup)| {
            let mut cfg = LaunchConfig::new(*grid, *workgroup);
            cfg.sm_count = 2;
            cfg
        })
        .collect();
    agree(text, &configs, param_sets, buffers);
}

/// Consecutive x1, x2 and x4 accesses by `global_id.x` and `local_index`,
/// from a base that may be unaligned, may wrap around 2^32 and may put the
/// first or last active lanes out of bounds; odd workgroups divert some
/// lanes.
const CONSECUTIVE: &str = "
param %base: i32
param %n: i32
buffer @src[0]: u32
buffer @dst[1]: u32
buffer @wide[2]: u32

kernel @main workgroup(64) {
  %g = global_id.x
  %li = local_index
  %in = cmp.lt.u %g, %n
  if %in {
    %a = shl %g, 2
    %at = add %a, %base
    %v = load.u32 @src, %at
    %a8 = shl %g, 3
    %at8 = add %a8, %base
    %p0, %p1 = load.u32x2 @src, %at8
    %a16 = mul %g, 16
    %at16 = add %a16, %base
    %q0, %q1, %q2, %q3 = load.f32x4 @src, %at16
    %h = load.u16 @src, %a
    %x = xor %v, %p1
    %y = add %x, %h
    store.u32 @dst, %at, %y
    %qb = bitcast.i32 %q2
    %z = add %qb, %p0
    store.u32x2 @dst, %at8, %z, %v
    store.f32x4 @wide, %at16, %q3, %q0, %q1, %q2
    %l4 = shl %li, 2
    %s = load.u32 @src, %l4
    %o = add %l4, 1024
    store.u32 @dst, %o, %s
  }
}
";

#[test]
fn consecutive_accesses_match_the_interpreter() {
    let shapes = [
        ([2, 1, 1], [64, 1, 1]),
        // 1-D, a partial last warp: local ids are still consecutive.
        ([3, 1, 1], [40, 1, 1]),
        // Whole rows of 32.
        ([1, 2, 1], [32, 2, 1]),
        // 2-D with rows of 40: warps cross rows, ids are not affine.
        ([1, 1, 1], [40, 3, 1]),
        ([2, 1, 1], [8, 4, 2]),
    ];
    let buffers = vec![pattern(2048, 3), pattern(2048, 9), pattern(2048, 17)];
    let params: Vec<Vec<u64>> = [
        // All inside.
        (0u64, 64u64),
        // Unaligned base: rounded down.
        (2, 64),
        // The last lanes fall outside (2048 bytes = 512 words).
        (1900, 128),
        // Every lane outside.
        (4096, 128),
        // Wraps around 2^32: the first lanes outside, the later ones at 0.
        (0xffff_ffc0, 128),
        // Few lanes in range: partial masks.
        (0, 5),
    ]
    .iter()
    .map(|(b, n)| vec![*b, *n])
    .collect();
    same_as_interpreter(CONSECUTIVE, &shapes, &params, &buffers);
}

/// One address for all lanes: x1/x4 loads from a uniform loop counter and
/// from parameters (i32 and i64 addresses), a store of one address (the
/// highest lane wins), under a partial warp and a varying condition; then
/// a variable made varying by a divergent if used as an address.
const ONE_ADDRESS: &str = "
param %n: i32
param %at: i32
param %far: i64
buffer @src[0]: u32
buffer @dst[1]: u32
shared @tile[256]

kernel @main workgroup(64) {
  var $j: i32
  var $acc: i32
  var $d: i32
  %li = local_index
  %l4 = shl %li, 2
  %mine = load.u32 @src, %l4
  %t = and %l4, 255
  store.u32 @tile, %t, %mine
  barrier
  loop {
    %done = cmp.ge.u $j, %n
    if %done {
      break
    }
    %a = shl $j, 4
    %w0, %w1, %w2, %w3 = load.u32x4 @tile, %a
    %v = load.u32 @src, %a
    %x = xor %w0, %w3
    %y = add %x, %v
    %z = add %y, %w1
    $acc = add $acc, %z
    $j = add $j, 1
  }
  %p = load.u32 @src, %at
  %q0, %q1 = load.u32x2 @src, %far
  %r = add %p, %q1
  %odd = and %li, 1
  %c = cmp.eq %odd, 1
  if %c {
    $d = shl %li, 2
    store.u32 @dst, %at, %li
  }
  %e = load.u32 @src, $d
  %s0 = add $acc, %r
  %s = add %s0, %e
  %o = add %l4, 512
  store.u32 @dst, %o, %s
  store.u32x2 @dst, %far, %q0, %li
}
";

#[test]
fn one_address_accesses_match_the_interpreter() {
    let shapes = [
        ([2, 1, 1], [64, 1, 1]),
        ([2, 1, 1], [48, 1, 1]),
        ([1, 1, 1], [40, 3, 1]),
    ];
    let buffers = vec![pattern(1024, 5), pattern(1024, 11)];
    let params: Vec<Vec<u64>> = [
        (4u64, 12u64, 40u64),
        // The tile ends at 256 bytes: j = 16.. reads outside it.
        (20, 12, 40),
        // Parameters out of bounds.
        (3, 1024, 1020),
        (3, 0xffff_fffc, u64::MAX - 3),
    ]
    .iter()
    .map(|(n, at, far)| vec![*n, *at, *far])
    .collect();
    same_as_interpreter(ONE_ADDRESS, &shapes, &params, &buffers);
}

/// Tiled addresses (lane `l` at `base + (l % width) * size`): loads of every
/// width from `lane_id` and `local_index`, u32, u16 and u64 elements, a
/// base that may be unaligned, wrap below 0 or above 2^32 or put the tile
/// out of bounds, a partial mask (the first active lane not at the start
/// of its tile), a variable (the first active lane stands for the tile),
/// and x2 loads and stores, which take the run-time path. The warp's index
/// (`local_index >> 5`) and other quotients of lane indices by multiples
/// of 32 are uniform.
const TILED: &str = "
param %base: i32
param %far: i64
param %n: i32
buffer @src[0]: u32
buffer @dst[1]: u32

kernel @main workgroup(64) {
  var $t: i32
  var $acc: i32
  %li = local_index
  %lane = lane_id
  %l2 = and %lane, 1
  %l4 = and %li, 3
  %l8 = and 7, %lane
  %l16 = and %li, 15
  %l32 = and %li, 31
  %a2 = shl %l2, 2
  %b2 = add %a2, %base
  %v2 = load.u32 @src, %b2
  %a4 = mul %l4, 4
  %b4 = add %base, %a4
  %v4 = load.u32 @src, %b4
  %a8 = shl %l8, 1
  %b8 = sub %base, %a8
  %n8 = neg %b8
  %v8 = load.u16 @src, %n8
  %a16 = shl %l16, 3
  %b16 = add %a16, %base
  %v16 = load.u64 @src, %b16
  %w16 = cvt.u32.u64 %v16
  %a32 = shl %l32, 2
  %b32 = add %a32, %base
  %v32 = load.u32 @src, %b32
  %f16 = cvt.u64.u32 %a16
  %g16 = add %f16, %far
  %h16 = load.u32 @src, %g16
  %s0 = xor %v2, %v4
  %s1 = add %s0, %v8
  %s2 = xor %s1, %w16
  %s3 = add %s2, %v32
  %s = add %s3, %h16
  %some = cmp.ge.u %li, %n
  if %some {
    $t = shl %l8, 2
    $t = add $t, %base
    %x = load.u32 @src, $t
    %y0, %y1 = load.u32x2 @src, %b16
    %z0 = add %x, %y0
    %z = xor %z0, %y1
    $acc = add %s, %z
    store.u32 @dst, %b4, %z
  }
  %o = shl %li, 2
  %o2 = add %o, 256
  store.u32 @dst, %o2, $acc
  %o3 = add %o, 512
  store.u32 @dst, %o3, %s
  %warp = shr.u %li, 5
  %r8 = rem.u %lane, 8
  %pair = div.u %li, 64
  %odd = and %lane, 1
  %is_odd = cmp.eq %odd, 1
  if %is_odd {
    %wa = shl %warp, 2
    %wb = add %wa, %base
    store.u32 @dst, %wb, %lane
    %pa = shl %pair, 2
    %pv = load.u32 @src, %pa
    %ra = shl %r8, 2
    %rv = load.u32 @src, %ra
    %t = add %pv, %rv
    %tb = add %wb, 32
    store.u32 @dst, %tb, %t
  }
}
";

#[test]
fn tiled_loads_match_the_interpreter() {
    let m = module(TILED);
    let shape = |name: &str| shape_of(&m, IdLayout::Any, name);
    let tiled = |stride: u64, width: u32| LaneShape::Tiled { stride, width };
    assert_eq!(shape("l2"), tiled(1, 2));
    assert_eq!(shape("l4"), tiled(1, 4));
    assert_eq!(shape("l8"), tiled(1, 8));
    assert_eq!(shape("l16"), tiled(1, 16));
    assert_eq!(shape("l32"), affine(1));
    assert_eq!(shape("a4"), tiled(4, 4));
    assert_eq!(shape("b8"), tiled(u64::from(u32::MAX) - 1, 8));
    assert_eq!(shape("n8"), tiled(2, 8));
    assert_eq!(shape("b16"), tiled(8, 16));
    // Conversions are not followed: a 64-bit address is never tiled.
    assert_eq!(shape("g16"), VARYING);
    assert_eq!(shape("s0"), VARYING);
    assert_eq!(shape("warp"), UNIFORM);
    assert_eq!(shape("pair"), UNIFORM);
    assert_eq!(shape("r8"), tiled(1, 8));
    let shapes = [
        ([2, 1, 1], [64, 1, 1]),
        ([2, 1, 1], [40, 1, 1]),
        ([1, 1, 1], [40, 3, 1]),
    ];
    let buffers = vec![pattern(1024, 31), pattern(1024, 37)];
    let params: Vec<Vec<u64>> = [
        // Inside (all lanes active); then unaligned.
        (0u64, 0u64, 0u64),
        (6, 130, 64),
        // Partial masks: the first active lane inside its tile.
        (40, 8, 3),
        (40, 8, 13),
        (0xffff_fff8, 8, 5),
        // Tiles reaching past the end (1024 bytes), or wholly outside.
        (1000, 1020, 64),
        (4096, 4096, 64),
        // Tiles wrapping below 0 and above 2^32.
        (0xffff_fffa, u64::MAX - 8, 64),
        (0xffff_ffe0, 0xffff_fff0, 64),
    ]
    .iter()
    .map(|(b, f, n)| vec![*b, *f, *n])
    .collect();
    same_as_interpreter(TILED, &shapes, &params, &buffers);
}

/// Shapes that must not be taken for consecutive: a stride that is not
/// the access size, and an address from a variable whose lanes were
/// assigned at different loop iterations.
const NOT_CONSECUTIVE: &str = "
param %n: i32
buffer @src[0]: u32
buffer @dst[1]: u32

kernel @main workgroup(64) {
  var $e: i32
  %li = local_index
  %a8 = shl %li, 3
  %v = load.u32 @src, %a8
  loop {
    %stop = cmp.ge.u $e, %li
    if %stop {
      break
    }
    $e = add $e, 4
  }
  %w = load.u32 @src, $e
  %x = add %v, %w
  %o = shl %li, 2
  store.u32 @dst, %o, %x
  store.u32 @dst, $e, %li
}
";

#[test]
fn other_shapes_match_the_interpreter() {
    let shapes = [([1, 1, 1], [64, 1, 1]), ([1, 1, 1], [40, 1, 1])];
    let buffers = vec![pattern(1024, 23), pattern(512, 29)];
    let params: Vec<Vec<u64>> = vec![vec![0], vec![64]];
    same_as_interpreter(NOT_CONSECUTIVE, &shapes, &params, &buffers);
}

/// Forty nested loops, each counting a variable and assigning one that
/// changes shape, set uniform before the loop (so each entry needs a
/// second pass): the analysis gives up on
/// the deep ones (their variables varying) instead of iterating every nest
/// level again for each pass of the levels around it (2^40 passes).
#[test]
fn deep_loop_nests_are_analysed_once_per_level_beyond_the_fourth() {
    let depth = 40;
    let mut text = String::from("param %n: i32\nkernel @main workgroup(32) {\n");
    for d in 0..depth {
        text.push_str(&format!("  var $v{d}: i32\n  var $w{d}: i32\n"));
    }
    text.push_str("  %li = local_index\n");
    for d in 0..depth {
        text.push_str(&format!(
            "  $w{d} = mov 0\nloop {{\n  %stop{d} = cmp.ge.u $v{d}, %n\n  if %stop{d} {{\n    break\n  }}\n  $v{d} = add $v{d}, 1\n  %at{d} = shl $v{d}, 2\n  $w{d} = mov %li\n"
        ));
    }
    text.push_str("  %inner = add %n, 1\n");
    for _ in 0..depth {
        text.push_str("}\n");
    }
    text.push_str("}\n");
    let m = module(&text);
    let any = |name: &str| shape_of(&m, IdLayout::Any, name);
    assert_eq!(any("at0"), UNIFORM);
    assert_eq!(any("at3"), UNIFORM);
    assert_eq!(any(&format!("at{}", depth - 1)), VARYING);
    assert_eq!(any("inner"), UNIFORM);
}

/// Stream compaction's stores: lane `l` of the `then` side of `if $keep`
/// stores at a uniform base plus the kept lanes below it (`btc (ballot
/// $keep & lane_mask.lt)`), times 4. Only the first store is packed; the
/// others look alike but store in other lanes than the ballot counted:
/// an `if` on another test, a test written after the ballot, a nested
/// `if`, and lanes that returned after the ballot.
const PACKED: &str = "
param %base: i32
param %n: i32
buffer @src[0]: u32
buffer @dst[1]: u32

kernel @main workgroup(64) {
  var $keep: bool
  var $other: bool
  %g = global_id.x
  %li = local_index
  %lower = lane_mask.lt
  %in = cmp.lt.u %g, %n
  if %in {
    %a = shl %g, 2
    %v = load.u32 @src, %a
    %bit = and %v, 1
    $keep = cmp.eq %bit, 1
    %bit2 = and %v, 2
    $other = cmp.eq %bit2, 2
    %w = workgroup_id.x
    %w2 = shl %w, 1
    %wi = shr.u %li, 5
    %warp = add %w2, %wi
    %region = shl %warp, 7
    %start = add %region, %base
    %keepers = ballot $keep
    %below = and %keepers, %lower
    %slot = btc %below
    %slot4 = shl %slot, 2
    // An `if` between that keeps every lane.
    %odd = cmp.eq %bit2, 0
    if %odd {
      %again = add %v, 1
    }
    if $keep {
      %at = add %start, %slot4
      store.u32 @dst, %at, %v
    }
    if $other {
      %at1 = add %start, %slot4
      %at1b = add %at1, 4096
      store.u32 @dst, %at1b, %v
    }
    if $keep {
      %cond = cmp.gt.u %v, 3
      if %cond {
        %at2 = add %start, %slot4
        %at2b = add %at2, 8192
        store.u32 @dst, %at2b, %v
      }
    }
    %keepers3 = ballot $keep
    %below3 = and %keepers3, %lower
    %slot3 = btc %below3
    $keep = mov $other
    if $keep {
      %slot3x4 = mul %slot3, 4
      %at3 = add %slot3x4, %start
      %at3b = add %at3, 12288
      store.u32 @dst, %at3b, %v
    }
    %keepers4 = ballot $other
    %below4 = and %lower, %keepers4
    %slot4b = btc %below4
    %low3 = and %v, 7
    %leaves = cmp.eq %low3, 6
    if %leaves {
      return
    }
    if $other {
      %s4 = add %start, 16384
      %at4b = mul %slot4b, 4
      %at4c = add %s4, %at4b
      store.u32 @dst, %at4c, %v
    }
  }
}
";

#[test]
fn packed_stores_are_the_lanes_the_ballot_counted() {
    let m = module(PACKED);
    let f: &Function = m.function(m.find_function("main").expect("@main"));
    let shapes = FunctionShapes::analyse(&m, f, IdLayout::Any);
    let mut stores = Vec::new();
    warpjit_ir::walk_block(&f.body, &mut |s| {
        if let warpjit_ir::Stmt::Inst(i) = s {
            if matches!(i.op, warpjit_ir::Op::Store { .. }) {
                stores.push(shapes.packed(i, 4));
            }
        }
    });
    assert_eq!(stores, [true, false, false, false, false]);
    // The stride must be the access size.
    warpjit_ir::walk_block(&f.body, &mut |s| {
        if let warpjit_ir::Stmt::Inst(i) = s {
            assert!(!shapes.packed(i, 8));
        }
    });
}

#[test]
fn packed_stores_match_the_interpreter() {
    let shapes = [([2, 1, 1], [64, 1, 1]), ([3, 1, 1], [40, 1, 1])];
    let buffers = vec![pattern(1024, 31), vec![0u8; 20480]];
    let params: Vec<Vec<u64>> = [0u64, 4, 2, 20480 - 64, 0xffff_fff0]
        .iter()
        .map(|&base| vec![base, 150])
        .collect();
    same_as_interpreter(PACKED, &shapes, &params, &buffers);
}

/// `shuffle.idx` over one segment of 32 lanes with one index: every active
/// lane reads the same lane, or 0 when that lane is inactive, so the
/// result is uniform and an address made from it is one address.
const SHUFFLE_ONE_LANE: &str = "
param %n: i32
buffer @src[0]: u32
buffer @dst[1]: u32

kernel @main workgroup(64) {
  %g = global_id.x
  %lane = lane_id
  %in = cmp.lt.u %g, %n
  if %in {
    %a = shl %g, 2
    %v = load.u32 @src, %a
    %from = and %n, 31
    %odd_bit = and %lane, 1
    %odd = cmp.eq %odd_bit, 1
    if %odd {
      %x = shuffle.idx %v, %from, width 32
      %x_low = and %x, 255
      %x_at = shl %x_low, 2
      %y = load.u32 @src, %x_at
      %z = add %y, %x
      store.u32 @dst, %a, %z
    }
    %half = shuffle.idx %v, %from, width 16
    %by_lane = shuffle.idx %v, %lane, width 32
  }
}
";

#[test]
fn shuffles_of_one_lane_are_uniform() {
    let m = module(SHUFFLE_ONE_LANE);
    assert_eq!(shape_of(&m, IdLayout::Any, "x"), UNIFORM);
    assert_eq!(shape_of(&m, IdLayout::Any, "x_at"), UNIFORM);
    assert_eq!(shape_of(&m, IdLayout::Any, "half"), VARYING);
    assert_eq!(shape_of(&m, IdLayout::Any, "by_lane"), VARYING);
    let shapes = [([3, 1, 1], [64, 1, 1])];
    let buffers = vec![pattern(1024, 37), vec![0u8; 1024]];
    // Lane 22 (even: inactive where the shuffle runs) and lane 23 (odd).
    let params = vec![vec![150], vec![151]];
    same_as_interpreter(SHUFFLE_ONE_LANE, &shapes, &params, &buffers);
}
