//! Global memory: buffers shared by every SM thread of a launch.
//!
//! A buffer's bytes live in 64-bit words that are only ever accessed with
//! atomic operations, all of one size, so kernels that race (two SMs storing
//! to the same bytes) get some interleaving of whole accesses and never
//! undefined behaviour of the host program. Bytes are little-endian within a
//! word whatever the host, so memory means the same bytes everywhere.
//!
//! | access | how |
//! | --- | --- |
//! | load | relaxed loads of the words it covers |
//! | store of a whole word | relaxed store |
//! | store of part of a word | compare-and-swap loop that replaces only its bytes, so stores to neighbouring bytes are never lost |
//! | atomic (`atom.*`, 32 or 64 bits, naturally aligned) | compare-and-swap loop on the word around it (acquire-release) applying `semantics::atomic_update` |
//! | `membar` | a sequentially consistent fence |

use crate::error::AllocError;
use std::sync::atomic::{fence, AtomicU64, Ordering};
use std::sync::Arc;
use warpjit_ir::interp::GlobalMemory;
use warpjit_ir::{semantics, AtomOp, NumFormat};

/// Bytes per storage word.
const WORD_BYTES: u64 = 8;

/// The bytes of one buffer, shared by the host's [`Buffer`] and the SM
/// threads of a running launch. They start on a cache line, so compiled
/// code's vector accesses of whole lines do not straddle two.
pub(crate) struct Storage {
    lines: Vec<Line>,
    /// Words in use (the last line may have more).
    count: usize,
    len: u64,
}

/// Words and bytes per cache line.
const LINE_WORDS: usize = 8;
const LINE_BYTES: usize = LINE_WORDS * WORD_BYTES as usize;

/// One cache line of storage words.
#[repr(C, align(64))]
struct Line([AtomicU64; LINE_WORDS]);

impl Storage {
    /// `len` zero bytes.
    fn zeroed(len: u64) -> Result<Storage, AllocError> {
        Storage::starting_with(len, &[])
    }

    /// `len` bytes: `prefix` (at most `len` bytes), then zeros. Every byte
    /// is written once, and every page here, so that a launch timed after
    /// this does not take the page faults.
    fn starting_with(len: u64, prefix: &[u8]) -> Result<Storage, AllocError> {
        let too_large = AllocError { bytes: len };
        let bytes = usize::try_from(len).map_err(|_| too_large)?;
        let count = bytes.div_ceil(WORD_BYTES as usize);
        let line_count = count.div_ceil(LINE_WORDS);
        let mut lines: Vec<Line> = Vec::new();
        lines.try_reserve_exact(line_count).map_err(|_| too_large)?;
        let size = line_count * LINE_BYTES;
        crate::pages::prefer_huge_pages(lines.as_ptr().cast(), size);
        let copied = prefix.len().min(bytes);
        // SAFETY: the capacity holds `size` bytes, of which the first
        // `copied` come from `prefix` and the rest are zeros, and any bytes
        // are a valid `Line` (words of plain integers).
        unsafe {
            let base = lines.as_mut_ptr().cast::<u8>();
            std::ptr::copy_nonoverlapping(prefix.as_ptr(), base, copied);
            std::ptr::write_bytes(base.add(copied), 0, size - copied);
            lines.set_len(line_count);
        }
        Ok(Storage { lines, count, len })
    }

    /// `len` bytes taken from `bytes` (zeros once it runs out).
    fn from_bytes(len: u64, bytes: impl Iterator<Item = u8>) -> Result<Storage, AllocError> {
        let mut storage = Storage::zeroed(len)?;
        for (slot, byte) in storage.bytes_mut().iter_mut().zip(bytes) {
            *slot = byte;
        }
        Ok(storage)
    }

    /// A copy of `bytes`.
    fn copy_of(bytes: &[u8]) -> Result<Storage, AllocError> {
        Storage::starting_with(bytes.len() as u64, bytes)
    }

