//! Checks of one function: its declarations, then its body in program
//! order, tracking which values are visible (structured dominance), which
//! loops and ordered sections enclose each statement, and the type of every
//! instruction.

use super::items::check_name;
use super::{MAX_NESTING, MAX_PRIVATE_BYTES};
use crate::module::{Block, Function, Module, Operand, Place, Stmt, ValueId};
use crate::ops::FuncSig;
use crate::span::{Diagnostic, Span};
use crate::types::Type;
use std::collections::HashSet;

mod inst;

/// Statements whose presence in a callee makes calling it from an ordered
/// section an error.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Effect {
    Kill,
    Barrier,
    Ordered,
}

impl Effect {
    pub(super) fn spelling(self) -> &'static str {
        match self {
            Effect::Kill => "kill",
            Effect::Barrier => "barrier",
            Effect::Ordered => "ordered",
        }
    }
}

/// What the call-graph checks need to know about a function body.
#[derive(Default)]
pub(super) struct BodyFacts {
    /// Every call of a valid, non-kernel callee, with the call's span.
    pub calls: Vec<(usize, Span)>,
    /// The calls among those that sit inside an ordered section.
    pub ordered_calls: Vec<(usize, Span)>,
    /// The first `kill`, `barrier` or `ordered` of the body, if any.
    pub effect: Option<Effect>,
}

