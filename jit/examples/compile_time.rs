//! Compile time and code speed of the JIT, for tuning (not a test):
//!
//! ```text
//! cargo run --release -p warpjit-jit --example compile_time [GENERATED] [OPT] [FILTER]
//! ```
//!
//! Compiles each example in `examples/` and each workload in
//! `benches/workloads/` (those the JIT supports, whose path contains FILTER
//! if given; or every `.warp` file in FILTER if it is a directory) and
//! GENERATED programs from `warpjit_ir::generate` (default 10) at level OPT
//! (default 2; examples in the kind of code their declared workgroup sizes
//! need), printing the median CPU time of a compile and median wall
//! times per phase, then (if GENERATED > 0) times a large mandelbrot
//! launch. Compiles clear the compile cache first, so every one is cold;
//! one more compile per example shows the cache hit. The first compile of
//! the process is also shown on its own (it pays LLVM's one-time costs).
//!
//! `WARPJIT_LLVM_ARGS` passes options to LLVM, e.g. `-time-passes`.

use std::time::{Duration, Instant};
use warpjit_ir::generate::{generate_case, Features, GenConfig, SplitMix64};
use warpjit_ir::interp::LaunchConfig;
use warpjit_ir::VerifiedModule;
use warpjit_jit::{clear_compile_cache, compile, launch, CompileTimes, JitOptions};

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2).copied().unwrap_or(f64::NAN)
}

/// Median of each phase over `times`.
fn summary(times: &[CompileTimes]) -> String {
    let m = |f: fn(&CompileTimes) -> Duration| median(times.iter().map(|t| ms(f(t))).collect());
    format!(
        "cpu {:6.2} ms wall {:6.2} ms (lower {:.2}, verify {:.2}, optimise {:.2}, codegen {:.2})",
        m(|t| t.cache_lookup),
        m(|t| t.total),
        m(|t| t.lower),
        m(|t| t.verify),
        m(|t| t.optimise),
        m(|t| t.codegen),
    )
}

#[repr(C)]
struct Timespec {
    sec: i64,
    nsec: i64,
}

extern "C" {
    fn clock_gettime(clock: i32, ts: *mut Timespec) -> i32;
}

