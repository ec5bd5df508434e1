//! The bundled examples (`examples/*.warp`) run as `warpjit run` runs them
//! (on the JIT) and are checked against independent Rust computations of
//! the same results.
//!
//! Each example runs with the inputs of its own `//! run:` line, planned by
//! the same code as `warpjit run` (so random inputs are the CLI's), unless
//! that is too slow for a debug build: then the sizes shrink through the
//! kernel's parameters. A few runs add inputs of the benchmark workloads
//! (W3, W6 of docs/benchmarks.md) to cover sizes that are not
//! multiples of a warp or a workgroup.

use std::path::PathBuf;
use warpjit::bench::baselines::{self, MandelbrotSize, Threads};
use warpjit::ir::{text, VerifiedModule};
use warpjit::run::{self, RunOptions, RunPlan};

/// An example file, parsed and verified.
struct Example {
    file: String,
    source: String,
    module: VerifiedModule,
}

fn load(name: &str) -> Example {
    let path: PathBuf = [env!("CARGO_MANIFEST_DIR"), "examples", name]
        .iter()
        .collect();
    let file = path.display().to_string();
    let source = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{file}: {e}"));
    let parsed = text::parse(&source).unwrap_or_else(|d| panic!("{}", d.render(&file, &source)));
    let module =
        VerifiedModule::new(parsed).unwrap_or_else(|d| panic!("{}", d.render(&file, &source)));
    Example {
        file,
        source,
        module,
    }
}

impl Example {
    /// The run of the file's `//! run:` lines with `overrides` (words of
    /// `warpjit run` options) on top; nothing is printed or written.
    fn plan(&self, overrides: &[&str]) -> RunPlan {
        let mut options =
            run::options_from_source(&self.file, &self.source).unwrap_or_else(|e| panic!("{e}"));
        let words: Vec<String> = overrides.iter().map(|w| w.to_string()).collect();
        let extra = RunOptions::from_words(&words, "test").unwrap_or_else(|e| panic!("{e}"));
        options = options.then(extra);
        options.prints.clear();
        options.outputs.clear();
        run::plan(&self.module, &options).unwrap_or_else(|e| panic!("{}: {e}", self.file))
    }

    fn execute(&self, plan: &mut RunPlan) {
        let outcome = run::execute(&self.module, plan).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            outcome.report.faults.total(),
            0,
            "{}: out-of-bounds accesses: {:?}",
            self.file,
            outcome.report.faults
        );
    }

    fn buffer_index(&self, name: &str) -> usize {
        self.module
            .find_buffer(name)
            .unwrap_or_else(|| panic!("{}: no buffer @{name}", self.file)) as usize
    }

    fn set_u32s(&self, plan: &mut RunPlan, name: &str, values: &[u32]) {
        let index = self.buffer_index(name);
        plan.buffers[index] = values.iter().flat_map(|v| v.to_le_bytes()).collect();
    }

    fn u32s(&self, plan: &RunPlan, name: &str) -> Vec<u32> {
        plan.buffers[self.buffer_index(name)]
            .chunks_exact(4)
            .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect()
    }

    fn f32s(&self, plan: &RunPlan, name: &str) -> Vec<f32> {
        self.u32s(plan, name)
            .into_iter()
            .map(f32::from_bits)
            .collect()
    }
}

/// The W3 / W4 / W5 input: x[i] = (i * 2654435761) mod 2^32 mod 1000.
fn hash_values(n: u32) -> Vec<u32> {
    (0..n).map(|i| i.wrapping_mul(2654435761) % 1000).collect()
}

/// The W6 input: x[i] = ((i * 2654435761) mod 2^32 >> 24) & 255.
fn hash_bytes(n: u32) -> Vec<u8> {
    (0..n)
        .map(|i| (i.wrapping_mul(2654435761) >> 24) as u8)
        .collect()
}

// ---------------------------------------------------------------- mandelbrot

