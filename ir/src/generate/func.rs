//! Generation of one function: declarations, values in scope, statements
//! and structured control flow. Instructions are in `insts`, memory
//! accesses in `memory`.

use super::consts::interesting;
use super::rng::{pick, when, RngLike};
use super::{GenConfig, Layout, ATOM_REGION_BYTES, OUT_SLOT_BYTES, SHARED_WARP_BYTES};
use crate::module::{
    Block, FuncKind, Function, Inst, Operand, ParamId, Place, PrivateDecl, Stmt, ValueDecl,
    ValueId, VarDecl, VarId,
};
use crate::ops::{BinaryOp, Builtin, CmpOp, Dim, Op};
use crate::span::Span;
use crate::types::{Const, Type};

/// What every function being generated may refer to.
pub(super) struct Env {
    pub cfg: GenConfig,
    pub layout: Layout,
    /// Types of the module parameters.
    pub params: Vec<Type>,
    /// The functions generated so far (callable by later ones).
    pub funcs: Vec<FuncInfo>,
    /// `@atom` takes only updates of this op and format whose results
    /// nothing reads, and no function has `membar`: the JIT's posted
    /// atomics.
    pub posted: Option<(crate::ops::AtomOp, crate::ops::NumFormat)>,
    /// The module declares `@scratch` (shared memory index 1).
    pub scratch: bool,
}

/// A generated function as callers see it.
#[derive(Clone, Debug)]
pub(super) struct FuncInfo {
    pub index: u32,
    /// Parameter types after the context parameters (three, or four for a
    /// function with barriers).
    pub params: Vec<Type>,
    pub results: Vec<Type>,
    /// Contains `kill` or `ordered`, itself or through a call: may not be
    /// called from an ordered section.
    pub reaches_kill_or_ordered: bool,
    /// Most statements one call can execute (loops and calls multiplied out).
    pub work: u64,
    /// Barriers one call passes, counted as [`FnGen::barrier`] counts them
    /// (only their parity and whether there are any matter). A function with
    /// barriers takes the warp's shared region of the other phase as a
    /// fourth context parameter and is called only from the kernel's top
    /// level, where every warp that has not finished calls it.
    pub barriers: u32,
}

/// Where the current function may write memory.
#[derive(Clone, Copy)]
pub(super) struct MemCtx {
    /// Byte offset of this invocation's `@out` slot.
    pub slot: Operand,
    /// Byte offset of this warp's `@atom` region.
    pub wreg: Operand,
    /// Byte offset of this warp's `@shared` region in the current phase.
    pub sreg: Operand,
    /// The phase that ended at the last barrier, readable in every warp's
    /// region (kernel only).
    pub prev_phase: Option<u32>,
}

pub(super) struct FnGen<'a, R: RngLike> {
    pub rng: &'a mut R,
    pub env: &'a Env,
    pub f: Function,
    /// Statements of each open block, innermost last.
    blocks: Vec<Vec<Stmt>>,
    /// Values defined in each open block, innermost last.
    scopes: Vec<Vec<(ValueId, Type)>>,
    /// Variables that random instructions may assign (loop counters are
    /// not among them).
    pub free_vars: Vec<VarId>,
    /// Statements left to generate in this function.
    budget: usize,
    /// Open blocks below the function body.
    pub depth: usize,
    /// Loops around the current point inside the current ordered section
    /// (or the function if there is none): what `break` may leave.
    loops_in_section: usize,
    /// `continue` may go to the innermost loop: not between its counter's
    /// step and its exit test, where it would skip the test.
    may_continue: bool,
    pub in_ordered: bool,
    pub is_kernel: bool,
    /// Barriers may stand at this function's top level: the kernel's, or a
    /// function with barriers (which has no `return` before its end).
    top_barriers: bool,
    pub mem: MemCtx,
    /// The warp's shared regions of the two phases (the kernel's, or a
    /// function with barriers' `sreg` and `sother`), and the barriers
    /// passed so far.
    sreg_by_phase: Option<[ValueId; 2]>,
    phase: u32,
    /// `lane_id`, if computed at the top level.
    pub lane: Option<ValueId>,
    /// `lane_id << 5`: this lane's 32 bytes in a shared region.
    pub lane_shared: Option<ValueId>,
    /// Records written so far (each goes to its own place in the slot).
    pub records: u32,
    pub reaches_kill_or_ordered: bool,
    /// Most statements executed so far by one invocation, if every loop
    /// ran its most trips: bounds the run time of calls inside loops.
    work: u64,
    /// Most trips of all enclosing loops together.
    multiplier: u64,
}

/// Loops may nest only while the product of their trip counts stays below this.
const MAX_MULTIPLIER: u64 = 1000;

