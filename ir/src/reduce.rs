//! Test-case reduction: shrinks a failing program while it keeps failing.
//!
//! [`reduce`] takes a [`Candidate`] (a module and the launch it fails with)
//! and a predicate "this variant still fails", and greedily tries smaller
//! variants, keeping a variant only when it verifies and the predicate holds:
//!
//! - delete runs of statements from a block (halves first, then single ones,
//!   later statements before earlier ones so uses go before definitions);
//! - replace an `if` by its `then` or `else` body, a `loop` or `ordered` by
//!   its body, or remove the construct;
//! - replace an instruction's operand by the zero constant of its type;
//! - drop functions nothing calls any more and shared arrays nothing uses;
//! - shrink the grid and the workgroup, zero and shorten the buffers.
//!
//! Value declarations left without a definition and without a use are
//! removed after every edit, so deleting an instruction whose results are
//! unused verifies. Reduction is deterministic (the same candidate and
//! predicate give the same result) and bounded by [`ReduceLimits`].

use crate::module::{Block, FuncKind, Function, Module, Operand, Place, Stmt, ValueId, VarId};
use crate::ops::Op;
use crate::types::Const;
use crate::verify::VerifiedModule;
use std::time::{Duration, Instant};

/// A program and the launch it runs with.
#[derive(Clone, Debug, PartialEq)]
pub struct Candidate {
    pub module: Module,
    pub grid: [u32; 3],
    /// Workgroup size; kept equal to the kernel's `workgroup` attribute when
    /// it is shrunk.
    pub workgroup: [u32; 3],
    /// Initial contents of each buffer, in binding order of the launch.
    pub buffers: Vec<Vec<u8>>,
}

/// How much work a reduction may do.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReduceLimits {
    /// Predicate calls (variants that fail to verify are not counted).
    pub max_attempts: usize,
    /// Wall-clock budget; the best variant so far is returned when it runs out.
    pub max_time: Duration,
}

impl Default for ReduceLimits {
    fn default() -> ReduceLimits {
        ReduceLimits {
            max_attempts: 500,
            max_time: Duration::from_secs(60),
        }
    }
}

/// What a reduction produced.
#[derive(Clone, Debug)]
pub struct Reduced {
    /// The smallest variant found that still fails (the input if none).
    pub candidate: Candidate,
    /// Predicate calls made.
    pub attempts: usize,
    /// Variants kept.
    pub accepted: usize,
    /// True when a limit stopped the reduction before it converged.
    pub hit_limit: bool,
}

/// Shrinks `start` while `still_fails` holds. The predicate is called only
/// on variants that verify; `start` itself is assumed to fail.
pub fn reduce(
    start: &Candidate,
    limits: &ReduceLimits,
    still_fails: &mut dyn FnMut(&VerifiedModule, &Candidate) -> bool,
) -> Reduced {
    let mut r = Reducer {
        best: start.clone(),
        attempts: 0,
        accepted: 0,
        limits: *limits,
        started: Instant::now(),
        still_fails,
    };
    let hit_limit = r.run();
    Reduced {
        candidate: r.best,
        attempts: r.attempts,
        accepted: r.accepted,
        hit_limit,
    }
}

/// The size a reduction minimises: statements, functions, launch and bytes.
pub fn size(c: &Candidate) -> u64 {
    let stmts: u64 = c
        .module
        .functions
        .iter()
        .map(|f| count_stmts(&f.body) as u64)
        .sum();
    let threads: u64 = c
        .grid
        .iter()
        .chain(&c.workgroup)
        .map(|d| u64::from(*d))
        .product();
    // Non-zero bytes count too, so zeroing a buffer is progress.
    let bytes: u64 = c
        .buffers
        .iter()
        .map(|b| b.len() as u64 + b.iter().filter(|&&x| x != 0).count() as u64)
        .sum();
    let constants = c
        .module
        .functions
        .iter()
        .map(|f| non_constant_operands(&f.body))
        .sum::<u64>();
    stmts * 1_000_000_000
        + (c.module.functions.len() + c.module.shared.len()) as u64 * 100_000_000
        + constants * 100_000
        + threads
        + bytes
}