/// W1's iteration counts from the scalar baseline, operation for operation
/// as the kernel (Rust never fuses a multiply and an add).
fn mandelbrot_reference(width: u32, height: u32, max_iter: u32) -> Vec<u32> {
    let size = MandelbrotSize {
        width,
        height,
        max_iter,
    };
    let mut counts = vec![0; (width * height) as usize];
    baselines::mandelbrot(size, &mut counts, Threads::One);
    counts
}

fn check_mandelbrot(width: u32, height: u32, max_iter: u32) {
    let example = load("mandelbrot.warp");
    let pixels = width * height;
    let grid = pixels.div_ceil(256).to_string();
    let out = format!("out=zeros:u32:{pixels}");
    let w = format!("width={width}");
    let h = format!("height={height}");
    let m = format!("max_iter={max_iter}");
    let mut plan = example.plan(&[
        "--grid", &grid, "--param", &w, "--param", &h, "--param", &m, "--buffer", &out,
    ]);
    example.execute(&mut plan);
    let counts = example.u32s(&plan, "out");
    let expected = mandelbrot_reference(width, height, max_iter);
    // The image must show the set: points inside and points escaping early.
    assert!(expected.contains(&max_iter) && expected.contains(&0));
    for (i, (got, want)) in counts.iter().zip(&expected).enumerate() {
        assert_eq!(
            got,
            want,
            "pixel ({}, {}) of {width}x{height}",
            i as u32 % width,
            i as u32 / width
        );
    }
}

#[test]
fn mandelbrot_run_line_is_workload_w1() {
    let example = load("mandelbrot.warp");
    let plan = example.plan(&[]);
    assert_eq!(plan.params, vec![768, 512, 256]);
    assert_eq!(plan.grid.0, [1536, 1, 1]);
    assert_eq!(plan.workgroup.0, [256, 1, 1]);
    assert_eq!(plan.buffers[0].len(), 768 * 512 * 4);
}

#[test]
fn mandelbrot_matches_scalar_f32_at_reduced_size() {
    check_mandelbrot(96, 64, 256);
}

#[test]
fn mandelbrot_matches_scalar_f32_with_inexact_pixel_steps() {
    // 3 / 90 and 2 / 60 are not exact in f32.
    check_mandelbrot(90, 60, 100);
}

#[test]
fn mandelbrot_first_rows_of_the_full_w1_image() {
    // The full image is too slow for a debug build; the first 8 rows use
    // W1's exact pixel mapping (width 768, height 512).
    let example = load("mandelbrot.warp");
    let mut plan = example.plan(&["--grid", "24"]);
    example.execute(&mut plan);
    let counts = example.u32s(&plan, "out");
    let expected = mandelbrot_reference(768, 512, 256);
    assert_eq!(counts[..768 * 8], expected[..768 * 8]);
    assert!(counts[768 * 8..].iter().all(|&c| c == 0));
}

// ---------------------------------------------------------------- reduction

#[test]
fn reduce_run_line_sums_iota() {
    let example = load("reduce_shuffle_xor.warp");
    let mut plan = example.plan(&[]);
    let inputs = example.u32s(&plan, "values");
    example.execute(&mut plan);
    let expected = inputs.iter().fold(0u32, |s, v| s.wrapping_add(*v));
    assert_eq!(expected, 2147450880);
    assert_eq!(example.u32s(&plan, "total"), vec![expected]);
}

#[test]
fn reduce_w3_input_with_a_partial_last_warp() {
    let example = load("reduce_shuffle_xor.warp");
    let n = 10_007u32;
    let count = format!("values=zeros:u32:{n}");
    let param = format!("n={n}");
    let grid = n.div_ceil(256).to_string();
    let mut plan = example.plan(&["--grid", &grid, "--param", &param, "--buffer", &count]);
    let values = hash_values(n);
    example.set_u32s(&mut plan, "values", &values);
    example.execute(&mut plan);
    let expected = values.iter().fold(0u32, |s, v| s.wrapping_add(*v));
    assert_eq!(example.u32s(&plan, "total"), vec![expected]);
}

