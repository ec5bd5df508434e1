//! Division and remainder by divisors that the lowering's own selects and
//! the program's `min`/`max`/`select` build from lane-dependent constants
//! (`max.u %lane, 1`). LLVM 19 folds a division threaded over such a
//! select to poison when one arm is a constant with a zero lane, and then
//! takes the other arm's quotient for every lane; the JIT keeps the divisor
//! opaque to that fold. Compared with the interpreter on every target.

mod direct;

use direct::agree;
use warpjit_ir::interp::LaunchConfig;

const KERNEL: &str = "
buffer @out[0]: u64

kernel @main workgroup(64) {
  var $one: i64
  var $three: i64
  %lane = lane_id
  %li = local_index
  %l = cvt.s64.u32.trunc %lane
  %x = sub %l, 16
  $one = mov 1
  $three = mov 3
  %d0 = max.u %l, $one
  %d1 = min.u %l, $three
  %low = cmp.lt.u %l, 5
  %d2 = select %low, %l, $one
  %d3 = max.s %x, $one
  %neg = cmp.lt.s %x, 0
  %d4 = select %neg, %x, $one
  %base = mul %li, 160
  %q0 = div.u %l, %d0
  store.u64 @out, %base, %q0
  %a1 = add %base, 8
  %r0 = rem.u %l, %d0
  store.u64 @out, %a1, %r0
  %a2 = add %base, 16
  %q1 = div.u %l, %d1
  store.u64 @out, %a2, %q1
  %a3 = add %base, 24
  %r1 = rem.u %x, %d1
  store.u64 @out, %a3, %r1
  %a4 = add %base, 32
  %q2 = div.u %x, %d2
  store.u64 @out, %a4, %q2
  %a5 = add %base, 40
  %r2 = rem.u %l, %d2
  store.u64 @out, %a5, %r2
  %a6 = add %base, 48
  %q3 = div.s %x, %d3
  store.u64 @out, %a6, %q3
  %a7 = add %base, 56
  %r3 = rem.s %x, %d3
  store.u64 @out, %a7, %r3
  %a8 = add %base, 64
  %q4 = div.s %l, %d4
  store.u64 @out, %a8, %q4
  %a9 = add %base, 72
  %r4 = rem.s %x, %d4
  store.u64 @out, %a9, %r4
  %a10 = add %base, 80
  %q5 = div.s %x, %d0
  store.u64 @out, %a10, %q5
  %a11 = add %base, 88
  %r5 = rem.s %l, %d1
  store.u64 @out, %a11, %r5
}
";

#[test]
fn divisors_selected_from_lane_constants_divide_like_the_interpreter() {
    let configs: Vec<LaunchConfig> = [[64, 1, 1], [40, 1, 1], [2, 2, 1]]
        .iter()
        .map(|&workgroup| LaunchConfig::new([2, 1, 1], workgroup))
        .collect();
    let out = agree(KERNEL, &configs, &[vec![]], &[vec![0; 64 * 160]]);
    // Lane 3 of the last launch: 3 / max(3, 1) is 1, not 3.
    let word = |i: usize| u64::from_le_bytes(out[0][i * 8..i * 8 + 8].try_into().unwrap());
    assert_eq!(word(3 * 20), 1);
}