struct Reducer<'p> {
    best: Candidate,
    attempts: usize,
    accepted: usize,
    limits: ReduceLimits,
    started: Instant,
    still_fails: &'p mut dyn FnMut(&VerifiedModule, &Candidate) -> bool,
}

/// One kind of edit: the `n`-th variant of that kind, or None past the last.
type Pass = fn(&Candidate, usize) -> Option<Candidate>;

const PASSES: [Pass; 9] = [
    shrink_launch,
    delete_functions,
    delete_shared,
    delete_stmt_runs,
    unwrap_constructs,
    zero_operands,
    delete_stmt_runs,
    zero_buffers,
    shorten_buffers,
];

impl Reducer<'_> {
    /// Runs rounds of every pass until a round keeps nothing; true when a
    /// limit stopped it first.
    fn run(&mut self) -> bool {
        loop {
            let mut progress = false;
            for pass in PASSES {
                let mut n = 0;
                while let Some(variant) = pass(&self.best, n) {
                    if self.out_of_budget() {
                        return true;
                    }
                    if self.try_variant(variant) {
                        progress = true;
                        // The same index now names the next variant.
                    } else {
                        n += 1;
                    }
                }
            }
            if !progress {
                return false;
            }
        }
    }

    fn out_of_budget(&self) -> bool {
        self.attempts >= self.limits.max_attempts || self.started.elapsed() >= self.limits.max_time
    }

    fn try_variant(&mut self, mut variant: Candidate) -> bool {
        for f in &mut variant.module.functions {
            drop_unused_values(f);
            drop_unused_vars(f);
        }
        if size(&variant) >= size(&self.best) {
            return false;
        }
        let Ok(verified) = VerifiedModule::new(variant.module.clone()) else {
            return false;
        };
        self.attempts += 1;
        if (self.still_fails)(&verified, &variant) {
            self.best = variant;
            self.accepted += 1;
            true
        } else {
            false
        }
    }
}

fn non_constant_operands(b: &Block) -> u64 {
    let mut n = 0;
    crate::module::walk_block(b, &mut |s| {
        n += s
            .operands()
            .iter()
            .filter(|o| !matches!(o, Operand::Const(_)))
            .count() as u64;
    });
    n
}

fn count_stmts(b: &Block) -> usize {
    let mut n = 0;
    crate::module::walk_block(b, &mut |_| n += 1);
    n
}

/// Applies `edit` to the `n`-th block (pre-order over all functions);
/// returns None when there is no such block or the edit declines.
fn edit_block(
    c: &Candidate,
    mut n: usize,
    edit: &mut dyn FnMut(&mut Block) -> bool,
) -> Option<Option<Candidate>> {
    let mut out = c.clone();
    for f in &mut out.module.functions {
        match visit_block(&mut f.body, &mut n, edit) {
            Some(true) => return Some(Some(out)),
            Some(false) => return Some(None),
            None => {}
        }
    }
    None
}

/// Counts blocks down to the `n`-th and edits it: Some(applied) when found.
fn visit_block(
    b: &mut Block,
    n: &mut usize,
    edit: &mut dyn FnMut(&mut Block) -> bool,
) -> Option<bool> {
    if *n == 0 {
        return Some(edit(b));
    }
    *n -= 1;
    for s in &mut b.stmts {
        let found = match s {
            Stmt::If {
                then_body,
                else_body,
                ..
            } => visit_block(then_body, n, edit).or_else(|| visit_block(else_body, n, edit)),
            Stmt::Loop { body, .. } | Stmt::Ordered { body, .. } => visit_block(body, n, edit),
            _ => None,
        };
        if found.is_some() {
            return found;
        }
    }
    None
}