pub(super) fn check_function(
    m: &Module,
    index: usize,
    sigs: &[Option<FuncSig>],
    out: &mut Vec<Diagnostic>,
) -> BodyFacts {
    let f = &m.functions[index];
    let mut c = FnChecker {
        m,
        f,
        sigs,
        out,
        def_count: vec![0; f.values.len()],
        visible: vec![false; f.values.len()],
        defined_in: vec![""; f.values.len()],
        scopes: Vec::new(),
        frames: Vec::new(),
        facts: BodyFacts::default(),
    };
    c.check_declarations();
    for p in &f.params {
        if c.value_in_range(*p, f.span) {
            c.define_value(*p, f.span);
        }
    }
    c.block(&f.body, "function body", 0);
    if !f.results.is_empty() && !matches!(f.body.stmts.last(), Some(Stmt::Return { .. })) {
        c.error(
            f.span,
            format!(
                "@{} returns {} but its body does not end with `return`",
                f.name,
                type_list(&f.results)
            ),
        );
    }
    for (i, decl) in f.values.iter().enumerate() {
        if c.def_count[i] == 0 {
            c.error(
                decl.span,
                format!("%{} is declared but never defined", decl.name),
            );
        }
    }
    c.facts
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Frame {
    Loop,
    Ordered,
}

struct FnChecker<'a> {
    m: &'a Module,
    f: &'a Function,
    sigs: &'a [Option<FuncSig>],
    out: &'a mut Vec<Diagnostic>,
    /// How many definitions of each value the walk has passed.
    def_count: Vec<u32>,
    /// Values usable at the current point of the walk.
    visible: Vec<bool>,
    /// The construct whose block defined each value (for messages).
    defined_in: Vec<&'static str>,
    /// Each open block: the construct it belongs to and the values it
    /// defines so far; innermost last.
    scopes: Vec<(&'static str, Vec<ValueId>)>,
    /// Enclosing loops and ordered sections, innermost last.
    frames: Vec<Frame>,
    facts: BodyFacts,
}

impl FnChecker<'_> {
    fn error(&mut self, span: Span, message: String) {
        self.out.push(Diagnostic::new(span, message));
    }

    fn check_declarations(&mut self) {
        let f = self.f;
        let mut names: HashSet<&str> = HashSet::new();
        for v in &f.values {
            check_name('%', &v.name, "value", v.span, self.out);
            if !names.insert(&v.name) {
                self.error(
                    v.span,
                    format!("%{} is declared twice in @{}", v.name, f.name),
                );
            } else if self.m.params.iter().any(|p| p.name == v.name) {
                self.error(
                    v.span,
                    format!(
                        "%{} in @{} reuses the name of a module parameter",
                        v.name, f.name
                    ),
                );
            }
        }
        let mut names: HashSet<&str> = HashSet::new();
        for v in &f.vars {
            check_name('$', &v.name, "variable", v.span, self.out);
            if !names.insert(&v.name) {
                self.error(
                    v.span,
                    format!("${} is declared twice in @{}", v.name, f.name),
                );
            }
        }
        let mut names: HashSet<&str> = HashSet::new();
        let mut total: u64 = 0;
        let mut reported_total = false;
        for p in &f.privates {
            check_name('@', &p.name, "private array", p.span, self.out);
            if !names.insert(&p.name) {
                self.error(
                    p.span,
                    format!("@{} is declared twice in @{}", p.name, f.name),
                );
            } else if self.is_module_name(&p.name) {
                self.error(
                    p.span,
                    format!(
                        "private @{} in @{} reuses the name of a module-level @ item",
                        p.name, f.name
                    ),
                );
            }
            if p.size == 0 {
                self.error(
                    p.span,
                    format!("private @{} has size 0; it needs at least 1 byte", p.name),
                );
            } else if p.size > MAX_PRIVATE_BYTES {
                reported_total = true;
                self.error(
                    p.span,
                    format!(
                        "private @{} has {} bytes; a lane has at most {MAX_PRIVATE_BYTES} bytes (16 KiB) of private memory",
                        p.name, p.size
                    ),
                );
            }
            total += u64::from(p.size);
            if total > u64::from(MAX_PRIVATE_BYTES) && !reported_total {
                reported_total = true;
                self.error(
                    p.span,
                    format!(
                        "private arrays of @{} up to @{} total {total} bytes; a lane has at most {MAX_PRIVATE_BYTES} bytes (16 KiB) of private memory",
                        f.name, p.name
                    ),
                );
            }
        }
    }

    fn is_module_name(&self, name: &str) -> bool {
        let m = self.m;
        m.buffers.iter().any(|b| b.name == name)
            || m.shared.iter().any(|s| s.name == name)
            || m.functions.iter().any(|f| f.name == name)
    }

    // ---- blocks and statements ----

    fn block(&mut self, b: &Block, construct: &'static str, depth: usize) {
        self.scopes.push((construct, Vec::new()));
        for s in &b.stmts {
            self.stmt(s, depth);
        }
        let (_, ended) = self.scopes.pop().expect("scope pushed above");
        for v in ended {
            self.visible[v.0 as usize] = false;
        }
    }

    /// Reports a construct whose blocks would nest too deep; its blocks
    /// are then not checked.
    fn too_deep(&mut self, depth: usize, construct: &str, span: Span) -> bool {
        // `depth` counts blocks below the body, so the new blocks' level
        // (the function body being level 1) is depth + 2.
        if depth + 2 <= MAX_NESTING {
            return false;
        }
        self.error(
            span,
            format!(
                "blocks nest more than {MAX_NESTING} deep (the function body is level 1); this `{construct}` is not checked"
            ),
        );
        true
    }

    fn in_ordered(&self) -> bool {
        self.frames.contains(&Frame::Ordered)
    }

    fn stmt(&mut self, s: &Stmt, depth: usize) {
        match s {
            Stmt::Inst(inst) => self.inst(inst),
            Stmt::If {
                cond,
                then_body,
                else_body,
                span,
            } => {
                if let Some(t) = self.operand(cond, *span) {
                    if t != Type::Bool {
                        self.error(
                            *span,
                            format!(
                                "the condition of `if` ({}) has type {t}, expected bool",
                                self.operand_name(cond)
                            ),
                        );
                    }
                }
                if !self.too_deep(depth, "if", *span) {
                    self.block(then_body, "if", depth + 1);
                    self.block(else_body, "else", depth + 1);
                }
            }
            Stmt::Loop { body, span } => {
                if !self.too_deep(depth, "loop", *span) {
                    self.frames.push(Frame::Loop);
                    self.block(body, "loop", depth + 1);
                    self.frames.pop();
                }
            }
            Stmt::Break { span } => self.loop_exit("break", *span),
            Stmt::Continue { span } => self.loop_exit("continue", *span),
            Stmt::Return { values, span } => self.ret(values, *span),
            Stmt::Kill { span } => {
                self.note_effect(Effect::Kill);
                if self.in_ordered() {
                    self.error(*span, "`kill` inside an ordered section".into());
                }
            }
            Stmt::Ordered { key, body, span } => {
                self.note_effect(Effect::Ordered);
                if self.in_ordered() {
                    self.error(
                        *span,
                        "`ordered` inside an ordered section; ordered sections do not nest".into(),
                    );
                }
                self.operand(key, *span);
                if !self.too_deep(depth, "ordered", *span) {
                    self.frames.push(Frame::Ordered);
                    self.block(body, "ordered", depth + 1);
                    self.frames.pop();
                }
            }
        }
    }

    fn loop_exit(&mut self, what: &str, span: Span) {
        match self.frames.last() {
            None => self.error(span, format!("`{what}` outside a loop")),
            Some(Frame::Ordered) => self.error(
                span,
                format!(
                    "`{what}` would leave the ordered section it is in; only loops inside the section may be left"
                ),
            ),
            Some(Frame::Loop) => {}
        }
    }

    fn ret(&mut self, values: &[Operand], span: Span) {
        if self.in_ordered() {
            self.error(span, "`return` inside an ordered section".into());
        }
        let types: Vec<Option<Type>> = values.iter().map(|v| self.operand(v, span)).collect();
        let f = self.f;
        if values.len() != f.results.len() {
            let returns = if f.results.is_empty() {
                "nothing".to_string()
            } else {
                type_list(&f.results)
            };
            self.error(
                span,
                format!(
                    "`return` gives {} value{}, but @{} returns {returns}",
                    values.len(),
                    plural(values.len()),
                    f.name
                ),
            );
            return;
        }
        for (i, (t, expected)) in types.iter().zip(&f.results).enumerate() {
            if let Some(t) = t {
                if t != expected {
                    self.error(
                        span,
                        format!(
                            "value {} of `return` ({}) has type {t}, expected {expected} (result {} of @{})",
                            i + 1,
                            self.operand_name(&values[i]),
                            i + 1,
                            f.name
                        ),
                    );
                }
            }
        }
    }

    fn note_effect(&mut self, e: Effect) {
        if self.facts.effect.is_none() {
            self.facts.effect = Some(e);
        }
    }

    // ---- operands and results ----

    fn value_in_range(&mut self, v: ValueId, span: Span) -> bool {
        if (v.0 as usize) < self.f.values.len() {
            return true;
        }
        self.error(
            span,
            format!(
                "value #{} is out of range: @{} declares {} values",
                v.0,
                self.f.name,
                self.f.values.len()
            ),
        );
        false
    }

    /// Checks one operand; returns its type when it refers to something.
    fn operand(&mut self, o: &Operand, span: Span) -> Option<Type> {
        let f = self.f;
        match o {
            Operand::Value(v) => {
                if !self.value_in_range(*v, span) {
                    return None;
                }
                let i = v.0 as usize;
                if !self.visible[i] {
                    let name = &f.values[i].name;
                    let msg = if self.def_count[i] > 0 {
                        format!(
                            "%{name} is used outside the `{}` that defines it",
                            self.defined_in[i]
                        )
                    } else {
                        format!("%{name} is used before its definition")
                    };
                    self.error(span, msg);
                }
                Some(f.values[i].ty)
            }
            Operand::Var(v) => match f.vars.get(v.0 as usize) {
                Some(d) => Some(d.ty),
                None => {
                    self.error(
                        span,
                        format!(
                            "variable #{} is out of range: @{} declares {} variables",
                            v.0,
                            f.name,
                            f.vars.len()
                        ),
                    );
                    None
                }
            },
            Operand::Param(p) => match self.m.params.get(p.0 as usize) {
                Some(d) => Some(d.ty),
                None => {
                    self.error(
                        span,
                        format!(
                            "parameter #{} is out of range: the module declares {} parameters",
                            p.0,
                            self.m.params.len()
                        ),
                    );
                    None
                }
            },
            Operand::Const(c) => {
                if c.bits & !c.ty.bit_mask() != 0 {
                    self.error(
                        span,
                        format!("literal {:#x} has bits outside its type {}", c.bits, c.ty),
                    );
                }
                Some(c.ty)
            }
        }
    }

    /// How an operand is spelled in messages.
    fn operand_name(&self, o: &Operand) -> String {
        match o {
            Operand::Value(v) => match self.f.values.get(v.0 as usize) {
                Some(d) => format!("%{}", d.name),
                None => format!("value #{}", v.0),
            },
            Operand::Var(v) => match self.f.vars.get(v.0 as usize) {
                Some(d) => format!("${}", d.name),
                None => format!("variable #{}", v.0),
            },
            Operand::Param(p) => match self.m.params.get(p.0 as usize) {
                Some(d) => format!("%{}", d.name),
                None => format!("parameter #{}", p.0),
            },
            Operand::Const(c) => format!("literal {}", literal_text(c)),
        }
    }

    fn place_name(&self, p: &Place) -> String {
        match p {
            Place::Value(v) => self.operand_name(&Operand::Value(*v)),
            Place::Var(v) => self.operand_name(&Operand::Var(*v)),
        }
    }

    /// Checks a result place's id; returns the type it holds.
    fn place(&mut self, p: &Place, span: Span) -> Option<Type> {
        match p {
            Place::Value(v) => {
                if self.value_in_range(*v, span) {
                    Some(self.f.values[v.0 as usize].ty)
                } else {
                    None
                }
            }
            Place::Var(v) => self.operand(&Operand::Var(*v), span),
        }
    }

    fn define_value(&mut self, v: ValueId, span: Span) {
        let i = v.0 as usize;
        if self.def_count[i] > 0 {
            let msg = format!("%{} is defined more than once", self.f.values[i].name);
            self.error(span, msg);
        }
        self.def_count[i] += 1;
        self.visible[i] = true;
        if let Some((construct, values)) = self.scopes.last_mut() {
            self.defined_in[i] = construct;
            values.push(v);
        }
    }
}