#[test]
fn reduce_wraps_around() {
    let example = load("reduce_shuffle_xor.warp");
    let mut plan = example.plan(&[
        "--grid",
        "2",
        "--param",
        "n=512",
        "--buffer",
        "values=const:u32:512:0x80000001",
    ]);
    example.execute(&mut plan);
    // 512 * 0x80000001 mod 2^32 = 512.
    assert_eq!(example.u32s(&plan, "total"), vec![512]);
}

// ---------------------------------------------------------------- scan

/// Inclusive prefix sums restarting every 256 elements, wrapping.
fn segmented_scan(values: &[u32]) -> Vec<u32> {
    let mut out = Vec::with_capacity(values.len());
    let mut sum = 0u32;
    for (i, v) in values.iter().enumerate() {
        if i % 256 == 0 {
            sum = 0;
        }
        sum = sum.wrapping_add(*v);
        out.push(sum);
    }
    out
}

#[test]
fn scan_run_line_scans_iota() {
    let example = load("scan_shuffle_up.warp");
    let mut plan = example.plan(&[]);
    let inputs = example.u32s(&plan, "data");
    example.execute(&mut plan);
    let out = example.u32s(&plan, "out");
    assert_eq!(out, segmented_scan(&inputs));
    assert_eq!(&out[..4], &[0, 1, 3, 6]);
    assert_eq!(&out[255..258], &[32640, 256, 513]);
}

#[test]
fn scan_w3_input_with_a_partial_last_workgroup() {
    let example = load("scan_shuffle_up.warp");
    let n = 1000;
    let mut plan = example.plan(&[
        "--param",
        "n=1000",
        "--buffer",
        "data=zeros:u32:1000",
        "--buffer",
        "out=const:u32:1024:7",
    ]);
    let values = hash_values(n);
    example.set_u32s(&mut plan, "data", &values);
    example.execute(&mut plan);
    let out = example.u32s(&plan, "out");
    assert_eq!(out[..1000], segmented_scan(&values)[..]);
    // Past n nothing is written.
    assert!(out[1000..].iter().all(|&v| v == 7));
}

// ---------------------------------------------------------------- compaction

fn check_compaction(example: &Example, plan: &RunPlan, inputs: &[u32]) {
    let mut kept: Vec<u32> = inputs.iter().copied().filter(|x| x % 3 == 0).collect();
    let count = example.u32s(plan, "count")[0] as usize;
    assert_eq!(count, kept.len());
    let out = example.u32s(plan, "out");
    let mut got = out[..count].to_vec();
    kept.sort_unstable();
    got.sort_unstable();
    assert_eq!(got, kept, "the kept values as a multiset");
    assert!(
        out[count..].iter().all(|&v| v == 0),
        "nothing past the count"
    );
}

#[test]
fn compact_run_line_keeps_multiples_of_3() {
    let example = load("compact_ballot.warp");
    let mut plan = example.plan(&[]);
    let inputs = example.u32s(&plan, "data");
    example.execute(&mut plan);
    check_compaction(&example, &plan, &inputs);
    assert_eq!(example.u32s(&plan, "count"), vec![1366]);
}

#[test]
fn compact_keeps_each_warps_order() {
    // With iota input each warp's block holds its kept values in order.
    let example = load("compact_ballot.warp");
    let mut plan = example.plan(&[]);
    example.execute(&mut plan);
    let out = example.u32s(&plan, "out");
    let count = example.u32s(&plan, "count")[0] as usize;
    for pair in out[..count].windows(2) {
        let same_warp = pair[0] / 32 == pair[1] / 32;
        assert!(!same_warp || pair[0] < pair[1], "{pair:?}");
    }
}

#[test]
fn compact_w3_input() {
    let example = load("compact_ballot.warp");
    let n = 5000;
    let mut plan = example.plan(&[
        "--grid",
        "20",
        "--param",
        "n=5000",
        "--buffer",
        "data=zeros:u32:5000",
        "--buffer",
        "out=zeros:u32:5000",
    ]);
    let values = hash_values(n);
    example.set_u32s(&mut plan, "data", &values);
    example.execute(&mut plan);
    check_compaction(&example, &plan, &values);
}

// ---------------------------------------------------------------- histogram

