//! BFE/BFI against NV_gpu_program5's pseudo-code (defined cases) and the
//! PTX model (all cases, HARDWARE.md 19); BFR/BTC/BTFL/BTFM (HARDWARE.md 20).

use warpjit_ir::semantics::{bfe, bfi, unary};
use warpjit_ir::{Type, UnaryOp};

const VALUES_32: [u64; 8] = [
    0,
    0xffff_ffff,
    0x8000_0000,
    0x7fff_ffff,
    0x1234_5678,
    0xdead_beef,
    0x0000_0001,
    0x5a5a_a5a5,
];

const VALUES_64: [u64; 6] = [
    0,
    u64::MAX,
    1 << 63,
    0x7fff_ffff_ffff_ffff,
    0x0123_4567_89ab_cdef,
    0xfedc_ba98_7654_3210,
];

fn values(ty: Type) -> &'static [u64] {
    if ty == Type::I32 {
        &VALUES_32
    } else {
        &VALUES_64
    }
}

/// NV_gpu_program5 BitfieldExtract for its defined cases:
/// `(value << (W - (bits + offset))) >> (W - bits)`, the right shift
/// arithmetic for signed types.
fn spec_extract(signed: bool, ty: Type, value: u64, offset: u32, bits: u32) -> u64 {
    let width = ty.bits();
    assert!(offset < width && bits + offset <= width);
    if bits == 0 {
        return 0;
    }
    let up = (value << (64 - width)) << (width - (bits + offset));
    let down = 64 - bits;
    if signed {
        ((up as i64) >> down) as u64 & ty.bit_mask()
    } else {
        up >> down
    }
}

/// NV_gpu_program5 BitfieldInsert for its defined cases.
fn spec_insert(ty: Type, bits: u32, offset: u32, src: u64, dst: u64) -> u64 {
    let width = ty.bits();
    assert!(offset < width && bits + offset <= width);
    if bits == width {
        return src;
    }
    let mask = ((1u64 << bits) - 1) << offset;
    ((src << offset) & mask) | (dst & !mask)
}

/// PTX `bfe`, transcribed bit by bit from its pseudo-code.
fn ptx_bfe(signed: bool, ty: Type, a: u64, c: u32, b: u32) -> u64 {
    let msb = ty.bits() - 1;
    let pos = c & 0xff;
    let len = b & 0xff;
    let bit = |i: u32| (a >> i) & 1;
    let sbit = if !signed || len == 0 {
        0
    } else {
        bit((pos + len - 1).min(msb))
    };
    let mut d = 0;
    for i in 0..=msb {
        let v = if i < len && pos + i <= msb {
            bit(pos + i)
        } else {
            sbit
        };
        d |= v << i;
    }
    d
}

/// PTX `bfi`, transcribed from its pseudo-code: f = b; f[pos+i] = a[i].
fn ptx_bfi(ty: Type, a: u64, b: u64, c: u32, d: u32) -> u64 {
    let msb = ty.bits() - 1;
    let pos = c & 0xff;
    let len = d & 0xff;
    let mut f = b;
    let mut i = 0;
    while i < len && pos + i <= msb {
        f = (f & !(1 << (pos + i))) | (((a >> i) & 1) << (pos + i));
        i += 1;
    }
    f
}

#[test]
fn bfe_defined_cases_match_spec_pseudo_code() {
    for ty in [Type::I32, Type::I64] {
        let width = ty.bits();
        for &value in values(ty) {
            for offset in 0..width {
                for bits in 0..=width - offset {
                    for signed in [false, true] {
                        assert_eq!(
                            bfe(signed, ty, value, offset, bits),
                            spec_extract(signed, ty, value, offset, bits),
                            "{ty} signed {signed} value {value:#x} offset {offset} bits {bits}"
                        );
                    }
                }
            }
        }
    }
}

