//! Workloads W1-W8 (docs/benchmarks.md): each `.warp` program with its
//! inputs at full or test size, its scalar Rust twin, and how its output is
//! checked against that twin.

use crate::bench::baselines::{self, MandelbrotSize, Market, OptionContracts, Threads};
use crate::bench::inputs::{
    collect_on_huge_pages, f32_bytes, f32s, hash_bytes, hash_field, hash_values, u32_bytes, u32s,
    zeros_on_huge_pages,
};
use crate::bench::{parse_module, Launch, Prepared, Size};
use std::hint::black_box;
use warpjit_runtime::param;

/// One workload of the suite.
pub struct Workload {
    /// `W1` ... `W8`.
    pub id: &'static str,
    pub name: &'static str,
    /// Where the program lives, relative to the repository.
    pub file: &'static str,
    pub source: &'static str,
    /// What the throughput counts.
    pub unit: &'static str,
    prepare: fn(Size) -> Result<Prepared, String>,
}

impl Workload {
    /// The launch, baseline and check at `size`; builds the inputs and
    /// computes the expected output with the scalar twin.
    pub fn prepare(&self, size: Size) -> Result<Prepared, String> {
        (self.prepare)(size)
    }
}

/// The suite, in order.
pub const WORKLOADS: [Workload; 8] = [
    Workload {
        id: "W1",
        name: "mandelbrot",
        file: "examples/mandelbrot.warp",
        source: include_str!("../../examples/mandelbrot.warp"),
        unit: "pixels",
        prepare: mandelbrot,
    },
    Workload {
        id: "W2",
        name: "saxpy",
        file: "benches/workloads/saxpy.warp",
        source: include_str!("../../benches/workloads/saxpy.warp"),
        unit: "elements",
        prepare: saxpy,
    },
    Workload {
        id: "W3",
        name: "reduce",
        file: "examples/reduce_shuffle_xor.warp",
        source: include_str!("../../examples/reduce_shuffle_xor.warp"),
        unit: "elements",
        prepare: reduce,
    },
    Workload {
        id: "W4",
        name: "scan",
        file: "examples/scan_shuffle_up.warp",
        source: include_str!("../../examples/scan_shuffle_up.warp"),
        unit: "elements",
        prepare: scan,
    },
    Workload {
        id: "W5",
        name: "compact",
        file: "benches/workloads/compact.warp",
        source: include_str!("../../benches/workloads/compact.warp"),
        unit: "elements",
        prepare: compact,
    },
    Workload {
        id: "W6",
        name: "histogram",
        file: "examples/histogram_atomics.warp",
        source: include_str!("../../examples/histogram_atomics.warp"),
        unit: "bytes",
        prepare: histogram,
    },
    Workload {
        id: "W7",
        name: "nbody",
        file: "benches/workloads/nbody.warp",
        source: include_str!("../../benches/workloads/nbody.warp"),
        unit: "interactions",
        prepare: nbody,
    },
    Workload {
        id: "W8",
        name: "blackscholes",
        file: "benches/workloads/blackscholes.warp",
        source: include_str!("../../benches/workloads/blackscholes.warp"),
        unit: "options",
        prepare: blackscholes,
    },
];

fn workload(name: &str) -> &'static Workload {
    WORKLOADS
        .iter()
        .find(|w| w.name == name)
        .expect("every prepare function names a workload of the table")
}

/// Invocations per workgroup in every workload.
const GROUP: u32 = 256;

/// Elements of the streaming workloads: 2^24, or a size that is not a
/// multiple of a warp, for tests.
fn stream_len(size: Size, full: usize) -> usize {
    match size {
        Size::Full => full,
        Size::Small => 5000,
    }
}

fn groups_for(n: usize) -> u32 {
    (n as u32).div_ceil(GROUP)
}

/// A launch of `source`'s `@main` on a 1-D grid.
fn launch(
    name: &str,
    groups: u32,
    params: Vec<u64>,
    buffers: Vec<Vec<u8>>,
) -> Result<Launch, String> {
    let w = workload(name);
    Ok(Launch {
        module: parse_module(w.file, w.source)?,
        grid: [groups, 1, 1],
        workgroup: [GROUP, 1, 1],
        params,
        buffers,
    })
}

