//! Sources of random choices for the generator.

/// What drives the generator: anything that produces 64-bit words. The
/// default methods derive every choice from [`RngLike::next_u64`], so a
/// seeded PRNG, a property-testing runner or a fuzzer's input bytes all
/// work.
pub trait RngLike {
    fn next_u64(&mut self) -> u64;

    /// A number in `0..n` (0 when `n` is 0).
    fn below(&mut self, n: u64) -> u64 {
        // Multiply-shift: tiny bias, no rejection loop, so a source that
        // keeps returning the same word still terminates.
        ((u128::from(self.next_u64()) * u128::from(n)) >> 64) as u64
    }

    /// A number in `lo..=hi`.
    fn between(&mut self, lo: u64, hi: u64) -> u64 {
        if hi <= lo {
            return lo;
        }
        match (hi - lo).checked_add(1) {
            Some(span) => lo + self.below(span),
            None => self.next_u64(),
        }
    }

    /// True with probability `percent` / 100.
    fn chance(&mut self, percent: u32) -> bool {
        self.below(100) < u64::from(percent)
    }

    /// An index into a non-empty list of `n` items chosen by `weights`.
    fn weighted(&mut self, weights: &[u32]) -> usize {
        let total: u64 = weights.iter().map(|w| u64::from(*w)).sum();
        let mut x = self.below(total);
        for (i, w) in weights.iter().enumerate() {
            if x < u64::from(*w) {
                return i;
            }
            x -= u64::from(*w);
        }
        0
    }
}

impl<R: RngLike + ?Sized> RngLike for &mut R {
    fn next_u64(&mut self) -> u64 {
        (**self).next_u64()
    }
}

/// A choice's weight: `weight` when it is allowed, else 0.
pub(crate) fn when(allowed: bool, weight: u32) -> u32 {
    if allowed {
        weight
    } else {
        0
    }
}

/// Picks one item of a non-empty slice.
pub(crate) fn pick<'a, T, R: RngLike + ?Sized>(rng: &mut R, items: &'a [T]) -> &'a T {
    &items[rng.below(items.len() as u64) as usize]
}

/// SplitMix64 (Steele, Lea and Flood 2014): a small, fast, deterministic
/// generator; the same seed gives the same program on every platform.
#[derive(Clone, Debug)]
pub struct SplitMix64 {
    state: u64,
}

impl SplitMix64 {
    pub fn new(seed: u64) -> SplitMix64 {
        SplitMix64 { state: seed }
    }

    /// The next output: the state steps by the golden-ratio constant and is
    /// then mixed.
    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
}

impl RngLike for SplitMix64 {
    fn next_u64(&mut self) -> u64 {
        SplitMix64::next_u64(self)
    }
}

/// Choices read from a byte string (a fuzzer's input): eight bytes per
/// word, little-endian; once the bytes run out every word is 0, which
/// makes every later choice the first option, so generation still ends.
#[derive(Clone, Debug)]
pub struct ByteRng<'a> {
    bytes: &'a [u8],
}

impl<'a> ByteRng<'a> {
    pub fn new(bytes: &'a [u8]) -> ByteRng<'a> {
        ByteRng { bytes }
    }
}

impl RngLike for ByteRng<'_> {
    fn next_u64(&mut self) -> u64 {
        let n = self.bytes.len().min(8);
        let mut word = [0u8; 8];
        word[..n].copy_from_slice(&self.bytes[..n]);
        self.bytes = &self.bytes[n..];
        u64::from_le_bytes(word)
    }
}
