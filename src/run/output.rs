//! Buffers after a run: printed as text, or written as raw bytes, decimal
//! lines (`.txt`) or a grey image (`.pgm`).

use super::options::Radix;
use super::plan::{OutputKind, OutputPlan, PrintPlan};
use crate::values::{decode, format_decimal, format_hex, read_element, Number};
use std::fmt::Write as _;
use warpjit_ir::{Module, NumFormat};

/// Elements per printed row.
const ROW: u64 = 8;

/// The printed form of `print`:
/// ```text
/// @out[0..10] u32:
///   0:  0  1  2  3  4  5  6  7
///   8:  8  9
/// ```
pub fn format_print(module: &Module, buffers: &[Vec<u8>], print: &PrintPlan) -> String {
    let bytes = &buffers[print.buffer];
    let start = print.range.start;
    let end = print.range.end.unwrap_or(start);
    let name = &module.buffers[print.buffer].name;
    let mut out = format!("@{name}[{start}..{end}] {}:\n", print.format.name());
    if start == end {
        out.push_str("  (no elements)\n");
        return out;
    }
    let cells: Vec<String> = (start..end)
        .map(|i| {
            let bits = read_element(bytes, print.format, i as usize);
            match print.radix {
                Radix::Dec => format_decimal(print.format, bits),
                Radix::Hex => format_hex(print.format, bits),
            }
        })
        .collect();
    let cell_width = cells.iter().map(String::len).max().unwrap_or(1);
    let index_width = (end - 1).to_string().len();
    for (row, chunk) in cells.chunks(ROW as usize).enumerate() {
        let first = start + row as u64 * ROW;
        let _ = write!(out, "  {first:>index_width$}:");
        for cell in chunk {
            let _ = write!(out, " {cell:>cell_width$}");
        }
        out.push('\n');
    }
    // Printed to the end of a buffer that is not a whole number of the
    // printed elements: say what is left over.
    let size = print.format.bytes() as usize;
    let tail = bytes.len() % size;
    if tail != 0 && end as usize * size + tail == bytes.len() {
        let _ = writeln!(
            out,
            "  ({tail} more byte{}, less than one {})",
            if tail == 1 { "" } else { "s" },
            print.format.name()
        );
    }
    out
}

/// Writes one output file (creating its directory) and says what it wrote.
pub fn write_output(
    module: &Module,
    buffers: &[Vec<u8>],
    output: &OutputPlan,
) -> Result<String, String> {
    let decl = &module.buffers[output.buffer];
    let bytes = &buffers[output.buffer];
    let count = bytes.len() / decl.elem.bytes() as usize;
    let (contents, what) = match output.kind {
        OutputKind::Raw => (bytes.clone(), format!("{} bytes", bytes.len())),
        OutputKind::Text => {
            let mut text = String::with_capacity(count * 4);
            for i in 0..count {
                text.push_str(&format_decimal(
                    decl.elem,
                    read_element(bytes, decl.elem, i),
                ));
                text.push('\n');
            }
            (
                text.into_bytes(),
                format!("{count} {} elements as decimal lines", decl.elem.name()),
            )
        }
        OutputKind::Pgm(image) => {
            let pixels = image.width as usize * image.height as usize;
            let (data, low, high) = grey_levels(bytes, decl.elem, pixels);
            let mut file = format!("P5\n{} {}\n255\n", image.width, image.height).into_bytes();
            file.extend_from_slice(&data);
            (
                file,
                format!(
                    "a {}x{} grey image (values {low}..{high} scaled to 0..255)",
                    image.width, image.height
                ),
            )
        }
    };
    let path = &output.path;
    let fail = |e: std::io::Error| {
        format!(
            "--output {}: cannot write {}: {e}",
            output.label,
            path.display()
        )
    };
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(fail)?;
    }
    std::fs::write(path, contents).map_err(fail)?;
    Ok(format!(
        "wrote @{} to {}: {what}",
        decl.name,
        path.display()
    ))
}

/// The first `pixels` elements scaled linearly from their smallest to their
/// largest value onto 0..=255 (NaN is 0; a constant image is all 0). Also
/// returns the smallest and largest value as text.
fn grey_levels(bytes: &[u8], format: NumFormat, pixels: usize) -> (Vec<u8>, String, String) {
    let values: Vec<f64> = (0..pixels)
        .map(|i| match decode(format, read_element(bytes, format, i)) {
            Number::Signed(v) => v as f64,
            Number::Unsigned(v) => v as f64,
            Number::Float(v) => v,
        })
        .collect();
    let finite = values.iter().copied().filter(|v| v.is_finite());
    let low = finite.clone().fold(f64::INFINITY, f64::min);
    let high = finite.fold(f64::NEG_INFINITY, f64::max);
    let span = high - low;
    let grey = values
        .iter()
        .map(|&v| {
            if span > 0.0 && v.is_finite() {
                ((v - low) / span * 255.0).round() as u8
            } else if v == f64::INFINITY {
                255
            } else {
                0
            }
        })
        .collect();
    let show = |v: f64| {
        if v.is_finite() {
            v.to_string()
        } else {
            "-".to_string()
        }
    };
    (grey, show(low), show(high))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grey_levels_span_the_value_range() {
        let bytes: Vec<u8> = [0u32, 128, 256, 64]
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect();
        let (grey, low, high) = grey_levels(&bytes, NumFormat::U32, 4);
        assert_eq!(grey, [0, 128, 255, 64]);
        assert_eq!((low.as_str(), high.as_str()), ("0", "256"));
        let (flat, _, _) = grey_levels(&[7, 7], NumFormat::U8, 2);
        assert_eq!(flat, [0, 0]);
    }

    #[test]
    fn bytes_past_the_last_whole_element_are_mentioned() {
        let module = warpjit_ir::text::parse("buffer @out[0]: u8\nkernel @k {\n}\n").unwrap();
        let buffers = vec![vec![1u8; 12]];
        let print = |format, end| PrintPlan {
            buffer: 0,
            range: super::super::options::ElemRange {
                start: 0,
                end: Some(end),
            },
            format,
            radix: Radix::Dec,
            label: String::new(),
        };
        let whole = format_print(&module, &buffers, &print(NumFormat::U64, 1));
        assert!(
            whole.ends_with("  (4 more bytes, less than one u64)\n"),
            "{whole}"
        );
        // Not when the range stops before the end, nor when nothing is left.
        let part = format_print(&module, &buffers, &print(NumFormat::U8, 4));
        assert!(!part.contains("more byte"), "{part}");
        let exact = format_print(&module, &buffers, &print(NumFormat::U32, 3));
        assert!(!exact.contains("more byte"), "{exact}");
    }
}