/// Buffer `index` must hold exactly `expected`.
fn exact_u32(
    buffers: &[Vec<u8>],
    index: usize,
    what: &str,
    expected: &[u32],
) -> Result<(), String> {
    let got = u32s(&buffers[index]);
    if let Some(i) = (0..expected.len()).find(|&i| got.get(i) != Some(&expected[i])) {
        return Err(format!(
            "{what}[{i}] = {} where the Rust version gives {}",
            got.get(i).map_or("nothing".into(), u32::to_string),
            expected[i]
        ));
    }
    Ok(())
}

/// Buffer `index` must hold `expected` bit for bit, read as f32.
fn exact_f32(
    buffers: &[Vec<u8>],
    index: usize,
    what: &str,
    expected: &[f32],
) -> Result<(), String> {
    let bits: Vec<u32> = expected.iter().map(|v| v.to_bits()).collect();
    exact_u32(buffers, index, what, &bits).map_err(|_| {
        let got = f32s(&buffers[index]);
        let i = (0..expected.len())
            .find(|&i| got.get(i).map(|g| g.to_bits()) != Some(expected[i].to_bits()))
            .unwrap_or(0);
        format!(
            "{what}[{i}] = {:?} where the Rust version gives {:?}",
            got.get(i),
            expected[i]
        )
    })
}

// ------------------------------------------------------------------ W1

fn mandelbrot(size: Size) -> Result<Prepared, String> {
    let geometry = match size {
        Size::Full => MandelbrotSize {
            width: 768,
            height: 512,
            max_iter: 256,
        },
        Size::Small => MandelbrotSize {
            width: 96,
            height: 64,
            max_iter: 256,
        },
    };
    let pixels = (geometry.width * geometry.height) as usize;
    let mut expected = vec![0u32; pixels];
    baselines::mandelbrot(geometry, &mut expected, Threads::One);
    let mut out = vec![0u32; pixels];
    Ok(Prepared {
        launch: launch(
            "mandelbrot",
            groups_for(pixels),
            vec![
                param(geometry.width),
                param(geometry.height),
                param(geometry.max_iter),
            ],
            vec![vec![0; pixels * 4]],
        )?,
        units: pixels as f64,
        baseline: Some(Box::new(move |threads| {
            baselines::mandelbrot(geometry, &mut out, threads);
            black_box(&out);
        })),
        check: Some(Box::new(move |buffers| {
            exact_u32(buffers, 0, "out", &expected)
        })),
    })
}

// ------------------------------------------------------------------ W2

fn saxpy(size: Size) -> Result<Prepared, String> {
    let n = stream_len(size, 1 << 24);
    let a = 2.5f32;
    let x = collect_on_huge_pages((0..n).map(|i| hash_field(i, 0, n, -1.0, 1.0)));
    let y = collect_on_huge_pages((0..n).map(|i| hash_field(i, 1, n, -1.0, 1.0)));
    let mut expected = vec![0f32; n];
    baselines::saxpy(a, &x, &y, &mut expected, Threads::One);
    let buffers = vec![f32_bytes(&x), f32_bytes(&y)];
    let mut out = zeros_on_huge_pages::<f32>(n);
    Ok(Prepared {
        launch: launch(
            "saxpy",
            groups_for(n),
            vec![param(n as u32), param(a)],
            buffers,
        )?,
        units: n as f64,
        baseline: Some(Box::new(move |threads| {
            baselines::saxpy(a, &x, &y, &mut out, threads);
            black_box(&out);
        })),
        check: Some(Box::new(move |buffers| {
            exact_f32(buffers, 1, "y", &expected)
        })),
    })
}

// ------------------------------------------------------------------ W3

fn reduce(size: Size) -> Result<Prepared, String> {
    let n = stream_len(size, 1 << 24);
    let x = hash_values(n);
    let expected = baselines::reduce(&x, Threads::One);
    let buffers = vec![u32_bytes(&x), vec![0; 4]];
    Ok(Prepared {
        launch: launch("reduce", groups_for(n), vec![param(n as u32)], buffers)?,
        units: n as f64,
        baseline: Some(Box::new(move |threads| {
            black_box(baselines::reduce(&x, threads));
        })),
        check: Some(Box::new(move |buffers| {
            exact_u32(buffers, 1, "total", &[expected])
        })),
    })
}

