//! The canonical text of a module, with or without the trivia (comments,
//! blank lines, literal spellings) of the text it was parsed from.
//!
//! A literal gets a `:type` suffix exactly when the parser would not give it
//! its type back from context, so the printed text parses to the same
//! module (`literal_text` decides how each literal is written). The printer
//! never panics: ids that point nowhere print as `?N` (such a module does
//! not parse back, but it can still be looked at).

use super::comments::{CommentLine, Comments, LineTrivia, Part, Trailing};
use super::layout::Layout;
use super::literal::format_const;
use super::literal_text::{literal_texts, ResultPlace, Written};
use crate::module::*;
use crate::ops::{FuncSig, Op, ShuffleForm, Signature, Slot, TypeClass};
use crate::types::Type;
use std::fmt::Write;

/// The canonical text of `module` (see docs/text-format.md).
///
/// `parse(&print(m)) == Ok(m)` holds for every module `parse` returns. A
/// module built another way round-trips when it looks like one the parser
/// could have built: valid names, unique in their scope; values numbered in
/// order of definition (parameters first, then results in text order); each
/// value typed as its op's signature says; constants made with
/// [`Const::new`](crate::types::Const::new); shuffles with three operands.
pub fn print(module: &Module) -> String {
    print_with_comments(module, &Comments::default())
}

/// The canonical text of `module` with the comments, blank lines and
/// literal spellings of the text it was parsed from
/// ([`parse_with_comments`](super::parse_with_comments)): what `warpjit
/// fmt` writes. Each comment stays with the item, statement or closing
/// brace it was on or above, also where the canonical order moves that
/// line (`var` and `private` declarations go to the top of their function,
/// parameters, buffers and shared arrays to the top of the module). Each
/// literal is written as it was (only the spaces around a `:type` suffix
/// go), unless that would not read back as the same statement. With no
/// comments, no blank lines and only canonical spellings this is [`print()`].
///
/// Comments of another module's text are placed by byte positions that do
/// not fit this module: some may land on the wrong line or be left out. Its
/// literal spellings are used only where they read as this module's
/// constants, so the text still parses to `module`.
pub fn print_with_comments(module: &Module, comments: &Comments) -> String {
    let mut out = Layout::default();
    out.comments(&comments.header, 0);
    out.blank();
    let item = |span: crate::span::Span| comments.line(span.start, Part::Head);
    for p in &module.params {
        out.line(0, item(p.span), &format!("param %{}: {}", p.name, p.ty));
    }
    let number = |start: u32, value: u32| comments.literals.number(start, 0, value);
    for b in &module.buffers {
        let binding = number(b.span.start, b.binding);
        let text = format!("buffer @{}[{binding}]: {}", b.name, b.elem.name());
        out.line(0, item(b.span), &text);
    }
    for s in &module.shared {
        let size = number(s.span.start, s.size);
        out.line(0, item(s.span), &format!("shared @{}[{size}]", s.name));
    }
    for f in &module.functions {
        out.blank();
        FunctionPrinter {
            module,
            func: f,
            comments,
            out: &mut out,
        }
        .function();
    }
    out.comments(&comments.end, 0);
    out.finish()
}

struct FunctionPrinter<'a, 'c> {
    module: &'a Module,
    func: &'a Function,
    comments: &'c Comments,
    out: &'a mut Layout<'c>,
}