fn byte_histogram(bytes: &[u8]) -> Vec<u32> {
    let mut bins = vec![0u32; 256];
    for b in bytes {
        bins[*b as usize] += 1;
    }
    bins
}

#[test]
fn histogram_run_line_counts_random_bytes() {
    let example = load("histogram_atomics.warp");
    let mut plan = example.plan(&[]);
    let data = plan.buffers[example.buffer_index("data")].clone();
    assert_eq!(data.len(), 65536);
    example.execute(&mut plan);
    let bins = example.u32s(&plan, "bins");
    assert_eq!(bins, byte_histogram(&data));
    assert_eq!(bins.iter().sum::<u32>(), 65536);
}

#[test]
fn histogram_w6_input_with_a_grid_stride() {
    let example = load("histogram_atomics.warp");
    let n = 20_000u32;
    let mut plan = example.plan(&[
        "--grid",
        "3",
        "--param",
        "n=20000",
        "--buffer",
        "data=zeros:u8:20000",
    ]);
    let bytes = hash_bytes(n);
    plan.buffers[example.buffer_index("data")] = bytes.clone();
    example.execute(&mut plan);
    assert_eq!(example.u32s(&plan, "bins"), byte_histogram(&bytes));
}

// ---------------------------------------------------------------- quads

/// The lane that shades pixel (x, y) of a 4x8 block in the framebuffer-object
/// quad layout: quad = 4 * column pair + row pair, member = dx + 2 * dy.
fn fbo_lane(x: u32, y: u32) -> u32 {
    let (bx, by) = (x % 4, y % 8);
    let quad = 4 * (bx / 2) + by / 2;
    4 * quad + (bx % 2) + 2 * (by % 2)
}

fn check_quad_swizzle(width: u32, height: u32) {
    let example = load("quad_swizzle.warp");
    let pixels = width * height;
    let grid = (pixels / 32).to_string();
    let w = format!("width={width}");
    let mut words = vec!["--grid".to_string(), grid, "--param".into(), w];
    for name in [
        "lane_at",
        "value",
        "ddx_fine",
        "ddy_fine",
        "ddx_coarse",
        "ddy_coarse",
        "ddx_swizzle",
        "quad_mean",
    ] {
        words.push("--buffer".into());
        words.push(format!("{name}=const:{pixels}:12345"));
    }
    let words: Vec<&str> = words.iter().map(String::as_str).collect();
    let mut plan = example.plan(&words);
    example.execute(&mut plan);

    let f = |x: u32, y: u32| (x * x + x * y) as f32;
    let lanes = example.u32s(&plan, "lane_at");
    let value = example.f32s(&plan, "value");
    let ddx_fine = example.f32s(&plan, "ddx_fine");
    let ddy_fine = example.f32s(&plan, "ddy_fine");
    let ddx_coarse = example.f32s(&plan, "ddx_coarse");
    let ddy_coarse = example.f32s(&plan, "ddy_coarse");
    let ddx_swizzle = example.f32s(&plan, "ddx_swizzle");
    let quad_mean = example.f32s(&plan, "quad_mean");
    for y in 0..height {
        for x in 0..width {
            let i = (y * width + x) as usize;
            let (qx, qy) = (x & !1, y & !1);
            let at = format!("pixel ({x}, {y}) of {width}x{height}");
            assert_eq!(lanes[i], fbo_lane(x, y), "{at}");
            assert_eq!(value[i], f(x, y), "{at}");
            assert_eq!(ddx_fine[i], f(qx + 1, y) - f(qx, y), "{at}");
            assert_eq!(ddy_fine[i], f(x, qy + 1) - f(x, qy), "{at}");
            assert_eq!(ddx_coarse[i], f(qx + 1, qy) - f(qx, qy), "{at}");
            assert_eq!(ddy_coarse[i], f(qx, qy + 1) - f(qx, qy), "{at}");
            assert_eq!(ddx_swizzle[i], ddx_fine[i], "{at}");
            let sum = f(qx, qy) + f(qx + 1, qy) + f(qx, qy + 1) + f(qx + 1, qy + 1);
            assert_eq!(quad_mean[i], sum / 4.0, "{at}");
        }
    }
}

