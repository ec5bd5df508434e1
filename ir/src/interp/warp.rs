//! The warp machine: frames, structured control constructs and the
//! execution mask.
//!
//! A warp runs on an explicit stack, never by host recursion over the
//! program, so it can stop at a barrier and resume later, and deep call
//! chains cannot overflow the host stack. Every frame (a function activation)
//! holds a stack of the constructs it is inside (`if`, `loop`, `ordered`),
//! each with a cursor into the block it runs. The execution mask is derived
//! in one place, [`WarpState::exec_mask`]. The verifier forbids recursion,
//! so the frame stack is at most as deep as the module has functions.

use super::exec::{self, Env, Flow};
use super::{ExecError, FuelUnit};
use crate::module::{Function, Inst, Operand, Place, Stmt};
use crate::WARP_SIZE;
use std::sync::atomic::Ordering;

/// One value per lane.
pub(crate) type Lanes = [u64; WARP_SIZE as usize];

/// The lanes of a mask in ascending order.
pub(crate) fn lanes(mask: u32) -> impl Iterator<Item = usize> {
    let mut rest = mask;
    std::iter::from_fn(move || {
        if rest == 0 {
            return None;
        }
        let lane = rest.trailing_zeros() as usize;
        rest &= rest - 1;
        Some(lane)
    })
}

/// A structured construct being executed, with its block cursor.
pub(crate) struct Construct<'m> {
    pub stmts: &'m [Stmt],
    pub pc: usize,
    /// The lanes this construct runs: the function's entry lanes, the current
    /// branch of an `if`, a loop's entry lanes or an ordered section's round.
    pub mask: u32,
    pub kind: ConstructKind<'m>,
}

pub(crate) enum ConstructKind<'m> {
    /// A function body.
    Body,
    /// An `if`; `pending_else` is the else branch not yet run.
    If {
        pending_else: Option<(&'m [Stmt], u32)>,
    },
    Loop {
        broken: u32,
        continued: u32,
        /// Index of the enclosing loop construct, restored when this one ends.
        outer_loop: Option<usize>,
    },
    /// An ordered section: `round_of[lane]` is the lane's round among `entered`.
    Ordered {
        entered: u32,
        round_of: [u8; WARP_SIZE as usize],
        round: u8,
        last_round: u8,
    },
}

/// A function activation.
pub(crate) struct Frame<'m> {
    pub func: &'m Function,
    pub values: Vec<Lanes>,
    pub vars: Vec<Lanes>,
    /// Private arrays, each `size` bytes per lane, lane after lane.
    pub privates: Vec<Vec<u8>>,
    /// Result slots filled by `return` in the returning lanes.
    pub results: Vec<Lanes>,
    pub entry: u32,
    pub returned: u32,
    /// The caller's `call` instruction, whose places receive the results.
    pub call_site: Option<&'m Inst>,
    pub constructs: Vec<Construct<'m>>,
    pub innermost_loop: Option<usize>,
}

