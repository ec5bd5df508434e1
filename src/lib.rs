//! warpjit: run GPU-style warp programs natively on the CPU.
//!
//! This package is the command line over the `warpjit-ir` crate: buffer and
//! parameter handling for launches, `//!` directives in `.warp` files, and
//! the filetest runner the test suite uses.

pub mod bench;
pub mod buffers;
pub mod cli;
pub mod directives;
pub mod files;
pub mod filetest;
pub mod fuzz;
pub mod run;
pub mod stats;
pub mod values;

pub use warpjit_ir as ir;
