//! Differential tests: generated programs (`warpjit_ir::generate`) run on
//! the reference interpreter and on the JIT must leave bit-identical memory
//! and the same fault reports, at the Native and Avx2 targets (and, for a
//! subset, at other levels and SSE4.2).
//!
//! Each program is compiled once per target and launched on several inputs
//! ([`LAUNCHES`] by default): new parameters and buffer contents, one
//! workgroup or several, different SM shapes. A *case* is one launch
//! compared at both targets. Most programs are small (compiling is what
//! costs); one in eight uses the generator's full statement budget.
//!
//! - `WARPJIT_PROPTEST_CASES=N`: N programs per test group instead of the
//!   defaults below (the run prints how many cases each group compared).
//! - `WARPJIT_DIFF_LAUNCHES=N`: launches per program.
//!
//! A failure is shrunk (`shrink.rs`: smaller statement budgets for the same
//! seed, then statements removed while the JIT still fails the same way,
//! then simpler inputs) and printed as a `Regression` literal to paste into
//! `regressions.rs`.

mod check;
mod coverage;
mod regressions;
mod report;
mod shrink;

use check::{Inputs, Mismatch};
use shrink::Failing;
use warpjit_ir::generate::{
    generate_case, redraw_inputs, Features, GenConfig, GeneratedCase, RngLike, SplitMix64,
};
use warpjit_ir::VerifiedModule;
use warpjit_jit::Target;

/// Launches per program unless `WARPJIT_DIFF_LAUNCHES` says otherwise.
const LAUNCHES: u64 = 5;
/// Fuel per warp: generated programs finish far below it.
const FUEL: u64 = 50_000_000;
/// The targets every case is compared at.
const DEFAULT_TARGETS: [(Target, u8); 2] = [(Target::Native, 2), (Target::Avx2, 2)];

fn env_count(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default)
}

fn program_count(default: u64) -> u64 {
    env_count("WARPJIT_PROPTEST_CASES", default)
}

fn launch_count() -> u64 {
    env_count("WARPJIT_DIFF_LAUNCHES", LAUNCHES).max(1)
}

/// The seed of program `n` of the group `salt`.
fn seed_of(salt: u64, n: u64) -> u64 {
    salt.wrapping_mul(0x9e37_79b9_7f4a_7c15).wrapping_add(n)
}

/// The statement budget of `seed`'s program: mostly small, one in eight
/// the generator's full budget (a large program costs as much to compile
/// as ten small ones).
fn statement_budget(seed: u64, full: usize) -> usize {
    let mut rng = SplitMix64::new(seed ^ 0x5eed_5eed_5eed_5eed);
    if rng.chance(12) {
        full
    } else {
        rng.between(2, 16) as usize
    }
}

fn config(features: Features, stmts: usize) -> GenConfig {
    GenConfig {
        features,
        max_stmts: stmts,
        ..GenConfig::default()
    }
}

/// The inputs of launch `variant` of `case` (variant 0: as generated).
fn inputs_for(case: &GeneratedCase, seed: u64, variant: u64) -> Inputs {
    let threads: u32 = case.workgroup.iter().product();
    let warps = threads.div_ceil(32);
    let mut inputs = Inputs {
        params: case.params.clone(),
        buffers: case.buffer_data.clone(),
        grid: case.grid,
        workgroup: case.workgroup,
        sm_count: 3,
        warps_per_sm: 64,
    };
    if variant == 0 {
        return inputs;
    }
    let mut rng = SplitMix64::new(seed_of(seed, variant));
    (inputs.params, inputs.buffers) = redraw_inputs(&mut rng, case);
    match variant % 3 {
        1 => {
            inputs.sm_count = 1;
            inputs.warps_per_sm = warps;
        }
        2 => {
            inputs.grid = [1, 1, 1];
            inputs.sm_count = 2;
        }
        _ => {
            inputs.sm_count = 5;
            inputs.warps_per_sm = warps.max(8);
        }
    }
    inputs
}

fn verified(case: &GeneratedCase, seed: u64) -> VerifiedModule {
    VerifiedModule::new(case.module.clone())
        .unwrap_or_else(|d| panic!("seed {seed}: generated module does not verify: {d}"))
}

