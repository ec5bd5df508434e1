//! What the runtime and the JIT backend cost per workgroup and per launch,
//! for tuning (not a test):
//!
//! ```text
//! cargo run --release -p warpjit-jit --example dispatch_cost [SMS] [RUNS] [ONLY]
//! ```
//!
//! On a runtime of SMS SMs (default 1) with the JIT backend, launches
//! RUNS times (default 9) each of: an empty kernel and one with a single
//! barrier over 2^16 workgroups of 256 threads, `examples/scan_shuffle_up.warp`
//! and `examples/reduce_shuffle_xor.warp` over 2^24 elements (W4's and W3's
//! shapes), and `examples/mandelbrot.warp` (W1).
//! Prints the min and median wall time of a launch, the process's CPU time
//! per workgroup, and with SMS > 1 each launch's wall time and how many
//! workgroups each SM ran (whether the SMs shared the work).
//! ONLY runs just the cases whose name contains it (for `perf record`).

use std::sync::Arc;
use std::time::{Duration, Instant};
use warpjit_ir::{text, VerifiedModule};
use warpjit_jit::{JitBackend, JitOptions};
use warpjit_runtime::{param, Buffer, Kernel, Runtime, RuntimeConfig};

#[repr(C)]
struct Timespec {
    sec: i64,
    nsec: i64,
}

extern "C" {
    fn clock_gettime(clock: i32, ts: *mut Timespec) -> i32;
}

/// CPU time of the whole process (all SM threads).
fn process_cpu() -> Duration {
    const CLOCK_PROCESS_CPUTIME_ID: i32 = 2;
    let mut ts = Timespec { sec: 0, nsec: 0 };
    // SAFETY: clock_gettime writes one timespec, which `ts` is.
    unsafe { clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &mut ts) };
    Duration::new(ts.sec as u64, ts.nsec as u32)
}

const EMPTY: &str = "kernel @main workgroup(256) { }";
const ONE_BARRIER: &str = "kernel @main workgroup(256) { barrier }";

fn module(source: &str) -> Arc<VerifiedModule> {
    let parsed = text::parse(source).unwrap_or_else(|e| panic!("parses: {e:?}"));
    Arc::new(VerifiedModule::new(parsed).unwrap_or_else(|e| panic!("verifies: {e:?}")))
}

fn read(path: &str) -> String {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/..");
    std::fs::read_to_string(format!("{root}/{path}")).expect("the example exists")
}

struct Case {
    name: &'static str,
    kernel: Kernel,
    grid: [u32; 3],
    workgroup: [u32; 3],
    params: Vec<u64>,
    buffers: Vec<Buffer>,
}

/// W3's input: `(i * 2654435761) mod 2^32 mod 1000` as u32 bytes.
fn w3_input(n: u32) -> Vec<u8> {
    (0..n)
        .flat_map(|i| (i.wrapping_mul(2654435761) % 1000).to_le_bytes())
        .collect()
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn main() {
    let mut args = std::env::args().skip(1);
    let sms: u32 = args
        .next()
        .map_or(1, |a| a.parse().expect("SMS is a number"));
    let runs: usize = args
        .next()
        .map_or(9, |a| a.parse().expect("RUNS is a number"));
    let only = args.next().unwrap_or_default();
    let config = RuntimeConfig {
        sm_count: sms,
        ..RuntimeConfig::default()
    };
    let backend = Arc::new(JitBackend::new(JitOptions::default()));
    let runtime = Runtime::with_backend(config, backend).expect("the runtime starts");
    let prepare = |source: &str| runtime.prepare(module(source), "main").expect("compiles");
    let n: u32 = 1 << 24;
    let mut cases = vec![
        Case {
            name: "empty",
            kernel: prepare(EMPTY),
            grid: [1 << 16, 1, 1],
            workgroup: [256, 1, 1],
            params: vec![],
            buffers: vec![],
        },
        Case {
            name: "one barrier",
            kernel: prepare(ONE_BARRIER),
            grid: [1 << 16, 1, 1],
            workgroup: [256, 1, 1],
            params: vec![],
            buffers: vec![],
        },
        Case {
            name: "scan (W4)",
            kernel: prepare(&read("examples/scan_shuffle_up.warp")),
            grid: [n / 256, 1, 1],
            workgroup: [256, 1, 1],
            params: vec![param(n)],
            buffers: vec![
                Buffer::zeroed(u64::from(n) * 4).expect("allocates"),
                Buffer::zeroed(u64::from(n) * 4).expect("allocates"),
            ],
        },
        Case {
            name: "reduce (W3)",
            kernel: prepare(&read("examples/reduce_shuffle_xor.warp")),
            grid: [n / 256, 1, 1],
            workgroup: [256, 1, 1],
            params: vec![param(n)],
            buffers: vec![
                Buffer::from_bytes(&w3_input(n)).expect("allocates"),
                Buffer::zeroed(4).expect("allocates"),
            ],
        },
        Case {
            name: "mandelbrot (W1)",
            kernel: prepare(&read("examples/mandelbrot.warp")),
            grid: [768 * 512 / 256, 1, 1],
            workgroup: [256, 1, 1],
            params: vec![param(768u32), param(512u32), param(256u32)],
            buffers: vec![Buffer::zeroed(768 * 512 * 4).expect("allocates")],
        },
    ];
    cases.retain(|case| case.name.contains(only.as_str()));
    for case in &mut cases {
        let mut walls = Vec::new();
        let mut cpus = Vec::new();
        let mut shares = Vec::new();
        for run in 0..=runs {
            let cpu = process_cpu();
            let start = Instant::now();
            let report = runtime
                .launch(
                    &case.kernel,
                    case.grid,
                    case.workgroup,
                    &case.params,
                    &mut case.buffers,
                )
                .unwrap_or_else(|e| panic!("{}: {e}", case.name));
            let wall = start.elapsed();
            let cpu = process_cpu() - cpu;
            // The first launch warms up (stacks, caches).
            if run > 0 {
                walls.push(wall);
                cpus.push(cpu);
                shares.push(report.workgroups_per_sm.clone());
            }
        }
        let workgroups = u64::from(case.grid[0]) * u64::from(case.grid[1]);
        let cpu_per_wg = cpus.iter().sum::<Duration>().as_nanos() as f64
            / (cpus.len() as f64 * workgroups as f64);
        let mut sorted = walls.clone();
        sorted.sort();
        println!(
            "{:16} min {:8.3} ms  median {:8.3} ms  cpu/workgroup {:7.1} ns",
            case.name,
            ms(sorted[0]),
            ms(sorted[sorted.len() / 2]),
            cpu_per_wg
        );
        if sms > 1 {
            let runs: Vec<String> = walls
                .iter()
                .zip(&shares)
                .map(|(w, s)| format!("{:.2}ms {s:?}", ms(*w)))
                .collect();
            println!("    {}", runs.join("  "));
        }
    }
}