/// Variants that delete a run of statements: for each block (pre-order),
/// runs of half the block, a quarter, ..., one statement, last run first.
fn delete_stmt_runs(c: &Candidate, n: usize) -> Option<Candidate> {
    let mut remaining = n;
    let mut block = 0;
    loop {
        let mut len = None;
        edit_block(c, block, &mut |b| {
            len = Some(b.stmts.len());
            false
        })?;
        let len = len?;
        let runs = runs_of(len);
        if remaining < runs.len() {
            let (start, count) = runs[remaining];
            return edit_block(c, block, &mut |b| {
                b.stmts.drain(start..start + count);
                true
            })?
            .or_else(|| Some(c.clone()));
        }
        remaining -= runs.len();
        block += 1;
    }
}

/// The (start, count) runs tried on a block of `len` statements.
fn runs_of(len: usize) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut count = len.div_ceil(2).max(1);
    if len == 0 {
        return out;
    }
    loop {
        let mut end = len;
        while end > 0 {
            let start = end.saturating_sub(count);
            out.push((start, end - start));
            end = start;
        }
        if count == 1 {
            break;
        }
        count = count.div_ceil(2);
    }
    out
}

/// Variants that replace a construct by one of its bodies or remove it.
fn unwrap_constructs(c: &Candidate, n: usize) -> Option<Candidate> {
    let mut remaining = n;
    let mut block = 0;
    loop {
        let mut kinds: Vec<(usize, u8)> = Vec::new();
        edit_block(c, block, &mut |b| {
            for (i, s) in b.stmts.iter().enumerate() {
                match s {
                    Stmt::If { .. } => kinds.extend([(i, 0), (i, 1)]),
                    Stmt::Loop { .. } | Stmt::Ordered { .. } => kinds.push((i, 0)),
                    _ => {}
                }
            }
            false
        })?;
        if remaining < kinds.len() {
            let (at, side) = kinds[remaining];
            return edit_block(c, block, &mut |b| {
                let inner = match b.stmts.remove(at) {
                    Stmt::If {
                        then_body,
                        else_body,
                        ..
                    } => {
                        if side == 0 {
                            then_body
                        } else {
                            else_body
                        }
                    }
                    Stmt::Loop { body, .. } | Stmt::Ordered { body, .. } => body,
                    _ => Block::default(),
                };
                b.stmts.splice(at..at, inner.stmts);
                true
            })?
            .or_else(|| Some(c.clone()));
        }
        remaining -= kinds.len();
        block += 1;
    }
}

/// Variants that replace one non-constant operand by the zero of its type.
fn zero_operands(c: &Candidate, n: usize) -> Option<Candidate> {
    let mut out = c.clone();
    let mut remaining = n;
    let params: Vec<_> = c.module.params.iter().map(|p| p.ty).collect();
    for f in &mut out.module.functions {
        let values: Vec<_> = f.values.iter().map(|v| v.ty).collect();
        let vars: Vec<_> = f.vars.iter().map(|v| v.ty).collect();
        let type_of = |o: &Operand| match o {
            Operand::Value(v) => values.get(v.0 as usize).copied(),
            Operand::Var(v) => vars.get(v.0 as usize).copied(),
            Operand::Param(p) => params.get(p.0 as usize).copied(),
            Operand::Const(_) => None,
        };
        if let Some(done) = zero_in_block(&mut f.body, &mut remaining, &type_of) {
            return done.then_some(out);
        }
    }
    None
}

fn zero_in_block(
    b: &mut Block,
    remaining: &mut usize,
    type_of: &dyn Fn(&Operand) -> Option<crate::types::Type>,
) -> Option<bool> {
    for s in &mut b.stmts {
        let operands: Vec<&mut Operand> = match s {
            Stmt::Inst(i) => i.args.iter_mut().collect(),
            Stmt::If { cond, .. } => vec![cond],
            Stmt::Ordered { key, .. } => vec![key],
            Stmt::Return { values, .. } => values.iter_mut().collect(),
            _ => Vec::new(),
        };
        for o in operands {
            if let Some(ty) = type_of(o) {
                if *remaining == 0 {
                    *o = Operand::Const(Const::zero(ty));
                    return Some(true);
                }
                *remaining -= 1;
            }
        }
        let nested = match s {
            Stmt::If {
                then_body,
                else_body,
                ..
            } => zero_in_block(then_body, remaining, type_of)
                .or_else(|| zero_in_block(else_body, remaining, type_of)),
            Stmt::Loop { body, .. } | Stmt::Ordered { body, .. } => {
                zero_in_block(body, remaining, type_of)
            }
            _ => None,
        };
        if nested.is_some() {
            return nested;
        }
    }
    None
}