pub(super) fn gen_function<R: RngLike>(
    rng: &mut R,
    env: &Env,
    index: usize,
) -> (Function, FuncInfo) {
    let features = env.cfg.features;
    let budget = (env.cfg.max_stmts / 2).max(1);
    // A function with barriers may need one added: room for it in the budget.
    let with_barriers = features.barriers && budget >= 2 && rng.chance(30);
    let param_count = rng.below(3) as usize;
    let param_choices = parameter_types(&env.cfg);
    let param_types: Vec<Type> = (0..param_count)
        .map(|_| *pick(rng, &param_choices))
        .collect();
    let result_count = rng.below(3) as usize;
    // Results take every type arguments do, narrow ones included.
    let results: Vec<Type> = (0..result_count)
        .map(|_| *pick(rng, &param_choices))
        .collect();
    let mut f = empty_function(format!("f{index}"), FuncKind::Function, results.clone());
    let mut ctx = Vec::new();
    let ctx_names: &[&str] = if with_barriers {
        &["slot", "wreg", "sreg", "sother"]
    } else {
        &["slot", "wreg", "sreg"]
    };
    for name in ctx_names {
        let id = declare(&mut f, name.to_string(), Type::I32);
        f.params.push(id);
        ctx.push(Operand::Value(id));
    }
    for (i, t) in param_types.iter().enumerate() {
        let id = declare(&mut f, format!("a{i}"), *t);
        f.params.push(id);
    }
    let mem = MemCtx {
        slot: ctx[0],
        wreg: ctx[1],
        sreg: ctx[2],
        prev_phase: None,
    };
    let budget = if with_barriers { budget - 1 } else { budget };
    let mut g = FnGen::new(rng, env, f, mem, budget, false);
    if with_barriers {
        let region = |o: Operand| match o {
            Operand::Value(v) => v,
            _ => unreachable!("context parameters are values"),
        };
        g.sreg_by_phase = Some([region(ctx[2]), region(ctx[3])]);
        g.top_barriers = true;
    }
    let params: Vec<(ValueId, Type)> =
        g.f.params
            .iter()
            .map(|p| (*p, g.f.values[p.0 as usize].ty))
            .collect();
    g.scopes[0].extend(params);
    g.declare_vars_and_privates();
    g.top_level();
    if with_barriers && g.phase == 0 {
        g.barrier();
    }
    if !results.is_empty() || (features.early_returns && g.rng.chance(30)) {
        let values = results.iter().map(|t| g.operand(*t)).collect();
        g.emit(Stmt::Return {
            values,
            span: Span::NONE,
        });
    }
    let info = FuncInfo {
        index: index as u32,
        params: param_types,
        results,
        reaches_kill_or_ordered: g.reaches_kill_or_ordered,
        work: g.work,
        barriers: g.phase,
    };
    (g.finish(), info)
}

/// The compares of floats (ordered, and `ne` unordered).
const FLOAT_COMPARES: [CmpOp; 6] = [
    CmpOp::Lt,
    CmpOp::Le,
    CmpOp::Gt,
    CmpOp::Ge,
    CmpOp::Eq,
    CmpOp::Ne,
];

pub(super) fn gen_kernel<R: RngLike>(rng: &mut R, env: &Env, name: &str) -> Function {
    let layout = &env.layout;
    // The declared size is only the launch's default: now and then none,
    // or another than the launch's, so the JIT's code for sizes it does
    // not know when compiling runs too.
    let declared = match rng.below(8) {
        0 => None,
        1 => Some(*pick(rng, &[[32, 1, 1], [64, 1, 1], [7, 1, 1]])),
        _ => Some(layout.workgroup),
    };
    let f = empty_function(
        name.into(),
        FuncKind::Kernel {
            workgroup: declared,
        },
        Vec::new(),
    );
    let placeholder = MemCtx {
        slot: Operand::Const(Const::i32(0)),
        wreg: Operand::Const(Const::i32(0)),
        sreg: Operand::Const(Const::i32(0)),
        prev_phase: None,
    };
    let budget = env.cfg.max_stmts.max(1);
    let mut g = FnGen::new(rng, env, f, placeholder, budget, true);
    g.top_barriers = true;
    g.kernel_prologue();
    g.declare_vars_and_privates();
    g.top_level();
    g.epilogue_records();
    g.finish()
}

fn empty_function(name: String, kind: FuncKind, results: Vec<Type>) -> Function {
    Function {
        name,
        kind,
        params: Vec::new(),
        results,
        values: Vec::new(),
        vars: Vec::new(),
        privates: Vec::new(),
        body: Block::default(),
        span: Span::NONE,
    }
}

fn declare(f: &mut Function, name: String, ty: Type) -> ValueId {
    f.values.push(ValueDecl {
        name,
        ty,
        span: Span::NONE,
    });
    ValueId(f.values.len() as u32 - 1)
}

/// The types of module parameters and function arguments: the register
/// types and, with narrow values, `i8`, `i16` and `f16`, which reach the
/// operations that take narrow operands (`cvt`, `bitcast`, narrow stores,
/// `mov`, `select`, compares) and which the JIT passes in vectors of their
/// own width.
pub(super) fn parameter_types(cfg: &GenConfig) -> Vec<Type> {
    let mut types = value_types(cfg);
    if cfg.features.narrow {
        types.extend([Type::I8, Type::I16]);
        if cfg.features.floats {
            types.push(Type::F16);
        }
    }
    types
}

/// The register types programs compute with under `cfg`'s features.
pub(super) fn value_types(cfg: &GenConfig) -> Vec<Type> {
    let mut types = vec![Type::Bool, Type::I32];
    if cfg.features.wide {
        types.push(Type::I64);
    }
    if cfg.features.floats {
        types.push(Type::F32);
        if cfg.features.wide {
            types.push(Type::F64);
        }
    }
    types
}

