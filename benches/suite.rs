//! `cargo bench`: the kernels of `warpjit bench` under criterion, with few
//! samples so the whole suite takes minutes. The JIT (one SM and every
//! core) and the Rust baselines run each workload; the JIT runs each
//! micro-benchmark; `compile` times the JIT's compile of each workload.
//! Without `--bench` (as `cargo test --all-targets` runs it) every case
//! runs once at its test size.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use std::time::Duration;
use warpjit::bench::baselines::{self, Threads};
use warpjit::bench::engines::Engine;
use warpjit::bench::{parse_module, workloads::WORKLOADS, Case, Size};
use warpjit_jit::JitOptions;

/// Full sizes under `cargo bench`, test sizes otherwise.
fn size() -> Size {
    if std::env::args().any(|a| a == "--bench") {
        Size::Full
    } else {
        Size::Small
    }
}

fn kernels(c: &mut Criterion) {
    let size = size();
    for case in Case::all() {
        let mut prepared = case
            .prepare(size)
            .unwrap_or_else(|e| panic!("{}: {e}", case.name()));
        let mut group = c.benchmark_group(case.name());
        group
            .sample_size(10)
            .warm_up_time(Duration::from_millis(300))
            .measurement_time(Duration::from_secs(2))
            .throughput(Throughput::Elements(prepared.units as u64));
        let mut engines = vec![Engine::Jit { sms: 1 }];
        if Engine::all_cores() > 1 {
            engines.push(Engine::Jit {
                sms: Engine::all_cores(),
            });
        }
        for engine in engines {
            let ready = match engine.prepare(&prepared.launch, &warpjit_jit::JitOptions::default())
            {
                Ok((ready, _compile_time)) => ready,
                Err(e) => {
                    eprintln!("{} on {}: not measured: {e}", case.name(), engine.label());
                    continue;
                }
            };
            let launch = &prepared.launch;
            group.bench_function(engine.label(), |b| {
                b.iter_custom(|iters| {
                    (0..iters)
                        .map(|_| {
                            let (elapsed, _) = ready
                                .run(launch)
                                .unwrap_or_else(|e| panic!("{}: {e}", case.name()));
                            elapsed
                        })
                        .sum()
                })
            });
        }
        if let Some(baseline) = prepared.baseline.as_mut() {
            group.bench_function("rust 1 thread", |b| {
                b.iter(|| baselines::run(Threads::One, &mut **baseline))
            });
            group.bench_function("rust rayon", |b| {
                b.iter(|| baselines::run(Threads::All, &mut **baseline))
            });
        }
        group.finish();
    }
}

fn compile(c: &mut Criterion) {
    let mut group = c.benchmark_group("compile");
    group
        .sample_size(10)
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(2));
    for workload in &WORKLOADS {
        let module = parse_module(workload.file, workload.source).unwrap_or_else(|e| panic!("{e}"));
        group.bench_function(workload.name, |b| {
            b.iter(|| warpjit_jit::compile(&module, &JitOptions::default()).is_ok())
        });
    }
    group.finish();
}

criterion_group!(benches, kernels, compile);
criterion_main!(benches);
