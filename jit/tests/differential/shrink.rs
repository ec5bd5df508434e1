//! Making a failing case small before it is reported: a smaller statement
//! budget for the same seed, then statements removed one at a time while
//! the JIT still fails the same way, then simpler inputs (one workgroup,
//! zeroed buffers).

use crate::check::{self, Inputs, Mismatch};
use std::time::{Duration, Instant};
use warpjit_ir::{Block, Module, Stmt, VerifiedModule};

/// Fuel while shrinking: removing a loop's exit makes it endless.
const SHRINK_FUEL: u64 = 200_000;
/// Shrinking stops trying after this long and reports what it has.
const SHRINK_TIME: Duration = Duration::from_secs(90);

/// A failing program with its inputs.
#[derive(Clone)]
pub struct Failing {
    pub module: VerifiedModule,
    pub inputs: Inputs,
    pub mismatch: Mismatch,
}

/// Does `module` on `inputs` still fail like `like` (same target, level and
/// kind of difference), with the interpreter running it to the end?
pub fn fails_like(module: &VerifiedModule, inputs: &Inputs, like: &Mismatch) -> Option<Mismatch> {
    let want = check::expected(module, inputs, SHRINK_FUEL).ok()?;
    match check::compare_at(
        module,
        inputs,
        &want,
        like.target,
        like.opt_level,
        SHRINK_FUEL,
    ) {
        Err(m) if m.kind == like.kind => Some(m),
        _ => None,
    }
}

/// Removes statements and simplifies inputs while the failure persists.
pub fn shrink(start: Failing) -> Failing {
    let deadline = Instant::now() + SHRINK_TIME;
    let mut best = start;
    loop {
        let before = statement_count(&best.module);
        best = remove_statements(best, deadline);
        best = simplify_inputs(best);
        if statement_count(&best.module) == before || Instant::now() > deadline {
            return best;
        }
    }
}

pub fn statement_count(module: &Module) -> usize {
    module.functions.iter().map(|f| count(&f.body)).sum()
}

fn count(block: &Block) -> usize {
    block
        .stmts
        .iter()
        .map(|s| {
            1 + match s {
                Stmt::If {
                    then_body,
                    else_body,
                    ..
                } => count(then_body) + count(else_body),
                Stmt::Loop { body, .. } | Stmt::Ordered { body, .. } => count(body),
                _ => 0,
            }
        })
        .sum()
}

/// What to do to the n-th statement (pre-order over all functions).
#[derive(Clone, Copy)]
enum Edit {
    Remove,
    /// Replace a block statement by its (then-)body.
    Inline,
}

fn edit_block(block: &mut Block, n: &mut usize, edit: Edit) -> bool {
    let mut i = 0;
    while i < block.stmts.len() {
        if *n == 0 {
            match edit {
                Edit::Remove => {
                    block.stmts.remove(i);
                }
                Edit::Inline => {
                    let body = match &block.stmts[i] {
                        Stmt::If { then_body, .. } => then_body.stmts.clone(),
                        Stmt::Loop { body, .. } | Stmt::Ordered { body, .. } => body.stmts.clone(),
                        _ => return false,
                    };
                    block.stmts.splice(i..=i, body);
                }
            }
            return true;
        }
        *n -= 1;
        let found = match &mut block.stmts[i] {
            Stmt::If {
                then_body,
                else_body,
                ..
            } => edit_block(then_body, n, edit) || edit_block(else_body, n, edit),
            Stmt::Loop { body, .. } | Stmt::Ordered { body, .. } => edit_block(body, n, edit),
            _ => false,
        };
        if found {
            return true;
        }
        i += 1;
    }
    false
}

/// `module` with the n-th statement edited, if that still verifies. The
/// text round trip rebuilds the value tables without the removed ones.
fn edited(module: &Module, n: usize, edit: Edit) -> Option<VerifiedModule> {
    let mut m = module.clone();
    let mut left = n;
    let changed = m
        .functions
        .iter_mut()
        .any(|f| edit_block(&mut f.body, &mut left, edit));
    if !changed {
        return None;
    }
    let text = warpjit_ir::text::print(&m);
    VerifiedModule::new(warpjit_ir::text::parse(&text).ok()?).ok()
}

/// One pass from the last statement to the first (uses come after
/// definitions, so removing from the end succeeds more often).
fn remove_statements(mut best: Failing, deadline: Instant) -> Failing {
    let mut n = statement_count(&best.module);
    while n > 0 && Instant::now() < deadline {
        n -= 1;
        for edit in [Edit::Remove, Edit::Inline] {
            let Some(candidate) = edited(&best.module, n, edit) else {
                continue;
            };
            if let Some(m) = fails_like(&candidate, &best.inputs, &best.mismatch) {
                best = Failing {
                    module: candidate,
                    inputs: best.inputs.clone(),
                    mismatch: m,
                };
                break;
            }
        }
    }
    best
}

/// One workgroup (with buffers sized for it), zeroed buffers and
/// parameters, one SM: each kept where the failure stays.
fn simplify_inputs(mut best: Failing) -> Failing {
    type Simplify = Box<dyn Fn(&mut Inputs)>;
    let mut attempts: Vec<Simplify> = vec![
        Box::new(|x: &mut Inputs| {
            // The result records and atomic regions of other workgroups
            // are never reached with one workgroup.
            let threads: u32 = x.workgroup.iter().product();
            x.grid = [1, 1, 1];
            for (i, per_group) in [(0, threads * 256), (2, threads.div_ceil(32) * 256)] {
                if let Some(b) = x.buffers.get_mut(i) {
                    b.truncate(per_group as usize);
                }
            }
        }),
        Box::new(|x: &mut Inputs| x.grid = [1, 1, 1]),
        Box::new(|x: &mut Inputs| x.params.iter_mut().for_each(|p| *p = 0)),
        Box::new(|x: &mut Inputs| x.sm_count = 1),
    ];
    for i in 0..best.inputs.buffers.len() {
        attempts.push(Box::new(move |x: &mut Inputs| {
            x.buffers[i].iter_mut().for_each(|b| *b = 0)
        }));
    }
    for simplify in attempts {
        let mut candidate = best.inputs.clone();
        simplify(&mut candidate);
        if candidate == best.inputs {
            continue;
        }
        if let Some(m) = fails_like(&best.module, &candidate, &best.mismatch) {
            best.inputs = candidate;
            best.mismatch = m;
        }
    }
    best
}
