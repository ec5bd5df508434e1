//! Two runs timed against each other in one process: launches alternate
//! in pairs (which side goes first alternates too), so a host whose speed
//! drifts slows both sides alike, and the pairs give a sign test.

use super::{launch_reading, prepare, LaunchBuffers, RunPlan};
use std::time::Duration;
use warpjit_ir::VerifiedModule;

/// One side of a comparison: a module and the run planned for it.
pub struct Side<'a> {
    pub module: &'a VerifiedModule,
    pub plan: &'a RunPlan,
}

/// How many launches a comparison makes.
#[derive(Clone, Copy, Debug)]
pub struct CompareOptions {
    /// Untimed launches of each side before the pairs; at least one is
    /// made, since the first one's outputs are compared.
    pub warmups: u32,
    /// Timed pairs: one launch of each side per pair.
    pub pairs: u32,
}

/// The timings of one side.
#[derive(Clone, Debug)]
pub struct SideTimes {
    /// Wall time of each timed launch, in pair order.
    pub times: Vec<Duration>,
    /// How long the JIT took to compile (None: interpreted).
    pub compile_time: Option<warpjit_jit::KernelCompile>,
    /// The SMs its runtime had.
    pub sm_count: u32,
}

impl SideTimes {
    /// The `q`-quantile (0 ..= 1) of the times ([`crate::stats::quantile`]);
    /// zero when there are none.
    pub fn quantile(&self, q: f64) -> Duration {
        crate::stats::quantile(&self.times, q).unwrap_or_default()
    }
}

/// Whether a buffer both sides have ended with the same bytes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BufferMatch {
    pub name: String,
    /// The first byte at which the sides differ (None: identical). Buffers
    /// of different lengths differ at the shorter one's end.
    pub first_difference: Option<usize>,
}

/// The result of a comparison.
#[derive(Clone, Debug)]
pub struct Comparison {
    pub a: SideTimes,
    pub b: SideTimes,
    /// Pairs in which B's launch took less time than A's.
    pub b_faster: u32,
    /// Pairs in which both took the same time.
    pub ties: u32,
    /// The buffers of the same name on both sides, after the first launch.
    pub buffers: Vec<BufferMatch>,
}

impl Comparison {
    /// The two-sided sign test's p-value for "neither side is faster",
    /// ties left out.
    pub fn p_value(&self) -> f64 {
        let trials = self.a.times.len() as u32 - self.ties;
        sign_test_p(self.b_faster, trials)
    }
}

/// Prepares both sides, checks their first launches, then times `pairs`
/// pairs. `progress` hears what is being done.
pub fn compare(
    a: Side,
    b: Side,
    options: CompareOptions,
    mut progress: impl FnMut(&str),
) -> Result<Comparison, String> {
    if options.pairs == 0 {
        return Err("a comparison needs at least one timed pair".into());
    }
    progress("compiling A");
    let prepared_a = prepare(a.module, a.plan).map_err(|e| format!("A: {e}"))?;
    progress("compiling B");
    let prepared_b = prepare(b.module, b.plan).map_err(|e| format!("B: {e}"))?;

    progress("warm-up launches");
    let sides = [("A", &prepared_a, a.plan), ("B", &prepared_b, b.plan)];
    // Only the first launch's outputs are read back; each side's later
    // launches refill the buffers it made in place.
    let mut side_buffers: [LaunchBuffers; 2] = Default::default();
    let mut launch_side = |side: usize, read_back: bool| {
        let (name, prepared, plan) = sides[side];
        launch_reading(prepared, plan, &mut side_buffers[side], read_back)
            .map_err(|e| format!("{name}: {e}"))
    };
    let mut first = Vec::new();
    for (side, (name, ..)) in sides.iter().enumerate() {
        let launched = launch_side(side, true)?;
        if !launched.report.faults.is_empty() {
            let faults = &launched.report.faults;
            return Err(format!("{name}: the kernel faulted: {faults}"));
        }
        first.push(launched.buffers);
    }
    let buffers = match_buffers(a.module, &first[0], b.module, &first[1]);
    for _ in 1..options.warmups {
        for side in 0..2 {
            launch_side(side, false)?;
        }
    }

    progress("timed pairs");
    let mut times: [Vec<Duration>; 2] = Default::default();
    for pair in 0..options.pairs {
        let order = if pair % 2 == 0 { [0, 1] } else { [1, 0] };
        for side in order {
            times[side].push(launch_side(side, false)?.wall);
        }
    }
    let [times_a, times_b] = times;
    let b_faster = times_a.iter().zip(&times_b).filter(|(a, b)| b < a).count() as u32;
    let ties = times_a.iter().zip(&times_b).filter(|(a, b)| a == b).count() as u32;
    Ok(Comparison {
        a: SideTimes {
            times: times_a,
            compile_time: prepared_a.compile_time,
            sm_count: prepared_a.sm_count,
        },
        b: SideTimes {
            times: times_b,
            compile_time: prepared_b.compile_time,
            sm_count: prepared_b.sm_count,
        },
        b_faster,
        ties,
        buffers,
    })
}

