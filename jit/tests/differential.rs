//! Differential tests: generated programs (`warpjit_ir::generate`) run on
//! the reference interpreter and on the JIT must leave bit-identical memory
//! and the same fault counts, at the Native and Avx2 targets.
//!
//! `WARPJIT_PROPTEST_CASES` sets the number of programs per feature set
//! (default 10: compiling a generated program takes LLVM about half a
//! second, so the default run stays near a minute; use hundreds to soak).

use warpjit_ir::generate::{generate_case, Features, GenConfig, GeneratedCase, SplitMix64};
use warpjit_ir::interp::{self, LaunchConfig};
use warpjit_ir::VerifiedModule;
use warpjit_jit::{compile, launch, JitOptions, Target};

fn case_count(default: u64) -> u64 {
    std::env::var("WARPJIT_PROPTEST_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default)
}

fn launch_config(case: &GeneratedCase) -> LaunchConfig {
    let mut cfg = LaunchConfig::new(case.grid, case.workgroup);
    cfg.sm_count = 3;
    cfg.fuel = Some(50_000_000);
    cfg
}

fn describe(case: &GeneratedCase, module: &VerifiedModule, seed: u64) -> String {
    format!(
        "seed {seed}\nparams {:x?}\nworkgroup {:?} grid {:?}\nbuffer sizes {:?}\n{}",
        case.params,
        case.workgroup,
        case.grid,
        case.buffer_sizes,
        warpjit_ir::text::print(module)
    )
}

/// Runs `seed`'s program on both backends at optimisation level 2.
fn check_seed(gen: &GenConfig, seed: u64, targets: &[Target]) {
    let at: Vec<(Target, u8)> = targets.iter().map(|t| (*t, 2)).collect();
    check_seed_at(gen, seed, &at);
}

/// Runs `seed`'s program on the interpreter and on the JIT at each target
/// and level; panics with the program and inputs on a difference.
fn check_seed_at(gen: &GenConfig, seed: u64, targets: &[(Target, u8)]) {
    let case = generate_case(&mut SplitMix64::new(seed), gen);
    let module = VerifiedModule::new(case.module.clone())
        .unwrap_or_else(|d| panic!("seed {seed}: generated module does not verify: {d}"));
    let kernel = module
        .find_function("main")
        .expect("generated kernels are @main");
    let cfg = launch_config(&case);
    let mut expected = case.buffer_data.clone();
    let want = interp::launch(&module, kernel, &cfg, &case.params, &mut expected)
        .unwrap_or_else(|e| panic!("interpreter: {e}\n{}", describe(&case, &module, seed)));
    for &(target, opt_level) in targets {
        let opts = JitOptions { opt_level, target };
        let compiled = compile(&module, &opts)
            .unwrap_or_else(|e| panic!("{target:?}: {e}\n{}", describe(&case, &module, seed)));
        let mut memory = case.buffer_data.clone();
        let got = launch(&compiled, &module, kernel, &cfg, &case.params, &mut memory)
            .unwrap_or_else(|e| panic!("{target:?}: {e}\n{}", describe(&case, &module, seed)));
        for (i, (m, x)) in memory.iter().zip(&expected).enumerate() {
            if m != x {
                let at = m.iter().zip(x).position(|(a, b)| a != b).unwrap_or(0);
                panic!(
                    "{target:?}: buffer {i} differs first at byte {at} (jit {:02x?}, interpreter {:02x?})\n{}",
                    &m[at..(at + 8).min(m.len())],
                    &x[at..(at + 8).min(x.len())],
                    describe(&case, &module, seed)
                );
            }
        }
        assert_eq!(
            (
                got.faults.loads,
                got.faults.stores,
                got.faults.atomics,
                &got.faults.first
            ),
            (
                want.faults.loads,
                want.faults.stores,
                want.faults.atomics,
                &want.faults.first
            ),
            "{target:?}: fault reports differ\n{}",
            describe(&case, &module, seed)
        );
    }
}

fn run(features: Features, salt: u64, default_cases: u64) {
    let gen = GenConfig {
        features,
        ..GenConfig::default()
    };
    for n in 0..case_count(default_cases) {
        let seed = salt.wrapping_mul(0x9e37_79b9_7f4a_7c15).wrapping_add(n);
        check_seed(&gen, seed, &[Target::Native, Target::Avx2]);
    }
}

/// Straight-line 32-bit integer code: arithmetic, compare/select, builtins.
#[test]
fn straight_line_integer_code() {
    run(Features::none(), 1, 10);
}

/// Structured control flow under the execution mask: if, loop, break, continue.
#[test]
fn control_flow() {
    let f = Features {
        ifs: true,
        loops: true,
        ..Features::none()
    };
    run(f, 2, 10);
}

/// f32/f64, i64, float arithmetic, min/max, conversions between them.
#[test]
fn floats_and_wide_values() {
    let f = Features {
        floats: true,
        wide: true,
        ifs: true,
        ..Features::none()
    };
    run(f, 3, 10);
}

/// Calls, early returns, kill and demote: masks across functions.
#[test]
fn calls_returns_kill_demote() {
    let f = Features {
        ifs: true,
        loops: true,
        calls: true,
        early_returns: true,
        kill: true,
        demote: true,
        ..Features::none()
    };
    run(f, 4, 10);
}

/// Buffer loads and stores, in and out of bounds.
#[test]
fn buffers_in_and_out_of_bounds() {
    let f = Features {
        ifs: true,
        buffers: true,
        out_of_bounds: true,
        wide: true,
        floats: true,
        ..Features::none()
    };
    run(f, 5, 10);
}

/// Votes, thread-group votes, shuffles, quad swizzles, derivatives and
/// ordered sections under divergent masks and partial warps.
#[test]
fn warp_intrinsics_and_ordered() {
    let f = Features {
        ifs: true,
        loops: true,
        floats: true,
        votes: true,
        shuffles: true,
        quads: true,
        ordered: true,
        machine_ids: true,
        demote: true,
        ..Features::none()
    };
    run(f, 6, 10);
}

/// Atomics, shared memory, private arrays and narrow (i8, i16, f16) values
/// and formats, with out-of-bounds addresses.
#[test]
fn atomics_shared_private_narrow() {
    let f = Features {
        ifs: true,
        loops: true,
        floats: true,
        wide: true,
        narrow: true,
        buffers: true,
        out_of_bounds: true,
        atomics: true,
        shared: true,
        private: true,
        demote: true,
        calls: true,
        ..Features::none()
    };
    run(f, 7, 10);
}

/// Everything the generator makes except barriers.
#[test]
fn all_features_but_barriers() {
    let f = Features {
        barriers: false,
        ..Features::all()
    };
    run(f, 8, 10);
}

/// LLVM's optimisation level must not change any result (O0 against O3,
/// and the SSE4.2 code paths).
#[test]
fn optimisation_levels_and_sse42_agree() {
    let gen = GenConfig {
        features: Features {
            barriers: false,
            ..Features::all()
        },
        ..GenConfig::default()
    };
    for n in 0..case_count(3).min(50) {
        let seed = 9u64.wrapping_mul(0x9e37_79b9_7f4a_7c15).wrapping_add(n);
        check_seed_at(
            &gen,
            seed,
            &[(Target::Native, 0), (Target::Native, 3), (Target::Sse42, 1)],
        );
    }
}

/// With barriers switched on, `launch` schedules warps at barriers as the
/// interpreter does and gives the same memory.
#[test]
fn programs_with_barriers_match_the_interpreter() {
    let gen = GenConfig::default();
    for n in 0..case_count(4).min(20) {
        let seed = 10u64.wrapping_mul(0x9e37_79b9_7f4a_7c15).wrapping_add(n);
        check_seed_at(&gen, seed, &[(Target::Native, 1)]);
    }
}
