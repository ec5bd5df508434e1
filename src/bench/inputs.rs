//! The workloads' input patterns (docs/benchmarks.md): everything comes
//! from one multiplicative hash, so other systems can rebuild the inputs.

use warpjit_runtime::pages::prefer_huge_pages;

/// h(i) = (i * 2654435761) mod 2^32.
pub fn hash(i: u64) -> u32 {
    (i as u32).wrapping_mul(2_654_435_761)
}

/// W3, W4, W5: `x[i] = h(i) mod 1000`.
pub fn hash_values(n: usize) -> Vec<u32> {
    collect_on_huge_pages((0..n as u64).map(|i| hash(i) % 1000))
}

/// W6: `x[i] = (h(i) >> 24) & 255`.
pub fn hash_bytes(n: usize) -> Vec<u8> {
    collect_on_huge_pages((0..n as u64).map(|i| (hash(i) >> 24) as u8))
}

/// The items of `values` in memory that asks for huge pages, as the JIT's
/// buffers do: a baseline and the kernel it is compared with then run on
/// pages of one size (W3 ran 3-39% faster on 2 MiB pages).
pub fn collect_on_huge_pages<T>(values: impl Iterator<Item = T>) -> Vec<T> {
    let len = values.size_hint().0;
    let mut out: Vec<T> = Vec::with_capacity(len);
    prefer_huge_pages(out.as_ptr().cast(), len * size_of::<T>());
    out.extend(values);
    out
}

/// `n` zeros, on huge pages as [`collect_on_huge_pages`].
pub fn zeros_on_huge_pages<T: Copy + Default>(n: usize) -> Vec<T> {
    collect_on_huge_pages(std::iter::repeat_n(T::default(), n))
}

/// Field `field` of element `i` of `n`, a value in [lo, hi]:
/// lo + (hi - lo) * (h(i + field * n) / 2^32), computed in f64 and rounded
/// to f32.
pub fn hash_field(i: usize, field: usize, n: usize, lo: f64, hi: f64) -> f32 {
    let k = (i + field * n) as u64;
    (lo + (hi - lo) * (f64::from(hash(k)) / 4_294_967_296.0)) as f32
}

/// Little-endian bytes of 32-bit values, as a buffer holds them.
pub fn u32_bytes(values: &[u32]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_le_bytes()).collect()
}

pub fn f32_bytes(values: &[f32]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_le_bytes()).collect()
}

/// The 32-bit values in little-endian `bytes` (a trailing partial word is
/// ignored).
pub fn u32s(bytes: &[u8]) -> Vec<u32> {
    bytes
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

pub fn f32s(bytes: &[u8]) -> Vec<f32> {
    u32s(bytes).into_iter().map(f32::from_bits).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns_follow_the_definitions() {
        assert_eq!(hash(1), 2_654_435_761);
        assert_eq!(hash(2), 5_308_871_522u64 as u32);
        assert_eq!(hash_values(3), [0, 761, 5_308_871_522u64 as u32 % 1000]);
        assert_eq!(hash_bytes(2), [0, (2_654_435_761u32 >> 24) as u8]);
        // h(0) = 0 gives lo; field 1 of element 0 reads h(n).
        assert_eq!(hash_field(0, 0, 4, -1.0, 1.0), -1.0);
        let expected = (0.5 + f64::from(hash(4)) / 4_294_967_296.0) as f32;
        assert_eq!(hash_field(0, 1, 4, 0.5, 1.5), expected);
    }
}
