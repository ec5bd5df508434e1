//! Stores that pack the lanes a ballot counted (stream compaction):
//!
//! ```text
//! %keepers = ballot $keep
//! %below = and %keepers, %lower_lanes     // %lower_lanes = lane_mask.lt
//! %slot = btc %below
//! if $keep {
//!   %index = add $next, %slot            // $next uniform
//!   store.u32 @out, (shl %index, 2), $x
//! }
//! ```
//!
//! Lane `l`'s slot counts the lanes below it that were active at the
//! ballot and passed the test. When the store runs in exactly those lanes
//! (the `then` side of an `if` on the same test, with the same active lanes
//! as at the ballot), the `r`-th storing lane writes at `start + r * size`:
//! the stores are packed, one compress away from a vector store, without
//! the run-time test that finds that out.
//!
//! The active lanes are tracked as *epochs*: a statement that can change
//! them (an `if` side, a loop, `break`, `continue`, `return`, `kill`, an
//! `ordered` section, a call, `demote`) starts a new one, and the `then`
//! side of an `if` remembers the epoch and the test it came from. A
//! variable is the same test only while nothing writes it.

use std::collections::HashMap;
use warpjit_ir::{BinaryOp, Builtin, Inst, Op, Operand, Place, UnaryOp};

use super::LaneShape;

/// A test: a value, or a variable between two writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Test {
    Value(u32),
    Var { var: u32, version: u32 },
}

/// What a value is, in terms of a ballot taken at `epoch` on `test`.
#[derive(Clone, Copy, Debug)]
enum Fact {
    LowerLanes,
    Ballot {
        test: Test,
        epoch: u32,
    },
    /// The ballot's lanes below each lane.
    Below {
        test: Test,
        epoch: u32,
    },
    /// Uniform plus the lane's rank among the ballot's lanes times `stride`.
    Rank {
        test: Test,
        epoch: u32,
        stride: u64,
    },
}

pub(super) struct Ranks {
    epoch: u32,
    epochs: u32,
    /// Statements so far that take lanes away (`break`, `continue`,
    /// `return`, `kill`, calls, `demote`).
    losses: u32,
    /// The epoch and test of the `if` whose `then` side each epoch is.
    then_of: HashMap<u32, (u32, Test)>,
    /// Writes so far, by variable.
    versions: Vec<u32>,
    facts: HashMap<u32, Fact>,
    /// Stores whose lanes are packed, by instruction: the stride of their
    /// address (0: not packed).
    pub packed: HashMap<*const Inst, u64>,
}

impl Ranks {
    pub fn new(vars: usize) -> Ranks {
        Ranks {
            epoch: 0,
            epochs: 0,
            losses: 0,
            then_of: HashMap::new(),
            versions: vec![0; vars],
            facts: HashMap::new(),
            packed: HashMap::new(),
        }
    }

    /// The active lanes may have changed.
    pub fn new_epoch(&mut self) {
        self.epochs += 1;
        self.epoch = self.epochs;
    }

    /// Lanes leave the current statement's path (`break`, `continue`,
    /// `return`, `kill`).
    pub fn lose_lanes(&mut self) {
        self.losses += 1;
        self.new_epoch();
    }

    /// Where a construct (an `if`) starts: its epoch and the losses so far.
    pub fn mark(&self) -> (u32, u32) {
        (self.epoch, self.losses)
    }

    /// After the construct that started at `mark`: when nothing in it took
    /// lanes away, the lanes active after it are those before it.
    pub fn leave(&mut self, (epoch, losses): (u32, u32)) {
        if self.losses == losses {
            self.epoch = epoch;
        } else {
            self.new_epoch();
        }
    }

    /// Entering the `then` side of an `if` on `cond`.
    pub fn enter_then(&mut self, cond: &Operand) {
        let outer = self.epoch;
        self.new_epoch();
        if let Some(test) = self.test(cond) {
            self.then_of.insert(self.epoch, (outer, test));
        }
    }

    fn test(&self, o: &Operand) -> Option<Test> {
        match o {
            Operand::Value(v) => Some(Test::Value(v.0)),
            Operand::Var(v) => Some(Test::Var {
                var: v.0,
                version: self.versions.get(v.0 as usize).copied()?,
            }),
            Operand::Param(_) | Operand::Const(_) => None,
        }
    }

    fn fact(&self, o: &Operand) -> Option<Fact> {
        match o {
            Operand::Value(v) => self.facts.get(&v.0).copied(),
            _ => None,
        }
    }

    /// After `i`, whose operands have the shapes `args`.
    pub fn inst(&mut self, i: &Inst, args: &[LaneShape]) {
        if let Op::Store { .. } = i.op {
            let stride = match i.args.first().and_then(|a| self.fact(a)) {
                Some(Fact::Rank {
                    test,
                    epoch,
                    stride,
                }) if self.then_of.get(&self.epoch) == Some(&(epoch, test)) => stride,
                _ => 0,
            };
            self.packed.insert(std::ptr::from_ref(i), stride);
        }
        let fact = self.result(i, args);
        for r in &i.results {
            match r {
                Place::Value(v) => match fact {
                    Some(f) => {
                        self.facts.insert(v.0, f);
                    }
                    None => {
                        self.facts.remove(&v.0);
                    }
                },
                Place::Var(v) => {
                    if let Some(n) = self.versions.get_mut(v.0 as usize) {
                        *n += 1;
                    }
                }
            }
        }
        if matches!(i.op, Op::Call(_) | Op::Demote) {
            self.lose_lanes();
        }
    }

    fn result(&self, i: &Inst, args: &[LaneShape]) -> Option<Fact> {
        let uniform = |k: usize| args.get(k) == Some(&LaneShape::Uniform);
        let a = |k: usize| i.args.get(k).and_then(|o| self.fact(o));
        let constant = |k: usize| match i.args.get(k) {
            Some(Operand::Const(c)) => Some(c.bits),
            _ => None,
        };
        let rank = |f: Option<Fact>, scale: u64| match f {
            Some(Fact::Rank {
                test,
                epoch,
                stride,
            }) => Some(Fact::Rank {
                test,
                epoch,
                stride: stride.checked_mul(scale)?,
            }),
            _ => None,
        };
        match &i.op {
            Op::Builtin(Builtin::LaneMaskLt) => Some(Fact::LowerLanes),
            Op::Ballot => Some(Fact::Ballot {
                test: self.test(i.args.first()?)?,
                epoch: self.epoch,
            }),
            Op::Mov => a(0),
            Op::Binary(BinaryOp::And) => match (a(0), a(1)) {
                (Some(Fact::Ballot { test, epoch }), Some(Fact::LowerLanes))
                | (Some(Fact::LowerLanes), Some(Fact::Ballot { test, epoch })) => {
                    Some(Fact::Below { test, epoch })
                }
                _ => None,
            },
            Op::Unary(UnaryOp::Btc) => match a(0) {
                Some(Fact::Below { test, epoch }) => Some(Fact::Rank {
                    test,
                    epoch,
                    stride: 1,
                }),
                _ => None,
            },
            Op::Binary(BinaryOp::Add) if uniform(1) => rank(a(0), 1),
            Op::Binary(BinaryOp::Add) if uniform(0) => rank(a(1), 1),
            Op::Binary(BinaryOp::Shl) => rank(a(0), 1u64.checked_shl(constant(1)? as u32)?),
            Op::Binary(BinaryOp::Mul) => match (constant(0), constant(1)) {
                (_, Some(c)) => rank(a(0), c),
                (Some(c), _) => rank(a(1), c),
                _ => None,
            },
            _ => None,
        }
    }
}
