//! Straightforward scalar Rust versions of workloads W1-W8, the yardstick
//! the JIT is measured against: one thread, and every core with rayon.
//!
//! "Straightforward" means the loops anyone would write, with no SIMD
//! intrinsics; the compiler vectorizes what it can. Each hot function is
//! compiled twice, for the x86-64 baseline and for x86-64-v3 (AVX2, FMA,
//! BMI2), and picks the second at run time when the CPU has it, so the
//! baselines use the host's vector units without the workspace requiring
//! them. (AVX-512 variants would need Rust 1.89; the workspace supports
//! 1.88. Build with `RUSTFLAGS="-C target-cpu=native"` to give the
//! baselines everything the host has.) Rust never fuses a multiply and an
//! add, so the f32 results equal the kernels' bit for bit where the
//! operations are the same.

use std::sync::OnceLock;

use rayon::prelude::*;

/// One thread, or every core (the rayon pool of [`run`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Threads {
    One,
    All,
}

/// Runs `baseline` with `threads`: `One` on the calling thread, `All` in
/// the baselines' rayon pool, whose workers are pinned to CPUs of their
/// own by the rule the SM threads follow (`warpjit_runtime::affinity`).
/// Unpinned, Linux often queues the woken workers on one CPU, and a run
/// took the time of one thread: on a 2-core machine, W6's rayon runs
/// after a single-threaded run took either 2.5 or 5 ms, pinned 2.5 ms.
pub fn run<R: Send>(threads: Threads, baseline: impl FnOnce(Threads) -> R + Send) -> R {
    match (threads, pool()) {
        (Threads::All, Some(pool)) => pool.install(|| baseline(threads)),
        // Without a pool of its own (rayon could not start the threads),
        // `All` runs in rayon's global pool.
        _ => baseline(threads),
    }
}

/// The worker count of the pool `Threads::All` runs in.
pub fn pool_threads() -> usize {
    pool().map_or_else(rayon::current_num_threads, |pool| {
        pool.current_num_threads()
    })
}

fn pool() -> Option<&'static rayon::ThreadPool> {
    static POOL: OnceLock<Option<rayon::ThreadPool>> = OnceLock::new();
    POOL.get_or_init(|| {
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
        let cpus = warpjit_runtime::affinity::placement(threads as u32);
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .thread_name(|i| format!("warpjit-baseline-{i}"))
            .start_handler(move |i| {
                if let Some(&cpu) = cpus.get(i) {
                    // Unpinned, the worker still works, only maybe later.
                    let _ = warpjit_runtime::affinity::pin_current_thread(cpu);
                }
            })
            .build()
            .ok()
    })
    .as_ref()
}

/// Whether the x86-64-v3 variants may run.
#[cfg(target_arch = "x86_64")]
fn has_x86_64_v3() -> bool {
    std::is_x86_feature_detected!("avx2")
        && std::is_x86_feature_detected!("fma")
        && std::is_x86_feature_detected!("bmi1")
        && std::is_x86_feature_detected!("bmi2")
        && std::is_x86_feature_detected!("lzcnt")
        && std::is_x86_feature_detected!("popcnt")
}

/// Which variant the baselines run on this CPU.
pub fn instruction_set() -> &'static str {
    #[cfg(target_arch = "x86_64")]
    if has_x86_64_v3() {
        return "x86-64-v3 (AVX2, FMA, BMI2)";
    }
    std::env::consts::ARCH
}