/// Variants without the `n`-th function that nothing calls (not a kernel).
fn delete_functions(c: &Candidate, n: usize) -> Option<Candidate> {
    let module = &c.module;
    let mut called = vec![false; module.functions.len()];
    for f in &module.functions {
        crate::module::walk_block(&f.body, &mut |s| {
            if let Stmt::Inst(i) = s {
                if let Op::Call(callee) = i.op {
                    mark(&mut called, callee);
                }
            }
        });
    }
    let victim = (0..module.functions.len())
        .filter(|&i| !called[i] && !module.functions[i].is_kernel())
        .nth(n)?;
    let mut out = c.clone();
    out.module.functions.remove(victim);
    for f in &mut out.module.functions {
        renumber_calls(&mut f.body, victim as u32);
    }
    Some(out)
}

/// Variants without the `n`-th shared array nothing refers to.
fn delete_shared(c: &Candidate, n: usize) -> Option<Candidate> {
    let module = &c.module;
    let mut used = vec![false; module.shared.len()];
    for f in &module.functions {
        crate::module::walk_block(&f.body, &mut |s| {
            if let Stmt::Inst(i) = s {
                if let Op::Load { mem, .. } | Op::Store { mem, .. } | Op::Atom { mem, .. } = &i.op {
                    if let crate::ops::MemRef::Shared(k) = mem {
                        mark(&mut used, *k);
                    }
                }
            }
        });
    }
    let victim = (0..used.len()).filter(|&i| !used[i]).nth(n)?;
    let mut out = c.clone();
    out.module.shared.remove(victim);
    for f in &mut out.module.functions {
        renumber_shared(&mut f.body, victim as u32);
    }
    Some(out)
}

/// Calls `visit` for every statement of `block`, depth first, in order,
/// with leave to change it (but not the blocks it holds).
fn walk_block_mut(block: &mut Block, visit: &mut dyn FnMut(&mut Stmt)) {
    for s in &mut block.stmts {
        visit(s);
        match s {
            Stmt::If {
                then_body,
                else_body,
                ..
            } => {
                walk_block_mut(then_body, visit);
                walk_block_mut(else_body, visit);
            }
            Stmt::Loop { body, .. } | Stmt::Ordered { body, .. } => walk_block_mut(body, visit),
            _ => {}
        }
    }
}

/// The operands `s` reads and the places it writes, its own only.
fn operands_and_places(s: &mut Stmt) -> (Vec<&mut Operand>, &mut [Place]) {
    match s {
        Stmt::Inst(i) => (i.args.iter_mut().collect(), &mut i.results),
        Stmt::If { cond, .. } => (vec![cond], &mut []),
        Stmt::Ordered { key, .. } => (vec![key], &mut []),
        Stmt::Return { values, .. } => (values.iter_mut().collect(), &mut []),
        _ => (Vec::new(), &mut []),
    }
}

fn renumber_shared(b: &mut Block, removed: u32) {
    walk_block_mut(b, &mut |s| {
        if let Stmt::Inst(i) = s {
            if let Op::Load { mem, .. } | Op::Store { mem, .. } | Op::Atom { mem, .. } = &mut i.op {
                if let crate::ops::MemRef::Shared(k) = mem {
                    if *k > removed {
                        *k -= 1;
                    }
                }
            }
        }
    });
}

fn renumber_calls(b: &mut Block, removed: u32) {
    walk_block_mut(b, &mut |s| {
        if let Stmt::Inst(i) = s {
            if let Op::Call(callee) = &mut i.op {
                if *callee > removed {
                    *callee -= 1;
                }
            }
        }
    });
}

