//! Memory element conversions, NaN canonicalization, bitcasts, PK64/UP64
//! (HARDWARE.md 23, 27) and the ATOM pseudo-code (HARDWARE.md 28-29).

use proptest::prelude::*;
use warpjit_ir::semantics::{
    atomic_update, bitcast, canonical_nan_bits, canonicalize, load_convert, pk64, store_convert,
    up64,
};
use warpjit_ir::AtomOp::*;
use warpjit_ir::NumFormat::{self, *};
use warpjit_ir::{AtomOp, Type};

#[test]
fn canonical_nans_hardware_23() {
    assert_eq!(canonical_nan_bits(Type::F16), 0x7fff);
    assert_eq!(canonical_nan_bits(Type::F32), 0x7fff_ffff);
    assert_eq!(canonical_nan_bits(Type::F64), 0x7fff_ffff_ffff_ffff);
    for nan in [0x7fc0_0000u64, 0xffc0_0000, 0x7f80_0001, 0xffff_ffff] {
        assert_eq!(canonicalize(Type::F32, nan), 0x7fff_ffff);
    }
    assert_eq!(canonicalize(Type::F32, 0x7f80_0000), 0x7f80_0000);
    assert_eq!(canonicalize(Type::F16, 0xfe00), 0x7fff);
    assert_eq!(
        canonicalize(Type::F64, 0xfff8_0000_0000_0000),
        0x7fff_ffff_ffff_ffff
    );
    assert_eq!(canonicalize(Type::I32, 0x7fc0_0000), 0x7fc0_0000);
}

#[test]
fn bitcast_canonicalizes_float_sources_only() {
    assert_eq!(bitcast(Type::F32, Type::I32, 0x7fc0_0001), 0x7fff_ffff);
    assert_eq!(bitcast(Type::F32, Type::I32, 0xffc0_0000), 0x7fff_ffff);
    assert_eq!(bitcast(Type::F32, Type::I32, 0x3f80_0000), 0x3f80_0000);
    assert_eq!(bitcast(Type::F32, Type::I32, 0x8000_0000), 0x8000_0000);
    // From an integer type the bits are kept, even a NaN pattern.
    assert_eq!(bitcast(Type::I32, Type::F32, 0x7fc0_0001), 0x7fc0_0001);
    assert_eq!(
        bitcast(Type::F64, Type::I64, 0x7ff0_0000_0000_0001),
        0x7fff_ffff_ffff_ffff
    );
    assert_eq!(bitcast(Type::F16, Type::I16, 0xfc01), 0x7fff);
    assert_eq!(bitcast(Type::I16, Type::F16, 0xfc01), 0xfc01);
    assert_eq!(bitcast(Type::F32, Type::F32, 0x7fc0_0001), 0x7fff_ffff);
}

#[test]
fn pk64_up64_little_endian_hardware_27() {
    assert_eq!(pk64(0x1111_1111, 0x2222_2222), 0x2222_2222_1111_1111);
    assert_eq!(up64(0x2222_2222_1111_1111), (0x1111_1111, 0x2222_2222));
}

proptest! {
    #[test]
    fn pk64_up64_round_trip_hardware_27(lo in any::<u32>(), hi in any::<u32>(), x in any::<u64>()) {
        let (l, h) = up64(pk64(lo as u64, hi as u64));
        prop_assert_eq!((l, h), (lo as u64, hi as u64));
        let (l, h) = up64(x);
        prop_assert_eq!(pk64(l, h), x);
    }
}

#[test]
fn narrow_loads_widen() {
    assert_eq!(load_convert(S8, 0x80), 0xffff_ff80);
    assert_eq!(load_convert(S8, 0x7f), 0x7f);
    assert_eq!(load_convert(U8, 0x80), 0x80);
    assert_eq!(load_convert(S16, 0x8000), 0xffff_8000);
    assert_eq!(load_convert(U16, 0x8000), 0x8000);
    assert_eq!(load_convert(F16, 0x3800), 0.5f32.to_bits() as u64);
    assert_eq!(load_convert(F16, 0x0001), 2f32.powi(-24).to_bits() as u64);
    assert_eq!(load_convert(F16, 0x7e00), 0x7fff_ffff);
    assert_eq!(
        load_convert(F16, 0xfc00),
        f32::NEG_INFINITY.to_bits() as u64
    );
    assert_eq!(load_convert(S32, 0x8000_0000), 0x8000_0000);
    assert_eq!(load_convert(U64, u64::MAX), u64::MAX);
    assert_eq!(
        load_convert(F64, 0x4000_0000_0000_0000),
        0x4000_0000_0000_0000
    );
    // Only the element's own bits are read.
    assert_eq!(load_convert(U8, 0xff01), 1);
}