/// CPU time of this thread: the machine may be shared, wall time is noisy.
fn thread_cpu() -> Duration {
    const CLOCK_THREAD_CPUTIME_ID: i32 = 3;
    let mut ts = Timespec { sec: 0, nsec: 0 };
    // SAFETY: clock_gettime writes one timespec, which `ts` is.
    unsafe { clock_gettime(CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    Duration::new(ts.sec as u64, ts.nsec as u32)
}

/// A cold compile; `cache_lookup` is replaced by the compile's CPU time.
fn cold(module: &VerifiedModule, opts: &JitOptions) -> Option<CompileTimes> {
    clear_compile_cache();
    let cpu = thread_cpu();
    let mut t = compile(module, opts).ok().map(|c| c.compile_times())?;
    t.cache_lookup = thread_cpu() - cpu;
    Some(t)
}

/// Hands `WARPJIT_LLVM_ARGS` (space-separated) to LLVM's option parser.
fn llvm_options() {
    let Ok(args) = std::env::var("WARPJIT_LLVM_ARGS") else {
        return;
    };
    let owned: Vec<std::ffi::CString> = std::iter::once("compile_time")
        .chain(args.split_whitespace())
        .filter_map(|a| std::ffi::CString::new(a).ok())
        .collect();
    let argv: Vec<*const std::ffi::c_char> = owned.iter().map(|a| a.as_ptr()).collect();
    // SAFETY: argv points at NUL-terminated strings that outlive the call.
    unsafe {
        inkwell::llvm_sys::support::LLVMParseCommandLineOptions(
            argv.len() as i32,
            argv.as_ptr(),
            std::ptr::null(),
        )
    };
}

fn main() {
    llvm_options();
    let mut args = std::env::args().skip(1);
    let generated: u64 = args.next().and_then(|s| s.parse().ok()).unwrap_or(10);
    let opt_level: u8 = args.next().and_then(|s| s.parse().ok()).unwrap_or(2);
    let mut filter = args.next().unwrap_or_default();
    let opts = JitOptions {
        opt_level,
        ..JitOptions::default()
    };
    let root = format!("{}/..", env!("CARGO_MANIFEST_DIR"));
    let dir = format!("{root}/examples");
    // FILTER may also name a directory of .warp files to compile instead.
    let dirs = if std::path::Path::new(&filter).is_dir() {
        vec![std::mem::take(&mut filter)]
    } else {
        vec![dir.clone(), format!("{root}/benches/workloads")]
    };
    let mut files: Vec<_> = dirs
        .iter()
        .flat_map(|d| std::fs::read_dir(d).expect("examples directory"))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "warp"))
        .filter(|p| p.to_string_lossy().contains(&filter))
        .collect();
    files.sort_by_key(|p| p.file_name().map(|n| n.to_owned()));
    let mut all = Vec::new();
    let mut first_of_process = true;
    for path in files {
        let text = std::fs::read_to_string(&path).expect("readable example");
        let module = warpjit_ir::text::parse(&text)
            .ok()
            .and_then(|m| VerifiedModule::new(m).ok())
            .expect("example verifies");
        let name = path.file_name().unwrap_or_default().to_string_lossy();
        // The code for the declared workgroup sizes, as `prepare`
        // compiles it.
        let opts = opts.for_declared(&module);
        let Some(first) = cold(&module, &opts) else {
            println!("{name:28} not supported by the JIT");
            continue;
        };
        let mut times = vec![first];
        if std::mem::take(&mut first_of_process) {
            println!(
                "{name:28} first compile of the process: {}",
                summary(&times)
            );
            times.clear();
        }
        times.extend((times.len()..9).filter_map(|_| cold(&module, &opts)));
        let hit = compile(&module, &opts).ok().map(|c| c.compile_times());
        println!(
            "{name:28} {}  again: {:.3} ms hit={}",
            summary(&times),
            hit.map(|t| ms(t.total)).unwrap_or(f64::NAN),
            hit.map(|t| t.cache_hit).unwrap_or(false)
        );
        all.extend(times);
    }
    println!("{:28} {}", "all examples", summary(&all));
    let gen = GenConfig {
        features: Features {
            barriers: false,
            ..Features::all()
        },
        ..GenConfig::default()
    };
    let mut times = Vec::new();
    for seed in 0..generated {
        let case = generate_case(&mut SplitMix64::new(seed), &gen);
        let module = VerifiedModule::new(case.module).expect("generated modules verify");
        times.extend(cold(&module, &opts));
    }
    if !times.is_empty() {
        println!(
            "{:28} {}",
            format!("{generated} generated"),
            summary(&times)
        );
    }
    if generated > 0 {
        mandelbrot_run(&dir, &opts);
    }
    if std::env::var_os("WARPJIT_LLVM_ARGS").is_some() {
        // LLVM prints the code generator's timers (-time-passes) when it
        // shuts down; no LLVM object may be used after this.
        clear_compile_cache();
        // SAFETY: every compiled module of this thread was dropped above.
        unsafe { inkwell::llvm_sys::core::LLVMShutdown() };
    }
}

/// Times launches of examples/mandelbrot.warp at 1024x1024, 256 iterations.
fn mandelbrot_run(dir: &str, opts: &JitOptions) {
    let text = std::fs::read_to_string(format!("{dir}/mandelbrot.warp")).expect("mandelbrot");
    let module = warpjit_ir::text::parse(&text)
        .ok()
        .and_then(|m| VerifiedModule::new(m).ok())
        .expect("mandelbrot verifies");
    let kernel = module.find_function("main").expect("@main");
    let (w, h, iters) = (1024u32, 1024u32, 256u32);
    let cfg = LaunchConfig::new([(w * h).div_ceil(256), 1, 1], [256, 1, 1]);
    let params = [u64::from(w), u64::from(h), u64::from(iters)];
    let compiled = compile(&module, opts).expect("compiles");
    let mut runs = Vec::new();
    for _ in 0..5 {
        let mut buffers = vec![vec![0u8; (w * h * 4) as usize]];
        let started = Instant::now();
        launch(&compiled, kernel, &cfg, &params, &mut buffers).expect("runs");
        runs.push(ms(started.elapsed()));
    }
    println!(
        "mandelbrot 1024x1024x256 launch: median {:.1} ms, best {:.1} ms",
        median(runs.clone()),
        runs.iter().copied().fold(f64::INFINITY, f64::min)
    );
}