/// Variants with a smaller grid or workgroup: each dimension halved, or 1.
fn shrink_launch(c: &Candidate, n: usize) -> Option<Candidate> {
    let mut options = Vec::new();
    for d in 0..3 {
        for (is_grid, size) in [(true, c.grid[d]), (false, c.workgroup[d])] {
            if size > 1 {
                options.push((is_grid, d, 1));
                if size / 2 > 1 {
                    options.push((is_grid, d, size / 2));
                }
            }
        }
    }
    let (is_grid, d, to) = *options.get(n)?;
    let mut out = c.clone();
    if is_grid {
        out.grid[d] = to;
    } else {
        out.workgroup[d] = to;
        for f in &mut out.module.functions {
            if let FuncKind::Kernel { workgroup: Some(w) } = &mut f.kind {
                if *w == c.workgroup {
                    *w = out.workgroup;
                }
            }
        }
    }
    Some(out)
}

/// Variants with the `n`-th non-zero buffer filled with zeros.
fn zero_buffers(c: &Candidate, n: usize) -> Option<Candidate> {
    let i = (0..c.buffers.len())
        .filter(|&i| c.buffers[i].iter().any(|&b| b != 0))
        .nth(n)?;
    let mut out = c.clone();
    out.buffers[i].fill(0);
    Some(out)
}

/// Variants with the `n`-th buffer cut to half its length (a multiple of 8).
fn shorten_buffers(c: &Candidate, n: usize) -> Option<Candidate> {
    let i = (0..c.buffers.len())
        .filter(|&i| c.buffers[i].len() >= 16)
        .nth(n)?;
    let mut out = c.clone();
    let half = (c.buffers[i].len() / 2) & !7;
    out.buffers[i].truncate(half);
    Some(out)
}

/// Removes value declarations nothing defines or uses, renumbering the rest.
fn drop_unused_values(f: &mut Function) {
    let mut live = vec![false; f.values.len()];
    for p in &f.params {
        mark(&mut live, p.0);
    }
    visit_ids(&mut f.body, &mut |v| mark(&mut live, v.0), &mut |_| {});
    if live.iter().all(|l| *l) {
        return;
    }
    let new_index = compacted_indices(&live);
    retain_marked(&mut f.values, &live);
    for p in &mut f.params {
        renumber(&new_index, &mut p.0);
    }
    visit_ids(
        &mut f.body,
        &mut |v| renumber(&new_index, &mut v.0),
        &mut |_| {},
    );
}

/// Removes variables nothing reads or writes, renumbering the rest.
fn drop_unused_vars(f: &mut Function) {
    let mut used = vec![false; f.vars.len()];
    visit_ids(&mut f.body, &mut |_| {}, &mut |v| mark(&mut used, v.0));
    if used.iter().all(|u| *u) {
        return;
    }
    let new_index = compacted_indices(&used);
    retain_marked(&mut f.vars, &used);
    visit_ids(&mut f.body, &mut |_| {}, &mut |v| {
        renumber(&new_index, &mut v.0)
    });
}

/// Marks `index` in `marks` (an index out of range marks nothing).
fn mark(marks: &mut [bool], index: u32) {
    if let Some(slot) = marks.get_mut(index as usize) {
        *slot = true;
    }
}

/// Moves `index` to where [`compacted_indices`] sent it.
fn renumber(new_index: &[u32], index: &mut u32) {
    if let Some(n) = new_index.get(*index as usize) {
        *index = *n;
    }
}

/// Where each index goes when only those marked in `keep` stay, in order.
fn compacted_indices(keep: &[bool]) -> Vec<u32> {
    let mut next = 0u32;
    keep.iter()
        .map(|&k| {
            let index = next;
            next += u32::from(k);
            index
        })
        .collect()
}

/// Keeps the items of `items` marked in `keep`.
fn retain_marked<T>(items: &mut Vec<T>, keep: &[bool]) {
    let mut i = 0;
    items.retain(|_| {
        i += 1;
        keep[i - 1]
    });
}