    /// The `len` bytes, to fill a storage that no other thread sees yet.
    fn bytes_mut(&mut self) -> &mut [u8] {
        // SAFETY: `&mut self` excludes every other access; `zeroed` made
        // at least `len` bytes (a `usize`) of words, and an `AtomicU64`
        // has the size and alignment of a `u64`.
        unsafe {
            std::slice::from_raw_parts_mut(self.lines.as_mut_ptr().cast::<u8>(), self.len as usize)
        }
    }

    /// The buffer's words.
    fn words(&self) -> &[AtomicU64] {
        // SAFETY: a `Line` is `LINE_WORDS` words without padding
        // (`repr(C)`, its size equals its alignment), so the lines are
        // `LINE_WORDS * lines.len() >= count` consecutive words.
        unsafe { std::slice::from_raw_parts(self.lines.as_ptr().cast::<AtomicU64>(), self.count) }
    }

    pub(crate) fn len(&self) -> u64 {
        self.len
    }

    fn in_bounds(&self, offset: u64, size: usize) -> bool {
        offset
            .checked_add(size as u64)
            .is_some_and(|end| end <= self.len)
    }

    /// The words and byte ranges of `size` bytes from `offset`:
    /// (word index, first byte in the word, bytes, position in the access).
    fn pieces(offset: u64, size: usize) -> impl Iterator<Item = (usize, usize, usize, usize)> {
        let mut done = 0usize;
        std::iter::from_fn(move || {
            if done == size {
                return None;
            }
            let at = offset + done as u64;
            let first = (at % WORD_BYTES) as usize;
            let n = (WORD_BYTES as usize - first).min(size - done);
            let piece = ((at / WORD_BYTES) as usize, first, n, done);
            done += n;
            Some(piece)
        })
    }

    /// Reads `out.len()` bytes from `offset`; out of bounds reads zeros.
    pub(crate) fn read(&self, offset: u64, out: &mut [u8]) {
        if !self.in_bounds(offset, out.len()) {
            out.fill(0);
            return;
        }
        for (index, first, n, at) in Storage::pieces(offset, out.len()) {
            let word = self.words()[index].load(Ordering::Relaxed).to_le_bytes();
            out[at..at + n].copy_from_slice(&word[first..first + n]);
        }
    }

    /// Writes `data` at `offset`; out of bounds writes nothing.
    pub(crate) fn write(&self, offset: u64, data: &[u8]) {
        if !self.in_bounds(offset, data.len()) {
            return;
        }
        for (index, first, n, at) in Storage::pieces(offset, data.len()) {
            let word = &self.words()[index];
            let part = &data[at..at + n];
            if n == WORD_BYTES as usize {
                let mut whole = [0u8; WORD_BYTES as usize];
                whole.copy_from_slice(part);
                word.store(u64::from_le_bytes(whole), Ordering::Relaxed);
            } else {
                let mut current = word.load(Ordering::Relaxed);
                loop {
                    let mut bytes = current.to_le_bytes();
                    bytes[first..first + n].copy_from_slice(part);
                    let next = u64::from_le_bytes(bytes);
                    match word.compare_exchange_weak(
                        current,
                        next,
                        Ordering::Relaxed,
                        Ordering::Relaxed,
                    ) {
                        Ok(_) => break,
                        Err(actual) => current = actual,
                    }
                }
            }
        }
    }

    /// One atomic update of the `elem` at `offset` (rounded down to the
    /// element's alignment); returns the bits memory held before it. Out of
    /// bounds: nothing happens and the result is 0.
    pub(crate) fn atomic(&self, offset: u64, op: AtomOp, elem: NumFormat, v: u64, v2: u64) -> u64 {
        let size = u64::from(elem.bytes());
        let offset = offset & !(size - 1);
        if !self.in_bounds(offset, size as usize) {
            return 0;
        }
        let word = &self.words()[(offset / WORD_BYTES) as usize];
        let shift = (offset % WORD_BYTES) * 8;
        let mask = if size >= WORD_BYTES {
            u64::MAX
        } else {
            (1u64 << (size * 8)) - 1
        };
        let mut current = word.load(Ordering::Relaxed);
        loop {
            let old = (current >> shift) & mask;
            // CSWAP with a different value stores nothing.
            let Some(new) = semantics::atomic_update(op, elem, old, v, v2) else {
                return old;
            };
            let next = (current & !(mask << shift)) | ((new & mask) << shift);
            match word.compare_exchange_weak(current, next, Ordering::AcqRel, Ordering::Relaxed) {
                Ok(_) => return old,
                Err(actual) => current = actual,
            }
        }
    }

