//! The spec filetests (`tests/filetests/*.warp`): each file pins values from
//! the NVIDIA extension specs or from HARDWARE.md in `//! expect:` lines,
//! written by hand from the text. One test per file, so a failure names the
//! behaviour; the comments in each file cite the section or item. (The
//! directory-wide runner in tests/filetests.rs runs them too, all in one
//! test.)

use std::path::PathBuf;

fn filetest_dir() -> PathBuf {
    [env!("CARGO_MANIFEST_DIR"), "tests", "filetests"]
        .iter()
        .collect()
}

fn check(name: &str) {
    let path = filetest_dir().join(name);
    if let Err(failures) = warpjit::filetest::run_file(&path) {
        panic!("{failures}");
    }
}

macro_rules! filetests {
    ($($test:ident => $file:literal,)*) => {
        $(
            #[test]
            fn $test() {
                check($file);
            }
        )*

    };
}

filetests! {
    shuffle_spec_tables => "shuffle_spec_tables.warp",
    shuffle_mask_model => "shuffle_mask_model.warp",
    shuffle_width_dynamic => "shuffle_width_dynamic.warp",
    shuffle_idx_index_past_width => "shuffle_idx_index_past_width.warp",
    shuffle_xor_other_segment => "shuffle_xor_other_segment.warp",
    shuffle_index_high_bits => "shuffle_index_high_bits.warp",
    shuffle_width_1 => "shuffle_width_1.warp",
    shuffle_width_64_0_96 => "shuffle_width_64_0_96.warp",
    shuffle_width_3 => "shuffle_width_3.warp",
    shuffle_inactive_source => "shuffle_inactive_source.warp",
    shuffle_data_types => "shuffle_data_types.warp",
    partial_warp_48 => "partial_warp_48.warp",
    partial_warp_40 => "partial_warp_40.warp",
    lane_masks => "lane_masks.warp",
    active_mask_control_flow => "active_mask_control_flow.warp",
    tg_vote_values => "tg_vote_values.warp",
    vote_guard_ballot => "vote_guard_ballot.warp",
    quad_swizzle_formulas => "quad_swizzle_formulas.warp",
    quad_partial_quad => "quad_partial_quad.warp",
    derivatives_fbo_layout => "derivatives_fbo_layout.warp",
    demote_helpers => "demote_helpers.warp",
    demote_private_arrays => "demote_private_arrays.warp",
    bitfield_ops => "bitfield_ops.warp",
    convert_values => "convert_values.warp",
    pk64_up64 => "pk64_up64.warp",
    atomics_same_address => "atomics_same_address.warp",
    atomics_pseudocode => "atomics_pseudocode.warp",
    ordered_rounds => "ordered_rounds.warp",
    memory_access_rules => "memory_access_rules.warp",
    arith_edge_cases => "arith_edge_cases.warp",
    barrier_warps => "barrier_warps.warp",
}