// ------------------------------------------------------------------ W4

fn scan(size: Size) -> Result<Prepared, String> {
    let n = stream_len(size, 1 << 24);
    let x = hash_values(n);
    let mut expected = vec![0u32; n];
    baselines::scan(&x, &mut expected, Threads::One);
    let buffers = vec![u32_bytes(&x), vec![0; n * 4]];
    let mut out = zeros_on_huge_pages::<u32>(n);
    Ok(Prepared {
        launch: launch("scan", groups_for(n), vec![param(n as u32)], buffers)?,
        units: n as f64,
        baseline: Some(Box::new(move |threads| {
            baselines::scan(&x, &mut out, threads);
            black_box(&out);
        })),
        check: Some(Box::new(move |buffers| {
            exact_u32(buffers, 1, "out", &expected)
        })),
    })
}

// ------------------------------------------------------------------ W5

/// The kept values as a multiset: count, wrapping sum, xor.
fn multiset(values: &[u32]) -> (usize, u32, u32) {
    values.iter().fold((0, 0u32, 0u32), |(n, sum, xor), &v| {
        (n + 1, sum.wrapping_add(v), xor ^ v)
    })
}

/// W5's tile per warp: 64 chunks of 32 elements (8 KiB of input, read
/// twice, the second time from the cache), one reservation each.
const COMPACT_TILE_CHUNKS: u32 = 64;

fn compact(size: Size) -> Result<Prepared, String> {
    let n = stream_len(size, 1 << 24);
    let x = hash_values(n);
    let mut kept = vec![0u32; n];
    let count = baselines::compact(&x, &mut kept, Threads::One);
    let expected = multiset(&kept[..count]);
    let buffers = vec![u32_bytes(&x), vec![0; 4], vec![0; n * 4]];
    let mut out = zeros_on_huge_pages::<u32>(n);
    // Chunks of 32 per warp tile, and workgroups: one tile per warp at full
    // size; at test size, small tiles and two workgroups, so warps step
    // through several tiles.
    let (tile_chunks, groups) = match size {
        Size::Full => (
            COMPACT_TILE_CHUNKS,
            (n as u32).div_ceil(COMPACT_TILE_CHUNKS * 32 * (GROUP / 32)),
        ),
        Size::Small => (2, 2),
    };
    let params = vec![param(n as u32), param(tile_chunks)];
    Ok(Prepared {
        launch: launch("compact", groups, params, buffers)?,
        units: n as f64,
        baseline: Some(Box::new(move |threads| {
            black_box(baselines::compact(&x, &mut out, threads));
        })),
        check: Some(Box::new(move |buffers| {
            let count = u32s(&buffers[1]).first().copied().unwrap_or(0) as usize;
            let out = u32s(&buffers[2]);
            let got = multiset(out.get(..count).unwrap_or(&out));
            if got == expected {
                Ok(())
            } else {
                Err(format!(
                    "kept (count, sum, xor) = {got:?} where the Rust version gives {expected:?}"
                ))
            }
        })),
    })
}

// ------------------------------------------------------------------ W6

fn histogram(size: Size) -> Result<Prepared, String> {
    let n = match size {
        Size::Full => 1 << 24,
        Size::Small => 70_000,
    };
    let x = hash_bytes(n);
    let expected = baselines::histogram(&x, Threads::One);
    // A grid-stride loop: each invocation counts about 64 bytes.
    let groups = (n as u32).div_ceil(GROUP * 64);
    let buffers = vec![x.clone(), vec![0; 256 * 4]];
    Ok(Prepared {
        launch: launch("histogram", groups, vec![param(n as u32)], buffers)?,
        units: n as f64,
        baseline: Some(Box::new(move |threads| {
            black_box(baselines::histogram(&x, threads));
        })),
        check: Some(Box::new(move |buffers| {
            exact_u32(buffers, 1, "bins", &expected)
        })),
    })
}

// ------------------------------------------------------------------ W7