    /// A copy of the bytes.
    fn bytes(&self) -> Vec<u8> {
        let size = self.count * WORD_BYTES as usize;
        let mut out = Vec::with_capacity(size);
        crate::pages::prefer_huge_pages(out.as_ptr(), size);
        for word in self.words() {
            out.extend_from_slice(&word.load(Ordering::Relaxed).to_le_bytes());
        }
        out.truncate(self.len as usize);
        out
    }
}

/// A value type that buffers hold and parameters take: its little-endian
/// bits, zero-extended to 64.
pub trait Element: Copy + sealed::Sealed {
    /// The memory format of this type.
    const FORMAT: NumFormat;
    /// Bytes per element.
    const BYTES: usize;
    /// The bit pattern, zero-extended (an `i32` of -1 is `0xffffffff`).
    fn to_bits(self) -> u64;
    /// The value of the low `BYTES` bytes of `bits`.
    fn from_bits(bits: u64) -> Self;
}

mod sealed {
    pub trait Sealed {}
}

macro_rules! integer_element {
    ($($t:ty, $unsigned:ty, $format:ident);* $(;)?) => {$(
        impl sealed::Sealed for $t {}
        impl Element for $t {
            const FORMAT: NumFormat = NumFormat::$format;
            const BYTES: usize = std::mem::size_of::<$t>();
            fn to_bits(self) -> u64 {
                u64::from(self as $unsigned)
            }
            fn from_bits(bits: u64) -> $t {
                bits as $unsigned as $t
            }
        }
    )*};
}

integer_element! {
    u8, u8, U8;
    i8, u8, S8;
    u16, u16, U16;
    i16, u16, S16;
    u32, u32, U32;
    i32, u32, S32;
    u64, u64, U64;
    i64, u64, S64;
}

impl sealed::Sealed for f32 {}
impl Element for f32 {
    const FORMAT: NumFormat = NumFormat::F32;
    const BYTES: usize = 4;
    fn to_bits(self) -> u64 {
        u64::from(f32::to_bits(self))
    }
    fn from_bits(bits: u64) -> f32 {
        f32::from_bits(bits as u32)
    }
}

impl sealed::Sealed for f64 {}
impl Element for f64 {
    const FORMAT: NumFormat = NumFormat::F64;
    const BYTES: usize = 8;
    fn to_bits(self) -> u64 {
        f64::to_bits(self)
    }
    fn from_bits(bits: u64) -> f64 {
        f64::from_bits(bits)
    }
}

/// A kernel parameter's bit pattern: `param(2.5f32)`, `param(-1i32)`
/// (= `0xffffffff`). A `bool` parameter is `u64::from(b)`.
pub fn param<T: Element>(value: T) -> u64 {
    value.to_bits()
}

/// A buffer of global memory, bound to a kernel's `buffer` declaration at
/// launch. Its bytes are zero-initialised or copied in when it is made and
/// read back after launches; every allocation is fallible.
pub struct Buffer {
    storage: Arc<Storage>,
}

impl Buffer {
    /// `len` zero bytes.
    pub fn zeroed(len: u64) -> Result<Buffer, AllocError> {
        Ok(Buffer {
            storage: Arc::new(Storage::zeroed(len)?),
        })
    }

    /// `count` zero elements of `format`.
    pub fn zeros(format: NumFormat, count: u64) -> Result<Buffer, AllocError> {
        let len = count
            .checked_mul(u64::from(format.bytes()))
            .ok_or(AllocError { bytes: u64::MAX })?;
        Buffer::zeroed(len)
    }

    /// A copy of `bytes`.
    pub fn from_bytes(bytes: &[u8]) -> Result<Buffer, AllocError> {
        Ok(Buffer {
            storage: Arc::new(Storage::copy_of(bytes)?),
        })
    }

