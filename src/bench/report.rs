//! The report of a run: a text table, JSON for scripts, an SVG bar chart.

use crate::bench::runner::{Measurement, Outcome};
use std::fmt::Write as _;
use std::time::Duration;

/// The row `config_key` of `case`, when it ran.
fn find<'a>(rows: &'a [Measurement], case: &str, key: &str) -> Option<&'a Measurement> {
    rows.iter()
        .find(|r| r.case == case && r.config.key() == key && !r.times.is_empty())
}

/// How many times faster `row` is than configuration `key` of the same
/// case (median against median); None against itself.
pub fn speedup(rows: &[Measurement], row: &Measurement, key: &str) -> Option<f64> {
    if row.config.key() == key {
        return None;
    }
    let other = find(rows, &row.case, key)?;
    let (a, b) = (other.median()?.as_secs_f64(), row.median()?.as_secs_f64());
    (a > 0.0 && b > 0.0).then(|| a / b)
}

/// `1.23 ms`: three significant digits.
pub fn duration(d: Duration) -> String {
    let s = d.as_secs_f64();
    let (value, unit) = if s >= 1.0 {
        (s, "s")
    } else if s >= 1e-3 {
        (s * 1e3, "ms")
    } else if s >= 1e-6 {
        (s * 1e6, "us")
    } else {
        (s * 1e9, "ns")
    };
    format!("{} {unit}", significant(value))
}

