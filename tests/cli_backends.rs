//! Every example gives the same output through `warpjit run` on the JIT
//! (the default) and on the interpreter: the same printed elements, the
//! same fault summary, and every buffer written out byte for byte equal.
//! (Several SM counts are compared in `examples_on_runtime.rs`.)

mod cli_support;
use cli_support::{scratch, warpjit, SMALL_MANDELBROT};
use std::path::Path;
use warpjit::ir::text;

/// What a run on `backend` printed, without the lines that name the
/// backend or give times and statement counts, and with the output files
/// (named after the backend) unnamed.
fn comparable(stdout: &str, backend: &str) -> Vec<String> {
    stdout
        .lines()
        .filter(|l| !l.starts_with("ran @") && !l.trim_start().starts_with("time "))
        .map(|l| l.replace(&format!("{backend}-"), ""))
        .collect()
}

#[test]
fn every_example_is_the_same_on_the_jit_and_the_interpreter() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut examples: Vec<_> = std::fs::read_dir(root.join("examples"))
        .expect("examples/ exists")
        .map(|entry| entry.expect("readable directory").path())
        .filter(|p| p.extension().is_some_and(|e| e == "warp"))
        .collect();
    examples.sort();
    assert!(examples.len() >= 7, "{examples:?}");
    for path in examples {
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .expect("utf-8 name");
        let source = std::fs::read_to_string(&path).expect("readable example");
        let module = text::parse(&source).expect("examples parse");
        let dir = scratch(&format!("backends-{name}"), &[(name, &source)]);
        std::fs::create_dir_all(dir.join("out")).expect("out/ for the examples' outputs");
        let mut outputs = Vec::new();
        for backend in ["jit", "interp"] {
            let mut args = vec![
                "run".to_string(),
                name.to_string(),
                "--backend".to_string(),
                backend.to_string(),
                // One SM runs the workgroups in order, so even the examples
                // whose output follows the order of atomics between
                // workgroups (stream compaction) have one answer.
                "--sms".to_string(),
                "1".to_string(),
            ];
            if name == "mandelbrot.warp" {
                for word in SMALL_MANDELBROT.iter().chain(&["--image", "96x64"]) {
                    args.push(word.to_string());
                }
            }
            for buffer in &module.buffers {
                args.push("--output".into());
                args.push(format!("{}={backend}-{}.bin", buffer.name, buffer.name));
            }
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            let run = warpjit(&dir, &args);
            assert_eq!(run.code, 0, "{name} on {backend}: {}", run.stderr);
            assert!(
                run.stdout.contains(&format!(" on {backend}: ")),
                "{name}: {}",
                run.stdout
            );
            let buffers: Vec<Vec<u8>> = module
                .buffers
                .iter()
                .map(|b| {
                    std::fs::read(dir.join(format!("{backend}-{}.bin", b.name)))
                        .expect("the run wrote the buffer")
                })
                .collect();
            outputs.push((run.stdout, buffers));
        }
        let (jit, interp) = (&outputs[0], &outputs[1]);
        assert_eq!(
            comparable(&jit.0, "jit"),
            comparable(&interp.0, "interp"),
            "{name}"
        );
        for (buffer, (a, b)) in module.buffers.iter().zip(jit.1.iter().zip(&interp.1)) {
            assert!(
                a == b,
                "{name}: @{} differs between the backends",
                buffer.name
            );
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}
