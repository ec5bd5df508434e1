//! Scalar semantics of every operation: the oracle both backends follow.
//!
//! Each function computes what one lane does. Lane values are `u64` bit
//! patterns zero-extended from their type's width (bool is 0/1); every
//! function masks its inputs to the type's width and returns a zero-extended
//! result, and none panics. Cases the specifications leave undefined have one
//! fixed answer here; `docs/semantics.md` lists them with the reasons.
//!
//! | module | contents |
//! | --- | --- |
//! | `arith` | [`unary`], [`binary`], [`compare`], [`fma`] |
//! | `bitfield` | [`bfe`], [`bfi`] and the bit-count ops behind [`unary`] |
//! | `convert` | [`cvt`], [`bitcast`], NaN canonicalization, [`pk64`]/[`up64`], memory element conversions |
//! | `atomic` | [`atomic_update`] |
//! | `warp` | shuffles, lane masks, quad and derivative sources, vote truth rules |
//! | [`ieee`] | IEEE formats and exact rounding (f16 included) |
//! | [`math`] | sin, cos, exp2, log2 |

mod arith;
mod atomic;
mod bitfield;
mod convert;
pub mod ieee;
pub mod math;
mod warp;

pub use arith::{binary, compare, fma, unary};
pub use atomic::atomic_update;
pub use bitfield::{bfe, bfi, bfr, btc, btfl, btfm_s, btfm_u};
pub use convert::{
    bitcast, canonical_nan_bits, canonicalize, cvt, is_nan, load_convert, pk64, store_convert, up64,
};
pub use warp::{
    derivative_lanes, lane_mask, quad_source, shuffle_mask_from_width, shuffle_source, tg_nonzero,
    tg_result, tg_true, vote_result,
};