#[test]
fn narrow_stores_take_low_bits_and_round_f16() {
    assert_eq!(store_convert(S8, Type::I32, 0xffff_ff80), 0x80);
    assert_eq!(store_convert(U8, Type::I32, 0x1234), 0x34);
    assert_eq!(store_convert(U8, Type::I8, 0x34), 0x34);
    assert_eq!(store_convert(S16, Type::I32, 0x1_2345), 0x2345);
    assert_eq!(store_convert(U16, Type::I16, 0xbeef), 0xbeef);
    assert_eq!(
        store_convert(F16, Type::F32, 0.5f32.to_bits() as u64),
        0x3800
    );
    // Nearest even: 1 + 2^-11 is a tie between 1.0 and 1 + 2^-10.
    assert_eq!(
        store_convert(F16, Type::F32, (1.0f32 + 2f32.powi(-11)).to_bits() as u64),
        0x3c00
    );
    assert_eq!(
        store_convert(F16, Type::F32, 1e6f32.to_bits() as u64),
        0x7c00
    );
    assert_eq!(store_convert(F16, Type::F32, 0x7fc0_0001), 0x7fff);
    assert_eq!(store_convert(F16, Type::F16, 0xfe01), 0x7fff);
    assert_eq!(store_convert(F16, Type::F16, 0xbc00), 0xbc00);
    assert_eq!(store_convert(F32, Type::F32, 0xffc0_0000), 0x7fff_ffff);
    assert_eq!(store_convert(F32, Type::F32, 0x8000_0000), 0x8000_0000);
    assert_eq!(
        store_convert(F64, Type::F64, 0x7ff0_0000_0000_0001),
        0x7fff_ffff_ffff_ffff
    );
    assert_eq!(store_convert(S32, Type::I32, 0x7fc0_0001), 0x7fc0_0001);
    assert_eq!(store_convert(U64, Type::I64, u64::MAX), u64::MAX);
}

#[test]
fn store_then_load_round_trips_f16() {
    for h in 0..=0xffffu64 {
        let widened = load_convert(F16, h);
        let stored = store_convert(F16, Type::F32, widened);
        let is_nan = h & 0x7c00 == 0x7c00 && h & 0x3ff != 0;
        assert_eq!(stored, if is_nan { 0x7fff } else { h }, "{h:#x}");
    }
}

/// The ATOM pseudo-code, transcribed for 32-bit unsigned operands.
fn spec_atom_u32(op: AtomOp, result: u32, x: u32, y: u32) -> Option<u32> {
    Some(match op {
        Add => x.wrapping_add(result),
        Min => x.min(result),
        Max => x.max(result),
        Iwrap => {
            if result >= x {
                0
            } else {
                result + 1
            }
        }
        Dwrap => {
            if result == 0 || result > x {
                x
            } else {
                result - 1
            }
        }
        And => x & result,
        Or => x | result,
        Xor => x ^ result,
        Exch => x,
        Cswap => {
            if result == x {
                y
            } else {
                return None;
            }
        }
    })
}

#[test]
fn wrap_counters_hardware_29() {
    // IWRAP(9) on 100 returns 100 (the caller's old value) and stores 0.
    assert_eq!(atomic_update(Iwrap, U32, 100, 9, 0), Some(0));
    // DWRAP(9) on 100 stores 9.
    assert_eq!(atomic_update(Dwrap, U32, 100, 9, 0), Some(9));
    // Operand 0: IWRAP always stores 0, DWRAP always stores 0.
    for old in [0u64, 1, 5, 0xffff_ffff] {
        assert_eq!(atomic_update(Iwrap, U32, old, 0, 0), Some(0));
        assert_eq!(atomic_update(Dwrap, U32, old, 0, 0), Some(0));
    }
    // Operand 0xffffffff: IWRAP counts up through the whole range.
    assert_eq!(atomic_update(Iwrap, U32, 5, 0xffff_ffff, 0), Some(6));
    assert_eq!(
        atomic_update(Iwrap, U32, 0xffff_fffe, 0xffff_ffff, 0),
        Some(0xffff_ffff)
    );
    assert_eq!(
        atomic_update(Iwrap, U32, 0xffff_ffff, 0xffff_ffff, 0),
        Some(0)
    );
    assert_eq!(
        atomic_update(Dwrap, U32, 0, 0xffff_ffff, 0),
        Some(0xffff_ffff)
    );
    assert_eq!(atomic_update(Dwrap, U32, 5, 0xffff_ffff, 0), Some(4));
    // IWRAP(9) cycles 0, 1, ..., 9, 0; DWRAP(9) cycles 9, 8, ..., 0, 9.
    let mut up = 0u64;
    let mut down = 0u64;
    for step in 1..=25u64 {
        up = atomic_update(Iwrap, U32, up, 9, 0).expect("iwrap stores");
        down = atomic_update(Dwrap, U32, down, 9, 0).expect("dwrap stores");
        assert_eq!(up, step % 10);
        assert_eq!(down, (10 - step % 10) % 10);
    }
}

