//! Runs of consecutive bytes and halves, which no target below AVX-512 can
//! load or store under a mask: a whole warp accesses the vector plainly, a
//! partial one lane by lane. Known shapes (`global_id.x`) and shapes found
//! at run time (an address through `and` with a parameter) are compared
//! with the interpreter on every target, in whole and partial warps and
//! with runs that cross the end of the buffer.

mod direct;
use direct::{agree, pattern};
use warpjit_ir::interp::LaunchConfig;

const NARROW_RUNS: &str = "
param %keep: i32
param %skip: i32
buffer @bytes[0]: u8
buffer @halves[1]: u16
buffer @out8[2]: u8
buffer @out16[3]: u16
kernel @main workgroup(64) {
  %i = global_id.x
  %lane = lane_id
  %b = load.u8 @bytes, %i
  %i2 = shl %i, 1
  %h = load.u16 @halves, %i2
  %j = and %i, %keep
  %c = load.u8 @bytes, %j
  %j2 = shl %j, 1
  %d = load.u16 @halves, %j2
  %s = add %b, %c
  %t = add %h, %d
  %cut = cmp.ge.u %lane, %skip
  if %cut {
    store.u8 @out8, %i, %s
    store.u16 @out16, %j2, %t
  }
  %odd = and %lane, 1
  %is_odd = cmp.eq %odd, 1
  if %is_odd {
    %e = load.u8 @bytes, %j
    %f = load.u16 @halves, %i2
    %g = add %e, %f
    %k = add %i, 1
    store.u8 @out8, %k, %g
  }
}
";

#[test]
fn byte_and_half_runs_agree_with_the_interpreter() {
    let configs = [
        LaunchConfig::new([2, 1, 1], [64, 1, 1]),
        LaunchConfig::new([3, 1, 1], [40, 1, 1]),
    ];
    // %keep all ones: the `and` leaves consecutive addresses; 0x7e: not.
    // %skip 0: every lane stores; 5: the low lanes do not.
    let params: Vec<Vec<u64>> = [(0xffff_ffff, 0), (0xffff_ffff, 5), (0x7e, 0), (0x7e, 31)]
        .iter()
        .map(|&(k, s)| vec![k, s])
        .collect();
    // The buffers are shorter than the grid: the last runs cross the end.
    let buffers = vec![
        pattern(100, 1),
        pattern(2 * 100, 2),
        vec![0; 110],
        vec![0; 2 * 90],
    ];
    let out = agree(NARROW_RUNS, &configs, &params, &buffers);
    assert!(out[2].iter().any(|&b| b != 0));
    assert!(out[3].iter().any(|&b| b != 0));
}

/// A whole warp copies 32 bytes: every byte arrives, checked by hand.
#[test]
fn a_whole_warp_copies_a_run_of_bytes() {
    let text = "
buffer @src[0]: u8
buffer @dst[1]: u8
kernel @main workgroup(32) {
  %i = global_id.x
  %x = load.u8 @src, %i
  %y = add %x, 1
  store.u8 @dst, %i, %y
}
";
    let cfg = LaunchConfig::new([2, 1, 1], [32, 1, 1]);
    let src: Vec<u8> = (0..64).map(|i| (i * 7) as u8).collect();
    let out = agree(text, &[cfg], &[vec![]], &[src.clone(), vec![0; 64]]);
    let want: Vec<u8> = src.iter().map(|x| x.wrapping_add(1)).collect();
    assert_eq!(out[1], want);
}
