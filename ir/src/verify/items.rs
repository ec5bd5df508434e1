//! Module-level checks: names, buffer bindings, shared memory, workgroup
//! sizes and kernel signatures.

use super::{name_problem, MAX_SHARED_BYTES, MAX_WORKGROUP_INVOCATIONS};
use crate::module::{FuncKind, Module};
use crate::span::{Diagnostic, Span};
use std::collections::HashMap;

pub(super) fn check_items(m: &Module, out: &mut Vec<Diagnostic>) {
    let mut params: HashMap<&str, ()> = HashMap::new();
    for p in &m.params {
        check_name('%', &p.name, "parameter", p.span, out);
        if params.insert(&p.name, ()).is_some() {
            out.push(Diagnostic::new(
                p.span,
                format!("parameter %{} is declared twice", p.name),
            ));
        }
    }

    // Buffers, shared arrays and functions share the module's `@` scope.
    let mut globals = GlobalNames::default();
    let mut bindings: HashMap<u32, &str> = HashMap::new();
    for b in &m.buffers {
        check_name('@', &b.name, "buffer", b.span, out);
        globals.declare("buffer", &b.name, b.span, out);
        if let Some(first) = bindings.get(&b.binding) {
            out.push(Diagnostic::new(
                b.span,
                format!(
                    "buffer @{} uses binding {}, which buffer @{first} already uses",
                    b.name, b.binding
                ),
            ));
        } else {
            bindings.insert(b.binding, &b.name);
        }
    }

    let mut total_shared: u64 = 0;
    let mut reported_total = false;
    for s in &m.shared {
        check_name('@', &s.name, "shared array", s.span, out);
        globals.declare("shared array", &s.name, s.span, out);
        if s.size == 0 {
            out.push(Diagnostic::new(
                s.span,
                format!("shared @{} has size 0; it needs at least 1 byte", s.name),
            ));
        } else if s.size > MAX_SHARED_BYTES {
            out.push(Diagnostic::new(
                s.span,
                format!(
                    "shared @{} has {} bytes; a workgroup has at most {MAX_SHARED_BYTES} bytes (64 KiB) of shared memory",
                    s.name, s.size
                ),
            ));
            reported_total = true;
        }
        total_shared += u64::from(s.size);
        if total_shared > u64::from(MAX_SHARED_BYTES) && !reported_total {
            reported_total = true;
            out.push(Diagnostic::new(
                s.span,
                format!(
                    "shared arrays up to @{} total {total_shared} bytes; a workgroup has at most {MAX_SHARED_BYTES} bytes (64 KiB) of shared memory",
                    s.name
                ),
            ));
        }
    }

    for f in &m.functions {
        let what = if f.is_kernel() { "kernel" } else { "function" };
        check_name('@', &f.name, what, f.span, out);
        globals.declare(what, &f.name, f.span, out);
        if let FuncKind::Kernel { workgroup } = &f.kind {
            if !f.params.is_empty() {
                out.push(Diagnostic::new(
                    f.span,
                    format!(
                        "kernel @{} has parameters; kernels take none (declare module `param`s instead)",
                        f.name
                    ),
                ));
            }
            if !f.results.is_empty() {
                out.push(Diagnostic::new(
                    f.span,
                    format!("kernel @{} has results; kernels return none", f.name),
                ));
            }
            if let Some(dims) = workgroup {
                check_workgroup(&f.name, dims, f.span, out);
            }
        }
    }
}

fn check_workgroup(name: &str, dims: &[u32; 3], span: Span, out: &mut Vec<Diagnostic>) {
    for (d, axis) in dims.iter().zip(["x", "y", "z"]) {
        if *d == 0 {
            out.push(Diagnostic::new(
                span,
                format!(
                    "kernel @{name} has workgroup size 0 in {axis}; each size must be at least 1"
                ),
            ));
        }
    }
    let product: u128 = dims.iter().map(|d| u128::from(*d)).product();
    if product > u128::from(MAX_WORKGROUP_INVOCATIONS) {
        out.push(Diagnostic::new(
            span,
            format!(
                "kernel @{name} has a workgroup of {} x {} x {} = {product} invocations; at most {MAX_WORKGROUP_INVOCATIONS} are allowed",
                dims[0], dims[1], dims[2]
            ),
        ));
    }
}

pub(super) fn check_name(
    sigil: char,
    name: &str,
    what: &str,
    span: Span,
    out: &mut Vec<Diagnostic>,
) {
    if let Some(problem) = name_problem(name) {
        let shown: String = name.chars().take(40).collect();
        out.push(Diagnostic::new(
            span,
            format!("the name of {what} {sigil}{shown} {problem}"),
        ));
    }
}

/// The module's `@` names and what kind of item each one is.
#[derive(Default)]
struct GlobalNames<'m> {
    kinds: HashMap<&'m str, &'static str>,
}

impl<'m> GlobalNames<'m> {
    fn declare(
        &mut self,
        kind: &'static str,
        name: &'m str,
        span: Span,
        out: &mut Vec<Diagnostic>,
    ) {
        if let Some(first) = self.kinds.get(name) {
            out.push(Diagnostic::new(
                span,
                format!("@{name} is declared twice (as a {first} and as a {kind})"),
            ));
        } else {
            self.kinds.insert(name, kind);
        }
    }
}
