//! A failing case as text that pastes into [`crate::regressions::REGRESSIONS`].

use crate::check::Inputs;
use crate::shrink::Failing;
use std::fmt::Write;

/// Buffer bytes as text: hex, with runs of 16 or more zero bytes written
/// `z:COUNT`, tokens separated by spaces.
pub fn encode_bytes(bytes: &[u8]) -> String {
    let mut out = String::new();
    let mut i = 0;
    while i < bytes.len() {
        let zeros = bytes[i..].iter().take_while(|&&b| b == 0).count();
        if zeros >= 16 {
            let _ = write!(out, " z:{zeros} ");
            i += zeros;
        } else {
            let _ = write!(out, "{:02x}", bytes[i]);
            i += 1;
        }
    }
    out.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The inverse of [`encode_bytes`].
pub fn decode_bytes(text: &str) -> Result<Vec<u8>, String> {
    let mut out = Vec::new();
    for token in text.split_whitespace() {
        if let Some(n) = token.strip_prefix("z:") {
            let n: usize = n.parse().map_err(|_| format!("bad zero run {token:?}"))?;
            out.resize(out.len() + n, 0);
        } else {
            if token.len() % 2 != 0 {
                return Err(format!("odd number of hex digits in {token:?}"));
            }
            for pair in token.as_bytes().chunks(2) {
                let s = std::str::from_utf8(pair).map_err(|e| e.to_string())?;
                out.push(u8::from_str_radix(s, 16).map_err(|_| format!("bad hex {s:?}"))?);
            }
        }
    }
    Ok(out)
}

/// The report for a failure: what differs, where it came from, and the
/// case as a `Regression` literal.
pub fn describe(failing: &Failing, origin: &str) -> String {
    let m = &failing.mismatch;
    let Inputs {
        params,
        buffers,
        grid,
        sm_count,
        warps_per_sm,
        ..
    } = &failing.inputs;
    let program = warpjit_ir::text::print(&failing.module);
    let buffers: Vec<String> = buffers
        .iter()
        .map(|b| format!("        \"{}\",", encode_bytes(b)))
        .collect();
    format!(
        "JIT at {:?} O{} differs from the interpreter ({:?}): {}\n\
         from {origin}; shrunk to {} statements\n\
         ---- paste into REGRESSIONS in jit/tests/differential/regressions.rs ----\n\
         Regression {{\n    name: \"NAME\",\n    program: r#\"\n{program}\"#,\n    \
         grid: {grid:?},\n    sm_count: {sm_count},\n    warps_per_sm: {warps_per_sm},\n    \
         params: &[{}],\n    buffers: &[\n{}\n    ],\n}},\n\
         ---- end ----",
        m.target,
        m.opt_level,
        m.kind,
        m.detail,
        crate::shrink::statement_count(&failing.module),
        params
            .iter()
            .map(|p| format!("{p:#x}"))
            .collect::<Vec<_>>()
            .join(", "),
        buffers.join("\n"),
    )
}
