//! Scalar types of per-lane values.
//!
//! Types carry no signedness: as in LLVM, operations that care (division,
//! comparisons, conversions, shifts) say whether they read their operands as
//! signed or unsigned. `i8`, `i16` and `f16` exist for storage and conversion
//! only; arithmetic works on `i32`, `i64`, `f32` and `f64`.

use std::fmt;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Type {
    Bool,
    I8,
    I16,
    I32,
    I64,
    F16,
    F32,
    F64,
}

impl Type {
    pub const ALL: [Type; 8] = [
        Type::Bool,
        Type::I8,
        Type::I16,
        Type::I32,
        Type::I64,
        Type::F16,
        Type::F32,
        Type::F64,
    ];

    /// Width in bits (bool counts as 1).
    pub fn bits(self) -> u32 {
        match self {
            Type::Bool => 1,
            Type::I8 => 8,
            Type::I16 | Type::F16 => 16,
            Type::I32 | Type::F32 => 32,
            Type::I64 | Type::F64 => 64,
        }
    }

    pub fn is_int(self) -> bool {
        matches!(self, Type::I8 | Type::I16 | Type::I32 | Type::I64)
    }

    pub fn is_float(self) -> bool {
        matches!(self, Type::F16 | Type::F32 | Type::F64)
    }

    /// Types that arithmetic operates on (not the storage-only narrow types).
    pub fn is_arith_int(self) -> bool {
        matches!(self, Type::I32 | Type::I64)
    }

    pub fn is_arith_float(self) -> bool {
        matches!(self, Type::F32 | Type::F64)
    }

    /// Mask selecting the value's bits inside the u64 lane storage.
    pub fn bit_mask(self) -> u64 {
        match self.bits() {
            64 => u64::MAX,
            n => (1u64 << n) - 1,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Type::Bool => "bool",
            Type::I8 => "i8",
            Type::I16 => "i16",
            Type::I32 => "i32",
            Type::I64 => "i64",
            Type::F16 => "f16",
            Type::F32 => "f32",
            Type::F64 => "f64",
        }
    }

    pub fn from_name(s: &str) -> Option<Type> {
        Type::ALL.into_iter().find(|t| t.name() == s)
    }
}

impl fmt::Display for Type {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A typed constant. `bits` holds the value's bit pattern, zero-extended
/// (an `i32` -1 is `0xffff_ffff`, an `f32` is its IEEE bits, `true` is 1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Const {
    pub ty: Type,
    pub bits: u64,
}

impl Const {
    pub fn new(ty: Type, bits: u64) -> Const {
        Const {
            ty,
            bits: bits & ty.bit_mask(),
        }
    }
    pub fn bool(b: bool) -> Const {
        Const::new(Type::Bool, b as u64)
    }
    pub fn i32(v: i32) -> Const {
        Const::new(Type::I32, v as u32 as u64)
    }
    pub fn i64(v: i64) -> Const {
        Const::new(Type::I64, v as u64)
    }
    pub fn f32(v: f32) -> Const {
        Const::new(Type::F32, v.to_bits() as u64)
    }
    pub fn f64(v: f64) -> Const {
        Const::new(Type::F64, v.to_bits())
    }
    pub fn zero(ty: Type) -> Const {
        Const::new(ty, 0)
    }
}
