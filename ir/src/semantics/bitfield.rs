//! Bit operations: BFE, BFI, BFR, BTC, BTFL, BTFM.
//!
//! BFE/BFI follow the PTX `bfe`/`bfi` model in every case, which the GPU
//! matches including the cases NV_gpu_program5 leaves undefined (HARDWARE.md
//! 19): only the low 8 bits of offset and bit count are used, field bits
//! past the top of the operand are neither extracted nor inserted, and a
//! signed extract fills with bit `min(offset + bits - 1, msb)`.

use crate::types::Type;

/// The low `n` bits set (`n` may be 0..=64).
fn low_mask(n: u32) -> u64 {
    if n >= 64 {
        u64::MAX
    } else {
        (1u64 << n) - 1
    }
}

/// Number of field bits that lie inside a `width`-bit operand.
fn bits_inside(width: u32, offset: u32, bits: u32) -> u32 {
    if offset >= width {
        0
    } else {
        bits.min(width - offset)
    }
}

/// BFE (GLSL bitfieldExtract order): `bits` bits of `value` starting at bit
/// `offset`, zero- or sign-extended.
pub fn bfe(signed: bool, ty: Type, value: u64, offset: u32, bits: u32) -> u64 {
    let width = ty.bits();
    let value = value & ty.bit_mask();
    let offset = offset & 0xff;
    let bits = bits & 0xff;
    if bits == 0 {
        return 0;
    }
    let inside = bits_inside(width, offset, bits);
    let field = if inside == 0 {
        0
    } else {
        (value >> offset) & low_mask(inside)
    };
    let fill_bit = (offset + bits - 1).min(width - 1);
    if signed && (value >> fill_bit) & 1 == 1 {
        (field | !low_mask(inside)) & ty.bit_mask()
    } else {
        field
    }
}

/// BFI (GLSL bitfieldInsert order): `base` with bits `offset..offset+bits`
/// replaced by the low bits of `insert`.
pub fn bfi(ty: Type, base: u64, insert: u64, offset: u32, bits: u32) -> u64 {
    let offset = offset & 0xff;
    let inside = bits_inside(ty.bits(), offset, bits & 0xff);
    if inside == 0 {
        return base & ty.bit_mask();
    }
    let field = low_mask(inside) << offset;
    ((base & !field) | ((insert << offset) & field)) & ty.bit_mask()
}

/// BFR: the operand's bits in reverse order.
pub fn bfr(ty: Type, a: u64) -> u64 {
    (a & ty.bit_mask()).reverse_bits() >> (64 - ty.bits())
}

/// An i32 result as lane bits.
fn i32_bits(v: i32) -> u64 {
    v as u32 as u64
}

/// BTC: the number of one bits (i32).
pub fn btc(ty: Type, a: u64) -> u64 {
    i32_bits((a & ty.bit_mask()).count_ones() as i32)
}

/// BTFL: the index of the lowest one bit, -1 (all ones) for zero (i32).
pub fn btfl(ty: Type, a: u64) -> u64 {
    let a = a & ty.bit_mask();
    i32_bits(if a == 0 {
        -1
    } else {
        a.trailing_zeros() as i32
    })
}

/// BTFM.U: the index of the highest one bit, -1 (all ones) for zero (i32).
pub fn btfm_u(ty: Type, a: u64) -> u64 {
    let a = a & ty.bit_mask();
    i32_bits(if a == 0 {
        -1
    } else {
        63 - a.leading_zeros() as i32
    })
}

/// BTFM.S: the highest one bit of a positive value, the highest zero bit of
/// a negative one, -1 for 0 and -1 (HARDWARE.md 20: 0x80000000 -> 30).
pub fn btfm_s(ty: Type, a: u64) -> u64 {
    let a = a & ty.bit_mask();
    let negative = (a >> (ty.bits() - 1)) & 1 == 1;
    let differing = if negative { !a & ty.bit_mask() } else { a };
    btfm_u(ty, differing)
}
