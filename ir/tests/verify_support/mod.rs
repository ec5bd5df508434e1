//! Building modules by hand for verifier tests (independent of the parser),
//! and comparing the verifier's output exactly.
#![allow(dead_code)]

use warpjit_ir::verify::verify;
use warpjit_ir::*;

/// A distinct, recognisable span for statement or declaration number `n`.
pub fn sp(n: u32) -> Span {
    Span::new(n as usize * 100, n as usize * 100 + 7)
}

pub fn v(x: ValueId) -> Operand {
    Operand::Value(x)
}
pub fn var(x: VarId) -> Operand {
    Operand::Var(x)
}
pub fn i32c(x: i32) -> Operand {
    Operand::Const(Const::i32(x))
}
pub fn i64c(x: i64) -> Operand {
    Operand::Const(Const::i64(x))
}
pub fn f32c(x: f32) -> Operand {
    Operand::Const(Const::f32(x))
}
pub fn f64c(x: f64) -> Operand {
    Operand::Const(Const::f64(x))
}
pub fn boolc(x: bool) -> Operand {
    Operand::Const(Const::bool(x))
}
pub fn def(x: ValueId) -> Place {
    Place::Value(x)
}
pub fn set(x: VarId) -> Place {
    Place::Var(x)
}

pub fn inst(n: u32, op: Op, results: Vec<Place>, args: Vec<Operand>) -> Stmt {
    Stmt::Inst(Inst {
        op,
        args,
        results,
        span: sp(n),
    })
}
pub fn add(n: u32, r: Place, a: Operand, b: Operand) -> Stmt {
    inst(n, Op::Binary(BinaryOp::Add), vec![r], vec![a, b])
}
pub fn mov(n: u32, r: Place, a: Operand) -> Stmt {
    inst(n, Op::Mov, vec![r], vec![a])
}
pub fn builtin(n: u32, r: ValueId, b: Builtin) -> Stmt {
    inst(n, Op::Builtin(b), vec![def(r)], vec![])
}
pub fn if_(n: u32, cond: Operand, then_body: Vec<Stmt>, else_body: Vec<Stmt>) -> Stmt {
    Stmt::If {
        cond,
        then_body: Block { stmts: then_body },
        else_body: Block { stmts: else_body },
        span: sp(n),
    }
}
pub fn loop_(n: u32, body: Vec<Stmt>) -> Stmt {
    Stmt::Loop {
        body: Block { stmts: body },
        span: sp(n),
    }
}
pub fn ordered(n: u32, key: Operand, body: Vec<Stmt>) -> Stmt {
    Stmt::Ordered {
        key,
        body: Block { stmts: body },
        span: sp(n),
    }
}
pub fn brk(n: u32) -> Stmt {
    Stmt::Break { span: sp(n) }
}
pub fn cont(n: u32) -> Stmt {
    Stmt::Continue { span: sp(n) }
}
pub fn ret(n: u32, values: Vec<Operand>) -> Stmt {
    Stmt::Return {
        values,
        span: sp(n),
    }
}
pub fn kill(n: u32) -> Stmt {
    Stmt::Kill { span: sp(n) }
}
pub fn call(n: u32, f: u32, results: Vec<Place>, args: Vec<Operand>) -> Stmt {
    inst(n, Op::Call(f), results, args)
}

/// A function under construction; declarations get spans 9000 + k.
pub struct Fb {
    pub f: Function,
}

impl Fb {
    pub fn kernel(name: &str) -> Fb {
        Fb::new(name, FuncKind::Kernel { workgroup: None }, vec![])
    }
    pub fn func(name: &str, results: Vec<Type>) -> Fb {
        Fb::new(name, FuncKind::Function, results)
    }
    fn new(name: &str, kind: FuncKind, results: Vec<Type>) -> Fb {
        Fb {
            f: Function {
                name: name.into(),
                kind,
                params: vec![],
                results,
                values: vec![],
                vars: vec![],
                privates: vec![],
                body: Block::default(),
                span: sp(90),
            },
        }
    }
    pub fn span(mut self, n: u32) -> Fb {
        self.f.span = sp(n);
        self
    }
    pub fn value(&mut self, name: &str, ty: Type) -> ValueId {
        let span = sp(9000 + self.f.values.len() as u32);
        self.f.values.push(ValueDecl {
            name: name.into(),
            ty,
            span,
        });
        ValueId(self.f.values.len() as u32 - 1)
    }
    pub fn param(&mut self, name: &str, ty: Type) -> ValueId {
        let id = self.value(name, ty);
        self.f.params.push(id);
        id
    }
    pub fn var(&mut self, name: &str, ty: Type) -> VarId {
        let span = sp(9500 + self.f.vars.len() as u32);
        self.f.vars.push(VarDecl {
            name: name.into(),
            ty,
            span,
        });
        VarId(self.f.vars.len() as u32 - 1)
    }
    pub fn private(&mut self, name: &str, size: u32, n: u32) -> u32 {
        self.f.privates.push(PrivateDecl {
            name: name.into(),
            size,
            span: sp(n),
        });
        self.f.privates.len() as u32 - 1
    }
    pub fn body(mut self, stmts: Vec<Stmt>) -> Function {
        self.f.body = Block { stmts };
        self.f
    }
}

pub fn module(functions: Vec<Function>) -> Module {
    Module {
        functions,
        ..Module::default()
    }
}

/// The verifier's diagnostics as (span start, message).
pub fn errors(m: &Module) -> Vec<(u32, String)> {
    verify(m)
        .into_iter()
        .map(|d| (d.span.start, d.message))
        .collect()
}

/// Asserts the verifier reports exactly these errors (span number, message).
#[track_caller]
pub fn expect_errors(m: &Module, expected: &[(u32, &str)]) {
    let got = errors(m);
    let want: Vec<(u32, String)> = expected
        .iter()
        .map(|(n, msg)| (sp(*n).start, msg.to_string()))
        .collect();
    assert_eq!(got, want, "diagnostics differ");
}

#[track_caller]
pub fn expect_valid(m: &Module) {
    let got = errors(m);
    assert!(got.is_empty(), "unexpected diagnostics: {got:#?}");
}
