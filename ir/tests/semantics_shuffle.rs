//! Shuffle lane selection: NV_shader_thread_shuffle's example tables and the
//! hardware model of HARDWARE.md items 1-9.

use warpjit_ir::semantics::{shuffle_mask_from_width, shuffle_source};
use warpjit_ir::ShuffleMode::{self, Down, Idx, Up, Xor};

const ALL_ACTIVE: u32 = u32::MAX;

/// One whole-warp shuffle as the interpreter performs it: the source rule
/// of `shuffle_source`, own value when not valid, 0 (valid) when the source
/// lane is inactive (HARDWARE.md 7, 9).
fn shuffle_warp(
    mode: ShuffleMode,
    data: &[u32; 32],
    index: u32,
    width: u32,
    active: u32,
) -> ([u32; 32], [bool; 32]) {
    let mask = shuffle_mask_from_width(mode, width);
    let mut result = [0; 32];
    let mut valid = [false; 32];
    for lane in 0..32 {
        let (source, ok) = shuffle_source(mode, lane, index, mask);
        valid[lane as usize] = ok;
        result[lane as usize] = if !ok {
            data[lane as usize]
        } else if active >> source & 1 == 1 {
            data[source as usize]
        } else {
            0
        };
    }
    (result, valid)
}

/// Lane data `a..h` of the spec's 8-lane segment, repeated per segment and
/// made distinct per segment: segment k, letter j -> 100 * k + j.
fn lettered() -> [u32; 32] {
    std::array::from_fn(|lane| 100 * (lane as u32 / 8) + lane as u32 % 8)
}

/// Expands an 8-entry per-segment table (letters as 0..7 and validity) to
/// the 32-lane expectation.
fn per_segment(letters: [u32; 8], valid: [u8; 8]) -> ([u32; 32], [bool; 32]) {
    (
        std::array::from_fn(|lane| 100 * (lane as u32 / 8) + letters[lane % 8]),
        std::array::from_fn(|lane| valid[lane % 8] == 1),
    )
}

const A: u32 = 0;
const B: u32 = 1;
const C: u32 = 2;
const D: u32 = 3;
const E: u32 = 4;
const F: u32 = 5;
const G: u32 = 6;
const H: u32 = 7;

#[test]
fn spec_table_idx_2_reads_thread_2_which_holds_c() {
    // The spec's table prints `b` in every result cell, but thread 2 holds
    // `c` (errata noted in HARDWARE.md); the correct answer is c.
    let got = shuffle_warp(Idx, &lettered(), 2, 8, ALL_ACTIVE);
    assert_eq!(got, per_segment([C; 8], [1; 8]));
}

#[test]
fn spec_table_idx_9_hardware_reads_index_mod_width() {
    // Spec: threadIdValid = 0 and own value. HARDWARE.md 3: valid, lane
    // segment_base + 9 % 8, i.e. `b`.
    let got = shuffle_warp(Idx, &lettered(), 9, 8, ALL_ACTIVE);
    assert_eq!(got, per_segment([B; 8], [1; 8]));
}

#[test]
fn spec_table_up_1() {
    let got = shuffle_warp(Up, &lettered(), 1, 8, ALL_ACTIVE);
    assert_eq!(
        got,
        per_segment([A, A, B, C, D, E, F, G], [0, 1, 1, 1, 1, 1, 1, 1])
    );
}

#[test]
fn spec_table_down_2() {
    let got = shuffle_warp(Down, &lettered(), 2, 8, ALL_ACTIVE);
    assert_eq!(
        got,
        per_segment([C, D, E, F, G, H, G, H], [1, 1, 1, 1, 1, 1, 0, 0])
    );
}

#[test]
fn spec_table_xor_1() {
    let got = shuffle_warp(Xor, &lettered(), 1, 8, ALL_ACTIVE);
    assert_eq!(got, per_segment([B, A, D, C, F, E, H, G], [1; 8]));
}

/// The spec text's rule, in segment coordinates, for the cases it defines
/// and the hardware agrees with: power-of-two widths, and for idx/xor an
/// index below the width.
fn spec_text_source(mode: ShuffleMode, lane: u32, index: u32, width: u32) -> (u32, bool) {
    let base = lane / width * width;
    let own = lane - base;
    let (source, valid) = match mode {
        Idx => (index as i64, index < width),
        Up => (own as i64 - index as i64, own as i64 - index as i64 >= 0),
        Down => (own as i64 + index as i64, own + index < width),
        Xor => ((own ^ index) as i64, own ^ index < width),
    };
    if valid {
        (base + source as u32, true)
    } else {
        (lane, false)
    }
}