impl<'m> Frame<'m> {
    fn new(func: &'m Function) -> Frame<'m> {
        Frame {
            func,
            values: Vec::new(),
            vars: Vec::new(),
            privates: Vec::new(),
            results: Vec::new(),
            entry: 0,
            returned: 0,
            call_site: None,
            constructs: Vec::new(),
            innermost_loop: None,
        }
    }

    /// Prepares a (possibly reused) frame for a fresh activation of `func`:
    /// values, variables and private arrays zeroed.
    fn reset(
        &mut self,
        func: &'m Function,
        entry: u32,
        call_site: Option<&'m Inst>,
    ) -> Result<(), ExecError> {
        self.func = func;
        reset_lanes(&mut self.values, func.values.len());
        reset_lanes(&mut self.vars, func.vars.len());
        reset_lanes(&mut self.results, func.results.len());
        self.privates.truncate(func.privates.len());
        while self.privates.len() < func.privates.len() {
            self.privates.push(Vec::new());
        }
        for (bytes, decl) in self.privates.iter_mut().zip(&func.privates) {
            let len = decl.size as usize * WARP_SIZE as usize;
            bytes.clear();
            bytes
                .try_reserve_exact(len)
                .map_err(|_| ExecError::OutOfMemory {
                    what: format!("private array @{} of @{}", decl.name, func.name),
                    bytes: len as u64,
                })?;
            bytes.resize(len, 0);
        }
        self.entry = entry;
        self.returned = 0;
        self.call_site = call_site;
        self.constructs.clear();
        self.constructs.push(Construct {
            stmts: &func.body.stmts,
            pc: 0,
            mask: entry,
            kind: ConstructKind::Body,
        });
        self.innermost_loop = None;
        Ok(())
    }

    pub fn read(&self, params: &[u64], operand: &Operand, lane: usize) -> u64 {
        match operand {
            Operand::Value(v) => self.values[v.0 as usize][lane],
            Operand::Var(v) => self.vars[v.0 as usize][lane],
            Operand::Param(p) => params[p.0 as usize],
            Operand::Const(c) => c.bits,
        }
    }

    pub fn write(&mut self, place: Place, lane: usize, value: u64) {
        match place {
            Place::Value(v) => self.values[v.0 as usize][lane] = value,
            Place::Var(v) => self.vars[v.0 as usize][lane] = value,
        }
    }
}

fn reset_lanes(slots: &mut Vec<Lanes>, len: usize) {
    slots.clear();
    slots.resize(len, [0; WARP_SIZE as usize]);
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum WarpStatus {
    Running,
    AtBarrier,
    Finished,
}

/// One warp of a workgroup.
pub(crate) struct WarpState<'m> {
    /// Warp index in the workgroup.
    pub index: u32,
    /// Lanes that exist and have not been killed.
    pub live: u32,
    /// Lanes turned into helpers by `demote`.
    pub helpers: u32,
    pub frames: Vec<Frame<'m>>,
    spare_frames: Vec<Frame<'m>>,
    pub status: WarpStatus,
    fuel_left: Option<u64>,
    pub statements: u64,
    /// Bytes of the private arrays of `frames`, all lanes.
    private_bytes: u64,
}

/// The most a warp's live private arrays may take, all lanes and calls (as
/// much as the JIT's stack for a warp): deep chains of calls with private
/// arrays would otherwise take the host's memory.
pub const MAX_WARP_PRIVATE_BYTES: u64 = 256 << 20;

/// Bytes of `func`'s private arrays for a whole warp.
fn private_bytes(func: &Function) -> u64 {
    func.privates
        .iter()
        .map(|p| u64::from(p.size) * u64::from(WARP_SIZE))
        .sum()
}

impl<'m> WarpState<'m> {
    /// A warp about to run `kernel` with the lanes in `existing`.
    pub fn new(
        index: u32,
        existing: u32,
        kernel: &'m Function,
        fuel: Option<u64>,
    ) -> Result<WarpState<'m>, ExecError> {
        let mut frame = Frame::new(kernel);
        frame.reset(kernel, existing, None)?;
        Ok(WarpState {
            index,
            live: existing,
            helpers: 0,
            frames: vec![frame],
            spare_frames: Vec::new(),
            status: if existing == 0 {
                WarpStatus::Finished
            } else {
                WarpStatus::Running
            },
            fuel_left: fuel,
            statements: 0,
            private_bytes: private_bytes(kernel),
        })
    }