#[test]
fn quad_swizzle_run_line_image() {
    check_quad_swizzle(16, 16);
}

#[test]
fn quad_swizzle_wider_than_tall_image() {
    check_quad_swizzle(24, 8);
}

// ---------------------------------------------------------------- masks

#[test]
fn active_mask_divergence_records() {
    let example = load("active_mask_divergence.warp");
    let mut plan = example.plan(&[]);
    example.execute(&mut plan);
    let out = example.u32s(&plan, "out");
    let lanes_where = |existing: u32, keep: &dyn Fn(u32) -> bool| {
        (0..32)
            .filter(|l| existing & (1 << l) != 0 && keep(*l))
            .fold(0u32, |m, l| m | 1 << l)
    };
    for local in 0..48u32 {
        let lane = local % 32;
        let existing = if local < 32 { u32::MAX } else { 0xffff };
        let odd = lane % 2 == 1;
        let same_branch = lanes_where(existing, &|l| (l % 2 == 1) == odd);
        let trips = lane % 4;
        let loop_mask = if trips == 0 {
            0
        } else {
            lanes_where(existing, &|l| l % 4 >= trips)
        };
        let called = lanes_where(existing, &|l| l < 24);
        let chain = match lane {
            0..=7 => lanes_where(existing, &|l| l < 8),
            8..=19 => lanes_where(existing, &|l| (8..20).contains(&l)),
            _ => lanes_where(existing, &|l| l >= 20),
        };
        let expected = [
            existing,
            same_branch,
            lanes_where(same_branch, &|l| l % 3 == 0),
            loop_mask,
            existing,
            if lane < 24 { called } else { 0 },
            if lane < 16 {
                lanes_where(called, &|l| l < 16)
            } else {
                0
            },
            chain,
        ];
        let record = &out[(8 * local) as usize..(8 * local + 8) as usize];
        assert_eq!(record, expected, "invocation {local}");
    }
}

// ---------------------------------------------------------------- 2D rows

/// The 3x3 box sums with neighbours clamped to the image, in Rust.
fn box_sums(src: &[u32], width: u32, height: u32) -> Vec<u32> {
    let (w, h) = (width as i64, height as i64);
    let at = |x: i64, y: i64| src[(y.clamp(0, h - 1) * w + x.clamp(0, w - 1)) as usize];
    let mut out = Vec::new();
    for y in 0..h {
        for x in 0..w {
            let mut sum = 0u32;
            for dy in -1..=1 {
                for dx in -1..=1 {
                    sum = sum.wrapping_add(at(x + dx, y + dy));
                }
            }
            out.push(sum);
        }
    }
    out
}

#[test]
fn box_blur_run_line_image() {
    let example = load("box_blur.warp");
    let mut plan = example.plan(&[]);
    let src = example.u32s(&plan, "src");
    example.execute(&mut plan);
    assert_eq!(example.u32s(&plan, "dst"), box_sums(&src, 40, 20));
}

/// An image whose sides are not multiples of 16, so the last workgroups
/// of each row and column have lanes outside it, and random pixels.
#[test]
fn box_blur_ragged_image_of_random_pixels() {
    let example = load("box_blur.warp");
    let (width, height) = (70u32, 37u32);
    let pixels = width * height;
    let words = [
        "--grid".to_string(),
        format!("{},{}", width.div_ceil(16), height.div_ceil(16)),
        "--param".into(),
        format!("width={width}"),
        "--param".into(),
        format!("height={height}"),
        "--buffer".into(),
        format!("src=zeros:u32:{pixels}"),
        "--buffer".into(),
        format!("dst=zeros:u32:{pixels}"),
    ];
    let words: Vec<&str> = words.iter().map(String::as_str).collect();
    let mut plan = example.plan(&words);
    let src: Vec<u32> = (0..pixels).map(|i| i.wrapping_mul(2654435761)).collect();
    example.set_u32s(&mut plan, "src", &src);
    example.execute(&mut plan);
    assert_eq!(example.u32s(&plan, "dst"), box_sums(&src, width, height));
}