    /// The elements of `values`, little-endian:
    /// `Buffer::from_slice(&[1u32, 2, 3])`.
    pub fn from_slice<T: Element>(values: &[T]) -> Result<Buffer, AllocError> {
        let len = (values.len() as u64).saturating_mul(T::BYTES as u64);
        let bytes = values
            .iter()
            .flat_map(|v| v.to_bits().to_le_bytes().into_iter().take(T::BYTES));
        Ok(Buffer {
            storage: Arc::new(Storage::from_bytes(len, bytes)?),
        })
    }

    /// Overwrites the buffer with `bytes`, in place, when it has their
    /// length and no launch holds it; else leaves it as it is and returns
    /// false. For repeated launches on the same inputs: a fresh copy's
    /// page faults took longer than a large kernel. A launch that has
    /// returned holds none of its buffers (the SM threads let go of them
    /// before they report), unless its watchdog gave up an SM that never
    /// reported.
    pub fn refill(&mut self, bytes: &[u8]) -> bool {
        if self.storage.len != bytes.len() as u64 {
            return false;
        }
        match Arc::get_mut(&mut self.storage) {
            Some(storage) => {
                storage.bytes_mut().copy_from_slice(bytes);
                true
            }
            None => false,
        }
    }

    /// Size in bytes.
    pub fn len(&self) -> u64 {
        self.storage.len
    }

    pub fn is_empty(&self) -> bool {
        self.storage.len == 0
    }

    /// The whole elements the buffer holds as `T` (a trailing partial
    /// element is left out): `buffer.to_vec::<f32>()`.
    pub fn to_vec<T: Element>(&self) -> Vec<T> {
        self.storage
            .bytes()
            .chunks_exact(T::BYTES)
            .map(|bytes| {
                let mut element = [0u8; 8];
                element[..T::BYTES].copy_from_slice(bytes);
                T::from_bits(u64::from_le_bytes(element))
            })
            .collect()
    }

    /// A copy of the bytes.
    pub fn to_bytes(&self) -> Vec<u8> {
        self.storage.bytes()
    }

    /// Copies the first `out.len()` bytes into `out` (zeros past the end).
    pub fn copy_to(&self, out: &mut [u8]) {
        let n = out
            .len()
            .min(usize::try_from(self.storage.len).unwrap_or(usize::MAX));
        self.storage.read(0, &mut out[..n]);
        out[n..].fill(0);
    }

    pub(crate) fn storage(&self) -> &Arc<Storage> {
        &self.storage
    }
}

impl std::fmt::Debug for Buffer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Buffer({} bytes)", self.storage.len)
    }
}

/// One SM thread's access to a launch's buffers (buffer `i` is the
/// module's `buffers[i]`). It implements the interpreter's
/// [`GlobalMemory`]; a compiled backend reads and writes the same atomic
/// words through [`SmMemory::words`].
pub struct SmMemory<'a> {
    buffers: &'a [Arc<Storage>],
}

impl<'a> SmMemory<'a> {
    pub(crate) fn new(buffers: &'a [Arc<Storage>]) -> SmMemory<'a> {
        SmMemory { buffers }
    }

    /// The words of buffer `buffer` and its length in bytes; the last word
    /// may extend past the length. Byte `i` of the buffer is byte `i % 8`
    /// (little-endian) of word `i / 8`, so on a little-endian host the
    /// words' memory (`AtomicU64::as_ptr`) holds the buffer's bytes in order,
    /// which compiled code may address directly with atomic accesses.
    pub fn words(&self, buffer: u32) -> Option<(&'a [AtomicU64], u64)> {
        self.buffers
            .get(buffer as usize)
            .map(|s| (s.words(), s.len))
    }
}

impl GlobalMemory for SmMemory<'_> {
    fn buffer_count(&self) -> usize {
        self.buffers.len()
    }

    fn buffer_len(&self, buffer: u32) -> u64 {
        self.buffers.get(buffer as usize).map_or(0, |s| s.len())
    }