fn nbody(size: Size) -> Result<Prepared, String> {
    let n = match size {
        Size::Full => 4096,
        Size::Small => 512,
    };
    let bodies: Vec<[f32; 4]> = (0..n)
        .map(|i| {
            [
                hash_field(i, 0, n, -1.0, 1.0),
                hash_field(i, 1, n, -1.0, 1.0),
                hash_field(i, 2, n, -1.0, 1.0),
                hash_field(i, 3, n, 0.5, 1.5),
            ]
        })
        .collect();
    let mut acc = vec![[0f32; 4]; n];
    baselines::nbody(&bodies, &mut acc, Threads::One);
    let expected: Vec<f32> = acc.concat();
    let buffers = vec![f32_bytes(&bodies.concat()), vec![0; n * 16]];
    Ok(Prepared {
        launch: launch("nbody", groups_for(n), vec![param(n as u32)], buffers)?,
        units: (n * n) as f64,
        baseline: Some(Box::new(move |threads| {
            baselines::nbody(&bodies, &mut acc, threads);
            black_box(&acc);
        })),
        check: Some(Box::new(move |buffers| {
            exact_f32(buffers, 1, "acc", &expected)
        })),
    })
}

// ------------------------------------------------------------------ W8

/// How far W8's prices may be from the Rust version's: the kernel's exp2
/// and log2 are warpjit's own routines, Rust's `exp` and `ln` are libm's.
pub const BLACKSCHOLES_TOLERANCE: f32 = 2e-5;

fn blackscholes(size: Size) -> Result<Prepared, String> {
    let n = match size {
        Size::Full => 1 << 22,
        Size::Small => 5000,
    };
    let market = Market {
        rate: 0.02,
        volatility: 0.30,
    };
    let spot = collect_on_huge_pages((0..n).map(|i| hash_field(i, 0, n, 5.0, 30.0)));
    let strike = collect_on_huge_pages((0..n).map(|i| hash_field(i, 1, n, 1.0, 100.0)));
    let years = collect_on_huge_pages((0..n).map(|i| hash_field(i, 2, n, 0.25, 10.0)));
    let mut call = zeros_on_huge_pages::<f32>(n);
    let mut put = zeros_on_huge_pages::<f32>(n);
    let options = OptionContracts {
        spot: &spot,
        strike: &strike,
        years: &years,
    };
    baselines::blackscholes(market, options, &mut call, &mut put, Threads::One);
    let expected = (call.clone(), put.clone());
    let buffers = vec![
        f32_bytes(&spot),
        f32_bytes(&strike),
        f32_bytes(&years),
        vec![0; n * 4],
        vec![0; n * 4],
    ];
    let params = vec![
        param(n as u32),
        param(market.rate),
        param(market.volatility),
    ];
    Ok(Prepared {
        launch: launch("blackscholes", groups_for(n), params, buffers)?,
        units: n as f64,
        baseline: Some(Box::new(move |threads| {
            let options = OptionContracts {
                spot: &spot,
                strike: &strike,
                years: &years,
            };
            baselines::blackscholes(market, options, &mut call, &mut put, threads);
            black_box((&call, &put));
        })),
        check: Some(Box::new(move |buffers| {
            close_f32(buffers, 3, "call", &expected.0)?;
            close_f32(buffers, 4, "put", &expected.1)
        })),
    })
}

/// Every value within [`BLACKSCHOLES_TOLERANCE`] of the expected one,
/// relative to max(1, |expected|).
fn close_f32(
    buffers: &[Vec<u8>],
    index: usize,
    what: &str,
    expected: &[f32],
) -> Result<(), String> {
    let got = f32s(&buffers[index]);
    for (i, &e) in expected.iter().enumerate() {
        let g = got.get(i).copied().unwrap_or(f32::NAN);
        let within = (g - e).abs() <= BLACKSCHOLES_TOLERANCE * e.abs().max(1.0);
        // A NaN is never within.
        if !within {
            return Err(format!(
                "{what}[{i}] = {g} where the Rust version gives {e} (tolerance {BLACKSCHOLES_TOLERANCE} relative to max(1, |expected|))"
            ));
        }
    }
    Ok(())
}