/// A literal as the canonical text writes it (`1.5:f16`, `-1:i8`), which
/// `fmt` prints too.
fn literal_text(c: &crate::types::Const) -> String {
    match c.ty {
        Type::Bool => crate::text::literal::format_const(*c),
        ty => format!("{}:{ty}", crate::text::literal::format_const(*c)),
    }
}

/// "i32" or "(i32, f32)".
fn type_list(types: &[Type]) -> String {
    if types.len() == 1 {
        return types[0].to_string();
    }
    let names: Vec<&str> = types.iter().map(|t| t.name()).collect();
    format!("({})", names.join(", "))
}

fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

#[cfg(test)]
mod tests {
    use super::literal_text;
    use crate::types::{Const, Type};

    #[test]
    fn literals_in_messages_are_written_as_fmt_writes_them() {
        let text = |ty, bits| literal_text(&Const { ty, bits });
        assert_eq!(text(Type::F16, 0x3e00), "1.5:f16");
        assert_eq!(text(Type::F16, 0x0000), "0.0:f16");
        assert_eq!(text(Type::I8, 0xff), "-1:i8");
        assert_eq!(text(Type::I32, 7), "7:i32");
        assert_eq!(text(Type::F32, 0x7f80_0000), "inf:f32");
        assert_eq!(
            text(Type::F64, 0x7ff8_0000_0000_0000),
            "0x7ff8000000000000:f64"
        );
        assert_eq!(text(Type::Bool, 1), "true");
    }
}
