//! Memory: the global-memory interface, the alignment and bounds rule shared
//! by buffers, shared and private memory, and out-of-bounds fault records.

use crate::ops::{AtomOp, NumFormat};
use crate::semantics;
use std::fmt;

/// Global memory as the interpreter sees it: buffer `i` is the module's
/// `buffers[i]`. The interpreter applies the alignment and bounds rule before
/// calling, so implementations only see aligned, in-bounds accesses.
pub trait GlobalMemory {
    /// Number of buffers bound (must equal the module's buffer count).
    fn buffer_count(&self) -> usize;
    /// Size of a buffer in bytes.
    fn buffer_len(&self, buffer: u32) -> u64;
    fn read(&mut self, buffer: u32, offset: u64, out: &mut [u8]);
    fn write(&mut self, buffer: u32, offset: u64, data: &[u8]);
    /// Performs one atomic update and returns the raw bits memory held before it.
    fn atomic(
        &mut self,
        buffer: u32,
        offset: u64,
        op: AtomOp,
        elem: NumFormat,
        v: u64,
        v2: u64,
    ) -> u64;
    /// `membar`: orders this warp's earlier memory accesses before its later
    /// ones as other threads see them. Memory that only one thread touches
    /// needs nothing.
    fn fence(&mut self) {}
}

impl GlobalMemory for [Vec<u8>] {
    fn buffer_count(&self) -> usize {
        self.len()
    }
    fn buffer_len(&self, buffer: u32) -> u64 {
        self.get(buffer as usize).map_or(0, |b| b.len() as u64)
    }
    fn read(&mut self, buffer: u32, offset: u64, out: &mut [u8]) {
        let bytes = &self[buffer as usize];
        let start = offset as usize;
        out.copy_from_slice(&bytes[start..start + out.len()]);
    }
    fn write(&mut self, buffer: u32, offset: u64, data: &[u8]) {
        let bytes = &mut self[buffer as usize];
        let start = offset as usize;
        bytes[start..start + data.len()].copy_from_slice(data);
    }
    fn atomic(
        &mut self,
        buffer: u32,
        offset: u64,
        op: AtomOp,
        elem: NumFormat,
        v: u64,
        v2: u64,
    ) -> u64 {
        let start = offset as usize;
        let end = start + elem.bytes() as usize;
        atomic_on_bytes(&mut self[buffer as usize][start..end], op, elem, v, v2)
    }
}

impl GlobalMemory for Vec<Vec<u8>> {
    fn buffer_count(&self) -> usize {
        self.as_slice().buffer_count()
    }
    fn buffer_len(&self, buffer: u32) -> u64 {
        self.as_slice().buffer_len(buffer)
    }
    fn read(&mut self, buffer: u32, offset: u64, out: &mut [u8]) {
        self.as_mut_slice().read(buffer, offset, out)
    }
    fn write(&mut self, buffer: u32, offset: u64, data: &[u8]) {
        self.as_mut_slice().write(buffer, offset, data)
    }
    fn atomic(
        &mut self,
        buffer: u32,
        offset: u64,
        op: AtomOp,
        elem: NumFormat,
        v: u64,
        v2: u64,
    ) -> u64 {
        self.as_mut_slice().atomic(buffer, offset, op, elem, v, v2)
    }
}

/// Applies one atomic operation to the element held in `bytes`
/// (little-endian, exactly the element's size) and returns the old raw bits.
pub fn atomic_on_bytes(bytes: &mut [u8], op: AtomOp, elem: NumFormat, v: u64, v2: u64) -> u64 {
    let old = read_le(bytes);
    if let Some(new) = semantics::atomic_update(op, elem, old, v, v2) {
        write_le(bytes, new);
    }
    old
}

/// Reads a little-endian value of `bytes.len()` (at most 8) bytes.
pub(crate) fn read_le(bytes: &[u8]) -> u64 {
    bytes
        .iter()
        .rev()
        .fold(0u64, |acc, b| (acc << 8) | u64::from(*b))
}

