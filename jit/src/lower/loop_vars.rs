//! Loop shadows: copies of variables that a loop writes in every lane.
//!
//! A variable write keeps the old value in inactive lanes (`select(mask,
//! new, old)`). In a loop the mask holds the lanes that left by `break`,
//! decided by this iteration's data, so the select makes every loop-carried
//! value wait for that decision. In Mandelbrot the iteration count waits for
//! the escape test, and the next escape test waits for the count's limit
//! test: the mask logic sits on the loop's dependence chain.
//!
//! The select matters only for lanes that read the variable later. Take a
//! loop with no `continue` of its own and a statement directly in its body
//! (or under `if`s with uniform conditions, which run all active lanes or
//! none). A lane inactive there has left this run of the loop (`break`),
//! never entered it, returned or ended: it does not run the body again
//! before the loop is entered anew. So inside the loop, a variable can live
//! in a shadow copy, taken from the variable when the loop is entered, read
//! by the loop's statements, and written in every lane at such statements
//! (with the select elsewhere). In every lane still in the loop the shadow
//! equals the variable. When the variable is also read outside the loop,
//! every write updates it too, with the select, but nothing in the loop
//! waits for that.

use warpjit_ir::{Block, Function, Operand, Place, Stmt};

/// How a loop uses one variable's shadow.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shadow {
    /// The variable is read outside the loop, so writes also update the
    /// variable itself.
    pub read_outside: bool,
}

/// The shadows of the loop whose body is `body`, by variable: variables the
/// loop reads and writes in every lane somewhere. `uniform` says whether an
/// `if`'s condition is the same in all active lanes. Empty when the loop
/// has a `continue`.
pub fn loop_shadows(
    f: &Function,
    body: &Block,
    uniform: &dyn Fn(&Stmt) -> bool,
) -> Vec<Option<Shadow>> {
    let mut shadows = vec![None; f.vars.len()];
    if continues(body) {
        return shadows;
    }
    let mut written = vec![false; f.vars.len()];
    every_lane_writes(body, uniform, &mut written);
    let mut inside = vec![0usize; f.vars.len()];
    count_reads(body, &mut inside);
    let mut everywhere = vec![0usize; f.vars.len()];
    count_reads(&f.body, &mut everywhere);
    for (v, shadow) in shadows.iter_mut().enumerate() {
        if written[v] && inside[v] > 0 {
            *shadow = Some(Shadow {
                read_outside: everywhere[v] > inside[v],
            });
        }
    }
    shadows
}

/// Whether `block` has a `continue` for the loop whose body it is (one
/// inside a nested loop belongs to that loop).
fn continues(block: &Block) -> bool {
    block.stmts.iter().any(|s| match s {
        Stmt::Continue { .. } => true,
        Stmt::If {
            then_body,
            else_body,
            ..
        } => continues(then_body) || continues(else_body),
        Stmt::Ordered { body, .. } => continues(body),
        _ => false,
    })
}

/// Marks the variables assigned at statements of `block` where every lane
/// still in the loop is active.
fn every_lane_writes(block: &Block, uniform: &dyn Fn(&Stmt) -> bool, written: &mut [bool]) {
    for s in &block.stmts {
        match s {
            Stmt::Inst(i) => {
                for place in &i.results {
                    if let Place::Var(v) = place {
                        if let Some(w) = written.get_mut(v.0 as usize) {
                            *w = true;
                        }
                    }
                }
            }
            Stmt::If {
                then_body,
                else_body,
                ..
            } if uniform(s) => {
                every_lane_writes(then_body, uniform, written);
                every_lane_writes(else_body, uniform, written);
            }
            _ => {}
        }
    }
}

/// Adds the reads of each variable in `block` to `reads`.
fn count_reads(block: &Block, reads: &mut [usize]) {
    for s in &block.stmts {
        match s {
            Stmt::Inst(i) => i.args.iter().for_each(|a| count_read(a, reads)),
            Stmt::If {
                cond,
                then_body,
                else_body,
                ..
            } => {
                count_read(cond, reads);
                count_reads(then_body, reads);
                count_reads(else_body, reads);
            }
            Stmt::Loop { body, .. } => count_reads(body, reads),
            Stmt::Return { values, .. } => values.iter().for_each(|v| count_read(v, reads)),
            Stmt::Ordered { key, body, .. } => {
                count_read(key, reads);
                count_reads(body, reads);
            }
            Stmt::Break { .. } | Stmt::Continue { .. } | Stmt::Kill { .. } => {}
        }
    }
}

fn count_read(o: &Operand, reads: &mut [usize]) {
    if let Operand::Var(v) = o {
        if let Some(n) = reads.get_mut(v.0 as usize) {
            *n += 1;
        }
    }
}
