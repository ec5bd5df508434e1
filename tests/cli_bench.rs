//! `warpjit bench`: the table, JSON and SVG outputs and option errors
//! (at the test sizes, one run).

mod cli_support;
use cli_support::{scratch, warpjit};

#[test]
fn table_lists_every_configuration_with_checked_output() {
    let dir = scratch("bench-table", &[]);
    let run = warpjit(&dir, &["bench", "--small", "--runs", "1", "saxpy"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    for label in ["interp", "jit 1 SM", "rust 1 thread", "rust rayon"] {
        let line = run
            .stdout
            .lines()
            .find(|l| l.starts_with("saxpy") && l.contains(label))
            .unwrap_or_else(|| panic!("no {label} row in\n{}", run.stdout));
        assert!(line.contains("elements/s"), "{line}");
    }
    let jit = run.stdout.lines().find(|l| l.contains("jit 1 SM")).unwrap();
    assert!(jit.ends_with(" ok") && jit.contains(" ms "), "{jit}");
    assert!(
        run.stderr.contains("[1/1] saxpy"),
        "progress on stderr: {}",
        run.stderr
    );
}

#[test]
fn the_header_says_whether_accesses_prefetch_ahead() {
    let dir = scratch("bench-prefetch", &[]);
    let args = ["bench", "--small", "--runs", "1", "--no-interp", "W2"];
    let default = warpjit_jit::JitOptions::default().prefetch_ahead.name();
    let choices = [
        (None, default),
        (Some("on"), "on"),
        (Some("off"), "off"),
        (Some("without-stores"), "without-stores"),
    ];
    for (extra, said) in choices {
        let mut all = args.to_vec();
        if let Some(choice) = extra {
            all.extend(["--prefetch-ahead", choice]);
        }
        let run = warpjit(&dir, &all);
        assert_eq!(run.code, 0, "{}", run.stderr);
        let header = format!("prefetch ahead: {said}\n");
        assert!(run.stdout.contains(&header), "{extra:?}: {}", run.stdout);
        let jit = run.stdout.lines().find(|l| l.contains("jit 1 SM")).unwrap();
        assert!(jit.ends_with(" ok"), "{jit}");
    }
}

#[test]
fn json_and_svg_carry_the_results() {
    let dir = scratch("bench-json", &[]);
    let run = warpjit(
        &dir,
        &[
            "bench",
            "--small",
            "--runs",
            "2",
            "--no-interp",
            "--json",
            "--plot",
            "charts/chart.svg",
            "--sms",
            "2",
            "W3",
        ],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stdout.starts_with('{') && run.stdout.trim_end().ends_with('}'));
    assert!(
        run.stdout
            .contains("\"case\": \"reduce\", \"id\": \"W3\", \"config\": \"jit1\""),
        "{}",
        run.stdout
    );
    assert!(run.stdout.contains("\"outcome\": \"checked\""));
    assert!(!run.stdout.contains("\"config\": \"interp\""));
    let svg = std::fs::read_to_string(dir.join("charts/chart.svg")).expect("the chart was written");
    assert!(
        svg.starts_with("<svg") && svg.contains("reduce · jit 1 SM"),
        "{svg}"
    );
    // Against one Rust thread: the 1-SM row, the all-SMs row and rayon.
    assert!(
        run.stderr.contains("wrote charts/chart.svg: 3 bars"),
        "{}",
        run.stderr
    );
}

#[test]
fn bad_names_and_options_are_one_line_errors() {
    let dir = scratch("bench-errors", &[]);
    let run = warpjit(&dir, &["bench", "--small", "sgemm"]);
    assert_eq!(run.code, 1);
    assert!(
        run.stderr.starts_with("error: unknown benchmark `sgemm`"),
        "{}",
        run.stderr
    );
    // Before any measuring: nothing is printed to stdout.
    std::fs::write(dir.join("a_file"), "").unwrap();
    let run = warpjit(&dir, &["bench", "saxpy", "--plot", "a_file/dir/plot.svg"]);
    assert_eq!(run.code, 1);
    assert!(
        run.stderr
            .contains("--plot a_file/dir/plot.svg: cannot create the directory a_file/dir"),
        "{}",
        run.stderr
    );
    assert!(run.stdout.is_empty(), "{}", run.stdout);
    let refused: [(&[&str], &str); 3] = [
        (
            &["bench", "saxpy", "--plot", "chart.png"],
            "error: --plot chart.png: the chart is written as SVG; give a file name ending in .svg",
        ),
        (
            &["bench", "micro", "--no-interp", "--plot", "chart.svg"],
            "error: --plot chart.svg: micro-benchmarks are plotted against the interpreter, \
             which --no-interp leaves out",
        ),
        (
            &["bench", "W9"],
            "error: unknown benchmark `W9` (known: workloads, micro, mandelbrot (W1), saxpy (W2),",
        ),
    ];
    for (args, message) in refused {
        let run = warpjit(&dir, args);
        assert_eq!(run.code, 1, "{args:?}");
        assert!(run.stderr.starts_with(message), "{args:?}: {}", run.stderr);
        assert!(run.stdout.is_empty(), "{}", run.stdout);
    }
    let run = warpjit(&dir, &["bench", "--runs", "0"]);
    assert_eq!(run.code, 2);
    assert!(run.stderr.contains("--runs"), "{}", run.stderr);
}