impl<'a, R: RngLike> FnGen<'a, R> {
    fn new(
        rng: &'a mut R,
        env: &'a Env,
        f: Function,
        mem: MemCtx,
        budget: usize,
        is_kernel: bool,
    ) -> Self {
        FnGen {
            rng,
            env,
            f,
            blocks: vec![Vec::new()],
            scopes: vec![Vec::new()],
            free_vars: Vec::new(),
            budget,
            depth: 0,
            loops_in_section: 0,
            may_continue: true,
            in_ordered: false,
            is_kernel,
            top_barriers: false,
            mem,
            sreg_by_phase: None,
            phase: 0,
            lane: None,
            lane_shared: None,
            records: 0,
            reaches_kill_or_ordered: false,
            work: 0,
            multiplier: 1,
        }
    }

    fn finish(mut self) -> Function {
        let body = self
            .blocks
            .pop()
            .expect("the body block stays open until the end");
        self.f.body = Block { stmts: body };
        self.f
    }

    // ---- building blocks ----

    pub fn emit(&mut self, s: Stmt) {
        self.blocks.last_mut().expect("a block is open").push(s);
    }

    /// Declares a value; define it by the very next emitted instruction so
    /// that value numbers follow the text order.
    pub fn new_value(&mut self, ty: Type) -> ValueId {
        let name = format!("v{}", self.f.values.len());
        declare(&mut self.f, name, ty)
    }

    pub fn inst(&mut self, op: Op, results: Vec<Place>, args: Vec<Operand>) {
        for r in &results {
            if let Place::Value(v) = r {
                let ty = self.f.values[v.0 as usize].ty;
                self.scopes
                    .last_mut()
                    .expect("a scope is open")
                    .push((*v, ty));
            }
        }
        self.emit(Stmt::Inst(Inst {
            op,
            args,
            results,
            span: Span::NONE,
        }));
    }

    /// Emits `op args` into a new value of type `ty`.
    pub fn value(&mut self, op: Op, ty: Type, args: Vec<Operand>) -> ValueId {
        let v = self.new_value(ty);
        self.inst(op, vec![Place::Value(v)], args);
        v
    }

    pub fn binary(&mut self, op: BinaryOp, ty: Type, a: Operand, b: Operand) -> Operand {
        Operand::Value(self.value(Op::Binary(op), ty, vec![a, b]))
    }

    /// Where a result of type `ty` goes: usually a new value, sometimes a
    /// free variable. Call after the operands are generated.
    pub fn result(&mut self, ty: Type) -> Place {
        if self.rng.chance(20) {
            return Place::Var(self.free_var(ty));
        }
        Place::Value(self.new_value(ty))
    }

    /// Places for several results: never the same variable twice.
    pub fn results(&mut self, types: &[Type]) -> Vec<Place> {
        let mut places: Vec<Place> = Vec::new();
        for t in types {
            let mut p = self.result(*t);
            if places.contains(&p) {
                p = Place::Value(self.new_value(*t));
            }
            places.push(p);
        }
        places
    }

    /// A free variable of type `ty`, declaring one if there is none or
    /// sometimes anyway.
    pub fn free_var(&mut self, ty: Type) -> VarId {
        let existing: Vec<VarId> = self
            .free_vars
            .iter()
            .copied()
            .filter(|v| self.f.vars[v.0 as usize].ty == ty)
            .collect();
        if existing.is_empty() || (existing.len() < 3 && self.rng.chance(10)) {
            let v = self.declare_var(ty);
            self.free_vars.push(v);
            return v;
        }
        *pick(self.rng, &existing)
    }

    fn declare_var(&mut self, ty: Type) -> VarId {
        let name = format!("x{}", self.f.vars.len());
        self.f.vars.push(VarDecl {
            name,
            ty,
            span: Span::NONE,
        });
        VarId(self.f.vars.len() as u32 - 1)
    }

    pub(super) fn open(&mut self) {
        self.blocks.push(Vec::new());
        self.scopes.push(Vec::new());
        self.depth += 1;
    }

    pub(super) fn close(&mut self) -> Block {
        self.depth -= 1;
        self.scopes.pop();
        Block {
            stmts: self.blocks.pop().expect("opened above"),
        }
    }

    // ---- operands ----

    /// Any readable operand of type `ty`: a value in scope, a variable, a
    /// module parameter or a literal.
    pub fn operand(&mut self, ty: Type) -> Operand {
        let roll = self.rng.below(100);
        if roll < 60 {
            if let Some(v) = self.visible_of(ty) {
                return Operand::Value(v);
            }
        } else if roll < 72 {
            let vars: Vec<VarId> = (0..self.f.vars.len() as u32)
                .map(VarId)
                .filter(|v| self.f.vars[v.0 as usize].ty == ty)
                .collect();
            if !vars.is_empty() {
                return Operand::Var(*pick(self.rng, &vars));
            }
        } else if roll < 84 {
            let params = self.params_of(ty);
            if !params.is_empty() {
                return Operand::Param(*pick(self.rng, &params));
            }
        }
        Operand::Const(interesting(self.rng, ty))
    }