/// The buffers whose names both modules declare, in A's order.
fn match_buffers(
    module_a: &VerifiedModule,
    bytes_a: &[Vec<u8>],
    module_b: &VerifiedModule,
    bytes_b: &[Vec<u8>],
) -> Vec<BufferMatch> {
    module_a
        .buffers
        .iter()
        .zip(bytes_a)
        .filter_map(|(decl, a)| {
            let index = module_b.buffers.iter().position(|d| d.name == decl.name)?;
            let b = &bytes_b[index];
            let first_difference = a
                .iter()
                .zip(b)
                .position(|(x, y)| x != y)
                .or((a.len() != b.len()).then(|| a.len().min(b.len())));
            Some(BufferMatch {
                name: decl.name.clone(),
                first_difference,
            })
        })
        .collect()
}

/// The two-sided p-value of `wins` successes in `trials` fair coin flips:
/// the chance of a split at least this uneven.
pub fn sign_test_p(wins: u32, trials: u32) -> f64 {
    if trials == 0 {
        return 1.0;
    }
    let n = f64::from(trials);
    let tail = wins.min(trials - wins);
    // Sum C(n, i) / 2^n for i <= tail, in logarithms so large n does not
    // underflow.
    let mut log_choose = 0.0f64;
    let mut sum = 0.0f64;
    for i in 0..=tail {
        if i > 0 {
            log_choose += (n - f64::from(i - 1)).ln() - f64::from(i).ln();
        }
        sum += (log_choose - n * std::f64::consts::LN_2).exp();
    }
    (2.0 * sum).min(1.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn module(buffers: &str) -> VerifiedModule {
        let text = format!("{buffers}\nkernel @main workgroup(32) {{\n}}\n");
        VerifiedModule::new(warpjit_ir::text::parse(&text).unwrap()).unwrap()
    }

    #[test]
    fn buffers_are_matched_by_name_and_compared_byte_by_byte() {
        let a = module("buffer @out[0]: u32\nbuffer @only_a[1]: u32\nbuffer @tail[2]: u8");
        let b = module("buffer @tail[0]: u8\nbuffer @out[1]: u32");
        let bytes_a = vec![vec![1, 2, 3, 4], vec![9], vec![7, 7, 7]];
        let bytes_b = vec![vec![7, 7], vec![1, 2, 0, 4]];
        let matches = match_buffers(&a, &bytes_a, &b, &bytes_b);
        assert_eq!(
            matches,
            [
                BufferMatch {
                    name: "out".into(),
                    first_difference: Some(2)
                },
                // Equal as far as both go: they differ where B's ends.
                BufferMatch {
                    name: "tail".into(),
                    first_difference: Some(2)
                },
            ]
        );
        let same = match_buffers(&a, &bytes_a, &a, &bytes_a);
        assert!(same.iter().all(|m| m.first_difference.is_none()));
        assert_eq!(same.len(), 3);
    }

    #[test]
    fn quantiles_are_the_shared_interpolated_ones() {
        let ms = Duration::from_millis;
        let times = SideTimes {
            times: vec![ms(5), ms(1), ms(4), ms(2), ms(3)],
            compile_time: None,
            sm_count: 1,
        };
        assert_eq!(times.quantile(0.0), ms(1));
        assert_eq!(times.quantile(0.25), ms(2));
        assert_eq!(times.quantile(0.5), ms(3));
        assert_eq!(times.quantile(1.0), ms(5));
        let even = SideTimes {
            times: vec![ms(4), ms(1), ms(3), ms(2)],
            ..times.clone()
        };
        assert_eq!(even.quantile(0.5), Duration::from_micros(2500));
        let none = SideTimes {
            times: Vec::new(),
            ..times
        };
        assert_eq!(none.quantile(0.5), Duration::ZERO);
    }

    #[test]
    fn sign_test_matches_the_binomial_tails() {
        // 0 of 10: 2 * 1/1024.
        assert!((sign_test_p(0, 10) - 2.0 / 1024.0).abs() < 1e-12);
        assert!((sign_test_p(10, 10) - 2.0 / 1024.0).abs() < 1e-12);
        // 2 of 10: 2 * (1 + 10 + 45) / 1024.
        assert!((sign_test_p(2, 10) - 112.0 / 1024.0).abs() < 1e-12);
        // An even split is no evidence at all.
        assert_eq!(sign_test_p(5, 10), 1.0);
        assert_eq!(sign_test_p(0, 0), 1.0);
        // 23 of 30: 2 * P(X <= 7) for Binomial(30, 1/2) = 0.005223.
        assert!((sign_test_p(23, 30) - 0.005_223).abs() < 1e-6);
        // Large n neither underflows nor exceeds 1.
        let p = sign_test_p(5000, 10_000);
        assert!(p > 0.9 && p <= 1.0, "{p}");
        assert!(sign_test_p(4000, 10_000) < 1e-80);
    }
}
