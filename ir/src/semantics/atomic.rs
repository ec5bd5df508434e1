//! The value an atomic writes (NV_gpu_program5 ATOM pseudo-code, HARDWARE.md
//! 28-29). Ordering across lanes (ascending lane order, helpers skipped) is
//! the interpreter's business; this is one lane's read-modify-write.

use super::convert::sign_extend;
use crate::ops::{AtomOp, NumFormat};

/// The new memory value after `op` with operand `v` (and, for CSWAP, the new
/// value `v2`, `v` being the compare value) on a location holding `old`.
/// `None` when CSWAP's compare fails and nothing is stored. The atomic's
/// result is always `old`.
///
/// MIN/MAX compare signed for S32 (and S64), unsigned otherwise. IWRAP:
/// `old >= v ? 0 : old + 1`; DWRAP: `(old == 0 || old > v) ? v : old - 1`,
/// both unsigned, exactly as the pseudo-code (also for `old` above `v`).
pub fn atomic_update(op: AtomOp, elem: NumFormat, old: u64, v: u64, v2: u64) -> Option<u64> {
    let bits = elem.bits();
    let mask = if bits >= 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    };
    let (old, v, v2) = (old & mask, v & mask, v2 & mask);
    let signed_less = |x: u64, y: u64| {
        if elem.is_signed() {
            sign_extend(x, bits) < sign_extend(y, bits)
        } else {
            x < y
        }
    };
    let new = match op {
        AtomOp::Add => old.wrapping_add(v),
        AtomOp::Min => {
            if signed_less(v, old) {
                v
            } else {
                old
            }
        }
        AtomOp::Max => {
            if signed_less(old, v) {
                v
            } else {
                old
            }
        }
        AtomOp::Iwrap => {
            if old >= v {
                0
            } else {
                old + 1
            }
        }
        AtomOp::Dwrap => {
            if old == 0 || old > v {
                v
            } else {
                old - 1
            }
        }
        AtomOp::And => old & v,
        AtomOp::Or => old | v,
        AtomOp::Xor => old ^ v,
        AtomOp::Exch => v,
        AtomOp::Cswap => {
            if old == v {
                v2
            } else {
                return None;
            }
        }
    };
    Some(new & mask)
}
