//! The bundled examples give the same results on the multithreaded runtime,
//! on the JIT and on the interpreter, as on the single-threaded
//! `interp::launch`, whatever the number of SMs and warp slots: they are
//! race-free (atomics only where the order does not change the outcome).

// Only the example options are used here, not the process plumbing.
#[allow(dead_code)]
mod cli_support;
use cli_support::SMALL_MANDELBROT;
use std::path::PathBuf;
use warpjit::ir::interp::{self, LaunchConfig};
use warpjit::ir::{text, VerifiedModule};
use warpjit::run::{self, Backend, RunOptions, RunPlan};

/// (SM count, warp slots per SM); every example's workgroups fit 8 warps.
const MACHINES: [(u32, u32); 4] = [(1, 64), (2, 8), (3, 64), (7, 8)];

fn plan(name: &str, overrides: &[&str]) -> (VerifiedModule, RunPlan) {
    let path: PathBuf = [env!("CARGO_MANIFEST_DIR"), "examples", name]
        .iter()
        .collect();
    let file = path.display().to_string();
    let source = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{file}: {e}"));
    let parsed = text::parse(&source).unwrap_or_else(|d| panic!("{}", d.render(&file, &source)));
    let module =
        VerifiedModule::new(parsed).unwrap_or_else(|d| panic!("{}", d.render(&file, &source)));
    let words: Vec<String> = overrides.iter().map(|w| w.to_string()).collect();
    let mut options = run::options_from_source(&file, &source)
        .and_then(|o| Ok(o.then(RunOptions::from_words(&words, "test")?)))
        .unwrap_or_else(|e| panic!("{e}"));
    options.prints.clear();
    options.outputs.clear();
    let plan = run::plan(&module, &options).unwrap_or_else(|e| panic!("{file}: {e}"));
    (module, plan)
}

/// Runs `name` on the interpreter alone and on every machine shape;
/// `compare` gets the interpreter's buffers and the runtime's.
fn check(name: &str, overrides: &[&str], compare: impl Fn(&[Vec<u8>], &[Vec<u8>], &str)) {
    let (module, reference) = plan(name, overrides);
    let mut expected = reference.buffers.clone();
    let cfg = LaunchConfig::new(reference.grid.0, reference.workgroup.0);
    let expected_report = interp::launch(
        &module,
        reference.kernel,
        &cfg,
        &reference.params,
        &mut expected,
    )
    .unwrap_or_else(|e| panic!("{name} on the interpreter: {e}"));
    for backend in [Backend::Jit, Backend::Interp] {
        for (sms, slots) in MACHINES {
            let mut plan = reference.clone();
            plan.backend = backend;
            plan.sm_count = Some(sms);
            plan.warps_per_sm = Some(slots);
            let outcome =
                run::execute(&module, &mut plan).unwrap_or_else(|e| panic!("{name}: {e}"));
            let shape = format!(
                "{name} on {} with {sms} SMs x {slots} slots",
                backend.name()
            );
            assert_eq!(outcome.report.faults, expected_report.faults, "{shape}");
            if backend.counts_statements() {
                assert_eq!(
                    outcome.report.statements, expected_report.statements,
                    "{shape}"
                );
            }
            compare(&expected, &plan.buffers, &shape);
        }
    }
}

fn identical(expected: &[Vec<u8>], actual: &[Vec<u8>], shape: &str) {
    for (i, (want, got)) in expected.iter().zip(actual).enumerate() {
        assert!(want == got, "{shape}: buffer {i} differs");
    }
}

#[test]
fn order_independent_examples_give_identical_buffers() {
    check("mandelbrot.warp", &SMALL_MANDELBROT, identical);
    check("histogram_atomics.warp", &[], identical);
    check("reduce_shuffle_xor.warp", &[], identical);
    check("scan_shuffle_up.warp", &[], identical);
    check("quad_swizzle.warp", &[], identical);
    check("active_mask_divergence.warp", &[], identical);
    check("box_blur.warp", &[], identical);
}

#[test]
fn stream_compaction_keeps_the_same_elements_in_any_block_order() {
    // Each workgroup claims its output block with an atomic add, so blocks
    // land in claim order; the count and the set of kept elements do not
    // depend on it.
    let u32s = |bytes: &[u8]| -> Vec<u32> {
        bytes
            .chunks_exact(4)
            .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect()
    };
    check("compact_ballot.warp", &[], |expected, actual, shape| {
        // Buffers: @data, @count, @out.
        assert_eq!(u32s(&expected[0]), u32s(&actual[0]), "{shape}: @data");
        let count = u32s(&expected[1]);
        assert_eq!(count, u32s(&actual[1]), "{shape}: @count");
        let kept = count[0] as usize;
        let sorted = |bytes: &[u8]| {
            let mut v = u32s(bytes);
            v[..kept].sort_unstable();
            v
        };
        assert_eq!(sorted(&expected[2]), sorted(&actual[2]), "{shape}: @out");
    });
}
