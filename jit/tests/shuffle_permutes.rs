//! The permutes behind shuffles, on every target: constant sources (a
//! constant shuffle without AVX-512), lane-varying sources (`vpermd` by
//! quarters on AVX2, through memory on SSE4.2, `vpermi2d` on AVX-512), each
//! under divergence and in partial warps, against the interpreter.

mod direct;
use direct::{agree, pattern};
use warpjit_ir::interp::LaunchConfig;

/// Every mode with a constant index and width, then with a lane-varying
/// index (which reaches past 31 and past the width) and a width from the
/// parameter; the odd lanes of an `if` are the only ones active for the
/// second half, so sources are often inactive.
const SHUFFLES: &str = "
param %w: i32
buffer @data[0]: u32
buffer @out[1]: u32
kernel @main workgroup(64) {
  var $d: i32
  var $e: i32
  %i = global_id.x
  %lane = lane_id
  %a4 = shl %i, 2
  %x = load.u32 @data, %a4
  %s0, %v0 = shuffle.xor %x, 8, width 32
  %s1, %v1 = shuffle.up %x, 3, width 16
  %s2, %v2 = shuffle.down %x, 5, width 8
  %s3, %v3 = shuffle.idx %x, 30, width 32
  %k = mul %x, 2654435761:i32
  %j = shr.u %k, 26
  %t0, %u0 = shuffle.idx %x, %j, width %w
  %t1, %u1 = shuffle.xor %x, %j, width 32
  %t2, %u2 = shuffle.down %x, %j, mask 0x1f
  %t3, %u3 = shuffle.up %x, %j, width %w
  %c0 = add %s0, %s1
  %c1 = add %s2, %s3
  %c2 = add %t0, %t1
  %c3 = add %t2, %t3
  %bit = and %lane, 1
  %odd = cmp.eq %bit, 1
  if %odd {
    %p0, %q0 = shuffle.xor %x, 1, width 32
    %p1, %q1 = shuffle.idx %x, %j, width 32
    %p2 = add %p0, %p1
    $d = mov %p2
    %f0 = select %q0, 1:i32, 0
    %f1 = select %q1, 2:i32, 0
    %f2 = or %f0, %f1
    $e = mov %f2
  }
  %m0 = select %v0, 1:i32, 0
  %m1 = select %v1, 2:i32, 0
  %m2 = select %v2, 4:i32, 0
  %m3 = select %v3, 8:i32, 0
  %n0 = select %u0, 16:i32, 0
  %n1 = select %u1, 32:i32, 0
  %n2 = select %u2, 64:i32, 0
  %n3 = select %u3, 128:i32, 0
  %f = or %m0, %m1
  %g = or %m2, %m3
  %h = or %n0, %n1
  %l = or %n2, %n3
  %fg = or %f, %g
  %hl = or %h, %l
  %flags = or %fg, %hl
  %e8 = shl $e, 8
  %flags2 = or %flags, %e8
  %o = mul %i, 24
  store.u32 @out, %o, %c0
  %o1 = add %o, 4
  store.u32 @out, %o1, %c1
  %o2 = add %o, 8
  store.u32 @out, %o2, %c2
  %o3 = add %o, 12
  store.u32 @out, %o3, %c3
  %o4 = add %o, 16
  store.u32 @out, %o4, $d
  %o5 = add %o, 20
  store.u32 @out, %o5, %flags2
}
";

#[test]
fn shuffles_agree_with_the_interpreter_on_every_target() {
    let configs = [
        LaunchConfig::new([2, 1, 1], [64, 1, 1]),
        LaunchConfig::new([2, 1, 1], [40, 1, 1]),
        LaunchConfig::new([1, 1, 1], [13, 1, 1]),
    ];
    let params: Vec<Vec<u64>> = [32u64, 16, 5, 1, 0, 64].iter().map(|&w| vec![w]).collect();
    let buffers = vec![pattern(4 * 128, 11), vec![0; 24 * 128]];
    let out = agree(SHUFFLES, &configs, &params, &buffers);
    // A test that could not fail if nothing ran: lanes hold moved data.
    assert!(out[1].iter().any(|&b| b != 0));
}

/// Lane `l` reads lane `31 - l` by a lane-varying index: the data comes
/// back reversed, checked by hand as well as against the interpreter.
#[test]
fn a_lane_varying_index_reverses_a_warp() {
    let text = "
buffer @out[0]: u32
kernel @main workgroup(32) {
  %lane = lane_id
  %from = sub 31, %lane
  %x = mul %lane, 1000
  %y = shuffle.idx %x, %from, width 32
  %a = shl %lane, 2
  store.u32 @out, %a, %y
}
";
    let cfg = LaunchConfig::new([1, 1, 1], [32, 1, 1]);
    let out = agree(text, &[cfg], &[vec![]], &[vec![0; 128]]);
    let words: Vec<u32> = out[0]
        .chunks(4)
        .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
        .collect();
    let want: Vec<u32> = (0..32).map(|l| (31 - l) * 1000).collect();
    assert_eq!(words, want);
}