/// Defines `fn NAME(args) -> R` twice (portable and x86-64-v3) behind one
/// entry that picks the best the CPU runs.
macro_rules! host_isa {
    ($(#[$meta:meta])* fn $name:ident($($arg:ident : $ty:ty),* $(,)?) $(-> $ret:ty)? $body:block) => {
        $(#[$meta])*
        fn $name($($arg: $ty),*) $(-> $ret)? {
            #[inline(always)]
            fn portable($($arg: $ty),*) $(-> $ret)? $body
            #[cfg(target_arch = "x86_64")]
            {
                #[target_feature(enable = "avx2,fma,bmi1,bmi2,lzcnt,popcnt")]
                unsafe fn x86_64_v3($($arg: $ty),*) $(-> $ret)? {
                    portable($($arg),*)
                }
                if has_x86_64_v3() {
                    // SAFETY: the CPU has every feature x86_64_v3 enables.
                    return unsafe { x86_64_v3($($arg),*) };
                }
            }
            portable($($arg),*)
        }
    };
}

/// Elements per rayon task for the streaming workloads.
const CHUNK: usize = 1 << 16;

// ------------------------------------------------------------------ W1

/// The geometry and iteration limit of W1.
#[derive(Clone, Copy, Debug)]
pub struct MandelbrotSize {
    pub width: u32,
    pub height: u32,
    pub max_iter: u32,
}

host_isa! {
    /// One row of W1, operation for operation as the kernel.
    fn mandelbrot_row(size: MandelbrotSize, py: u32, row: &mut [u32]) {
        let dx = 3.0f32 / size.width as f32;
        let dy = 2.0f32 / size.height as f32;
        let cy = py as f32 * dy + -1.0;
        for (px, out) in row.iter_mut().enumerate() {
            let cx = px as f32 * dx + -2.0;
            let (mut zr, mut zi) = (cx, cy);
            let mut n = 0;
            while n < size.max_iter {
                let zr2 = zr * zr;
                let zi2 = zi * zi;
                if zr2 + zi2 > 4.0 {
                    break;
                }
                let re = zr2 - zi2;
                let im = (zr * 2.0) * zi;
                zr = cx + re;
                zi = cy + im;
                n += 1;
            }
            *out = n;
        }
    }
}

/// W1: iteration counts, row-major.
pub fn mandelbrot(size: MandelbrotSize, out: &mut [u32], threads: Threads) {
    let rows = out.chunks_mut(size.width as usize);
    match threads {
        Threads::One => rows
            .enumerate()
            .for_each(|(py, row)| mandelbrot_row(size, py as u32, row)),
        Threads::All => out
            .par_chunks_mut(size.width as usize)
            .enumerate()
            .for_each(|(py, row)| mandelbrot_row(size, py as u32, row)),
    }
}

// ------------------------------------------------------------------ W2

host_isa! {
    fn saxpy_chunk(a: f32, x: &[f32], y: &[f32], out: &mut [f32]) {
        for ((o, &xi), &yi) in out.iter_mut().zip(x).zip(y) {
            *o = a * xi + yi;
        }
    }
}

/// W2: out = a * x + y.
pub fn saxpy(a: f32, x: &[f32], y: &[f32], out: &mut [f32], threads: Threads) {
    match threads {
        Threads::One => saxpy_chunk(a, x, y, out),
        Threads::All => out
            .par_chunks_mut(CHUNK)
            .zip(x.par_chunks(CHUNK).zip(y.par_chunks(CHUNK)))
            .for_each(|(o, (x, y))| saxpy_chunk(a, x, y, o)),
    }
}

// ------------------------------------------------------------------ W3

host_isa! {
    fn wrapping_sum(x: &[u32]) -> u32 {
        x.iter().fold(0u32, |sum, &v| sum.wrapping_add(v))
    }
}

/// W3: the wrap-around sum.
pub fn reduce(x: &[u32], threads: Threads) -> u32 {
    match threads {
        Threads::One => wrapping_sum(x),
        Threads::All => x
            .par_chunks(CHUNK)
            .map(wrapping_sum)
            .reduce(|| 0, u32::wrapping_add),
    }
}

// ------------------------------------------------------------------ W4

/// Elements per independently scanned group in W4.
pub const SCAN_GROUP: usize = 256;

host_isa! {
    fn scan_groups(x: &[u32], out: &mut [u32]) {
        for (xs, outs) in x.chunks(SCAN_GROUP).zip(out.chunks_mut(SCAN_GROUP)) {
            let mut sum = 0u32;
            for (o, &v) in outs.iter_mut().zip(xs) {
                sum = sum.wrapping_add(v);
                *o = sum;
            }
        }
    }
}

/// W4: inclusive prefix sums restarting every 256 elements.
pub fn scan(x: &[u32], out: &mut [u32], threads: Threads) {
    match threads {
        Threads::One => scan_groups(x, out),
        Threads::All => out
            .par_chunks_mut(CHUNK)
            .zip(x.par_chunks(CHUNK))
            .for_each(|(o, x)| scan_groups(x, o)),
    }
}

// ------------------------------------------------------------------ W5

host_isa! {
    /// Appends the multiples of 3 in `x` to `out` from `start`; returns the
    /// new end.
    fn keep_multiples_of_3(x: &[u32], out: &mut [u32], start: usize) -> usize {
        let mut end = start;
        for &v in x {
            if v % 3 == 0 {
                out[end] = v;
                end += 1;
            }
        }
        end
    }
}

/// W5: writes the kept values to the front of `out` and returns their count.
/// With every core, each chunk is compacted on its own and the pieces are
/// then moved together.
pub fn compact(x: &[u32], out: &mut [u32], threads: Threads) -> usize {
    match threads {
        Threads::One => keep_multiples_of_3(x, out, 0),
        Threads::All => {
            let ends: Vec<usize> = out
                .par_chunks_mut(CHUNK)
                .zip(x.par_chunks(CHUNK))
                .map(|(o, x)| keep_multiples_of_3(x, o, 0))
                .collect();
            let mut count = 0;
            for (chunk, &kept) in ends.iter().enumerate() {
                let from = chunk * CHUNK;
                out.copy_within(from..from + kept, count);
                count += kept;
            }
            count
        }
    }
}

// ------------------------------------------------------------------ W6

host_isa! {
    fn count_bytes(x: &[u8]) -> [u32; 256] {
        let mut bins = [0u32; 256];
        for &b in x {
            bins[usize::from(b)] += 1;
        }
        bins
    }
}

/// W6: 256 bins.
pub fn histogram(x: &[u8], threads: Threads) -> [u32; 256] {
    match threads {
        Threads::One => count_bytes(x),
        Threads::All => x.par_chunks(CHUNK).map(count_bytes).reduce(
            || [0u32; 256],
            |mut a, b| {
                for (a, b) in a.iter_mut().zip(b) {
                    *a = a.wrapping_add(b);
                }
                a
            },
        ),
    }
}

// ------------------------------------------------------------------ W7

host_isa! {
    /// The accelerations of `bodies[first..first + out.len()]`, in the
    /// kernel's operation order.
    fn nbody_range(bodies: &[[f32; 4]], first: usize, out: &mut [[f32; 4]]) {
        for (k, acc) in out.iter_mut().enumerate() {
            let [xi, yi, zi, _] = bodies[first + k];
            let (mut ax, mut ay, mut az) = (0.0f32, 0.0f32, 0.0f32);
            for &[xj, yj, zj, mj] in bodies {
                let dx = xj - xi;
                let dy = yj - yi;
                let dz = zj - zi;
                let r2 = ((dx * dx + dy * dy) + dz * dz) + 0.01;
                let r3 = r2 * r2.sqrt();
                let s = mj / r3;
                ax += dx * s;
                ay += dy * s;
                az += dz * s;
            }
            *acc = [ax, ay, az, 0.0];
        }
    }
}

/// Bodies per rayon task in W7.
const NBODY_CHUNK: usize = 64;

/// W7: one force-accumulation step.
pub fn nbody(bodies: &[[f32; 4]], out: &mut [[f32; 4]], threads: Threads) {
    match threads {
        Threads::One => nbody_range(bodies, 0, out),
        Threads::All => out
            .par_chunks_mut(NBODY_CHUNK)
            .enumerate()
            .for_each(|(c, o)| nbody_range(bodies, c * NBODY_CHUNK, o)),
    }
}

// ------------------------------------------------------------------ W8

/// Abramowitz-Stegun 26.2.17, as the kernel's `@cnd`.
#[inline(always)]
fn cnd(d: f32) -> f32 {
    let l = d.abs();
    let k = 1.0 / (1.0 + 0.231_641_9 * l);
    let poly = k
        * (0.319_381_53
            + k * (-0.356_563_78 + k * (1.781_477_9 + k * (-1.821_256 + k * 1.330_274_5))));
    let w = 1.0 - 0.398_942_3 * (-0.5 * l * l).exp() * poly;
    if d < 0.0 {
        1.0 - w
    } else {
        w
    }
}

/// W8's market: the riskless rate and the volatility.
#[derive(Clone, Copy, Debug)]
pub struct Market {
    pub rate: f32,
    pub volatility: f32,
}

/// W8's options, one per index: the spot price, the strike price and the
/// years to expiry.
#[derive(Clone, Copy, Debug)]
pub struct OptionContracts<'a> {
    pub spot: &'a [f32],
    pub strike: &'a [f32],
    pub years: &'a [f32],
}

impl<'a> OptionContracts<'a> {
    /// The options at `at`.
    fn range(self, at: std::ops::Range<usize>) -> OptionContracts<'a> {
        OptionContracts {
            spot: &self.spot[at.clone()],
            strike: &self.strike[at.clone()],
            years: &self.years[at],
        }
    }
}