#[test]
fn model_matches_spec_text_where_the_spec_is_defined_and_hardware_agrees() {
    for width in [2, 4, 8, 16, 32] {
        for mode in [Idx, Up, Down, Xor] {
            let indices = match mode {
                Idx | Xor => 0..width,
                Up | Down => 0..32,
            };
            let mask = shuffle_mask_from_width(mode, width);
            for index in indices {
                for lane in 0..32 {
                    assert_eq!(
                        shuffle_source(mode, lane, index, mask),
                        spec_text_source(mode, lane, index, width),
                        "{mode:?} width {width} index {index} lane {lane}"
                    );
                }
            }
        }
    }
}

#[test]
fn width_lowering_masks_hardware_2() {
    assert_eq!(shuffle_mask_from_width(Idx, 32), 0x001f);
    assert_eq!(shuffle_mask_from_width(Up, 32), 0x0000);
    assert_eq!(shuffle_mask_from_width(Down, 8), (24 << 8) | 31);
    assert_eq!(shuffle_mask_from_width(Xor, 16), (16 << 8) | 31);
    assert_eq!(shuffle_mask_from_width(Up, 8), 24 << 8);
    // Width 3: segment mask (32 - 3) & 31 = 29 (HARDWARE.md 6).
    assert_eq!(shuffle_mask_from_width(Idx, 3), (29 << 8) | 31);
    assert_eq!(shuffle_mask_from_width(Up, 3), 29 << 8);
}

#[test]
fn index_bits_above_4_are_ignored_hardware_5() {
    for mode in [Idx, Up, Down, Xor] {
        for width in [1, 2, 3, 8, 32] {
            let mask = shuffle_mask_from_width(mode, width);
            for lane in 0..32 {
                for index in 0..32 {
                    let expected = shuffle_source(mode, lane, index, mask);
                    for high in [32, 64, 0x100, 0xffff_ffe0] {
                        assert_eq!(shuffle_source(mode, lane, index | high, mask), expected);
                    }
                }
            }
        }
    }
    // 63 acts as 31, 64 as 0, 0xffffffff as 31.
    let mask = shuffle_mask_from_width(Idx, 32);
    assert_eq!(shuffle_source(Idx, 5, 63, mask), (31, true));
    assert_eq!(shuffle_source(Idx, 5, 64, mask), (0, true));
    assert_eq!(shuffle_source(Idx, 5, u32::MAX, mask), (31, true));
}

#[test]
fn width_1_hardware_6() {
    for lane in 0..32 {
        for index in 0..32 {
            let src = |mode| shuffle_source(mode, lane, index, shuffle_mask_from_width(mode, 1));
            // shuffleNV: own value, valid, for any index.
            assert_eq!(src(Idx), (lane, true));
            // Up/Down: own value, valid only for index 0.
            assert_eq!(src(Up), (lane, index == 0));
            assert_eq!(src(Down), (lane, index == 0));
            // Xor: reads lane ^ index when that is not above the lane.
            let partner = lane ^ index;
            if partner <= lane {
                assert_eq!(src(Xor), (partner, true));
            } else {
                assert_eq!(src(Xor), (lane, false));
            }
        }
    }
}

#[test]
fn widths_0_64_96_act_as_32_hardware_6() {
    for mode in [Idx, Up, Down, Xor] {
        let full = shuffle_mask_from_width(mode, 32);
        for width in [0, 64, 96] {
            assert_eq!(shuffle_mask_from_width(mode, width), full);
        }
    }
}

#[test]
fn width_3_follows_the_model_hardware_6() {
    // segmask 29 = 0b11101: min = lane & 29, max = min | (31 & !29) = min | 2.
    let mask = shuffle_mask_from_width(Idx, 3);
    // lane 5: min 5, max 7; index 2 -> 5 | 2 = 7 (valid), index 1 -> 5 | 0.
    assert_eq!(shuffle_source(Idx, 5, 2, mask), (7, true));
    assert_eq!(shuffle_source(Idx, 5, 1, mask), (5, true));
    // lane 2: min 0, max 2; down 1 -> 3 > 2, not valid.
    let down = shuffle_mask_from_width(Down, 3);
    assert_eq!(shuffle_source(Down, 2, 1, down), (2, false));
    assert_eq!(shuffle_source(Down, 0, 2, down), (2, true));
}

