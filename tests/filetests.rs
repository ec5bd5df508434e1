//! Runs every `.warp` file with `//! expect` lines under tests/filetests/,
//! examples/ and benches/workloads/ (see `warpjit::filetest` for the
//! syntax).

use std::path::{Path, PathBuf};
use std::sync::Mutex;

fn warp_files(dir: &Path, found: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            warp_files(&path, found);
        } else if path.extension().is_some_and(|e| e == "warp") {
            found.push(path);
        }
    }
}

#[test]
fn filetests_and_examples_meet_their_expectations() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    warp_files(&root.join("tests/filetests"), &mut files);
    warp_files(&root.join("examples"), &mut files);
    warp_files(&root.join("benches/workloads"), &mut files);
    files.sort();
    // A file in tests/filetests/ exists to be checked: one without
    // expectations (or whose directives do not scan) is an error, not a
    // file to skip. Examples and workloads may have none.
    let filetests = root.join("tests/filetests");
    let mut tests = Vec::new();
    for path in files {
        let source = std::fs::read_to_string(&path).expect("readable .warp file");
        if warpjit::filetest::has_expectations(&source) {
            tests.push(path);
        } else {
            assert!(
                !path.starts_with(&filetests),
                "{}: no `//! expect` line that scans, so nothing would be checked",
                path.display()
            );
        }
    }
    assert!(tests.len() >= 30, "filetests were lost: {}", tests.len());
    // The runner's own two files prove it finds and runs both kinds.
    for own in ["runner_expect_values.warp", "runner_expect_error.warp"] {
        assert!(
            tests.iter().any(|p| p.ends_with(own)),
            "tests/filetests/{own} was not found"
        );
    }

    let next = Mutex::new(tests.iter());
    let failures = Mutex::new(Vec::new());
    let workers = std::thread::available_parallelism().map_or(1, |n| n.get());
    std::thread::scope(|scope| {
        for _ in 0..workers {
            scope.spawn(|| loop {
                let Some(path) = next.lock().expect("no worker panics").next() else {
                    break;
                };
                let shown = path.strip_prefix(root).unwrap_or(path);
                let started = std::time::Instant::now();
                let result = warpjit::filetest::run_file(path);
                println!(
                    "{} {} ({:.2} s)",
                    if result.is_ok() { "ok  " } else { "FAIL" },
                    shown.display(),
                    started.elapsed().as_secs_f64()
                );
                if let Err(e) = result {
                    failures.lock().expect("no worker panics").push(e);
                }
            });
        }
    });
    let failures = failures.into_inner().expect("no worker panics");
    assert!(
        failures.is_empty(),
        "{} of {} filetests failed:\n\n{}",
        failures.len(),
        tests.len(),
        failures.join("\n\n")
    );
}