fn significant(v: f64) -> String {
    if v >= 100.0 {
        format!("{v:.0}")
    } else if v >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

/// `1.23 G`: a count with an SI prefix.
pub fn count(v: f64) -> String {
    let (scaled, prefix) = if v >= 1e12 {
        (v / 1e12, "T")
    } else if v >= 1e9 {
        (v / 1e9, "G")
    } else if v >= 1e6 {
        (v / 1e6, "M")
    } else if v >= 1e3 {
        (v / 1e3, "k")
    } else {
        (v, "")
    };
    format!("{} {prefix}", significant(scaled))
}

fn ratio(v: Option<f64>) -> String {
    match v {
        Some(v) if v >= 100.0 => format!("{v:.0}x"),
        Some(v) if v >= 10.0 => format!("{v:.1}x"),
        Some(v) => format!("{v:.2}x"),
        None => "-".into(),
    }
}

/// Every timed run of a row does the same work, so a median this many
/// times the min or more says the runs were disturbed (other load on the
/// machine, its clock changing). Quiet runs of the workloads on a 2-core
/// host stay within about 1.2x, memory-bound ones included.
pub const UNSTEADY_SPREAD: f64 = 1.25;

/// The note naming the rows whose runs strayed (`None` when none did).
fn unsteady_note(rows: &[Measurement]) -> Option<String> {
    let strayed: Vec<String> = rows
        .iter()
        .filter_map(|r| {
            let spread = r.spread().filter(|&s| s >= UNSTEADY_SPREAD)?;
            Some(format!("{} {} {spread:.2}x", r.case, r.label))
        })
        .collect();
    (!strayed.is_empty()).then(|| {
        format!(
            "unsteady: {} row{} with a median at least {UNSTEADY_SPREAD}x the min: \
             their runs were disturbed (other work on the machine, a changing clock), so \
             the ratios of {} are uncertain; run again on a quieter machine or with more \
             --runs: {}",
            strayed.len(),
            if strayed.len() == 1 { "" } else { "s" },
            if strayed.len() == 1 {
                "that row"
            } else {
                "those rows"
            },
            strayed.join(", ")
        )
    })
}

/// The text table, then notes on what failed and on unsteady rows.
pub fn table(rows: &[Measurement]) -> String {
    let header = [
        "case",
        "config",
        "runs",
        "min",
        "median",
        "throughput",
        "compile",
        "vs interp",
        "vs rust 1t",
        "vs rayon",
        "check",
    ];
    let mut lines: Vec<Vec<String>> = vec![header.iter().map(|s| s.to_string()).collect()];
    let mut notes = Vec::new();
    for row in rows {
        let ran = !row.times.is_empty();
        let runs = if !ran {
            "-".to_string()
        } else if row.warmed_up {
            row.times.len().to_string()
        } else {
            format!("{}*", row.times.len())
        };
        let shown = |d: Option<Duration>| d.map_or("-".to_string(), duration);
        let throughput = row
            .throughput()
            .map_or("-".to_string(), |t| format!("{}{}/s", count(t), row.unit));
        let check = match &row.outcome {
            Outcome::Checked => "ok".to_string(),
            Outcome::Unchecked => "-".to_string(),
            Outcome::Wrong(why) => {
                notes.push(format!(
                    "{} on {}: WRONG OUTPUT: {why}",
                    row.case, row.label
                ));
                "WRONG".to_string()
            }
            Outcome::Failed(why) => {
                notes.push(format!("{} on {}: did not run: {why}", row.case, row.label));
                "failed".to_string()
            }
        };
        lines.push(vec![
            row.case.clone(),
            row.label.clone(),
            runs,
            shown(row.min()),
            shown(row.median()),
            throughput,
            shown(row.compile),
            if row.config.key() == "interp" {
                "-".into()
            } else {
                ratio(speedup(rows, row, "interp"))
            },
            if row.config.key() == "rust1" {
                "-".into()
            } else {
                ratio(speedup(rows, row, "rust1"))
            },
            if row.config.key() == "rayon" {
                "-".into()
            } else {
                ratio(speedup(rows, row, "rayon"))
            },
            check,
        ]);
    }
    let widths: Vec<usize> = (0..header.len())
        .map(|c| {
            lines
                .iter()
                .map(|l| l[c].chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = String::new();
    let mut previous_case = String::new();
    for (i, line) in lines.iter().enumerate() {
        if i > 1 && line[0] != previous_case {
            out.push('\n');
        }
        previous_case = line[0].clone();
        let mut text = String::new();
        for (c, cell) in line.iter().enumerate() {
            // Names left-aligned, numbers right-aligned.
            let cell = if c < 2 {
                format!("{cell:<w$}", w = widths[c])
            } else {
                format!("{cell:>w$}", w = widths[c])
            };
            text.push_str(&cell);
            text.push_str("  ");
        }
        out.push_str(text.trim_end());
        out.push('\n');
    }
    out.push_str(&format!(
        "\nruns: timed runs after one warm-up run, one run of each configuration a \
         round (* = no warm-up: the interpreter's first run is the timed one). min, \
         median: wall time of one launch (inputs are copied in before the clock \
         starts). throughput: units per second at the median. compile: the JIT's \
         cold compile of the kernel (median of {}, compile cache cleared before \
         each), not included in the run times. vs X: X's median / this median \
         (above 1x: faster than X). check: the output equals an independent Rust \
         computation (micro-benchmarks: the first engine's output).\n",
        crate::bench::engines::COLD_COMPILES
    ));
    notes.extend(unsteady_note(rows));
    for note in notes {
        out.push_str(&note);
        out.push('\n');
    }
    out
}

/// A JSON string literal.
pub(crate) fn json_string(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn json_number(v: Option<f64>) -> String {
    match v {
        Some(v) if v.is_finite() => format!("{v}"),
        _ => "null".into(),
    }
}

/// Everything in the table as JSON: `{"machine": {...}, "results": [...]}`,
/// times in seconds, `null` where there is no value. The machine's fields
/// are keyed by their labels with `_` for spaces; values that are whole
/// numbers are numbers.
pub fn json(rows: &[Measurement], machine: &[(&str, String)]) -> String {
    let mut out = String::from("{\n  \"machine\": {");
    let fields: Vec<String> = machine
        .iter()
        .map(|(k, v)| {
            let value = match v.parse::<u64>() {
                Ok(n) => n.to_string(),
                Err(_) => json_string(v),
            };
            format!("{}: {value}", json_string(&k.replace(' ', "_")))
        })
        .collect();
    out.push_str(&fields.join(", "));
    out.push_str("},\n  \"results\": [\n");
    let secs = |d: Option<Duration>| json_number(d.map(|d| d.as_secs_f64()));
    let items: Vec<String> = rows
        .iter()
        .map(|r| {
            let (outcome, error) = match &r.outcome {
                Outcome::Checked => ("checked", None),
                Outcome::Unchecked => ("unchecked", None),
                Outcome::Wrong(e) => ("wrong", Some(e)),
                Outcome::Failed(e) => ("failed", Some(e)),
            };
            let times: Vec<String> = r
                .times
                .iter()
                .map(|t| format!("{}", t.as_secs_f64()))
                .collect();
            format!(
                "    {{\"case\": {}, \"id\": {}, \"config\": {}, \"label\": {}, \"unit\": {}, \
                 \"units_per_run\": {}, \"warmed_up\": {}, \"times_s\": [{}], \"min_s\": {}, \
                 \"median_s\": {}, \"median_over_min\": {}, \"throughput_per_s\": {}, \
                 \"compile_s\": {}, \
                 \"speedup_vs_interp\": {}, \"speedup_vs_rust1\": {}, \"speedup_vs_rayon\": {}, \
                 \"outcome\": {}, \"error\": {}}}",
                json_string(&r.case),
                json_string(r.id),
                json_string(r.config.key()),
                json_string(&r.label),
                json_string(r.unit),
                json_number(Some(r.units)),
                r.warmed_up,
                times.join(", "),
                secs(r.min()),
                secs(r.median()),
                json_number(r.spread()),
                json_number(r.throughput()),
                secs(r.compile),
                json_number(speedup(rows, r, "interp")),
                json_number(speedup(rows, r, "rust1")),
                json_number(speedup(rows, r, "rayon")),
                json_string(outcome),
                error.map_or("null".into(), |e| json_string(e)),
            )
        })
        .collect();
    out.push_str(&items.join(",\n"));
    out.push_str("\n  ]\n}\n");
    out
}

/// Text for SVG content.
fn xml_escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// Bar colours per configuration key.
fn colour(key: &str) -> &'static str {
    match key {
        "interp" => "#9e9e9e",
        "jit1" => "#64b5f6",
        "jit" => "#1565c0",
        "rayon" => "#ef6c00",
        _ => "#43a047",
    }
}

/// A horizontal bar chart of speedups on a log scale: for workloads against
/// one Rust thread, for micro-benchmarks against the interpreter. Also
/// returns how many bars it has.
pub fn svg(rows: &[Measurement]) -> (String, usize) {
    struct Bar {
        label: String,
        key: &'static str,
        value: f64,
        first_of_case: bool,
    }
    let mut bars = Vec::new();
    let mut last_case = String::new();
    for row in rows {
        let against = if find(rows, &row.case, "rust1").is_some() {
            "rust1"
        } else {
            "interp"
        };
        if row.config.key() == against {
            continue;
        }
        if let Some(value) = speedup(rows, row, against) {
            bars.push(Bar {
                label: format!(
                    "{} · {} (vs {})",
                    row.case,
                    row.label,
                    if against == "rust1" {
                        "rust 1t"
                    } else {
                        "interp"
                    }
                ),
                key: row.config.key(),
                value,
                first_of_case: row.case != last_case,
            });
            last_case = row.case.clone();
        }
    }
    let low = bars
        .iter()
        .map(|b| b.value)
        .fold(1.0f64, f64::min)
        .log10()
        .floor();
    let high = bars
        .iter()
        .map(|b| b.value)
        .fold(1.0f64, f64::max)
        .log10()
        .ceil()
        .max(low + 1.0);
    let (label_w, plot_w, bar_h, top) = (330.0, 520.0, 14.0, 40.0);
    let gaps = bars.iter().filter(|b| b.first_of_case).count() as f64;
    let height = top + bars.len() as f64 * (bar_h + 3.0) + gaps * 6.0 + 40.0;
    let width = label_w + plot_w + 80.0;
    let x_of = |v: f64| label_w + (v.log10() - low) / (high - low) * plot_w;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width}\" height=\"{height}\" \
         font-family=\"sans-serif\" font-size=\"11\">"
    );
    let _ = writeln!(out, "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>");
    let _ = writeln!(
        out,
        "<text x=\"{label_w}\" y=\"18\" font-size=\"13\">warpjit bench: speedup (log scale; \
         workloads vs one Rust thread, micro-benchmarks vs the interpreter)</text>"
    );
    let mut decade = low;
    while decade <= high {
        let x = x_of(10f64.powf(decade));
        let _ = writeln!(
            out,
            "<line x1=\"{x:.1}\" y1=\"{}\" x2=\"{x:.1}\" y2=\"{:.1}\" stroke=\"#ddd\"/>\
             <text x=\"{x:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}x</text>",
            top - 6.0,
            height - 30.0,
            height - 16.0,
            10f64.powf(decade)
        );
        decade += 1.0;
    }
    let mut y = top;
    for bar in &bars {
        if bar.first_of_case {
            y += 6.0;
        }
        let x0 = x_of(1.0);
        let x1 = x_of(bar.value);
        let (left, w) = if x1 >= x0 {
            (x0, x1 - x0)
        } else {
            (x1, x0 - x1)
        };
        let _ = writeln!(
            out,
            "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>\
             <rect x=\"{left:.1}\" y=\"{y:.1}\" width=\"{:.1}\" height=\"{bar_h}\" fill=\"{}\"/>\
             <text x=\"{:.1}\" y=\"{:.1}\">{}</text>",
            label_w - 6.0,
            y + bar_h - 3.0,
            xml_escape(&bar.label),
            w.max(1.0),
            colour(bar.key),
            left + w.max(1.0) + 4.0,
            y + bar_h - 3.0,
            ratio(Some(bar.value)),
        );
        y += bar_h + 3.0;
    }
    let x = x_of(1.0);
    let _ = writeln!(
        out,
        "<line x1=\"{x:.1}\" y1=\"{}\" x2=\"{x:.1}\" y2=\"{:.1}\" stroke=\"black\"/>",
        top - 6.0,
        height - 30.0
    );
    out.push_str("</svg>\n");
    (out, bars.len())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::engines::Engine;
    use crate::bench::runner::{Config, Outcome};

    fn row(label_sms: u32, times_ms: &[u64]) -> Measurement {
        Measurement {
            case: "saxpy".into(),
            id: "W2",
            unit: "elements",
            config: Config::Kernel(Engine::Jit { sms: label_sms }),
            label: format!("jit {label_sms} SM"),
            units: 1e6,
            times: times_ms.iter().map(|&t| Duration::from_millis(t)).collect(),
            warmed_up: true,
            compile: None,
            outcome: Outcome::Checked,
        }
    }

    #[test]
    fn rows_whose_median_strays_from_the_min_are_named() {
        // Medians 10 / 10 ms (spread 1.0) and 13 / 10 ms (1.3).
        let steady = row(1, &[10, 10, 11, 10, 12]);
        let strayed = row(2, &[13, 10, 14, 13, 20]);
        let near = |v: Option<f64>, want: f64| v.is_some_and(|v| (v - want).abs() < 1e-9);
        assert!(near(steady.spread(), 1.0), "{:?}", steady.spread());
        assert!(near(strayed.spread(), 1.3), "{:?}", strayed.spread());
        let text = table(&[steady.clone(), strayed.clone()]);
        let note = text
            .lines()
            .find(|l| l.starts_with("unsteady:"))
            .unwrap_or_else(|| panic!("no note in\n{text}"));
        assert!(note.contains("1 row with"), "{note}");
        assert!(note.ends_with(": saxpy jit 2 SM 1.30x"), "{note}");
        assert!(!table(&[steady]).contains("unsteady"));
        let json = json(&[strayed], &[]);
        let field = json
            .split("\"median_over_min\": ")
            .nth(1)
            .and_then(|rest| rest.split(',').next())
            .and_then(|v| v.parse::<f64>().ok());
        assert!(near(field, 1.3), "{json}");
    }

    #[test]
    fn fewer_than_three_runs_have_no_spread() {
        let two = row(1, &[10, 30]);
        assert_eq!(two.spread(), None);
        assert!(!table(&[two]).contains("unsteady"));
        assert!(json(&[row(1, &[10])], &[]).contains("\"median_over_min\": null,"));
    }

    #[test]
    fn json_has_null_against_itself_and_typed_machine_fields() {
        // The 1-SM row against itself is null, as the table's `-`; the
        // 2-SM row is twice as fast as it.
        let rows = [row(1, &[20, 20, 20]), row(2, &[10, 10, 10])];
        let text = json(
            &rows,
            &[("cores", "2".into()), ("rust baselines", "avx2".into())],
        );
        assert!(
            text.contains("\"machine\": {\"cores\": 2, \"rust_baselines\": \"avx2\"}"),
            "{text}"
        );
        assert_eq!(speedup(&rows, &rows[0], "jit1"), None);
        let two = speedup(&rows, &rows[1], "jit1").expect("against one SM");
        assert!((two - 2.0).abs() < 1e-9, "{two}");
    }
}