#[test]
fn idx_with_index_at_least_width_wraps_in_segment_hardware_3() {
    for width in [2u32, 4, 8, 16] {
        let mask = shuffle_mask_from_width(Idx, width);
        for lane in 0..32 {
            for index in width..32 {
                let base = lane / width * width;
                assert_eq!(
                    shuffle_source(Idx, lane, index, mask),
                    (base + index % width, true)
                );
            }
        }
    }
}

#[test]
fn xor_across_segments_valid_only_below_segment_end_hardware_4() {
    let (result, valid) = shuffle_warp(Xor, &std::array::from_fn(|l| l as u32), 8, 8, ALL_ACTIVE);
    for lane in 0..32u32 {
        let partner = lane ^ 8;
        let segment_end = lane / 8 * 8 + 7;
        assert_eq!(valid[lane as usize], partner <= segment_end, "lane {lane}");
        let expected = if partner <= segment_end {
            partner
        } else {
            lane
        };
        assert_eq!(result[lane as usize], expected);
    }
    // Lanes 0..7 (partners 8..15 above their segment) keep their own value;
    // lanes 8..15 read 0..7.
    assert_eq!(result[3], 3);
    assert_eq!(result[11], 3);
}

#[test]
fn up_bounds_are_inclusive_hardware_1() {
    // The spec says "greater than maxThreadId"; the GPU uses >=.
    let mask = shuffle_mask_from_width(Up, 8);
    assert_eq!(shuffle_source(Up, 9, 1, mask), (8, true));
    assert_eq!(shuffle_source(Up, 8, 1, mask), (8, false));
    // Down's "lower than maxThreadId" is <=: lane 6 + 1 = 7 is readable.
    let mask = shuffle_mask_from_width(Down, 8);
    assert_eq!(shuffle_source(Down, 6, 1, mask), (7, true));
}

#[test]
fn raw_mask_clamp_limits_the_source() {
    // SHFIDX with clamp 3 and no segmentation: indices 0..3 readable.
    for lane in 0..32 {
        for index in 0..32 {
            let expected = if index <= 3 {
                (index, true)
            } else {
                (lane, false)
            };
            assert_eq!(shuffle_source(Idx, lane, index, 3), expected);
        }
    }
    // SHFDOWN with clamp 15: lanes cannot read past 15.
    assert_eq!(shuffle_source(Down, 10, 5, 15), (15, true));
    assert_eq!(shuffle_source(Down, 10, 6, 15), (10, false));
    // Bits of the mask outside 0..4 and 8..12 are ignored.
    assert_eq!(shuffle_source(Down, 10, 6, 15 | 0xffff_e0e0), (10, false));
}

#[test]
fn inactive_source_reads_zero_valid_hardware_7() {
    let data: [u32; 32] = std::array::from_fn(|l| 1000 + l as u32);
    let even = 0x5555_5555;
    let (result, valid) = shuffle_warp(Xor, &data, 1, 32, even);
    // Even lanes read odd (inactive) lanes: 0, valid.
    assert_eq!(result[0], 0);
    assert!(valid[0]);
    assert_eq!(result[4], 0);
    // Out-of-range reads still return the own value.
    let (result, valid) = shuffle_warp(Up, &data, 1, 32, even);
    assert_eq!((result[0], valid[0]), (1000, false));
    assert_eq!((result[2], valid[2]), (0, true));
}

#[test]
fn partial_warp_hardware_9() {
    // Second warp of a 48-wide group: lanes 0..15 exist.
    let data: [u32; 32] = std::array::from_fn(|l| if l < 16 { 500 + l as u32 } else { 0 });
    let present = 0x0000_ffff;
    let (result, valid) = shuffle_warp(Down, &data, 4, 32, present);
    assert_eq!(result[11], 515);
    assert_eq!((result[12], valid[12]), (0, true));
    assert_eq!((result[15], valid[15]), (0, true));
    // subgroupShuffle(v, 35) uses index 3.
    let (result, _) = shuffle_warp(Idx, &data, 35, 32, present);
    assert!(result[..16].iter().all(|&v| v == 503));
}

#[test]
fn sources_stay_inside_the_warp() {
    for mode in [Idx, Up, Down, Xor] {
        for mask in (0..0x2000u32).step_by(7) {
            for lane in 0..32 {
                for index in 0..32 {
                    let (source, valid) = shuffle_source(mode, lane, index, mask);
                    assert!(source < 32);
                    if !valid {
                        assert_eq!(source, lane);
                    }
                }
            }
        }
    }
}
