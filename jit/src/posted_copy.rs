//! Private copies of small posted buffers (`lower/posted.rs`).
//!
//! A histogram's bins take updates on many addresses at once, which take
//! turns in a buffer's one posted slot, so every lane's update would be an
//! atomic instruction on a cache line the other SMs update too. For a
//! buffer of at most [`COPY_LIMIT`] bytes each SM thread instead keeps a
//! copy filled with the op's identity: the compiled code updates it with
//! plain loads and stores, and when the run of workgroups ends every
//! element that changed goes to memory as one atomic update. Since the ops
//! that are posted commute and nothing reads the buffer in the launch, the
//! memory ends as any order of the single updates leaves it.

use crate::abi::{MemSpan, PostedUpdate};
use warpjit_ir::interp::GlobalMemory;
use warpjit_ir::{AtomOp, NumFormat};
use warpjit_runtime::SmMemory;

/// The largest buffer that gets a copy. Filling and merging the copy cost
/// a pass over it per run of workgroups.
pub const COPY_LIMIT: u64 = 16 << 10;

/// The identity of an associative `op` (`add and or xor min max`; others
/// get 0) on `format`'s bits, zero-extended: what the copies start as and
/// what a warp's reduction gives its inactive lanes.
pub fn identity(op: AtomOp, format: NumFormat) -> u64 {
    let bits = format.bits();
    let signed_min = 1u64 << (bits - 1);
    match op {
        AtomOp::And => ones(bits),
        AtomOp::Min if format.is_signed() => signed_min - 1,
        AtomOp::Min => ones(bits),
        AtomOp::Max if format.is_signed() => signed_min,
        _ => 0,
    }
}

/// The low `bits` bits set (1 to 64).
fn ones(bits: u32) -> u64 {
    u64::MAX >> (64 - bits)
}

/// `identity` in every element of a 64-bit word.
fn identity_word(op: AtomOp, format: NumFormat) -> u64 {
    let bits = format.bits();
    let one = identity(op, format);
    (0..64 / bits).fold(0, |word, i| word | one << (i * bits))
}

/// Fills a copy for each posted buffer of at most [`COPY_LIMIT`] bytes and
/// points its slot at it; other slots get no copy.
pub fn prepare(
    kinds: &[Option<(AtomOp, NumFormat)>],
    spans: &[MemSpan],
    slots: &mut [PostedUpdate],
    copies: &mut Vec<Vec<u64>>,
) {
    copies.resize_with(slots.len(), Vec::new);
    for ((slot, copy), (kind, span)) in slots
        .iter_mut()
        .zip(copies.iter_mut())
        .zip(kinds.iter().zip(spans))
    {
        slot.copy = std::ptr::null_mut();
        let Some((op, format)) = *kind else { continue };
        if span.len == 0 || span.len > COPY_LIMIT {
            continue;
        }
        copy.clear();
        copy.resize(span.len.div_ceil(8) as usize, identity_word(op, format));
        slot.copy = copy.as_mut_ptr().cast();
    }
}

/// Applies every element of the copies that differs from the identity to
/// its buffer with one atomic update, and detaches the copies.
pub fn merge(
    kinds: &[Option<(AtomOp, NumFormat)>],
    spans: &[MemSpan],
    slots: &mut [PostedUpdate],
    copies: &[Vec<u64>],
    memory: &mut SmMemory<'_>,
) {
    for (index, (slot, copy)) in slots.iter_mut().zip(copies).enumerate() {
        if slot.copy.is_null() {
            continue;
        }
        slot.copy = std::ptr::null_mut();
        let (Some(Some((op, format))), Some(span)) = (kinds.get(index), spans.get(index)) else {
            continue;
        };
        let (op, format) = (*op, *format);
        let bytes = u64::from(format.bytes());
        let mask = ones(format.bits());
        let ident = identity(op, format);
        let whole = identity_word(op, format);
        for (w, &word) in copy.iter().enumerate() {
            if word == whole {
                continue;
            }
            // Atomics are aligned to their size, so no element spans two
            // words; elements past the buffer's end are never updated.
            for at in (0..8).step_by(bytes as usize) {
                let value = (word >> (at * 8)) & mask;
                let offset = w as u64 * 8 + at;
                if value != ident && offset + bytes <= span.len {
                    memory.atomic(index as u32, offset, op, format, value, 0);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identities_leave_every_value_unchanged() {
        use NumFormat::*;
        for format in [S32, U32, S64, U64] {
            let bits = format.bits();
            let mask = if bits == 64 {
                u64::MAX
            } else {
                (1 << bits) - 1
            };
            let sign = |x: u64| ((x << (64 - bits)) as i64) >> (64 - bits);
            for x in [
                0u64,
                1,
                5,
                mask,
                mask >> 1,
                (mask >> 1) + 1,
                0x1234_5678 & mask,
            ] {
                for op in AtomOp::COMBINABLE {
                    let e = identity(op, format);
                    let got = match op {
                        AtomOp::Add => x.wrapping_add(e) & mask,
                        AtomOp::And => x & e,
                        AtomOp::Or => x | e,
                        AtomOp::Xor => x ^ e,
                        AtomOp::Min if format.is_signed() => {
                            if sign(e) < sign(x) {
                                e
                            } else {
                                x
                            }
                        }
                        AtomOp::Min => x.min(e),
                        AtomOp::Max if format.is_signed() => {
                            if sign(e) > sign(x) {
                                e
                            } else {
                                x
                            }
                        }
                        _ => x.max(e),
                    };
                    assert_eq!(got, x, "{op:?} {format:?} on {x:#x}");
                }
            }
        }
    }

    #[test]
    fn identity_words_repeat_the_element() {
        assert_eq!(
            identity_word(AtomOp::Max, NumFormat::S32),
            0x8000_0000_8000_0000
        );
        assert_eq!(identity_word(AtomOp::Min, NumFormat::U32), u64::MAX);
        assert_eq!(identity_word(AtomOp::Min, NumFormat::S64), i64::MAX as u64);
        assert_eq!(identity_word(AtomOp::Add, NumFormat::U32), 0);
    }
}
