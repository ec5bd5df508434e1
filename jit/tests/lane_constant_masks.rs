//! Masks chosen by lane-constant conditions (`select(lane_id >= 8, false,
//! p)`), kept across a warp loop with calls in it. LLVM's optimiser makes
//! them shuffles of mask lanes, which LLVM 19 selects to zero-extending
//! mask moves (`kmovb`) and then spills as plain copies of the source,
//! upper lanes included. The JIT rewrites those shuffles
//! (`engine/mask_shuffles.rs`); the fuzzer's case below recorded 16 faults
//! for 8 active lanes before it did.

mod direct;

use direct::agree;
use warpjit_ir::interp::LaunchConfig;

/// The fuzzer's case, reduced: the lowest 8 (or 16, or 4) lanes store out
/// of bounds, twice, the second store under a uniform `if`.
fn kernel(lanes: u32) -> String {
    format!(
        "
param %on: bool
param %k: i32
buffer @out[0]: u32

kernel @main workgroup(16) {{
  %lane = lane_id
  %li = local_index
  %at = mul %li, 256
  %high = cmp.ge.u %lane, {lanes}
  %low = select %high, false, %on
  if %low {{
    %a = add %at, 16
    store.u32 @out, %a, 1
    %small = cmp.lt.u %k, 27
    if %small {{
      %b = add %at, 24
      store.u32 @out, %b, %lane
    }}
  }}
}}
"
    )
}

#[test]
fn lane_constant_masks_keep_their_upper_lanes_off() {
    let params: Vec<Vec<u64>> = [(1, 0), (1, 100), (0, 0)]
        .into_iter()
        .map(|(on, k)| vec![on, k])
        .collect();
    let configs = [
        LaunchConfig::new([1, 1, 1], [16, 1, 1]),
        LaunchConfig::new([2, 1, 1], [48, 1, 1]),
        LaunchConfig::new([1, 1, 1], [32, 1, 1]),
    ];
    for lanes in [4, 8, 16] {
        // Lane 0 stores inside the buffer, the others outside.
        for words in [2usize, 64, 2048] {
            agree(&kernel(lanes), &configs, &params, &[vec![0; 4 * words]]);
        }
    }
}