host_isa! {
    fn price_options(
        market: Market,
        options: OptionContracts<'_>,
        call: &mut [f32],
        put: &mut [f32],
    ) {
        let Market { rate: r, volatility: v } = market;
        for i in 0..call.len() {
            let (s, x, t) = (options.spot[i], options.strike[i], options.years[i]);
            let sqrt_t = t.sqrt();
            let d1 = ((s / x).ln() + (r + 0.5 * v * v) * t) / (v * sqrt_t);
            let d2 = d1 - v * sqrt_t;
            let discounted = x * (-r * t).exp();
            let (n1, n2) = (cnd(d1), cnd(d2));
            call[i] = s * n1 - discounted * n2;
            put[i] = discounted * (1.0 - n2) - s * (1.0 - n1);
        }
    }
}

/// W8: call and put prices.
pub fn blackscholes(
    market: Market,
    options: OptionContracts<'_>,
    call: &mut [f32],
    put: &mut [f32],
    threads: Threads,
) {
    match threads {
        Threads::One => price_options(market, options, call, put),
        Threads::All => call
            .par_chunks_mut(CHUNK)
            .zip(put.par_chunks_mut(CHUNK))
            .enumerate()
            .for_each(|(c, (call, put))| {
                let at = c * CHUNK..c * CHUNK + call.len();
                price_options(market, options.range(at), call, put)
            }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn all_threads_run_in_a_pool_of_one_pinned_worker_per_cpu() {
        use warpjit_runtime::affinity;
        let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
        let workers = run(Threads::All, |_| {
            rayon::broadcast(|context| (context.index(), affinity::allowed_cpus()))
        });
        assert_eq!(workers.len(), cpus);
        assert_eq!(pool_threads(), cpus);
        let placement = affinity::placement(cpus as u32);
        for (index, allowed) in workers {
            match placement.get(index) {
                Some(&cpu) => assert_eq!(allowed, vec![cpu], "worker {index}"),
                None => assert_eq!(allowed, affinity::allowed_cpus(), "worker {index}"),
            }
        }
        // `One` stays on the calling thread.
        assert_eq!(run(Threads::One, |_| rayon::current_thread_index()), None);
    }

    /// Several rayon chunks, the last one partial.
    const N: usize = 3 * CHUNK + 1234;

    fn values() -> Vec<u32> {
        (0..N as u32)
            .map(|i| i.wrapping_mul(2_654_435_761) % 1000)
            .collect()
    }

    #[test]
    fn every_core_gives_what_one_thread_gives() {
        let x = values();
        assert_eq!(reduce(&x, Threads::All), reduce(&x, Threads::One));
        let bytes: Vec<u8> = x.iter().map(|&v| v as u8).collect();
        assert_eq!(
            histogram(&bytes, Threads::All),
            histogram(&bytes, Threads::One)
        );
        let (mut one, mut all) = (vec![0; N], vec![0; N]);
        scan(&x, &mut one, Threads::One);
        scan(&x, &mut all, Threads::All);
        assert_eq!(one, all);
        let kept_one = compact(&x, &mut one, Threads::One);
        let kept_all = compact(&x, &mut all, Threads::All);
        // Chunks are compacted in order, so even the order agrees.
        assert_eq!(one[..kept_one], all[..kept_all]);
    }

    #[test]
    fn scalar_versions_compute_the_definitions() {
        let x = values();
        let sum = x.iter().map(|&v| u64::from(v)).sum::<u64>() as u32;
        assert_eq!(reduce(&x, Threads::One), sum);
        let mut out = vec![0; N];
        scan(&x, &mut out, Threads::One);
        assert_eq!(out[0], x[0]);
        assert_eq!(out[255], x[..256].iter().sum::<u32>());
        assert_eq!(out[256], x[256]);
        let kept = compact(&x, &mut out, Threads::One);
        assert_eq!(kept, x.iter().filter(|&&v| v % 3 == 0).count());
        assert!(out[..kept].iter().all(|v| v % 3 == 0));

        let size = MandelbrotSize {
            width: 4,
            height: 2,
            max_iter: 50,
        };
        let mut counts = vec![0; 8];
        mandelbrot(size, &mut counts, Threads::All);
        // Pixel (0, 0) is c = (-2, -1): |c|^2 = 5 escapes before any
        // update. Pixel (0, 1) is c = (-2, 0): z goes -2, 2, 2, ... and
        // |z|^2 = 4 is not above 4, so it never escapes.
        assert_eq!(counts[0], 0);
        assert_eq!(counts[4], 50);

        // One body pulled by one other at distance 1 along x.
        let bodies = [[0.0, 0.0, 0.0, 1.0], [1.0, 0.0, 0.0, 2.0]];
        let mut acc = [[0.0; 4]; 2];
        nbody(&bodies, &mut acc, Threads::One);
        let expected = 2.0f32 / (1.01f32 * 1.01f32.sqrt());
        assert_eq!(acc[0], [expected, 0.0, 0.0, 0.0]);

        // At the money, T = 1: call - put = S - X e^(-rT) (put-call parity).
        let market = Market {
            rate: 0.02,
            volatility: 0.3,
        };
        let (mut call, mut put) = ([0.0f32], [0.0f32]);
        let options = OptionContracts {
            spot: &[20.0],
            strike: &[20.0],
            years: &[1.0],
        };
        blackscholes(market, options, &mut call, &mut put, Threads::One);
        let parity = 20.0 - 20.0 * (-0.02f32).exp();
        assert!((call[0] - put[0] - parity).abs() < 1e-4, "{call:?} {put:?}");
        // The closed form (with erf) gives 2.564316.
        assert!(
            (call[0] - 2.564316).abs() < 1e-4,
            "Black-Scholes value {}",
            call[0]
        );
    }
}
