//! warpjit's warp IR and its reference semantics.
//!
//! Data flow: text ([`text::parse`]) -> [`Module`] -> [`verify::VerifiedModule`]
//! -> the reference interpreter ([`interp`]) or a compiling backend.
//!
//! This crate knows nothing of LLVM, threads or the command line.

pub mod generate;
pub mod interp;
pub mod module;
pub mod ops;
pub mod reduce;
pub mod semantics;
pub mod span;
pub mod text;
pub mod types;
pub mod verify;

pub use module::*;
pub use ops::*;
pub use span::{Diagnostic, Diagnostics, Span};
pub use types::{Const, Type};
pub use verify::VerifiedModule;

/// Number of lanes in a warp.
pub const WARP_SIZE: u32 = 32;
