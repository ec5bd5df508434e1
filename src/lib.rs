//! warpjit: run GPU-style warp programs natively on the CPU.
pub use warpjit_ir as ir;