    pub fn visible_of(&mut self, ty: Type) -> Option<ValueId> {
        let candidates: Vec<ValueId> = self
            .scopes
            .iter()
            .flatten()
            .filter(|(_, t)| *t == ty)
            .map(|(v, _)| *v)
            .collect();
        if candidates.is_empty() {
            None
        } else {
            Some(*pick(self.rng, &candidates))
        }
    }

    /// Values in scope of any type, for records.
    pub fn any_visible(&mut self) -> Option<(ValueId, Type)> {
        let all: Vec<(ValueId, Type)> = self.scopes.iter().flatten().copied().collect();
        if all.is_empty() {
            None
        } else {
            Some(*pick(self.rng, &all))
        }
    }

    /// An i32 that usually differs between lanes.
    pub fn varying_i32(&mut self) -> Operand {
        match self.rng.below(4) {
            0 => self.lane_id(),
            1 => {
                let b = *pick(
                    self.rng,
                    &[
                        Builtin::LocalIndex,
                        Builtin::GlobalId(Dim::X),
                        Builtin::LocalId(Dim::Y),
                    ],
                );
                Operand::Value(self.value(Op::Builtin(b), Type::I32, vec![]))
            }
            _ => match self.visible_of(Type::I32) {
                Some(v) => Operand::Value(v),
                None => self.operand(Type::I32),
            },
        }
    }

    /// A `bool` condition, usually divergent.
    pub fn condition(&mut self) -> Operand {
        match self.rng.below(10) {
            0..=3 => {
                if let Some(v) = self.visible_of(Type::Bool) {
                    return Operand::Value(v);
                }
                self.fresh_condition()
            }
            4 => self.operand(Type::Bool),
            _ => self.fresh_condition(),
        }
    }

    fn fresh_condition(&mut self) -> Operand {
        let features = self.env.cfg.features;
        let mut uniform_types = vec![Type::I32, Type::I16, Type::I8];
        if features.floats {
            uniform_types.extend([Type::F32, Type::F16]);
        }
        let uniform_params: Vec<ParamId> = uniform_types
            .into_iter()
            .flat_map(|t| self.params_of(t))
            .collect();
        let weights = [
            8,                                   // an integer compare of a varying value
            when(features.floats, 2),            // a float compare (NaN included)
            when(!uniform_params.is_empty(), 1), // a parameter's: the same in every lane
        ];
        match self.rng.weighted(&weights) {
            1 => {
                let op = *pick(self.rng, &FLOAT_COMPARES);
                let a = self.operand(Type::F32);
                let b = self.operand(Type::F32);
                return Operand::Value(self.value(Op::Cmp(op), Type::Bool, vec![a, b]));
            }
            2 => {
                let p = *pick(self.rng, &uniform_params);
                let ty = self.env.params[p.0 as usize];
                let k = Operand::Const(interesting(self.rng, ty));
                // Narrow types compare only for equality (f16 as half
                // values: NaN unequal, -0 equal to +0).
                let ops: &[CmpOp] = match ty {
                    Type::I32 => &[CmpOp::LtU, CmpOp::GeS, CmpOp::Ne],
                    Type::F32 => &FLOAT_COMPARES,
                    _ => &[CmpOp::Eq, CmpOp::Ne],
                };
                let op = *pick(self.rng, ops);
                let p = Operand::Param(p);
                return Operand::Value(self.value(Op::Cmp(op), Type::Bool, vec![p, k]));
            }
            _ => {}
        }
        let x = self.varying_i32();
        let (op, k) = match self.rng.below(4) {
            0 => (CmpOp::LtU, self.rng.between(1, 32)),
            1 => (CmpOp::GeU, self.rng.between(0, 31)),
            2 => {
                let bit_mask = Operand::Const(Const::i32(1 << self.rng.below(5)));
                let bit = self.binary(BinaryOp::And, Type::I32, x, bit_mask);
                let c = self.value(
                    Op::Cmp(CmpOp::Ne),
                    Type::Bool,
                    vec![bit, Operand::Const(Const::i32(0))],
                );
                return Operand::Value(c);
            }
            _ => (CmpOp::Eq, self.rng.between(0, 40)),
        };
        let c = self.value(
            Op::Cmp(op),
            Type::Bool,
            vec![x, Operand::Const(Const::i32(k as i32))],
        );
        Operand::Value(c)
    }

    // ---- function structure ----

    fn declare_vars_and_privates(&mut self) {
        let types = value_types(&self.env.cfg);
        for _ in 0..self.rng.between(1, 3) {
            let ty = *pick(self.rng, &types);
            let v = self.declare_var(ty);
            self.free_vars.push(v);
        }
        if self.env.cfg.features.private {
            for i in 0..self.rng.below(3) {
                let size = *pick(self.rng, &[4u32, 12, 16, 24, 64, 100, 256]);
                self.f.privates.push(PrivateDecl {
                    name: format!("stack{i}"),
                    size,
                    span: Span::NONE,
                });
            }
        }
    }

    /// This lane's id: the kernel's `lane_id` value, or a new one.
    pub fn lane_id(&mut self) -> Operand {
        match self.lane {
            Some(l) => Operand::Value(l),
            None => self.builtin_i32(Builtin::LaneId),
        }
    }