/// Calls `value` for every value and `var` for every variable that the
/// statements of `b` read or write.
fn visit_ids(b: &mut Block, value: &mut dyn FnMut(&mut ValueId), var: &mut dyn FnMut(&mut VarId)) {
    walk_block_mut(b, &mut |s| {
        let (operands, places) = operands_and_places(s);
        for o in operands {
            match o {
                Operand::Value(v) => value(v),
                Operand::Var(v) => var(v),
                _ => {}
            }
        }
        for p in places {
            match p {
                Place::Value(v) => value(v),
                Place::Var(v) => var(v),
            }
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generate::{generate_case, GenConfig, SplitMix64};
    use crate::module::walk_block;

    fn candidate(seed: u64) -> Candidate {
        let case = generate_case(&mut SplitMix64::new(seed), &GenConfig::default());
        Candidate {
            module: case.module,
            grid: case.grid,
            workgroup: case.workgroup,
            buffers: case.buffer_data,
        }
    }

    fn has_multiply(m: &Module) -> bool {
        m.functions.iter().any(|f| {
            let mut found = false;
            walk_block(&f.body, &mut |s| {
                if let Stmt::Inst(i) = s {
                    found |= i.op == Op::Binary(crate::ops::BinaryOp::Mul);
                }
            });
            found
        })
    }

    fn statements(m: &Module) -> usize {
        m.functions.iter().map(|f| count_stmts(&f.body)).sum()
    }

    #[test]
    fn keeps_the_failure_and_shrinks_the_program() {
        let seed = (0..100u64)
            .find(|s| has_multiply(&candidate(*s).module))
            .expect("some program multiplies");
        let start = candidate(seed);
        let limits = ReduceLimits {
            max_attempts: 5_000,
            max_time: Duration::from_secs(60),
        };
        let reduced = reduce(&start, &limits, &mut |m, _| has_multiply(m));
        let out = &reduced.candidate;
        assert!(VerifiedModule::new(out.module.clone()).is_ok());
        assert!(has_multiply(&out.module));
        assert!(!reduced.hit_limit);
        assert!(
            statements(&out.module) <= 3,
            "left {} statements:\n{}",
            statements(&out.module),
            crate::text::print(&out.module)
        );
        assert_eq!(out.grid, [1, 1, 1]);
        assert_eq!(out.workgroup, [1, 1, 1]);
        assert_eq!(out.module.functions.len(), 1, "uncalled functions dropped");
        assert!(out.module.shared.is_empty(), "unused shared arrays dropped");
        assert!(
            out.module.functions[0].vars.is_empty(),
            "unused variables dropped"
        );
        assert!(out.buffers.iter().all(|b| b.iter().all(|&x| x == 0)));
    }

    #[test]
    fn is_deterministic() {
        let start = candidate(7);
        let limits = ReduceLimits::default();
        let pred = |m: &VerifiedModule, c: &Candidate| statements(m) >= 4 && c.grid[0] >= 1;
        let a = reduce(&start, &limits, &mut |m, c| pred(m, c));
        let b = reduce(&start, &limits, &mut |m, c| pred(m, c));
        assert_eq!(a.candidate, b.candidate);
        assert_eq!(a.attempts, b.attempts);
    }

    #[test]
    fn stops_at_the_attempt_limit() {
        let start = candidate(11);
        let limits = ReduceLimits {
            max_attempts: 3,
            max_time: Duration::from_secs(60),
        };
        let mut calls = 0;
        let reduced = reduce(&start, &limits, &mut |_, _| {
            calls += 1;
            true
        });
        assert_eq!(calls, 3);
        assert_eq!(reduced.attempts, 3);
        assert!(reduced.hit_limit);
    }

    #[test]
    fn a_predicate_that_never_holds_returns_the_input() {
        let start = candidate(3);
        let reduced = reduce(&start, &ReduceLimits::default(), &mut |_, _| false);
        assert_eq!(reduced.candidate, start);
        assert_eq!(reduced.accepted, 0);
    }
}