#[test]
fn parallel_iwrap_final_value_hardware_29() {
    // 2048 IWRAP(9) from 0, in any order, leave 8 and return each value
    // 0..9 204 or 205 times.
    let mut memory = 0u64;
    let mut seen = [0u32; 10];
    for _ in 0..2048 {
        seen[memory as usize] += 1;
        memory = atomic_update(Iwrap, U32, memory, 9, 0).expect("iwrap stores");
    }
    assert_eq!(memory, 8);
    assert!(seen.iter().all(|&n| n == 204 || n == 205));
}

#[test]
fn compare_and_swap_hardware_29() {
    assert_eq!(atomic_update(Cswap, U32, 7, 7, 42), Some(42));
    assert_eq!(atomic_update(Cswap, U32, 7, 8, 42), None);
    assert_eq!(
        atomic_update(Cswap, S32, 0xffff_ffff, 0xffff_ffff, 1),
        Some(1)
    );
    assert_eq!(atomic_update(Cswap, U64, 1 << 40, 1 << 40, 3), Some(3));
    assert_eq!(atomic_update(Cswap, U64, 1 << 40, 0, 3), None);
}

#[test]
fn min_max_signedness_hardware_29() {
    assert_eq!(
        atomic_update(Min, S32, 1, 0xffff_ffff, 0),
        Some(0xffff_ffff)
    );
    assert_eq!(atomic_update(Min, U32, 1, 0xffff_ffff, 0), Some(1));
    assert_eq!(atomic_update(Max, S32, 1, 0xffff_ffff, 0), Some(1));
    assert_eq!(
        atomic_update(Max, U32, 1, 0xffff_ffff, 0),
        Some(0xffff_ffff)
    );
    assert_eq!(
        atomic_update(Max, S32, 0x8000_0000, 0x7fff_ffff, 0),
        Some(0x7fff_ffff)
    );
    assert_eq!(
        atomic_update(Min, S32, 0x8000_0000, 0x7fff_ffff, 0),
        Some(0x8000_0000)
    );
}

#[test]
fn add_exchange_and_bitwise() {
    assert_eq!(atomic_update(Add, U32, 0xffff_ffff, 2, 0), Some(1));
    assert_eq!(atomic_update(Add, S32, 5, 0xffff_ffff, 0), Some(4));
    assert_eq!(atomic_update(Add, U64, u64::MAX, 2, 0), Some(1));
    assert_eq!(atomic_update(Exch, U64, 3, 1 << 50, 0), Some(1 << 50));
    assert_eq!(atomic_update(And, U32, 0b1100, 0b1010, 0), Some(0b1000));
    assert_eq!(atomic_update(Or, U32, 0b1100, 0b1010, 0), Some(0b1110));
    assert_eq!(atomic_update(Xor, S32, 0b1100, 0b1010, 0), Some(0b0110));
}

proptest! {
    #[test]
    fn u32_atomics_match_the_pseudo_code(old in any::<u32>(), x in any::<u32>(), y in any::<u32>(), small in 0u32..12) {
        for op in AtomOp::ALL {
            for (o, v) in [(old, x), (small, x % 12), (old, old), (small, small)] {
                prop_assert_eq!(
                    atomic_update(op, U32, o as u64, v as u64, y as u64),
                    spec_atom_u32(op, o, v, y).map(u64::from),
                    "{:?} {} {}", op, o, v
                );
            }
        }
    }

    #[test]
    fn atomic_results_fit_the_element(old in any::<u64>(), v in any::<u64>(), v2 in any::<u64>()) {
        for op in AtomOp::ALL {
            for elem in [U32, S32, U64] {
                let bits = NumFormat::bits(elem);
                if let Some(new) = atomic_update(op, elem, old, v, v2) {
                    if bits < 64 {
                        prop_assert_eq!(new >> bits, 0);
                    }
                }
            }
        }
    }
}
