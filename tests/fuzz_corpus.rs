//! The fuzz corpus: every reproducer directory under `tests/corpus/` (found
//! by `warpjit fuzz`, or written by hand for hostile cases and tricky
//! semantics) is replayed on every engine and must show no difference.
//! Also: `warpjit fuzz` itself, seeded, is reproducible whatever the number
//! of jobs, and fuzzes the JIT's other targets and levels, which its
//! reproducers record for `warpjit replay`.

mod cli_support;

use cli_support::{scratch, warpjit};
use std::path::Path;
use warpjit::fuzz::replay_dir;
use warpjit_jit::Target;

#[test]
fn every_corpus_reproducer_replays_without_a_difference() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus");
    let mut dirs: Vec<_> = std::fs::read_dir(&root)
        .expect("tests/corpus exists")
        .map(|e| e.expect("readable entry").path())
        .filter(|p| p.join("program.warp").is_file())
        .collect();
    dirs.sort();
    assert!(dirs.len() >= 10, "the corpus lost entries: {dirs:?}");
    for dir in dirs {
        let replay = replay_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
        assert_eq!(replay.verdicts.len(), 3, "{}", dir.display());
        // Agreement counts only where the reference ran to the end (the
        // runaway loop's stops on every engine) and no engine declined.
        let reference = if dir.ends_with("runaway-loop") {
            "reference: hang"
        } else {
            "reference: finished"
        };
        for v in &replay.verdicts {
            assert!(
                v.finding.is_none(),
                "{} on {}:\n{}",
                dir.display(),
                v.engine.name(),
                v.report
            );
            let (first, second) = v.report.split_once('\n').unwrap_or((&v.report, ""));
            assert!(
                first.starts_with(reference),
                "{}:\n{}",
                dir.display(),
                v.report
            );
            assert!(
                !second.contains(": unsupported"),
                "{}:\n{}",
                dir.display(),
                v.report
            );
        }
    }
}

#[test]
fn a_seeded_campaign_is_the_same_with_one_job_or_two() {
    let dir = scratch("fuzz-seeded", &[]);
    let summary = |jobs: &str| {
        let run = warpjit(
            &dir,
            &[
                "fuzz", "--cases", "2", "--seed", "77", "--jobs", jobs, "--out", "found",
            ],
        );
        assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
        assert!(run.stdout.contains("2 cases"), "{}", run.stdout);
        assert!(run.stdout.contains("mismatches 0"), "{}", run.stdout);
        assert!(run.stderr.contains("seed 77"), "{}", run.stderr);
        run.stdout
            .lines()
            .find(|l| l.contains("coverage:"))
            .expect("a coverage line")
            .to_string()
    };
    assert_eq!(summary("1"), summary("2"));
    assert!(
        !dir.join("found").exists(),
        "no reproducers without findings"
    );
}

#[test]
fn a_campaign_compiles_for_the_target_and_level_it_is_given() {
    let dir = scratch("fuzz-target", &[]);
    let run = warpjit(
        &dir,
        &[
            "fuzz", "--cases", "2", "--seed", "78", "--jobs", "1", "--target", "sse4.2", "-O", "1",
            "--out", "found",
        ],
    );
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    assert!(
        run.stderr.contains("JIT for sse4.2 at -O1"),
        "{}",
        run.stderr
    );
    assert!(run.stdout.contains("mismatches 0"), "{}", run.stdout);
}

#[test]
fn a_replay_compiles_for_the_target_and_level_of_the_run_line() {
    let program = "//! run: --grid 2 --sms 2 --target avx2 --opt-level 0 --buffer out=zeros:u32:64\n\
                   buffer @out[0]: u32\n\
                   kernel @main workgroup(32) {\n  %i = global_id.x\n  %a = shl %i, 2\n  store.u32 @out, %a, %i\n}\n";
    let dir = scratch("replay-target", &[("program.warp", program)]);
    let replay = replay_dir(&dir).expect("replays");
    assert_eq!((replay.jit.target, replay.jit.opt_level), (Target::Avx2, 0));
    assert!(!replay.differs());
    let run = warpjit(&dir, &["replay", "."]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    assert!(
        run.stdout.starts_with("JIT for avx2 at -O0\n"),
        "{}",
        run.stdout
    );
}

#[test]
fn the_running_case_is_on_disk_for_a_replay() {
    use warpjit::fuzz::case::{case_seed, generate};
    use warpjit::fuzz::repro::{write_running, Origin};
    let root = scratch("fuzz-running", &[]);
    let seed = case_seed(77, 1);
    let case = generate(seed).expect("generates");
    let origin = Origin {
        campaign_seed: 77,
        case_index: 1,
        case_seed: seed,
    };
    let jit = warpjit_jit::JitOptions::default();
    let dir = write_running(
        &root,
        case.module.module(),
        &case.launch,
        case.machines[0],
        &origin,
        jit,
    )
    .expect("writes");
    assert_eq!(dir, root.join(format!("running-{seed:016x}")));
    let program = std::fs::read_to_string(dir.join("program.warp")).expect("program");
    assert!(
        program.starts_with("// warpjit fuzz was running this case (campaign seed 77, case 1,"),
        "{program}"
    );
    let replay = replay_dir(&dir).expect("replays");
    assert!(!replay.differs());
}