/// Compares every launch of `seed`'s program at `at`; returns the number
/// of cases. Panics with a shrunk, paste-able case on a difference.
fn check_program(features: Features, seed: u64, at: &[(Target, u8)], launches: u64) -> u64 {
    let full = GenConfig::default().max_stmts;
    let stmts = statement_budget(seed, full);
    let case = generate_case(&mut SplitMix64::new(seed), &config(features, stmts));
    let module = verified(&case, seed);
    for variant in 0..launches {
        let inputs = inputs_for(&case, seed, variant);
        let result = check::check(&module, &inputs, at, FUEL)
            .unwrap_or_else(|e| panic!("seed {seed}: {e}\n{}", warpjit_ir::text::print(&module)));
        if let Err(mismatch) = result {
            let origin =
                format!("seed {seed} ({features:?}), statement budget {stmts}, launch {variant}");
            let failing =
                smallest_budget(features, seed, stmts, variant, mismatch, &module, &inputs);
            let shrunk = shrink::shrink(failing);
            panic!("{}", report::describe(&shrunk, &origin));
        }
    }
    launches
}

/// The failure at the smallest statement budget for the same seed that
/// still fails the same way (what a proptest strategy over the budget
/// would shrink to).
fn smallest_budget(
    features: Features,
    seed: u64,
    stmts: usize,
    variant: u64,
    mismatch: Mismatch,
    module: &VerifiedModule,
    inputs: &Inputs,
) -> Failing {
    for smaller in 1..stmts {
        let case = generate_case(&mut SplitMix64::new(seed), &config(features, smaller));
        let candidate = verified(&case, seed);
        let inputs = inputs_for(&case, seed, variant);
        if let Some(m) = shrink::fails_like(&candidate, &inputs, &mismatch) {
            return Failing {
                module: candidate,
                inputs,
                mismatch: m,
            };
        }
    }
    Failing {
        module: module.clone(),
        inputs: inputs.clone(),
        mismatch,
    }
}

/// Runs `programs` (or `WARPJIT_PROPTEST_CASES`) programs of a group.
fn run(name: &str, features: Features, salt: u64, programs: u64) {
    run_at(name, features, salt, programs, &DEFAULT_TARGETS);
}

fn run_at(name: &str, features: Features, salt: u64, programs: u64, at: &[(Target, u8)]) {
    let programs = program_count(programs);
    let launches = launch_count();
    let cases: u64 = (0..programs)
        .map(|n| check_program(features, seed_of(salt, n), at, launches))
        .sum();
    eprintln!("{name}: {programs} programs, {cases} cases at {at:?}");
}

/// Straight-line 32-bit integer code: arithmetic, compare/select, builtins.
#[test]
fn straight_line_integer_code() {
    run("straight-line", Features::none(), 1, 40);
}

/// Structured control flow under the execution mask: if, loop, break, continue.
#[test]
fn control_flow() {
    let f = Features {
        ifs: true,
        loops: true,
        ..Features::none()
    };
    run("control flow", f, 2, 50);
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
    run("floats and wide values", f, 3, 50);
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
    run("calls, returns, kill, demote", f, 4, 50);
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
    run("buffers", f, 5, 50);
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
    run("warp intrinsics and ordered", f, 6, 50);
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
    run("atomics, shared, private, narrow", f, 7, 50);
}

/// Everything the generator makes except barriers.
pub fn all_but_barriers() -> Features {
    Features {
        barriers: false,
        ..Features::all()
    }
}

/// The salt of the all-features group (the coverage test checks its
/// programs). A change to the generator's draws changes the group: when
/// the coverage test then names something never generated, try the next
/// salts (with 200 programs, 27 of the salts 9-39 held everything at the
/// last change).
const ALL_FEATURES_SALT: u64 = 10;
/// Programs of the all-features group by default: enough that the group
/// holds every operation (28 built-ins among them, each a rare pick in
/// small programs); with 140, every salt tried missed one.
const ALL_FEATURES_PROGRAMS: u64 = 200;

/// Everything the generator makes except barriers.
#[test]
fn all_features_but_barriers() {
    run(
        "all features",
        all_but_barriers(),
        ALL_FEATURES_SALT,
        ALL_FEATURES_PROGRAMS,
    );
}

/// LLVM's optimisation level must not change any result: O0, O1 and O3,
/// and the SSE4.2 code paths.
#[test]
fn optimisation_levels_and_sse42_agree() {
    let at = [(Target::Native, 0), (Target::Native, 3), (Target::Sse42, 1)];
    run_at("levels and SSE4.2", all_but_barriers(), 9, 12, &at);
}

/// Everything, barriers included: compiled warps meet at barriers as the
/// interpreter's do and leave the same memory.
#[test]
fn all_features_with_barriers() {
    run("with barriers", Features::all(), 10, 40);
}