    /// The module parameters of type `ty`.
    fn params_of(&self, ty: Type) -> Vec<ParamId> {
        (0..self.env.params.len() as u32)
            .map(ParamId)
            .filter(|p| self.env.params[p.0 as usize] == ty)
            .collect()
    }

    /// The value of an `i32` built-in.
    fn builtin_i32(&mut self, b: Builtin) -> Operand {
        Operand::Value(self.value(Op::Builtin(b), Type::I32, vec![]))
    }

    /// Fixed start of the kernel: the invocation's slot, its warp's regions.
    fn kernel_prologue(&mut self) {
        let layout = self.env.layout.clone();
        let c = |x: u32| Operand::Const(Const::i32(x as i32));
        let lane = self.value(Op::Builtin(Builtin::LaneId), Type::I32, vec![]);
        let local = Operand::Value(self.value(Op::Builtin(Builtin::LocalIndex), Type::I32, vec![]));
        let wx = self.builtin_i32(Builtin::WorkgroupId(Dim::X));
        let wy = self.builtin_i32(Builtin::WorkgroupId(Dim::Y));
        let nx = self.builtin_i32(Builtin::NumWorkgroups(Dim::X));
        let row = self.binary(BinaryOp::Mul, Type::I32, wy, nx);
        let row = if layout.grid[2] > 1 {
            // Layers in z: (z * ny + y) * nx + x.
            let wz = self.builtin_i32(Builtin::WorkgroupId(Dim::Z));
            let ny = self.builtin_i32(Builtin::NumWorkgroups(Dim::Y));
            let layer = self.binary(BinaryOp::Mul, Type::I32, wz, ny);
            let layer = self.binary(BinaryOp::Mul, Type::I32, layer, nx);
            self.binary(BinaryOp::Add, Type::I32, layer, row)
        } else {
            row
        };
        let group = self.binary(BinaryOp::Add, Type::I32, row, wx);
        let first = self.binary(BinaryOp::Mul, Type::I32, group, c(layout.wg_size));
        let invocation = self.binary(BinaryOp::Add, Type::I32, first, local);
        let slot = self.binary(BinaryOp::Mul, Type::I32, invocation, c(OUT_SLOT_BYTES));
        let warp = self.binary(BinaryOp::ShrU, Type::I32, local, c(5));
        let warps_before = self.binary(BinaryOp::Mul, Type::I32, group, c(layout.warps_per_wg));
        let global_warp = self.binary(BinaryOp::Add, Type::I32, warps_before, warp);
        let wreg = self.binary(BinaryOp::Mul, Type::I32, global_warp, c(ATOM_REGION_BYTES));
        let sreg0 = self.value(
            Op::Binary(BinaryOp::Mul),
            Type::I32,
            vec![warp, c(SHARED_WARP_BYTES)],
        );
        let sreg1 = self.value(
            Op::Binary(BinaryOp::Add),
            Type::I32,
            vec![Operand::Value(sreg0), c(layout.shared_phase_bytes)],
        );
        let lane_shared = self.value(
            Op::Binary(BinaryOp::Shl),
            Type::I32,
            vec![Operand::Value(lane), c(5)],
        );
        self.lane = Some(lane);
        self.lane_shared = Some(lane_shared);
        self.sreg_by_phase = Some([sreg0, sreg1]);
        self.mem = MemCtx {
            slot,
            wreg,
            sreg: Operand::Value(sreg0),
            prev_phase: None,
        };
    }

    /// Top-level statements until the budget is spent.
    fn top_level(&mut self) {
        // Each statement takes one unit of budget, so this ends.
        while self.budget > 0 {
            self.statement();
        }
    }

    fn epilogue_records(&mut self) {
        let vars: Vec<VarId> = (0..self.f.vars.len() as u32).map(VarId).collect();
        for v in vars {
            let ty = self.f.vars[v.0 as usize].ty;
            self.record(Operand::Var(v), ty);
        }
        for _ in 0..3 {
            if let Some((v, ty)) = self.any_visible() {
                self.record(Operand::Value(v), ty);
            }
        }
    }

    /// A block of up to `max_len` statements.
    fn block_body(&mut self, max_len: u64) {
        let n = self.rng.between(1, max_len);
        for _ in 0..n {
            if self.budget == 0 {
                break;
            }
            self.statement();
        }
    }

