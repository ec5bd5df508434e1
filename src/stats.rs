//! Order statistics of timings, shared by `bench` and `compare` so both
//! mean the same by "median".

use std::time::Duration;

/// The `q`-quantile (0 ..= 1) of `times`, interpolated linearly between the
/// two nearest ranks: 0 is the least, 1 the greatest, and the median of an
/// even count is the mean of the middle two. None when there are no times.
pub fn quantile(times: &[Duration], q: f64) -> Option<Duration> {
    let mut sorted = times.to_vec();
    sorted.sort();
    let last = sorted.len().checked_sub(1)?;
    let rank = last as f64 * q.clamp(0.0, 1.0);
    let below = rank.floor() as usize;
    let above = rank.ceil() as usize;
    let (low, high) = (sorted[below], sorted[above]);
    // Through f64: exact to the nanosecond below 2^53 ns (104 days).
    let fraction = rank - below as f64;
    let between = (high - low).as_nanos() as f64 * fraction;
    Some(low + Duration::from_nanos(between.round() as u64))
}

/// The median of `times` (the mean of the middle two for an even count).
pub fn median(times: &[Duration]) -> Option<Duration> {
    quantile(times, 0.5)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(v: &[u64]) -> Vec<Duration> {
        v.iter().map(|&m| Duration::from_millis(m)).collect()
    }

    #[test]
    fn medians_of_odd_and_even_counts() {
        assert_eq!(
            median(&ms(&[5, 1, 4, 2, 3])),
            Some(Duration::from_millis(3))
        );
        assert_eq!(
            median(&ms(&[4, 1, 3, 2])),
            Some(Duration::from_micros(2500))
        );
        assert_eq!(median(&ms(&[7, 3])), Some(Duration::from_millis(5)));
        assert_eq!(median(&ms(&[9])), Some(Duration::from_millis(9)));
        assert_eq!(median(&[]), None);
    }

    #[test]
    fn quantiles_interpolate_between_ranks() {
        let times = ms(&[50, 10, 40, 20, 30]);
        assert_eq!(quantile(&times, 0.0), Some(Duration::from_millis(10)));
        assert_eq!(quantile(&times, 0.25), Some(Duration::from_millis(20)));
        assert_eq!(quantile(&times, 0.75), Some(Duration::from_millis(40)));
        assert_eq!(quantile(&times, 1.0), Some(Duration::from_millis(50)));
        // Rank 0.25 * 3 = 0.75 of the way from 10 to 20 ms.
        let four = ms(&[10, 20, 30, 40]);
        assert_eq!(quantile(&four, 0.25), Some(Duration::from_micros(17_500)));
        // Out-of-range q is clamped.
        assert_eq!(quantile(&four, 2.0), Some(Duration::from_millis(40)));
    }
}