impl<'c> FunctionPrinter<'_, 'c> {
    fn trivia(&self, start: u32, part: Part) -> &'c LineTrivia {
        self.comments.line(start, part)
    }

    fn function(&mut self) {
        let f = self.func;
        let mut head = String::new();
        match f.kind {
            FuncKind::Kernel { workgroup } => {
                let _ = write!(head, "kernel @{}", f.name);
                if let Some(sizes) = workgroup {
                    let shown = match sizes {
                        [_, 1, 1] => 1,
                        [_, _, 1] => 2,
                        _ => 3,
                    };
                    let dims: Vec<String> = sizes[..shown]
                        .iter()
                        .enumerate()
                        .map(|(i, size)| self.comments.literals.number(f.span.start, i, *size))
                        .collect();
                    let _ = write!(head, " workgroup({})", dims.join(", "));
                }
            }
            FuncKind::Function => {
                let params: Vec<String> = f
                    .params
                    .iter()
                    .map(|p| format!("%{}: {}", self.value_name(*p), self.value_type(*p)))
                    .collect();
                let _ = write!(head, "func @{}({})", f.name, params.join(", "));
                match f.results.as_slice() {
                    [] => {}
                    [t] => {
                        let _ = write!(head, " -> {t}");
                    }
                    many => {
                        let names: Vec<&str> = many.iter().map(|t| t.name()).collect();
                        let _ = write!(head, " -> ({})", names.join(", "));
                    }
                }
            }
        }
        head.push_str(" {");
        let start = f.span.start;
        let trivia = self.trivia(start, Part::Head);
        self.out.begin(0, trivia);
        self.out.text(&head);
        self.out.end(trivia.trailing.as_ref(), true);
        for v in &f.vars {
            let text = format!("var ${}: {}", v.name, v.ty);
            self.out
                .line(1, self.trivia(v.span.start, Part::Head), &text);
        }
        for p in &f.privates {
            let size = self.comments.literals.number(p.span.start, 0, p.size);
            let text = format!("private @{}[{size}]", p.name);
            self.out
                .line(1, self.trivia(p.span.start, Part::Head), &text);
        }
        self.stmts(&f.body, 1);
        let close = self.trivia(start, Part::Close);
        self.out.comments(&close.leading, 1);
        self.out.begin_close(0);
        self.out.text("}");
        self.out.end(close.trailing.as_ref(), false);
    }

    fn stmts(&mut self, block: &Block, indent: usize) {
        for s in &block.stmts {
            let trivia = self.trivia(s.span().start, Part::Head);
            self.out.begin(indent, trivia);
            self.stmt(s, indent);
        }
    }

    /// The rest of a statement whose line has begun.
    fn stmt(&mut self, stmt: &Stmt, indent: usize) {
        let start = stmt.span().start;
        let head = self.trivia(start, Part::Head).trailing.as_ref();
        let text = match stmt {
            Stmt::Inst(inst) => self.inst(inst),
            Stmt::If { .. } => return self.if_stmt(stmt, indent),
            Stmt::Loop { body, .. } | Stmt::Ordered { body, .. } => {
                let text = match stmt {
                    Stmt::Ordered { key, .. } => {
                        format!("ordered {} {{", self.fixed_operand(start, key, Type::I32))
                    }
                    _ => "loop {".to_string(),
                };
                self.out.text(&text);
                let close = self.trivia(start, Part::Close);
                self.block(body, indent, head, &[&close.leading]);
                self.out.end(close.trailing.as_ref(), false);
                return;
            }
            Stmt::Break { .. } => "break".to_string(),
            Stmt::Continue { .. } => "continue".to_string(),
            Stmt::Kill { .. } => "kill".to_string(),
            Stmt::Return { values, .. } => {
                let texts = self.fixed_operands(start, values, &self.func.results);
                if texts.is_empty() {
                    "return".to_string()
                } else {
                    format!("return {}", texts.join(", "))
                }
            }
        };
        self.out.text(&text);
        self.out.end(head, false);
    }

    /// The block after a `{` written on the current line, up to its `}`;
    /// the line holding the `}` stays open. An empty block without
    /// comments is `{}`.
    fn block(
        &mut self,
        block: &Block,
        indent: usize,
        open_trailing: Option<&'c Trailing>,
        close_leading: &[&'c [CommentLine]],
    ) {
        let no_close_comments = close_leading.iter().all(|c| c.is_empty());
        if block.stmts.is_empty() && open_trailing.is_none() && no_close_comments {
            self.out.text("}");
            return;
        }
        self.out.end(open_trailing, true);
        self.stmts(block, indent + 1);
        for comments in close_leading {
            self.out.comments(comments, indent + 1);
        }
        self.out.begin_close(indent);
        self.out.text("}");
    }

    /// `if` and its blocks, from the current line on. An else block
    /// holding just an `if` is written `else if` unless comments sit in
    /// that else block around the `if`.
    ///
    /// The `}` of the then block is the `Else` line (when no else block is
    /// written too), the `}` of the else block the `Close` line.
    fn if_stmt(&mut self, stmt: &Stmt, indent: usize) {
        let Stmt::If {
            cond,
            then_body,
            else_body,
            span,
        } = stmt
        else {
            return;
        };
        let head = self.trivia(span.start, Part::Head);
        let else_line = self.trivia(span.start, Part::Else);
        let close = self.trivia(span.start, Part::Close);
        let cond = self.fixed_operand(span.start, cond, Type::Bool);
        self.out.text(&format!("if {cond} {{"));
        let head_trailing = head.trailing.as_ref();
        // An empty else block is left out unless comments sit inside it
        // or more than one line can hold.
        let has_else = !else_body.stmts.is_empty()
            || !close.leading.is_empty()
            || (else_line.trailing.is_some() && close.trailing.is_some());
        if !has_else {
            self.block(then_body, indent, head_trailing, &[&else_line.leading]);
            let trailing = else_line.trailing.as_ref().or(close.trailing.as_ref());
            self.out.end(trailing, false);
            return;
        }
        self.block(then_body, indent, head_trailing, &[&else_line.leading]);
        self.out.text(" else ");
        if let [nested @ Stmt::If { span: inner, .. }] = else_body.stmts.as_slice() {
            let alone = else_line.trailing.is_none()
                && close.leading.is_empty()
                && close.trailing.is_none()
                && self.trivia(inner.start, Part::Head).leading.is_empty();
            if alone {
                return self.if_stmt(nested, indent);
            }
        }
        self.out.text("{");
        self.block(
            else_body,
            indent,
            else_line.trailing.as_ref(),
            &[&close.leading],
        );
        self.out.end(close.trailing.as_ref(), false);
    }

    fn inst(&self, inst: &Inst) -> String {
        let mut out = String::new();
        if !inst.results.is_empty() {
            let places: Vec<String> = inst.results.iter().map(|p| self.place(*p)).collect();
            let _ = write!(out, "{} = ", places.join(", "));
        }
        let sig = self.signature(&inst.op);
        let results: Vec<ResultPlace> = inst
            .results
            .iter()
            .map(|p| match p {
                Place::Var(v) => ResultPlace::Var(self.var_type(*v)),
                Place::Value(v) => ResultPlace::Value(self.value_type(*v)),
            })
            .collect();
        let mut args = self.operands(inst.span.start, sig.as_ref(), &inst.args, &results);
        match inst.op {
            Op::Shuffle { form, .. } if args.len() > 2 => {
                let label = match form {
                    ShuffleForm::Width => "width",
                    ShuffleForm::Mask => "mask",
                };
                args[2] = format!("{label} {}", args[2]);
            }
            Op::Vote { guarded: true, .. } if args.len() > 1 => {
                args[1] = format!("guard {}", args[1]);
            }
            _ => {}
        }
        let mnemonic = inst.op.mnemonic();
        match &inst.op {
            Op::Call(callee) => {
                let name = match self.module.functions.get(*callee as usize) {
                    Some(f) => f.name.clone(),
                    None => format!("?{callee}"),
                };
                let _ = write!(out, "call @{name}({})", args.join(", "));
            }
            Op::Load { mem, .. } | Op::Store { mem, .. } | Op::Atom { mem, .. } => {
                let name = self.mem_name(*mem);
                args.insert(0, format!("@{name}"));
                let _ = write!(out, "{mnemonic} {}", args.join(", "));
            }
            _ if args.is_empty() => out.push_str(&mnemonic),
            _ => {
                let _ = write!(out, "{mnemonic} {}", args.join(", "));
            }
        }
        out
    }

    fn signature(&self, op: &Op) -> Option<Signature> {
        match op {
            Op::Call(i) => {
                let callee = self.module.functions.get(*i as usize)?;
                let sig = FuncSig {
                    params: callee
                        .params
                        .iter()
                        .map(|p| match callee.values.get(p.0 as usize) {
                            Some(d) => d.ty,
                            None => Type::I32,
                        })
                        .collect(),
                    results: callee.results.clone(),
                };
                Some(op.signature(Some(&sig)))
            }
            _ => Some(op.signature(None)),
        }
    }

    /// The text of each operand of the statement starting at `start`.
    fn operands(
        &self,
        start: u32,
        sig: Option<&Signature>,
        operands: &[Operand],
        results: &[ResultPlace],
    ) -> Vec<String> {
        let written: Vec<Written> = operands
            .iter()
            .map(|o| match o {
                Operand::Const(c) => Written::Const(*c),
                _ => Written::Named(self.operand_type(o)),
            })
            .collect();
        let spellings: Vec<_> = (0..operands.len())
            .map(|i| self.comments.literals.get(start, i))
            .collect();
        let literals = literal_texts(sig, &written, results, &spellings);
        operands
            .iter()
            .zip(literals)
            .map(|(o, literal)| literal.unwrap_or_else(|| self.name(o)))
            .collect()
    }

    /// The condition of an `if` or the key of an `ordered` starting at
    /// `start`, of type `ty`.
    fn fixed_operand(&self, start: u32, o: &Operand, ty: Type) -> String {
        self.fixed_operands(start, std::slice::from_ref(o), &[ty])
            .concat()
    }

    /// The operands of `if`, `ordered` or `return` starting at `start`,
    /// where operand `i` has type `types[i]` (and no type past them).
    fn fixed_operands(&self, start: u32, operands: &[Operand], types: &[Type]) -> Vec<String> {
        let sig = Signature {
            operands: types.iter().map(|ty| Slot::Fixed(*ty)).collect(),
            min_operands: types.len(),
            results: Vec::new(),
            min_results: 0,
            t_class: TypeClass::Any,
        };
        self.operands(start, Some(&sig), operands, &[])
    }

    /// A value, variable or parameter by name.
    fn name(&self, o: &Operand) -> String {
        match o {
            Operand::Value(v) => format!("%{}", self.value_name(*v)),
            Operand::Var(v) => match self.func.vars.get(v.0 as usize) {
                Some(d) => format!("${}", d.name),
                None => format!("$?{}", v.0),
            },
            Operand::Param(p) => match self.module.params.get(p.0 as usize) {
                Some(d) => format!("%{}", d.name),
                None => format!("%?{}", p.0),
            },
            Operand::Const(c) => format_const(*c),
        }
    }

    fn place(&self, p: Place) -> String {
        match p {
            Place::Value(v) => format!("%{}", self.value_name(v)),
            Place::Var(v) => self.name(&Operand::Var(v)),
        }
    }

    fn value_name(&self, v: ValueId) -> String {
        match self.func.values.get(v.0 as usize) {
            Some(d) => d.name.clone(),
            None => format!("?{}", v.0),
        }
    }

    fn value_type(&self, v: ValueId) -> Type {
        self.func
            .values
            .get(v.0 as usize)
            .map_or(Type::I32, |d| d.ty)
    }

    fn var_type(&self, v: VarId) -> Type {
        self.func.vars.get(v.0 as usize).map_or(Type::I32, |d| d.ty)
    }

    fn operand_type(&self, o: &Operand) -> Type {
        match o {
            Operand::Value(v) => self.value_type(*v),
            Operand::Var(v) => self.var_type(*v),
            Operand::Param(p) => self
                .module
                .params
                .get(p.0 as usize)
                .map_or(Type::I32, |d| d.ty),
            Operand::Const(c) => c.ty,
        }
    }

    fn mem_name(&self, mem: crate::ops::MemRef) -> String {
        use crate::ops::MemRef;
        match (self.module.memory_name(self.func, mem), mem) {
            (Some(n), _) => n.to_string(),
            (None, MemRef::Buffer(i) | MemRef::Shared(i) | MemRef::Private(i)) => format!("?{i}"),
        }
    }
}