    pub fn frame(&self) -> &Frame<'m> {
        self.frames.last().expect("a running warp has a frame")
    }

    pub fn frame_mut(&mut self) -> &mut Frame<'m> {
        self.frames.last_mut().expect("a running warp has a frame")
    }

    /// The execution mask: the lanes of the innermost construct, minus the
    /// lanes that left the innermost loop (break) or its current iteration
    /// (continue), minus the lanes that returned from the function, minus
    /// killed and missing lanes. The only place the mask is computed.
    pub fn exec_mask(&self) -> u32 {
        let Some(frame) = self.frames.last() else {
            return 0;
        };
        let Some(construct) = frame.constructs.last() else {
            return 0;
        };
        let mut mask = construct.mask & !frame.returned & self.live;
        if let Some(l) = frame.innermost_loop {
            if let ConstructKind::Loop {
                broken, continued, ..
            } = frame.constructs[l].kind
            {
                mask &= !(broken | continued);
            }
        }
        mask
    }

    fn charge_statement(&mut self) -> Result<(), ExecError> {
        if let Some(fuel) = &mut self.fuel_left {
            if *fuel == 0 {
                return Err(ExecError::FuelExhausted {
                    kernel: String::new(),
                    workgroup: [0; 3],
                    warp: self.index,
                    fuel: self.statements,
                    unit: FuelUnit::Statements,
                });
            }
            *fuel -= 1;
        }
        self.statements += 1;
        Ok(())
    }

    /// Runs until the warp finishes or waits at a barrier.
    pub fn run(&mut self, env: &mut Env<'m, '_>) -> Result<WarpStatus, ExecError> {
        self.status = WarpStatus::Running;
        loop {
            if self.frames.is_empty() {
                self.status = WarpStatus::Finished;
                return Ok(self.status);
            }
            // Every statement and every loop iteration passes here, so a
            // raised flag stops even an empty infinite loop.
            if env.cancel.is_some_and(|flag| flag.load(Ordering::Relaxed)) {
                return Err(ExecError::Cancelled);
            }
            let mask = self.exec_mask();
            let frame = self.frame_mut();
            let stmt = match frame.constructs.last_mut() {
                Some(c) if mask != 0 && c.pc < c.stmts.len() => {
                    let stmts = c.stmts;
                    c.pc += 1;
                    &stmts[c.pc - 1]
                }
                _ => {
                    self.end_construct()?;
                    continue;
                }
            };
            self.charge_statement()?;
            match self.step(stmt, mask, env)? {
                Flow::Next => {}
                Flow::Barrier => {
                    self.status = WarpStatus::AtBarrier;
                    return Ok(self.status);
                }
            }
        }
    }

    fn step(
        &mut self,
        stmt: &'m Stmt,
        mask: u32,
        env: &mut Env<'m, '_>,
    ) -> Result<Flow, ExecError> {
        match stmt {
            Stmt::Inst(inst) => exec::exec_inst(self, env, inst, mask),
            Stmt::If {
                cond,
                then_body,
                else_body,
                ..
            } => {
                let frame = self.frame_mut();
                let mut taken = 0u32;
                for lane in lanes(mask) {
                    if frame.read(env.params, cond, lane) != 0 {
                        taken |= 1 << lane;
                    }
                }
                let not_taken = mask & !taken;
                let (stmts, branch_mask, pending_else) = if taken != 0 {
                    let pending = (not_taken != 0).then_some((&else_body.stmts[..], not_taken));
                    (&then_body.stmts[..], taken, pending)
                } else {
                    (&else_body.stmts[..], not_taken, None)
                };
                frame.constructs.push(Construct {
                    stmts,
                    pc: 0,
                    mask: branch_mask,
                    kind: ConstructKind::If { pending_else },
                });
                Ok(Flow::Next)
            }
            Stmt::Loop { body, .. } => {
                let frame = self.frame_mut();
                let outer_loop = frame.innermost_loop;
                frame.innermost_loop = Some(frame.constructs.len());
                frame.constructs.push(Construct {
                    stmts: &body.stmts,
                    pc: 0,
                    mask,
                    kind: ConstructKind::Loop {
                        broken: 0,
                        continued: 0,
                        outer_loop,
                    },
                });
                Ok(Flow::Next)
            }
            Stmt::Break { .. } | Stmt::Continue { .. } => {
                let is_break = matches!(stmt, Stmt::Break { .. });
                let frame = self.frame_mut();
                if let Some(l) = frame.innermost_loop {
                    if let ConstructKind::Loop {
                        broken, continued, ..
                    } = &mut frame.constructs[l].kind
                    {
                        if is_break {
                            *broken |= mask;
                        } else {
                            *continued |= mask;
                        }
                    }
                }
                Ok(Flow::Next)
            }
            Stmt::Return { values, .. } => {
                let frame = self.frame_mut();
                for (slot, operand) in values.iter().enumerate() {
                    for lane in lanes(mask) {
                        let v = frame.read(env.params, operand, lane);
                        if let Some(result) = frame.results.get_mut(slot) {
                            result[lane] = v;
                        }
                    }
                }
                frame.returned |= mask;
                Ok(Flow::Next)
            }
            Stmt::Kill { .. } => {
                self.live &= !mask;
                Ok(Flow::Next)
            }
            Stmt::Ordered { key, body, .. } => {
                let frame = self.frame_mut();
                let mut keys: Lanes = [0; WARP_SIZE as usize];
                for lane in lanes(mask) {
                    keys[lane] = frame.read(env.params, key, lane);
                }
                let mut round_of = [0u8; WARP_SIZE as usize];
                let mut last_round = 0u8;
                for lane in lanes(mask) {
                    let below = mask & ((1u32 << lane) - 1);
                    let round = lanes(below).filter(|&l| keys[l] == keys[lane]).count() as u8;
                    round_of[lane] = round;
                    last_round = last_round.max(round);
                }
                frame.constructs.push(Construct {
                    stmts: &body.stmts,
                    pc: 0,
                    mask: round_mask(mask, &round_of, 0),
                    kind: ConstructKind::Ordered {
                        entered: mask,
                        round_of,
                        round: 0,
                        last_round,
                    },
                });
                Ok(Flow::Next)
            }
        }
    }

    /// The innermost construct's block is done (or has no active lane left).
    fn end_construct(&mut self) -> Result<(), ExecError> {
        let frame = self.frame_mut();
        let Some(construct) = frame.constructs.last_mut() else {
            return self.return_from_frame();
        };
        match &mut construct.kind {
            ConstructKind::Body => return self.return_from_frame(),
            ConstructKind::If { pending_else } => match pending_else.take() {
                Some((stmts, mask)) => {
                    construct.stmts = stmts;
                    construct.mask = mask;
                    construct.pc = 0;
                }
                None => {
                    frame.constructs.pop();
                }
            },
            ConstructKind::Loop { continued, .. } => {
                // With the continue lanes back, the execution mask is the
                // set of lanes still in the loop.
                *continued = 0;
                if self.exec_mask() != 0 {
                    self.frame_mut().constructs.last_mut().expect("the loop").pc = 0;
                    // Each iteration counts as a statement, so an empty
                    // infinite loop still runs out of fuel.
                    self.charge_statement()?;
                } else {
                    let frame = self.frame_mut();
                    if let Some(Construct {
                        kind: ConstructKind::Loop { outer_loop, .. },
                        ..
                    }) = frame.constructs.pop()
                    {
                        frame.innermost_loop = outer_loop;
                    }
                }
            }
            ConstructKind::Ordered {
                entered,
                round_of,
                round,
                last_round,
            } => {
                if *round < *last_round {
                    *round += 1;
                    construct.mask = round_mask(*entered, round_of, *round);
                    construct.pc = 0;
                } else {
                    frame.constructs.pop();
                }
            }
        }
        Ok(())
    }

    /// Leaves the current function: the lanes that come back (entered and
    /// not killed) receive the results in the caller's places.
    fn return_from_frame(&mut self) -> Result<(), ExecError> {
        let frame = self.frames.pop().expect("returning from a frame");
        self.private_bytes -= private_bytes(frame.func);
        let back = frame.entry & self.live;
        if let (Some(inst), Some(caller)) = (frame.call_site, self.frames.last_mut()) {
            for (slot, place) in inst.results.iter().enumerate() {
                if let Some(values) = frame.results.get(slot) {
                    for lane in lanes(back) {
                        caller.write(*place, lane, values[lane]);
                    }
                }
            }
        }
        self.spare_frames.push(frame);
        Ok(())
    }

    /// Enters `callee` with the active lanes of the call, its parameters
    /// taken from the call's operands.
    pub fn call(
        &mut self,
        callee: &'m Function,
        inst: &'m Inst,
        mask: u32,
        params: &[u64],
    ) -> Result<(), ExecError> {
        let needed = private_bytes(callee);
        if self.private_bytes + needed > MAX_WARP_PRIVATE_BYTES {
            return Err(ExecError::OutOfMemory {
                what: format!(
                    "the private arrays of @{} ({} MiB at most for a warp's calls)",
                    callee.name,
                    MAX_WARP_PRIVATE_BYTES >> 20
                ),
                bytes: needed,
            });
        }
        let mut frame = self
            .spare_frames
            .pop()
            .unwrap_or_else(|| Frame::new(callee));
        frame.reset(callee, mask, Some(inst))?;
        self.private_bytes += needed;
        let caller = self.frame();
        for (param, operand) in callee.params.iter().zip(&inst.args) {
            for lane in lanes(mask) {
                frame.values[param.0 as usize][lane] = caller.read(params, operand, lane);
            }
        }
        self.frames.push(frame);
        Ok(())
    }
}

fn round_mask(entered: u32, round_of: &[u8; WARP_SIZE as usize], round: u8) -> u32 {
    lanes(entered)
        .filter(|&l| round_of[l] == round)
        .fold(0, |m, l| m | 1 << l)
}