    fn read(&mut self, buffer: u32, offset: u64, out: &mut [u8]) {
        match self.buffers.get(buffer as usize) {
            Some(storage) => storage.read(offset, out),
            None => out.fill(0),
        }
    }

    fn write(&mut self, buffer: u32, offset: u64, data: &[u8]) {
        if let Some(storage) = self.buffers.get(buffer as usize) {
            storage.write(offset, data);
        }
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
        self.buffers
            .get(buffer as usize)
            .map_or(0, |storage| storage.atomic(offset, op, elem, v, v2))
    }

    fn fence(&mut self) {
        fence(Ordering::SeqCst);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refill_overwrites_in_place_only_an_unshared_buffer_of_the_same_length() {
        let mut buffer = Buffer::from_bytes(&[1, 2, 3, 4, 5]).expect("small");
        let words = Arc::as_ptr(&buffer.storage);
        assert!(buffer.refill(&[9, 8, 7, 6, 5]));
        assert_eq!(buffer.to_bytes(), [9, 8, 7, 6, 5]);
        assert_eq!(Arc::as_ptr(&buffer.storage), words, "the same storage");
        // Another length: left as it is.
        assert!(!buffer.refill(&[1, 2, 3]));
        assert_eq!(buffer.to_bytes(), [9, 8, 7, 6, 5]);
        // Held elsewhere, as by a running launch: left as it is.
        let held = Arc::clone(&buffer.storage);
        assert!(!buffer.refill(&[0, 0, 0, 0, 0]));
        assert_eq!(buffer.to_bytes(), [9, 8, 7, 6, 5]);
        drop(held);
        assert!(buffer.refill(&[0, 0, 0, 0, 1]));
        assert_eq!(buffer.to_bytes(), [0, 0, 0, 0, 1]);
    }

    #[test]
    fn bytes_round_trip_across_word_boundaries() {
        let data: Vec<u8> = (0..21).collect();
        let storage = Storage::from_bytes(21, data.iter().copied()).expect("small");
        let mut out = [0u8; 21];
        storage.read(0, &mut out);
        assert_eq!(out.to_vec(), data);
        storage.write(5, &[0xaa, 0xbb, 0xcc, 0xdd, 0xee]);
        let mut part = [0u8; 7];
        storage.read(4, &mut part);
        assert_eq!(part, [4, 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 10]);
        // Out of bounds: reads zeros, writes nothing.
        let mut past = [9u8; 4];
        storage.read(19, &mut past);
        assert_eq!(past, [0; 4]);
        storage.write(20, &[1, 2]);
        let mut last = [0u8; 1];
        storage.read(20, &mut last);
        assert_eq!(last, [20]);
    }

    #[test]
    fn copies_in_and_out_keep_every_byte() {
        for len in [0usize, 1, 7, 8, 9, 63, 64, 65, 200] {
            let data: Vec<u8> = (0..len).map(|i| (i * 7 + 3) as u8).collect();
            let buffer = Buffer::from_bytes(&data).expect("small");
            assert_eq!(buffer.len(), len as u64);
            assert_eq!(buffer.to_bytes(), data, "{len} bytes");
            let by_element = Buffer::from_slice(&data).expect("small");
            assert_eq!(by_element.to_bytes(), data, "{len} bytes");
        }
    }

    #[test]
    fn large_copies_keep_every_byte_and_zero_the_tail() {
        let len = (5 << 20) + 13;
        let data: Vec<u8> = (0..len).map(|i| (i * 31 + i / 4099) as u8).collect();
        let buffer = Buffer::from_bytes(&data).expect("5 MiB");
        assert_eq!(buffer.to_bytes(), data);
        let storage = Storage::from_bytes(len as u64 + 20, data.iter().copied()).expect("5 MiB");
        let mut tail = [9u8; 21];
        storage.read(len as u64 - 1, &mut tail);
        assert_eq!(tail[0], data[len - 1]);
        assert_eq!(tail[1..], [0; 20]);
    }

    /// The huge page advice reached the kernel: the mapping around a large
    /// buffer's first whole 2 MiB is flagged `hg` in `/proc/self/smaps`.
    #[cfg(target_os = "linux")]
    #[test]
    fn large_buffers_ask_for_huge_pages() {
        use crate::pages::HUGE_PAGE;
        if !std::path::Path::new("/sys/kernel/mm/transparent_hugepage").exists() {
            eprintln!("no transparent huge pages in this kernel: nothing to check");
            return;
        }
        let storage = Storage::zeroed(8 << 20).expect("8 MiB");
        let probe = (storage.words().as_ptr() as usize).next_multiple_of(HUGE_PAGE);
        let smaps = std::fs::read_to_string("/proc/self/smaps").expect("smaps");
        let mut inside = false;
        let mut flags = None;
        for line in smaps.lines() {
            if let Some((range, _)) = line.split_once(' ') {
                if let Some((from, to)) = range.split_once('-') {
                    if let (Ok(from), Ok(to)) = (
                        usize::from_str_radix(from, 16),
                        usize::from_str_radix(to, 16),
                    ) {
                        inside = (from..to).contains(&probe);
                        continue;
                    }
                }
            }
            if inside {
                if let Some(f) = line.strip_prefix("VmFlags:") {
                    flags = Some(f.split_whitespace().map(String::from).collect::<Vec<_>>());
                }
            }
        }
        let flags = flags.expect("the buffer's mapping in /proc/self/smaps");
        assert!(flags.iter().any(|f| f == "hg"), "VmFlags {flags:?}");
    }

    #[test]
    fn words_start_on_a_cache_line_and_cover_the_bytes() {
        for len in [1u64, 8, 9, 64, 65, 1000, 1 << 20] {
            let storage = Storage::zeroed(len).expect("small");
            let words = storage.words();
            assert_eq!(words.as_ptr() as usize % 64, 0, "{len} bytes");
            assert_eq!(words.len() as u64, len.div_ceil(8), "{len} bytes");
        }
    }

    #[test]
    fn atomics_update_only_their_own_bytes() {
        let storage = Storage::zeroed(16).expect("small");
        storage.write(0, &[1, 2, 3, 4, 5, 6, 7, 8]);
        // The high u32 of word 0 holds 0x08070605.
        let old = storage.atomic(4, AtomOp::Add, NumFormat::U32, 0xffff_ffff, 0);
        assert_eq!(old, 0x0807_0605);
        let mut word = [0u8; 8];
        storage.read(0, &mut word);
        assert_eq!(word, [1, 2, 3, 4, 4, 6, 7, 8]);
        // Misaligned addresses round down to the element.
        assert_eq!(
            storage.atomic(13, AtomOp::Exch, NumFormat::U32, 7, 0),
            0,
            "bytes 12..16 were zero"
        );
        assert_eq!(storage.atomic(12, AtomOp::Add, NumFormat::U32, 0, 0), 7);
        assert_eq!(storage.atomic(16, AtomOp::Add, NumFormat::U32, 1, 0), 0);
        assert_eq!(
            storage.atomic(8, AtomOp::Cswap, NumFormat::U64, 0x7_0000_0000, 1),
            0x7_0000_0000
        );
        assert_eq!(storage.atomic(8, AtomOp::Add, NumFormat::U64, 0, 0), 1);
    }

    #[test]
    fn typed_buffers_round_trip() {
        let values = [-1.5f32, 0.0, f32::MAX, 2.0];
        let buffer = Buffer::from_slice(&values).expect("small");
        assert_eq!(buffer.len(), 16);
        assert_eq!(buffer.to_vec::<f32>(), values);
        assert_eq!(buffer.to_vec::<u16>()[0..2], [0x0000, 0xbfc0]);
        let signed = Buffer::from_slice(&[-2i8, 3]).expect("small");
        assert_eq!(signed.to_bytes(), [0xfe, 3]);
        assert_eq!(param(-1i32), 0xffff_ffff);
        assert_eq!(param(1.0f64), 0x3ff0_0000_0000_0000);
        let zeros = Buffer::zeros(NumFormat::U64, 3).expect("small");
        assert_eq!(zeros.to_vec::<u64>(), [0, 0, 0]);
    }
}