    /// One statement (possibly compound); takes one unit of budget.
    fn statement(&mut self) {
        self.budget = self.budget.saturating_sub(1);
        self.work = self.work.saturating_add(self.multiplier);
        let features = self.env.cfg.features;
        // A loop's exit test nests one level below its body.
        let max_depth = self.env.cfg.max_depth.min(crate::verify::MAX_NESTING - 3);
        let nest = self.depth < max_depth;
        let barrier_here = self.top_barriers && self.depth == 0;
        let callable = self.callable();
        let weights = [
            50,                                                      // instruction
            8,                                                       // record
            when(self.memory_available(), 14),                       // memory
            when(features.ifs && nest, 10),                          // if
            when(features.loops && nest && self.loop_fits(), 5),     // loop
            when(features.ordered && nest && !self.in_ordered, 2),   // ordered
            when(features.barriers && barrier_here, 2),              // barrier
            when(!callable.is_empty(), 5),                           // call
            when(features.ifs && nest && self.exits_available(), 4), // exit
            when(features.demote, 1),                                // demote
            5,                                                       // assign a variable
            when(
                features.barriers && features.loops && barrier_here && self.loop_fits(),
                1,
            ), // a loop with barriers
            when(features.barriers && features.ifs && barrier_here, 1), // an if with barriers
        ];
        match self.rng.weighted(&weights) {
            0 => self.instruction(),
            1 => {
                if let Some((v, ty)) = self.any_visible() {
                    self.record(Operand::Value(v), ty);
                }
            }
            2 => self.memory_access(),
            3 => self.if_else(),
            4 => self.counted_loop(),
            5 => self.ordered_section(),
            6 => self.barrier(),
            7 => self.call(&callable),
            8 => {
                // `if %c { ...; exit }`
                let cond = self.condition();
                self.open();
                self.block_body(2);
                self.exit();
                let then_body = self.close();
                self.emit_if(cond, then_body, Block::default());
            }
            9 => {
                if !nest || self.rng.chance(50) {
                    self.inst(Op::Demote, vec![], vec![]);
                } else {
                    let cond = self.condition();
                    self.open();
                    self.inst(Op::Demote, vec![], vec![]);
                    let then_body = self.close();
                    self.emit_if(cond, then_body, Block::default());
                }
            }
            10 => {
                let types = value_types(&self.env.cfg);
                let ty = *pick(self.rng, &types);
                let a = self.operand(ty);
                let v = self.free_var(ty);
                self.inst(Op::Mov, vec![Place::Var(v)], vec![a]);
            }
            11 => self.barrier_loop(),
            _ => self.barrier_if(),
        }
    }

    pub(super) fn emit_if(&mut self, cond: Operand, then_body: Block, else_body: Block) {
        self.emit(Stmt::If {
            cond,
            then_body,
            else_body,
            span: Span::NONE,
        });
    }

    fn if_else(&mut self) {
        let cond = self.condition();
        self.open();
        self.block_body(4);
        if self.exits_available() && self.rng.chance(15) {
            self.exit();
        }
        let then_body = self.close();
        self.open();
        if self.rng.chance(50) {
            self.block_body(3);
            if self.exits_available() && self.rng.chance(10) {
                self.exit();
            }
        }
        let else_body = self.close();
        self.emit_if(cond, then_body, else_body);
    }

    /// A loop whose reserved counter `$n` leaves it after at most `%bound`
    /// body runs, `%bound` in `0..=max_loop_trips` and usually different
    /// between lanes. The counter moves first in each iteration, so a
    /// `continue` anywhere after it cannot skip it; the exit test follows,
    /// sometimes after a few statements of the body (which may `break`, but
    /// not `continue`, which would skip the test):
    ///
    /// ```text
    /// $n = mov 0                      // counting up by 1
    /// loop {
    ///   %next = add $n, 1
    ///   $n = mov %next
    ///   <statements>                  // sometimes
    ///   %done = cmp.gt.u %next, %bound  // or cmp.le.u with break in else
    ///   if %done { break }
    ///   <body>
    /// }
    /// ```
    ///
    /// or counting up by 2 or 3 to `%bound` times the step, or down from
    /// `%bound` until the counter drops below zero (`cmp.lt.s`).
    fn counted_loop(&mut self) {
        let counter = self.declare_var(Type::I32);
        let bound = self.trip_bound();
        let c = |x: i32| Operand::Const(Const::i32(x));
        // 0: up by 1, 1: up by a larger step, 2: down.
        let form = self.rng.weighted(&[6, 2, 2]);
        let (start, step, limit) = match form {
            0 => (c(0), 1, bound),
            1 => {
                let step = self.rng.between(2, 3) as i32;
                let limit = self.binary(BinaryOp::Mul, Type::I32, bound, c(step));
                (c(0), step, limit)
            }
            _ => (bound, -1, c(0)),
        };
        self.inst(Op::Mov, vec![Place::Var(counter)], vec![start]);
        self.open();
        self.loops_in_section += 1;
        let outer_multiplier = self.multiplier;
        self.multiplier = self
            .multiplier
            .saturating_mul(u64::from(self.env.cfg.max_loop_trips) + 1);
        let next = self.step_counter(counter, step);
        let outer_may_continue = self.may_continue;
        if self.rng.chance(25) {
            self.may_continue = false;
            self.block_body(2);
        }
        self.may_continue = true;
        let exit_in_then = self.rng.chance(70);
        let cmp = match (step > 0, exit_in_then) {
            (true, true) => CmpOp::GtU,
            (true, false) => CmpOp::LeU,
            (false, true) => CmpOp::LtS,
            (false, false) => CmpOp::GeS,
        };
        let test = self.value(Op::Cmp(cmp), Type::Bool, vec![next, limit]);
        self.open();
        if exit_in_then {
            self.emit(Stmt::Break { span: Span::NONE });
        }
        let then_body = self.close();
        self.open();
        if !exit_in_then {
            self.emit(Stmt::Break { span: Span::NONE });
        }
        let else_body = self.close();
        self.emit_if(Operand::Value(test), then_body, else_body);
        self.block_body(5);
        self.may_continue = outer_may_continue;
        self.multiplier = outer_multiplier;
        self.loops_in_section -= 1;
        let body = self.close();
        self.emit(Stmt::Loop {
            body,
            span: Span::NONE,
        });
    }

