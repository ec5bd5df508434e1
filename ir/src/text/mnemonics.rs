//! Every mnemonic of the text format, for "did you mean" suggestions.

use crate::ops::{
    all_binary, all_cmp, all_unary, binary_name, cmp_name, unary_name, AtomOp, Builtin, MemFormat,
    NumFormat, Round,
};
use crate::types::Type;

/// Words with a fixed meaning that are not instructions.
pub(crate) const KEYWORDS: &[&str] = &[
    "param",
    "buffer",
    "shared",
    "kernel",
    "func",
    "workgroup",
    "var",
    "private",
    "if",
    "else",
    "loop",
    "break",
    "continue",
    "return",
    "kill",
    "ordered",
    "width",
    "mask",
    "guard",
    "true",
    "false",
];

/// All instruction mnemonics (memory formats only in their valid forms).
pub(crate) fn all_mnemonics() -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    out.extend(all_unary().map(|u| unary_name(u).to_string()));
    out.extend(all_binary().map(|b| binary_name(b).to_string()));
    out.extend(all_cmp().map(|c| format!("cmp.{}", cmp_name(c))));
    out.extend(Builtin::all().into_iter().map(|b| b.name()));
    out.extend(
        [
            "mov",
            "select",
            "fma",
            "bfe.s",
            "bfe.u",
            "bfi",
            "pk64",
            "up64",
            "active_mask",
            "ballot",
            "vote.all",
            "vote.any",
            "vote.eq",
            "tgall",
            "tgany",
            "tgeq",
            "tgballot",
            "shuffle.idx",
            "shuffle.up",
            "shuffle.down",
            "shuffle.xor",
            "quad.0",
            "quad.1",
            "quad.2",
            "quad.3",
            "quad.x",
            "quad.y",
            "ddx.fine",
            "ddx.coarse",
            "ddy.fine",
            "ddy.coarse",
            "demote",
            "membar",
            "barrier",
            "call",
        ]
        .map(String::from),
    );
    out.extend(Type::ALL.map(|t| format!("bitcast.{t}")));
    for dst in NumFormat::ALL {
        for src in NumFormat::ALL {
            out.push(format!("cvt.{}.{}", dst.name(), src.name()));
            for r in [Round::Ceil, Round::Floor, Round::Trunc, Round::Nearest] {
                out.push(format!("cvt.{}.{}.{}", dst.name(), src.name(), r.name()));
            }
        }
    }
    for elem in NumFormat::ALL {
        for count in [1, 2, 4] {
            let f = MemFormat { elem, count };
            if f.is_valid() {
                out.push(format!("load.{}", f.name()));
                out.push(format!("store.{}", f.name()));
            }
        }
    }
    for op in AtomOp::ALL {
        for f in NumFormat::ALL {
            if op.allows(f) {
                out.push(format!("atom.{}.{}", op.name(), f.name()));
            }
        }
    }
    out
}

/// Close known mnemonics for an unknown one, as "`a`, `b` or `c`".
pub(crate) fn suggest(word: &str) -> Option<String> {
    const MAX_SHOWN: usize = 4;
    if word.len() > 64 {
        return None;
    }
    let lower = word.to_ascii_lowercase();
    let all = all_mnemonics();
    let limit = match lower.len() {
        0..=3 => 1,
        4..=7 => 2,
        _ => 3,
    };
    // `vote` -> `vote.all`, `vote.any`, ...: a family name without its modifier.
    let prefix = format!("{lower}.");
    let mut close: Vec<&str> = all
        .iter()
        .filter(|m| m.starts_with(&prefix))
        .map(String::as_str)
        .collect();
    if close.is_empty() {
        let mut best = usize::MAX;
        for m in &all {
            let d = edit_distance(&lower, m);
            if d > limit || d > best {
                continue;
            }
            if d < best {
                best = d;
                close.clear();
            }
            close.push(m);
        }
    }
    if close.is_empty() {
        return None;
    }
    let more = close.len() > MAX_SHOWN;
    let shown: Vec<String> = close
        .iter()
        .take(MAX_SHOWN)
        .map(|m| format!("`{m}`"))
        .collect();
    Some(match (shown.len(), more) {
        (1, _) => shown[0].clone(),
        (_, true) => format!("{}, ...", shown.join(", ")),
        (n, false) => format!("{} or {}", shown[..n - 1].join(", "), shown[n - 1]),
    })
}

/// Levenshtein distance counting a swap of neighbours as one edit.
fn edit_distance(a: &str, b: &str) -> usize {
    let a = a.as_bytes();
    let b = b.as_bytes();
    let width = b.len() + 1;
    let mut rows = vec![0usize; (a.len() + 1) * width];
    for (j, cell) in rows.iter_mut().take(width).enumerate() {
        *cell = j;
    }
    for i in 1..=a.len() {
        rows[i * width] = i;
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut d = (rows[(i - 1) * width + j] + 1)
                .min(rows[i * width + j - 1] + 1)
                .min(rows[(i - 1) * width + j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                d = d.min(rows[(i - 2) * width + j - 2] + 1);
            }
            rows[i * width + j] = d;
        }
    }
    rows[a.len() * width + b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distance_counts_edits() {
        assert_eq!(edit_distance("add", "add"), 0);
        assert_eq!(edit_distance("addd", "add"), 1);
        assert_eq!(edit_distance("dad", "add"), 1);
        assert_eq!(edit_distance("", "abc"), 3);
    }

    #[test]
    fn suggestions_pick_the_closest() {
        assert_eq!(suggest("addd").as_deref(), Some("`add`"));
        assert_eq!(
            suggest("vote").as_deref(),
            Some("`vote.all`, `vote.any` or `vote.eq`")
        );
        assert_eq!(suggest("zzzzzzzzzz"), None);
    }
}
