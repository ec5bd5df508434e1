//! Bit selects and `bfi` under a lane mask, with the field or the selector
//! in memory (a lane-dependent constant vector, a broadcast uniform load).
//! LLVM 19 turns `select(m, (x & c) | (y & ~c), x)` into one merge-masked
//! `vpternlog` and, when it has to rotate the operands to fold `c` from
//! memory, encodes the wrong truth table. The JIT keeps that form from
//! being selected; these kernels produced wrong lanes before it did.

mod direct;

use direct::agree;
use warpjit_ir::interp::LaunchConfig;

const KERNEL: &str = "
buffer @out[0]: u32
buffer @in[1]: u32

kernel @main workgroup(64) {
  var $x: i32
  var $y: i32
  var $z: i32
  var $w: i64
  var $v: i32
  %lane = lane_id
  %li = local_index
  %a = mul %li, 2654435761
  %b = xor %a, 0x5bd1e995
  %u = load.u32 @in, 0
  $x = mov %a
  $y = mov %a
  $z = mov %a
  $v = mov %a
  %wa = cvt.u64.u32.trunc %a
  %wb = cvt.u64.u32.trunc %b
  %wc = shl %wb, 32
  $w = or %wa, %wc
  %m3 = and %lane, 3
  %some = cmp.ne %m3, 0
  %field = mul %lane, 0x01010101
  if %some {
    $x = bfi $x, %b, %lane, 24
    %keep = and $y, %field
    %notf = not %field
    %take = and %b, %notf
    $y = or %keep, %take
    %ku = and $z, %u
    %nu = not %u
    %tu = and %b, %nu
    $z = or %ku, %tu
    $w = bfi $w, %wb, %lane, 40
  } else {
    %kv = and $v, %field
    %nv = not %field
    %tv = and %b, %nv
    $v = or %kv, %tv
  }
  %base = mul %li, 24
  store.u32 @out, %base, $x
  %a1 = add %base, 4
  store.u32 @out, %a1, $y
  %a2 = add %base, 8
  store.u32 @out, %a2, $z
  %a4 = add %base, 12
  store.u32 @out, %a4, $v
  %a3 = add %base, 16
  store.u64 @out, %a3, $w
}
";

const SELECTOR: u32 = 0xf00f_c35a;

#[test]
fn masked_bit_selects_with_a_field_in_memory_match_the_interpreter() {
    let configs: Vec<LaunchConfig> = [[64, 1, 1], [48, 1, 1], [40, 1, 1]]
        .iter()
        .map(|&workgroup| LaunchConfig::new([2, 1, 1], workgroup))
        .collect();
    let out = agree(
        KERNEL,
        &configs,
        &[vec![]],
        &[vec![0; 64 * 24], SELECTOR.to_le_bytes().to_vec()],
    );
    // The plain bit selects, computed here: the last launch has 40
    // invocations a workgroup.
    let word = |i: usize| u32::from_le_bytes(out[0][i * 4..i * 4 + 4].try_into().unwrap());
    for li in 0..40u32 {
        let lane = li % 32;
        let a = li.wrapping_mul(2_654_435_761);
        let b = a ^ 0x5bd1_e995;
        let field = lane.wrapping_mul(0x0101_0101);
        let (y, z, v) = if lane & 3 != 0 {
            (
                (a & field) | (b & !field),
                (a & SELECTOR) | (b & !SELECTOR),
                a,
            )
        } else {
            (a, a, (a & field) | (b & !field))
        };
        assert_eq!(
            word(li as usize * 6 + 1),
            y,
            "field select of invocation {li}"
        );
        assert_eq!(
            word(li as usize * 6 + 2),
            z,
            "uniform select of invocation {li}"
        );
        assert_eq!(
            word(li as usize * 6 + 3),
            v,
            "else-branch select of invocation {li}"
        );
    }
}
