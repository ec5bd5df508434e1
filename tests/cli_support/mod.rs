//! Running the built `warpjit` binary in tests: one place for the process
//! plumbing and the "never panics" check every CLI test relies on.

use std::path::{Path, PathBuf};
use std::process::Command;

/// `warpjit run` options that shrink `examples/mandelbrot.warp` to a 96x64
/// image (24 workgroups of 256): the full image takes the debug-build
/// interpreter seconds. Not every test binary that includes this uses it.
#[allow(dead_code)]
pub const SMALL_MANDELBROT: [&str; 8] = [
    "--grid",
    "24",
    "--param",
    "width=96",
    "--param",
    "height=64",
    "--buffer",
    "out=zeros:u32:6144",
];

pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

/// Runs `warpjit ARGS` in `dir`; fails the test if the binary panicked.
pub fn warpjit(dir: &Path, args: &[&str]) -> Run {
    let out = Command::new(env!("CARGO_BIN_EXE_warpjit"))
        .args(args)
        .current_dir(dir)
        .env_remove("RUST_LOG")
        .output()
        .expect("the warpjit binary starts");
    let run = Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    };
    assert!(
        !run.stderr.contains("panicked") && run.code != 101,
        "warpjit {args:?} panicked:\n{}",
        run.stderr
    );
    run
}

/// A fresh directory, unique to this test and process, holding `files`.
pub fn scratch(test: &str, files: &[(&str, &str)]) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("warpjit-cli-{test}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    for (name, text) in files {
        std::fs::write(dir.join(name), text).expect("write test file");
    }
    dir
}