    /// The top level of the kernel or of a function with barriers only:
    /// `if c { ..; barrier; .. } else { ..; barrier;
    /// .. }` on a condition the same in every invocation of the launch (a
    /// parameter's, or the workgroup's size), so all warps take one side
    /// and meet at its barrier (inside an `if`, which the JIT runs on
    /// coroutines). Both sides end one phase on, as a top-level barrier
    /// would.
    fn barrier_if(&mut self) {
        let params = self.params_of(Type::I32);
        let subject = if !params.is_empty() && self.rng.chance(60) {
            Operand::Param(*pick(self.rng, &params))
        } else {
            self.builtin_i32(Builtin::WorkgroupSize(Dim::X))
        };
        let k = Operand::Const(interesting(self.rng, Type::I32));
        let op = *pick(self.rng, &[CmpOp::LtU, CmpOp::GeS, CmpOp::Ne, CmpOp::Eq]);
        let cond = Operand::Value(self.value(Op::Cmp(op), Type::Bool, vec![subject, k]));
        let (mem, phase) = (self.mem, self.phase);
        let side = |g: &mut Self| {
            g.mem = mem;
            g.phase = phase;
            g.open();
            g.block_body(2);
            g.barrier();
            g.block_body(2);
            g.close()
        };
        let then_body = side(self);
        let else_body = side(self);
        self.emit_if(cond, then_body, else_body);
    }

    /// `counter = counter + 1`, and the new count.
    fn count_up(&mut self, counter: VarId) -> Operand {
        self.step_counter(counter, 1)
    }

    /// `counter = counter + step` (`sub` for a negative step), and the new
    /// count.
    fn step_counter(&mut self, counter: VarId, step: i32) -> Operand {
        let op = if step > 0 {
            BinaryOp::Add
        } else {
            BinaryOp::Sub
        };
        let k = Operand::Const(Const::i32(step.abs()));
        let next = self.binary(op, Type::I32, Operand::Var(counter), k);
        self.inst(Op::Mov, vec![Place::Var(counter)], vec![next]);
        next
    }

    /// The top level of the kernel or of a function with barriers only: a
    /// loop that every warp runs the same 1 to 3
    /// times (its bound is a constant, and nothing but its test leaves it),
    /// with two barriers in each iteration, so the warps meet inside a
    /// loop (the JIT runs such a kernel's warps as coroutines). Two
    /// barriers an iteration bring each iteration back to the shared phase
    /// it started in, so the phase tracked here holds in every iteration:
    /// the previous phase at the top of a later iteration (the second half
    /// of the one before) has the parity of the one before the loop.
    fn barrier_loop(&mut self) {
        let counter = self.declare_var(Type::I32);
        let zero = Operand::Const(Const::i32(0));
        self.inst(Op::Mov, vec![Place::Var(counter)], vec![zero]);
        let trips = self
            .rng
            .between(1, u64::from(self.env.cfg.max_loop_trips.clamp(1, 3)));
        self.open();
        let outer_multiplier = self.multiplier;
        self.multiplier = self.multiplier.saturating_mul(trips + 1);
        let next = self.count_up(counter);
        let bound = Operand::Const(Const::i32(trips as i32));
        let test = self.value(Op::Cmp(CmpOp::GtU), Type::Bool, vec![next, bound]);
        self.open();
        self.emit(Stmt::Break { span: Span::NONE });
        let then_body = self.close();
        self.emit_if(Operand::Value(test), then_body, Block::default());
        self.block_body(3);
        self.barrier();
        self.block_body(3);
        self.barrier();
        self.multiplier = outer_multiplier;
        let body = self.close();
        self.emit(Stmt::Loop {
            body,
            span: Span::NONE,
        });
    }

    /// An i32 in `0..=max_loop_trips`, usually different between lanes.
    fn trip_bound(&mut self) -> Operand {
        let max = self.env.cfg.max_loop_trips;
        let c = |x: u32| Operand::Const(Const::i32(x as i32));
        match self.rng.below(4) {
            0 => c(self.rng.between(0, u64::from(max)) as u32),
            1 => {
                let x = self.varying_i32();
                self.binary(
                    BinaryOp::RemU,
                    Type::I32,
                    x,
                    c(max.saturating_add(1).max(1)),
                )
            }
            2 => {
                let x = self.varying_i32();
                self.binary(BinaryOp::MinU, Type::I32, x, c(max))
            }
            _ => {
                // (x & mask) stays below the next power of two; clamp with min.u.
                let x = self.varying_i32();
                let mask = max.max(1).next_power_of_two() - 1;
                let low = self.binary(BinaryOp::And, Type::I32, x, c(mask));
                self.binary(BinaryOp::MinU, Type::I32, low, c(max))
            }
        }
    }