#[test]
fn bfi_defined_cases_match_spec_pseudo_code() {
    for ty in [Type::I32, Type::I64] {
        let width = ty.bits();
        for &base in values(ty) {
            for &insert in values(ty).iter().rev() {
                for offset in 0..width {
                    for bits in 0..=width - offset {
                        assert_eq!(
                            bfi(ty, base, insert, offset, bits),
                            spec_insert(ty, bits, offset, insert, base),
                            "{ty} base {base:#x} insert {insert:#x} offset {offset} bits {bits}"
                        );
                    }
                }
            }
        }
    }
}

/// Offsets and counts covering the undefined cases: negative (as i32 bits),
/// past the width, sums past the width, and bits above the low 8.
fn operand_sweep() -> Vec<u32> {
    let mut v: Vec<u32> = (0..=260).collect();
    v.extend([
        0x100,
        0x101,
        0x11f,
        0x120,
        0x1ff,
        0x8000_0000,
        0x8000_0020,
        0xffff_ff00,
        (-1i32) as u32,
        (-8i32) as u32,
        (-32i32) as u32,
    ]);
    v
}

#[test]
fn bfe_all_cases_match_ptx_model_hardware_19() {
    let sweep = operand_sweep();
    for ty in [Type::I32, Type::I64] {
        for &value in values(ty) {
            for &offset in &sweep {
                for &bits in &sweep {
                    for signed in [false, true] {
                        assert_eq!(
                            bfe(signed, ty, value, offset, bits),
                            ptx_bfe(signed, ty, value, offset, bits),
                            "{ty} signed {signed} value {value:#x} offset {offset:#x} bits {bits:#x}"
                        );
                    }
                }
            }
        }
    }
}

#[test]
fn bfi_all_cases_match_ptx_model_hardware_19() {
    let sweep = operand_sweep();
    for ty in [Type::I32, Type::I64] {
        for &base in values(ty) {
            let insert = !base & ty.bit_mask() ^ 0x55;
            for &offset in &sweep {
                for &bits in &sweep {
                    assert_eq!(
                        bfi(ty, base, insert, offset, bits),
                        ptx_bfi(ty, insert, base, offset, bits),
                        "{ty} base {base:#x} offset {offset:#x} bits {bits:#x}"
                    );
                }
            }
        }
    }
}

#[test]
fn bitfield_undefined_case_values_hardware_19() {
    let i32_ = Type::I32;
    // Field running past bit 31: bits 8..31 extracted, no wrap-around.
    assert_eq!(bfe(false, i32_, 0xffff_ff00, 8, 40), 0x00ff_ffff);
    // Signed fill uses bit min(offset + bits - 1, 31).
    assert_eq!(bfe(true, i32_, 0x8000_0000, 31, 5), 0xffff_ffff);
    assert_eq!(bfe(true, i32_, 0x4000_0000, 30, 5), 0x0000_0001);
    // Offset -1 reads as 255: nothing extracted; signed fills with bit 31.
    assert_eq!(bfe(false, i32_, 0xffff_ffff, u32::MAX, 4), 0);
    assert_eq!(bfe(true, i32_, 0x8000_0000, u32::MAX, 4), 0xffff_ffff);
    assert_eq!(bfe(true, i32_, 0x7fff_ffff, u32::MAX, 4), 0);
    // Only the low 8 bits count: 0x120 bits is 32 bits.
    assert_eq!(bfe(false, i32_, 0x1234_5678, 0, 0x120), 0x1234_5678);
    // bits = 0: 0, even for signed.
    assert_eq!(bfe(true, i32_, 0xffff_ffff, 3, 0), 0);
    assert_eq!(bfe(true, i32_, 0xffff_ffff, 3, 0x100), 0);
    // bfi: bits = 0 or offset past the top leave the base unchanged.
    assert_eq!(bfi(i32_, 0x1234_5678, 0xffff_ffff, 4, 0), 0x1234_5678);
    assert_eq!(bfi(i32_, 0x1234_5678, 0xffff_ffff, 32, 4), 0x1234_5678);
    // Inserting past the top only writes the bits that fit.
    assert_eq!(bfi(i32_, 0, 0xffff_ffff, 28, 8), 0xf000_0000);
    assert_eq!(bfi(i32_, 0, 0xffff_ffff, 0, 40), 0xffff_ffff);
}