/// Writes the low `bytes.len()` (at most 8) bytes of `value`, little-endian.
pub(crate) fn write_le(bytes: &mut [u8], value: u64) {
    for (i, b) in bytes.iter_mut().enumerate() {
        *b = (value >> (8 * i)) as u8;
    }
}

/// The alignment and bounds rule: the address is rounded down to a multiple
/// of the access size (a power of two); the access is in bounds when all of
/// its bytes lie inside `len` bytes. Returns the aligned address if so.
pub(crate) fn checked_access(addr: u64, size: u32, len: u64) -> Option<u64> {
    let start = addr & !(u64::from(size) - 1);
    let end = start.checked_add(u64::from(size))?;
    (end <= len).then_some(start)
}

/// What kind of access went out of bounds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AccessKind {
    Load,
    Store,
    Atomic,
}

impl AccessKind {
    pub fn name(self) -> &'static str {
        match self {
            AccessKind::Load => "load",
            AccessKind::Store => "store",
            AccessKind::Atomic => "atomic",
        }
    }
}

/// One out-of-bounds access.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fault {
    pub access: AccessKind,
    /// The memory's name as declared (`@out`).
    pub memory: String,
    /// The byte address the instruction computed (before alignment rounding).
    pub address: u64,
    pub lane: u32,
    /// Warp index in the workgroup.
    pub warp: u32,
    pub workgroup: [u32; 3],
    pub kernel: String,
}

impl fmt::Display for Fault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let [x, y, z] = self.workgroup;
        write!(
            f,
            "out-of-bounds {} of @{} at byte {} (kernel @{}, workgroup ({x}, {y}, {z}), warp {}, lane {})",
            self.access.name(),
            self.memory,
            self.address,
            self.kernel,
            self.warp,
            self.lane
        )
    }
}

/// Out-of-bounds accesses of a launch: counts per kind and the first one.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FaultReport {
    pub loads: u64,
    pub stores: u64,
    pub atomics: u64,
    pub first: Option<Fault>,
}

impl FaultReport {
    pub fn total(&self) -> u64 {
        self.loads + self.stores + self.atomics
    }

    pub fn is_empty(&self) -> bool {
        self.total() == 0
    }

    pub(crate) fn record(&mut self, fault: impl FnOnce() -> Fault, access: AccessKind) {
        let counter = match access {
            AccessKind::Load => &mut self.loads,
            AccessKind::Store => &mut self.stores,
            AccessKind::Atomic => &mut self.atomics,
        };
        *counter = counter.saturating_add(1);
        if self.first.is_none() {
            self.first = Some(fault());
        }
    }

    /// Adds `later`'s counts; its first fault is kept only if this report has none.
    pub fn merge(&mut self, later: &FaultReport) {
        self.loads = self.loads.saturating_add(later.loads);
        self.stores = self.stores.saturating_add(later.stores);
        self.atomics = self.atomics.saturating_add(later.atomics);
        if self.first.is_none() {
            self.first = later.first.clone();
        }
    }
}

impl fmt::Display for FaultReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} out-of-bounds accesses ({} loads, {} stores, {} atomics)",
            self.total(),
            self.loads,
            self.stores,
            self.atomics
        )?;
        if let Some(first) = &self.first {
            write!(f, "; first: {first}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn alignment_rounds_down_and_bounds_cover_every_byte() {
        assert_eq!(checked_access(7, 4, 16), Some(4));
        assert_eq!(checked_access(15, 4, 16), Some(12));
        assert_eq!(checked_access(16, 4, 16), None);
        assert_eq!(checked_access(14, 8, 12), None);
        assert_eq!(checked_access(u64::MAX, 1, u64::MAX), None);
        assert_eq!(checked_access(u64::MAX, 16, u64::MAX), None);
        assert_eq!(checked_access(0, 1, 0), None);
    }

    #[test]
    fn little_endian_round_trip() {
        let mut b = [0u8; 4];
        write_le(&mut b, 0x1122_3344_5566);
        assert_eq!(b, [0x66, 0x55, 0x44, 0x33]);
        assert_eq!(read_le(&b), 0x3344_5566);
    }
}