    fn ordered_section(&mut self) {
        let key = match self.rng.below(5) {
            0 => {
                let x = self.varying_i32();
                self.binary(BinaryOp::And, Type::I32, x, Operand::Const(Const::i32(3)))
            }
            1 => {
                let x = self.varying_i32();
                self.binary(BinaryOp::ShrU, Type::I32, x, Operand::Const(Const::i32(3)))
            }
            2 => self.varying_i32(),
            3 => self.condition(),
            _ => {
                let types = value_types(&self.env.cfg);
                let ty = *pick(self.rng, &types);
                self.operand(ty)
            }
        };
        self.reaches_kill_or_ordered = true;
        let saved = (self.in_ordered, self.loops_in_section);
        self.in_ordered = true;
        self.loops_in_section = 0;
        self.open();
        self.block_body(4);
        let body = self.close();
        (self.in_ordered, self.loops_in_section) = saved;
        self.emit(Stmt::Ordered {
            key,
            body,
            span: Span::NONE,
        });
    }

    /// The top level of the kernel or of a function with barriers, or the
    /// top of a [`barrier_loop`](Self::barrier_loop)'s body: every warp that
    /// has not finished gets here.
    fn barrier(&mut self) {
        self.inst(Op::Barrier, vec![], vec![]);
        self.passed_barriers(1);
    }

    /// Moves the shared phase on by `count` barriers. A function does not
    /// know which of the kernel's phases it runs in, so only the kernel
    /// reads the previous phase.
    fn passed_barriers(&mut self, count: u32) {
        if count == 0 {
            return;
        }
        if let Some(regions) = self.sreg_by_phase {
            if self.is_kernel {
                self.mem.prev_phase = Some(self.phase + count - 1);
            }
            self.phase += count;
            self.mem.sreg = Operand::Value(regions[(self.phase % 2) as usize]);
        }
    }

    /// `return` before the end: not in a function with barriers, where a
    /// warp whose lanes all returned would pass fewer barriers than the
    /// others.
    fn may_return(&self) -> bool {
        let function_with_barriers = self.top_barriers && !self.is_kernel;
        self.env.cfg.features.early_returns && !function_with_barriers
    }

    fn exits_available(&self) -> bool {
        let features = self.env.cfg.features;
        self.loops_in_section > 0 || (!self.in_ordered && (self.may_return() || features.kill))
    }

    /// An unconditional `break`, `continue`, `return` or `kill`, as allowed here.
    fn exit(&mut self) {
        let features = self.env.cfg.features;
        let in_loop = self.loops_in_section > 0;
        let may_leave = !self.in_ordered;
        let weights = [
            when(in_loop, 4),                        // break
            when(in_loop && self.may_continue, 3),   // continue
            when(may_leave && self.may_return(), 2), // return
            when(may_leave && features.kill, 1),     // kill
        ];
        if weights.iter().all(|w| *w == 0) {
            return;
        }
        let s = match self.rng.weighted(&weights) {
            0 => Stmt::Break { span: Span::NONE },
            1 => Stmt::Continue { span: Span::NONE },
            2 => {
                let results = self.f.results.clone();
                let values = results.iter().map(|t| self.operand(*t)).collect();
                Stmt::Return {
                    values,
                    span: Span::NONE,
                }
            }
            _ => {
                self.reaches_kill_or_ordered = true;
                Stmt::Kill { span: Span::NONE }
            }
        };
        self.emit(s);
    }

    fn loop_fits(&self) -> bool {
        let trips = u64::from(self.env.cfg.max_loop_trips) + 1;
        self.multiplier.saturating_mul(trips) <= MAX_MULTIPLIER
    }

    /// Functions callable here: within the work bound, none reaching
    /// `kill` or `ordered` inside an ordered section, and those with
    /// barriers only at the kernel's top level.
    fn callable(&self) -> Vec<FuncInfo> {
        if !self.env.cfg.features.calls {
            return Vec::new();
        }
        let top_of_kernel = self.is_kernel && self.depth == 0;
        self.env
            .funcs
            .iter()
            .filter(|f| !(self.in_ordered && f.reaches_kill_or_ordered))
            .filter(|f| f.barriers == 0 || top_of_kernel)
            .filter(|f| {
                let total = self
                    .work
                    .saturating_add(self.multiplier.saturating_mul(f.work));
                total <= self.env.cfg.max_work
            })
            .cloned()
            .collect()
    }

    fn call(&mut self, callable: &[FuncInfo]) {
        let callee = pick(self.rng, callable).clone();
        let mut args = vec![self.mem.slot, self.mem.wreg, self.mem.sreg];
        if callee.barriers > 0 {
            let regions = self
                .sreg_by_phase
                .expect("the kernel, which alone calls functions with barriers, has both regions");
            args.push(Operand::Value(regions[((self.phase + 1) % 2) as usize]));
        }
        for t in &callee.params {
            args.push(self.operand(*t));
        }
        let results = self.results(&callee.results);
        if callee.reaches_kill_or_ordered {
            self.reaches_kill_or_ordered = true;
        }
        self.work = self
            .work
            .saturating_add(self.multiplier.saturating_mul(callee.work));
        self.inst(Op::Call(callee.index), results, args);
        self.passed_barriers(callee.barriers);
    }
}
