//! The benchmark suite's programs compute what the workloads define: each
//! workload at its test size on the interpreter (through the runtime) and
//! on the JIT, checked against the scalar Rust versions, and the
//! micro-benchmarks give the interpreter's output on the JIT. Timings are
//! not asserted: they belong to `warpjit bench`.

use warpjit::bench::engines::Engine;
use warpjit::bench::runner::{measure, BenchOptions, Config, Outcome};
use warpjit::bench::{Case, Size};

fn options(interp_runs: usize) -> BenchOptions {
    BenchOptions {
        runs: 1,
        interp_runs,
        size: Size::Small,
        sms: 2,
        jit: warpjit_jit::JitOptions::default(),
    }
}

/// Runs `case` on every configuration; returns each kernel engine's
/// outcome.
fn outcomes(case: Case, interp_runs: usize) -> Vec<(Config, Outcome)> {
    let rows = measure(case, &options(interp_runs), &mut |_| {})
        .unwrap_or_else(|e| panic!("{}: {e}", case.name()));
    rows.into_iter()
        .filter(|r| matches!(r.config, Config::Kernel(_)))
        .map(|r| (r.config, r.outcome))
        .collect()
}

#[test]
fn every_workload_matches_its_rust_version_on_the_interpreter_and_the_jit() {
    let cases = Case::select(&["workloads".to_string()]).expect("known");
    assert_eq!(cases.len(), 8);
    for case in cases {
        let results = outcomes(case, 1);
        let configs: Vec<Config> = results.iter().map(|(config, _)| *config).collect();
        assert_eq!(
            configs,
            [
                Config::Kernel(Engine::Interpreter),
                Config::Kernel(Engine::Jit { sms: 1 }),
                Config::Kernel(Engine::Jit { sms: 2 }),
            ]
        );
        for (config, outcome) in results {
            assert_eq!(
                outcome,
                Outcome::Checked,
                "{} on {}",
                case.name(),
                config.label()
            );
        }
    }
}

#[test]
fn micro_benchmarks_give_the_interpreters_output_on_the_jit() {
    for case in Case::select(&["micro".to_string()]).expect("known") {
        let results = outcomes(case, 1);
        let configs: Vec<Config> = results.iter().map(|(config, _)| *config).collect();
        assert_eq!(
            configs,
            [
                Config::Kernel(Engine::Interpreter),
                Config::Kernel(Engine::Jit { sms: 1 }),
                Config::Kernel(Engine::Jit { sms: 2 }),
            ]
        );
        // The interpreter's output is the reference; every JIT row is
        // checked against it.
        assert_eq!(results[0].1, Outcome::Unchecked, "{}", case.name());
        for (config, outcome) in &results[1..] {
            assert_eq!(
                *outcome,
                Outcome::Checked,
                "{} on {}",
                case.name(),
                config.label()
            );
        }
    }
}

#[test]
fn names_select_cases_and_unknown_names_are_listed() {
    let names = |words: &[&str]| {
        Case::select(&words.iter().map(|w| w.to_string()).collect::<Vec<_>>())
            .map(|cases| cases.iter().map(Case::name).collect::<Vec<_>>())
    };
    assert_eq!(
        names(&["W2", "micro.ballot", "nbody"]).unwrap(),
        ["saxpy", "nbody", "micro.ballot"]
    );
    assert_eq!(names(&["workloads"]).unwrap().len(), 8);
    assert_eq!(names(&[]).unwrap().len(), 29);
    let error = names(&["sgemm"]).unwrap_err();
    assert!(
        error.contains("unknown benchmark `sgemm`") && error.contains("blackscholes"),
        "{error}"
    );
}

/// Every configuration is prepared and warmed up before the timed runs,
/// which go in rounds; each row gets its own number of runs.
#[test]
fn timed_runs_come_in_rounds_after_every_warm_up() {
    let case = Case::select(&["saxpy".to_string()]).expect("known")[0];
    let options = BenchOptions {
        runs: 3,
        interp_runs: 2,
        size: Size::Small,
        sms: 2,
        jit: warpjit_jit::JitOptions::default(),
    };
    let mut heard = Vec::new();
    let rows = measure(case, &options, &mut |what| heard.push(what.to_string())).expect("runs");
    let runs: Vec<(String, usize, bool)> = rows
        .iter()
        .map(|r| (r.config.key().to_string(), r.times.len(), r.warmed_up))
        .collect();
    let expect = |key: &str, n: usize, warm: bool| (key.to_string(), n, warm);
    assert_eq!(
        runs,
        [
            expect("interp", 2, false),
            expect("jit1", 3, true),
            expect("jit", 3, true),
            expect("rust1", 3, true),
            expect("rayon", 3, true),
        ]
    );
    assert_eq!(
        heard.first().map(String::as_str),
        Some("saxpy: preparing inputs")
    );
    assert_eq!(heard.last().map(String::as_str), Some("saxpy: timed runs"));
    assert_eq!(heard.len(), 2 + rows.len(), "{heard:?}");
}