fn u(op: UnaryOp, ty: Type, a: u64) -> u64 {
    unary(op, ty, a)
}

/// GLSL findMSB(int), scanning from the top for the first bit that differs
/// from the sign bit.
fn scan_msb_signed(ty: Type, a: u64) -> u64 {
    let width = ty.bits();
    let sign = (a >> (width - 1)) & 1;
    for i in (0..width).rev() {
        if (a >> i) & 1 != sign {
            return i as u64;
        }
    }
    0xffff_ffff
}

#[test]
fn bit_reverse_count_and_find() {
    let i32_ = Type::I32;
    let i64_ = Type::I64;
    assert_eq!(u(UnaryOp::Bfr, i32_, 1), 0x8000_0000);
    assert_eq!(u(UnaryOp::Bfr, i32_, 0x1234_5678), 0x1e6a_2c48);
    assert_eq!(u(UnaryOp::Bfr, i64_, 1), 1 << 63);
    assert_eq!(u(UnaryOp::Btc, i32_, 0xffff_ffff), 32);
    assert_eq!(u(UnaryOp::Btc, i32_, 0), 0);
    assert_eq!(u(UnaryOp::Btc, i64_, u64::MAX), 64);
    assert_eq!(u(UnaryOp::Btfl, i32_, 0), 0xffff_ffff);
    assert_eq!(u(UnaryOp::Btfl, i32_, 8), 3);
    assert_eq!(u(UnaryOp::Btfl, i32_, 0x8000_0000), 31);
    assert_eq!(u(UnaryOp::Btfl, i64_, 1 << 40), 40);
    assert_eq!(u(UnaryOp::Btfl, i64_, 0), 0xffff_ffff);
    assert_eq!(u(UnaryOp::BtfmU, i32_, 0), 0xffff_ffff);
    assert_eq!(u(UnaryOp::BtfmU, i32_, 0x8000_0000), 31);
    assert_eq!(u(UnaryOp::BtfmU, i32_, 1), 0);
    assert_eq!(u(UnaryOp::BtfmU, i64_, 1 << 63), 63);
}

#[test]
fn btfm_signed_hardware_20() {
    let i32_ = Type::I32;
    assert_eq!(u(UnaryOp::BtfmS, i32_, 0xffff_ffff), 0xffff_ffff);
    assert_eq!(u(UnaryOp::BtfmS, i32_, 0x8000_0000), 30);
    assert_eq!(u(UnaryOp::BtfmS, i32_, 0), 0xffff_ffff);
    assert_eq!(u(UnaryOp::BtfmS, i32_, 1), 0);
    assert_eq!(u(UnaryOp::BtfmS, i32_, 0x7fff_ffff), 30);
    assert_eq!(u(UnaryOp::BtfmS, i32_, 0xffff_fffe), 0);
    assert_eq!(u(UnaryOp::BtfmS, Type::I64, u64::MAX), 0xffff_ffff);
    assert_eq!(u(UnaryOp::BtfmS, Type::I64, 1 << 63), 62);
    for ty in [Type::I32, Type::I64] {
        for shift in 0..ty.bits() {
            for a in [
                1u64 << shift,
                !(1u64 << shift),
                (1u64 << shift) - 1,
                0x9e37_79b9_7f4a_7c15 >> shift,
            ] {
                let a = a & ty.bit_mask();
                assert_eq!(
                    u(UnaryOp::BtfmS, ty, a),
                    scan_msb_signed(ty, a),
                    "{ty} {a:#x}"
                );
            }
        }
    }
}

#[test]
fn bit_ops_mask_their_input() {
    // Stray bits above an i32 never influence the result.
    let dirty = 0xabcd_0000_0000_0000u64;
    for op in [
        UnaryOp::Bfr,
        UnaryOp::Btc,
        UnaryOp::Btfl,
        UnaryOp::BtfmS,
        UnaryOp::BtfmU,
    ] {
        for a in VALUES_32 {
            assert_eq!(u(op, Type::I32, a | dirty), u(op, Type::I32, a));
        }
    }
}
