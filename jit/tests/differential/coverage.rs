//! What the all-features group's programs contain: every operation and
//! built-in, every statement kind, the control-flow shapes that stress the
//! execution mask, and partial warps. Generating is cheap, so this walks
//! the same programs the group compiles and runs.

use crate::{all_but_barriers, config, seed_of, statement_budget};
use crate::{ALL_FEATURES_PROGRAMS, ALL_FEATURES_SALT};
use std::collections::BTreeSet;
use warpjit_ir::generate::{generate_case, GenConfig, SplitMix64};
use warpjit_ir::ops::{all_binary, all_cmp, all_unary};
use warpjit_ir::{AtomOp, Block, Builtin, Op, Stmt};

/// A name for the kind of `op`: the variant, and the operation for the
/// families whose members lower differently.
fn op_kind(op: &Op) -> String {
    match op {
        Op::Mov => "mov".into(),
        Op::Select => "select".into(),
        Op::Unary(u) => format!("unary {u:?}"),
        Op::Binary(b) => format!("binary {b:?}"),
        Op::Fma => "fma".into(),
        Op::Cmp(c) => format!("cmp {c:?}"),
        Op::Bfe { .. } => "bfe".into(),
        Op::Bfi => "bfi".into(),
        Op::Cvt { .. } => "cvt".into(),
        Op::Bitcast(_) => "bitcast".into(),
        Op::Pk64 => "pk64".into(),
        Op::Up64 => "up64".into(),
        Op::Builtin(b) => format!("builtin {}", b.name()),
        Op::ActiveMask => "active_mask".into(),
        Op::Ballot => "ballot".into(),
        Op::Vote { .. } => "vote".into(),
        Op::Tg(_) => "tg".into(),
        Op::Shuffle { .. } => "shuffle".into(),
        Op::Quad(_) => "quad".into(),
        Op::Deriv { .. } => "deriv".into(),
        Op::Demote => "demote".into(),
        Op::Load { .. } => "load".into(),
        Op::Store { .. } => "store".into(),
        Op::Atom { op, .. } => format!("atom {}", op.name()),
        Op::MemBar => "membar".into(),
        Op::Barrier => "barrier".into(),
        Op::Call(_) => "call".into(),
    }
}

/// Kinds seen, including shapes: `if in loop`, `loop in loop`,
/// `break in if`, ... (statement kind and the kind of block around it).
fn visit(block: &Block, around: &str, seen: &mut BTreeSet<String>) {
    for s in &block.stmts {
        let kind = match s {
            Stmt::Inst(i) => {
                seen.insert(op_kind(&i.op));
                continue;
            }
            Stmt::If { .. } => "if",
            Stmt::Loop { .. } => "loop",
            Stmt::Break { .. } => "break",
            Stmt::Continue { .. } => "continue",
            Stmt::Return { .. } => "return",
            Stmt::Kill { .. } => "kill",
            Stmt::Ordered { .. } => "ordered",
        };
        seen.insert(kind.to_string());
        seen.insert(format!("{kind} in {around}"));
        match s {
            Stmt::If {
                then_body,
                else_body,
                ..
            } => {
                visit(then_body, "if", seen);
                visit(else_body, "if", seen);
            }
            Stmt::Loop { body, .. } => visit(body, "loop", seen),
            Stmt::Ordered { body, .. } => visit(body, "ordered", seen),
            _ => {}
        }
    }
}

#[test]
fn all_features_group_covers_every_operation_and_shape() {
    let features = all_but_barriers();
    let full = GenConfig::default().max_stmts;
    let mut seen = BTreeSet::new();
    let mut partial_warps = 0;
    for n in 0..ALL_FEATURES_PROGRAMS {
        let seed = seed_of(ALL_FEATURES_SALT, n);
        let cfg = config(features, statement_budget(seed, full));
        let case = generate_case(&mut SplitMix64::new(seed), &cfg);
        if case.workgroup.iter().product::<u32>() % 32 != 0 {
            partial_warps += 1;
        }
        for f in &case.module.functions {
            visit(&f.body, "function", &mut seen);
        }
    }
    let mut want: Vec<String> = [
        "mov",
        "select",
        "fma",
        "bfe",
        "bfi",
        "cvt",
        "bitcast",
        "pk64",
        "up64",
        "active_mask",
        "ballot",
        "vote",
        "tg",
        "shuffle",
        "quad",
        "deriv",
        "demote",
        "load",
        "store",
        "membar",
        "call",
        "if",
        "loop",
        "break",
        "continue",
        "return",
        "kill",
        "ordered",
        "if in loop",
        "loop in loop",
        "loop in if",
        "if in if",
        "break in if",
        "continue in if",
        "return in if",
        "kill in if",
        "ordered in loop",
        "if in ordered",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    want.extend(all_unary().map(|u| format!("unary {u:?}")));
    want.extend(all_binary().map(|b| format!("binary {b:?}")));
    want.extend(all_cmp().map(|c| format!("cmp {c:?}")));
    want.extend(AtomOp::ALL.iter().map(|a| format!("atom {}", a.name())));
    want.extend(
        Builtin::all()
            .into_iter()
            .map(|b| format!("builtin {}", b.name())),
    );
    let missing: Vec<&String> = want.iter().filter(|w| !seen.contains(*w)).collect();
    assert!(missing.is_empty(), "never generated: {missing:?}");
    assert!(partial_warps > 0, "no workgroup with a partial warp");
}
