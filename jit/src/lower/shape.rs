//! Lane shapes: what the 32 lanes of a warp hold, known before the code
//! runs. The lowering uses them to drop the run-time address tests of loads
//! and stores whose shape is known (see `memory.rs`).
//!
//! A shape describes the lanes that are active where a value is defined
//! (or a variable read). Values are only used inside the construct that
//! defines them, where the active lanes are a subset of those at the
//! definition, so a shape stays true at every use. Variables are tracked
//! per program point; where lanes that took different paths meet again
//! (after an `if` on a varying condition, after a loop that some lanes
//! leave or skip on a varying condition, at the top of one that some lanes
//! skip to, after an `ordered` section), every variable assigned on those
//! paths becomes [`LaneShape::Varying`]. Lanes that leave a loop early do
//! not meet the others inside it: those that stay are all in one
//! iteration.
//!
//! Workgroup IDs depend on the launch's workgroup size, which is not known
//! at compile time, so a function is analysed under an [`IdLayout`]: the
//! lowering uses the shapes of [`IdLayout::Any`] unconditionally and those
//! of [`IdLayout::WarpInOneRow`] behind a one-scalar test of the workgroup
//! size.

mod ranks;

use std::collections::HashMap;
use warpjit_ir::{
    walk_block, BinaryOp, Block, Builtin, Dim, Function, Inst, MemRef, Module, Op, Operand, Place,
    ShuffleForm, ShuffleMode, Stmt, Type, UnaryOp, VarId,
};

/// What the active lanes of a warp hold.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LaneShape {
    /// All active lanes hold the same value.
    Uniform,
    /// Lane `l` holds `base + l * stride` (wrapping at the type's width)
    /// with `base` the same for all lanes. `stride` is non-zero, taken
    /// modulo 2^width (so -4 in 32 bits is `0xffff_fffc`).
    Affine { stride: u64 },
    /// Lane `l` holds `base + (l % width) * stride` (wrapping as for
    /// `Affine`): the same run of `width` values repeated in each aligned
    /// group of `width` lanes, as `lane_id & 7` gives. `width` is 2, 4, 8
    /// or 16 (32 is `Affine`) and `stride` is non-zero.
    Tiled { stride: u64, width: u32 },
    /// Nothing is known.
    Varying,
}

impl LaneShape {
    /// The shape of a value that is one of `self` and `other` for all the
    /// active lanes together (a merge of paths the warp took as a whole).
    fn merge(self, other: LaneShape) -> LaneShape {
        if self == other {
            self
        } else {
            LaneShape::Varying
        }
    }
}

/// What the analysis may assume about the launch's workgroup shape.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IdLayout {
    /// Any workgroup: `local_index` and `lane_id` are affine, the other IDs
    /// varying.
    Any,
    /// Each warp's lanes lie in one row of the workgroup: the x size is a
    /// multiple of 32, or the workgroup is one-dimensional (y and z sizes
    /// 1). Then `local_id.x` and `global_id.x` are affine with stride 1 and
    /// the y and z IDs uniform.
    WarpInOneRow,
}

impl IdLayout {
    /// The layout every launch of code compiled for workgroups of
    /// `workgroup` has (`None`: any size).
    pub fn known(workgroup: Option<[u32; 3]>) -> IdLayout {
        match workgroup {
            Some([x, y, z]) if x % 32 == 0 || (y == 1 && z == 1) => IdLayout::WarpInOneRow,
            _ => IdLayout::Any,
        }
    }
}

/// The shape of an operand where it is used.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OperandShape {
    pub lanes: LaneShape,
    /// The shape holds in every lane the warp has, active or not (values
    /// computed lane by lane from IDs, parameters and constants, not from
    /// memory or variables), so lane 0, which every warp has, may stand for
    /// the active lanes.
    pub every_lane: bool,
}

/// The lane shapes of one function under one [`IdLayout`].
#[derive(Clone, Debug)]
pub struct FunctionShapes {
    values: Vec<LaneShape>,
    every_lane: Vec<bool>,
    /// Address operand of each load, store and atomic, by instruction.
    addresses: HashMap<*const Inst, OperandShape>,
    /// Condition of each `if`, by statement.
    conditions: HashMap<*const Stmt, LaneShape>,
    /// Variables where each loop is entered, by loop body.
    loop_entries: HashMap<*const Block, Vars>,
    /// The address stride of each store, by instruction, whose lanes are
    /// packed ([`ranks`]); 0 for the others.
    packed: HashMap<*const Inst, u64>,
}

impl FunctionShapes {
    /// Analyses `f`, a function of `module`. Parameters of functions that
    /// are not kernels, and the results of calls, are varying.
    pub fn analyse(module: &Module, f: &Function, layout: IdLayout) -> FunctionShapes {
        let mut a = Analysis {
            module,
            f,
            layout,
            values: vec![LaneShape::Varying; f.values.len()],
            every_lane: vec![false; f.values.len()],
            lane_index: vec![false; f.values.len()],
            addresses: HashMap::new(),
            conditions: HashMap::new(),
            loop_entries: HashMap::new(),
            loops: Vec::new(),
            divergence: 0,
            loop_depth: 0,
            ranks: ranks::Ranks::new(f.vars.len()),
        };
        // Variables start as zero in every lane.
        let mut vars = vec![LaneShape::Uniform; f.vars.len()];
        a.block(&f.body, &mut vars);
        FunctionShapes {
            values: a.values,
            every_lane: a.every_lane,
            addresses: a.addresses,
            conditions: a.conditions,
            loop_entries: a.loop_entries,
            packed: a.ranks.packed,
        }
    }

    /// Whether the storing lanes of `store` are the lanes a ballot counted
    /// and its address is a uniform base plus each lane's rank among them
    /// times `stride` (`shape/ranks.rs`).
    pub fn packed(&self, store: &Inst, stride: u64) -> bool {
        stride != 0 && self.packed.get(&std::ptr::from_ref(store)) == Some(&stride)
    }

    /// Whether an SSA value holds one value in all 32 lanes, active or not.
    pub fn same_in_every_lane(&self, v: warpjit_ir::ValueId) -> bool {
        self.value(v) == LaneShape::Uniform && self.every_lane(v)
    }

    /// The shape of an SSA value of the function.
    pub fn value(&self, v: warpjit_ir::ValueId) -> LaneShape {
        self.values
            .get(v.0 as usize)
            .copied()
            .unwrap_or(LaneShape::Varying)
    }

    /// Whether the shape of an SSA value holds in every lane the warp has.
    pub fn every_lane(&self, v: warpjit_ir::ValueId) -> bool {
        self.every_lane.get(v.0 as usize).copied().unwrap_or(false)
    }

    /// The shape of the address of `inst`, a load, store or atomic of the
    /// analysed function (`None` for other instructions and other
    /// functions).
    pub fn address(&self, inst: &Inst) -> Option<OperandShape> {
        self.addresses.get(&std::ptr::from_ref(inst)).copied()
    }

    /// The shape of variable `v` where the loop whose body is `body` is
    /// entered (varying for blocks that are not a loop's body).
    pub fn var_at_loop_entry(&self, body: &Block, v: VarId) -> LaneShape {
        self.loop_entries
            .get(&std::ptr::from_ref(body))
            .and_then(|vars| vars.get(v.0 as usize).copied())
            .unwrap_or(LaneShape::Varying)
    }

    /// The shape of the condition of `stmt`, an `if` of the analysed function.
    pub fn condition(&self, stmt: &Stmt) -> Option<LaneShape> {
        self.conditions.get(&std::ptr::from_ref(stmt)).copied()
    }
}

/// Whether `op` computes each lane from that lane's operands alone (no
/// memory, no other lanes, no IDs).
pub fn is_lane_wise(op: &Op) -> bool {
    matches!(
        op,
        Op::Mov
            | Op::Select
            | Op::Unary(_)
            | Op::Binary(_)
            | Op::Fma
            | Op::Cmp(_)
            | Op::Bfe { .. }
            | Op::Bfi
            | Op::Cvt { .. }
            | Op::Bitcast(_)
            | Op::Pk64
            | Op::Up64
    )
}

/// The shape of every variable at a program point.
type Vars = Vec<LaneShape>;

fn merge_vars(a: &mut Vars, b: &Vars) {
    for (x, y) in a.iter_mut().zip(b) {
        *x = x.merge(*y);
    }
}

fn merge_into(acc: &mut Option<Vars>, state: &Vars) {
    match acc {
        Some(a) => merge_vars(a, state),
        None => *acc = Some(state.clone()),
    }
}

/// Variables assigned anywhere in `block`, nested constructs included.
fn assigned_vars(block: &Block) -> Vec<VarId> {
    let mut out = Vec::new();
    walk_block(block, &mut |s| {
        if let Stmt::Inst(i) = s {
            for r in &i.results {
                if let Place::Var(v) = r {
                    out.push(*v);
                }
            }
        }
    });
    out
}

fn make_varying(vars: &mut Vars, which: &[VarId]) {
    for v in which {
        vars[v.0 as usize] = LaneShape::Varying;
    }
}

struct LoopFrame {
    /// Variables where lanes leave the loop (`break`).
    exits: Option<Vars>,
    /// Variables where lanes skip to the next iteration (`continue`).
    next: Option<Vars>,
    /// The divergence depth at the loop: a `break` or `continue` deeper
    /// than this is taken by some lanes only.
    depth: u32,
    /// Some lanes leave while others stay: after the loop, lanes hold
    /// values of different iterations. Inside it, the lanes that stay are
    /// all in the same iteration, so this changes no shape there.
    divergent_break: bool,
    /// Some lanes skip to the next iteration while others run on: at the
    /// top of the loop, lanes that took different paths meet.
    divergent_continue: bool,
}

struct Analysis<'a> {
    module: &'a Module,
    f: &'a Function,
    layout: IdLayout,
    values: Vec<LaneShape>,
    every_lane: Vec<bool>,
    /// Values that are `lane_id + 32 * k` with `k` the same in all lanes
    /// (`lane_id`, `local_index`): masking their low bits tiles the lanes.
    lane_index: Vec<bool>,
    addresses: HashMap<*const Inst, OperandShape>,
    conditions: HashMap<*const Stmt, LaneShape>,
    loop_entries: HashMap<*const Block, Vars>,
    loops: Vec<LoopFrame>,
    /// Enclosing `if`s on varying conditions and `ordered` sections.
    divergence: u32,
    /// Enclosing loops.
    loop_depth: u32,
    ranks: ranks::Ranks,
}

/// Passes over a loop body before its variables are given up as varying.
const PRECISE_PASSES: u32 = 3;
/// Loops nested deeper than this are not iterated: their variables are
/// varying.
const PRECISE_DEPTH: u32 = 4;

impl Analysis<'_> {
    fn block(&mut self, block: &Block, vars: &mut Vars) {
        for s in &block.stmts {
            self.stmt(s, vars);
        }
    }

    fn stmt(&mut self, s: &Stmt, vars: &mut Vars) {
        match s {
            Stmt::Inst(i) => self.inst(i, vars),
            Stmt::If {
                cond,
                then_body,
                else_body,
                ..
            } => {
                let c = self.operand(cond, vars);
                self.conditions.insert(std::ptr::from_ref(s), c);
                let divergent = c != LaneShape::Uniform;
                self.divergence += u32::from(divergent);
                let mut then_vars = vars.clone();
                let mark = self.ranks.mark();
                self.ranks.enter_then(cond);
                self.block(then_body, &mut then_vars);
                self.ranks.new_epoch();
                self.block(else_body, vars);
                self.ranks.leave(mark);
                self.divergence -= u32::from(divergent);
                merge_vars(vars, &then_vars);
                if divergent {
                    make_varying(vars, &assigned_vars(then_body));
                    make_varying(vars, &assigned_vars(else_body));
                }
            }
            Stmt::Loop { body, .. } => self.loop_stmt(body, vars),
            Stmt::Break { .. } | Stmt::Continue { .. } => {
                self.ranks.lose_lanes();
                let depth = self.divergence;
                if let Some(frame) = self.loops.last_mut() {
                    let divergent = depth > frame.depth;
                    let target = if matches!(s, Stmt::Break { .. }) {
                        frame.divergent_break |= divergent;
                        &mut frame.exits
                    } else {
                        frame.divergent_continue |= divergent;
                        &mut frame.next
                    };
                    merge_into(target, vars);
                }
            }
            // Lanes that return or are killed never run again in this
            // function, so the others' shapes stay true.
            Stmt::Return { .. } | Stmt::Kill { .. } => self.ranks.lose_lanes(),
            Stmt::Ordered { body, .. } => {
                // Rounds of some lanes each: treated as divergent.
                self.divergence += 1;
                let mut inside = vars.clone();
                self.ranks.new_epoch();
                self.block(body, &mut inside);
                self.ranks.new_epoch();
                self.divergence -= 1;
                merge_vars(vars, &inside);
                make_varying(vars, &assigned_vars(body));
            }
        }
    }

    /// Iterates the body until the variables at the top of the loop stop
    /// changing. Each pass of an outer loop analyses its inner loops again,
    /// so to keep the cost linear in deep nests, a loop that has not
    /// settled after [`PRECISE_PASSES`], or is nested deeper than
    /// [`PRECISE_DEPTH`], gives up: everything it assigns is varying, which
    /// settles at the next pass.
    fn loop_stmt(&mut self, body: &Block, vars: &mut Vars) {
        // An outer loop's last pass, the one that settles, comes last.
        self.loop_entries
            .insert(std::ptr::from_ref(body), vars.clone());
        let assigned = assigned_vars(body);
        let mut header = vars.clone();
        if self.loop_depth >= PRECISE_DEPTH {
            make_varying(&mut header, &assigned);
        }
        self.loop_depth += 1;
        let mut passes = 0;
        loop {
            passes += 1;
            self.loops.push(LoopFrame {
                exits: None,
                next: None,
                depth: self.divergence,
                divergent_break: false,
                divergent_continue: false,
            });
            let mut end = header.clone();
            self.ranks.new_epoch();
            self.block(body, &mut end);
            self.ranks.new_epoch();
            let frame = self.loops.pop().expect("pushed above");
            let mut next = header.clone();
            merge_vars(&mut next, &end);
            if let Some(c) = &frame.next {
                merge_vars(&mut next, c);
            }
            if frame.divergent_continue {
                make_varying(&mut next, &assigned);
            }
            if next == header {
                // Lanes leave by `break` (or return, or are killed); the
                // header's shapes cover the loop's entry and every iteration.
                let mut after = header;
                if let Some(x) = &frame.exits {
                    merge_vars(&mut after, x);
                }
                if frame.divergent_break || frame.divergent_continue {
                    make_varying(&mut after, &assigned);
                }
                *vars = after;
                self.loop_depth -= 1;
                return;
            }
            if passes >= PRECISE_PASSES {
                make_varying(&mut next, &assigned);
            }
            header = next;
        }
    }

    fn operand(&self, o: &Operand, vars: &Vars) -> LaneShape {
        match o {
            Operand::Value(v) => self.values[v.0 as usize],
            Operand::Var(v) => vars[v.0 as usize],
            Operand::Param(_) | Operand::Const(_) => LaneShape::Uniform,
        }
    }

    /// Whether an operand is `lane_id + 32 * k` for a `k` all lanes share.
    fn is_lane_index(&self, o: &Operand) -> bool {
        matches!(o, Operand::Value(v) if self.lane_index[v.0 as usize])
    }

    /// Whether an operand's shape holds in every lane the warp has.
    fn operand_every_lane(&self, o: &Operand) -> bool {
        match o {
            Operand::Value(v) => self.every_lane[v.0 as usize],
            // Assigned under the mask of the moment.
            Operand::Var(_) => false,
            Operand::Param(_) | Operand::Const(_) => true,
        }
    }

    fn inst(&mut self, i: &Inst, vars: &mut Vars) {
        let args: Vec<LaneShape> = i.args.iter().map(|a| self.operand(a, vars)).collect();
        if matches!(i.op, Op::Load { .. } | Op::Store { .. } | Op::Atom { .. }) {
            if let (Some(lanes), Some(a)) = (args.first(), i.args.first()) {
                let shape = OperandShape {
                    lanes: *lanes,
                    every_lane: self.operand_every_lane(a),
                };
                self.addresses.insert(std::ptr::from_ref(i), shape);
            }
        }
        let shape = self.result_shape(i, &args);
        self.ranks.inst(i, &args);
        // Lane-wise operations on all lanes: what their operands hold in
        // every lane, their results do too.
        let lane_wise = is_lane_wise(&i.op) || matches!(i.op, Op::Builtin(_));
        // The lowering splats a warp's ballot and active mask to all lanes.
        let every_lane = matches!(i.op, Op::Ballot | Op::ActiveMask)
            || lane_wise && i.args.iter().all(|a| self.operand_every_lane(a));
        let lane_index = match &i.op {
            Op::Builtin(Builtin::LaneId | Builtin::LocalIndex) => true,
            Op::Mov => i.args.first().is_some_and(|a| self.is_lane_index(a)),
            _ => false,
        };
        for r in &i.results {
            match r {
                Place::Value(v) => {
                    self.values[v.0 as usize] = shape;
                    self.every_lane[v.0 as usize] = every_lane;
                    self.lane_index[v.0 as usize] = lane_index;
                }
                Place::Var(v) => vars[v.0 as usize] = shape,
            }
        }
    }

    /// The shape of every result of `i` whose operands have shapes `args`.
    fn result_shape(&self, i: &Inst, args: &[LaneShape]) -> LaneShape {
        use LaneShape::{Affine, Tiled, Uniform, Varying};
        let all_uniform = args.iter().all(|a| *a == Uniform);
        let ty = i
            .args
            .first()
            .map(|a| self.module.operand_type(self.f, a))
            .unwrap_or(Type::I32);
        match &i.op {
            Op::Mov => args.first().copied().unwrap_or(Varying),
            Op::Select => match args {
                [Uniform, a, b] => a.merge(*b),
                _ => Varying,
            },
            Op::Unary(op) => match (op, args.first()) {
                (_, Some(Uniform)) => Uniform,
                (UnaryOp::Neg | UnaryOp::Not, Some(Affine { stride })) if ty.is_arith_int() => {
                    affine(stride.wrapping_neg(), ty)
                }
                (UnaryOp::Neg | UnaryOp::Not, Some(Tiled { stride, width }))
                    if ty.is_arith_int() =>
                {
                    tiled(stride.wrapping_neg(), *width, ty)
                }
                _ => Varying,
            },
            // One segment of 32 lanes and one index: every active lane
            // reads the same lane (0 when it is inactive), valid.
            Op::Shuffle {
                mode: ShuffleMode::Idx,
                form: ShuffleForm::Width,
            } if args.get(1) == Some(&Uniform)
                && matches!(i.args.get(2), Some(Operand::Const(w)) if w.bits % 32 == 0) =>
            {
                Uniform
            }
            // Lane by lane from values all active lanes share.
            op if all_uniform && is_lane_wise(op) => Uniform,
            Op::Binary(op) if ty.is_arith_int() => self.int_binary(*op, i, args, ty),
            Op::Builtin(b) => self.builtin(*b),
            // The same bit set in every lane.
            Op::ActiveMask | Op::Ballot => Uniform,
            // A load from one address of memory the lanes share.
            Op::Load { mem, .. } if !matches!(mem, MemRef::Private(_)) && all_uniform => Uniform,
            _ => Varying,
        }
    }

    /// Integer add, sub, mul and shl of affine, tiled and uniform operands,
    /// with a constant factor or shift for mul and shl; and the low and
    /// high bits of a lane index (`of_lane_index`).
    fn int_binary(&self, op: BinaryOp, i: &Inst, args: &[LaneShape], ty: Type) -> LaneShape {
        use LaneShape::{Affine, Tiled, Uniform, Varying};
        let constant = |n: usize| match i.args.get(n) {
            Some(Operand::Const(c)) => Some(c.bits),
            _ => None,
        };
        if let Some(shape) = self.of_lane_index(op, i, ty) {
            return shape;
        }
        if let Some(shape) = tiled_binary(op, args, constant(0), constant(1), ty) {
            return shape;
        }
        let stride = |s: LaneShape| match s {
            Uniform => Some(0u64),
            Affine { stride } => Some(stride),
            Tiled { .. } | Varying => None,
        };
        let (Some(a), Some(b)) = (
            args.first().copied().and_then(stride),
            args.get(1).copied().and_then(stride),
        ) else {
            return Varying;
        };
        match op {
            BinaryOp::Add => affine(a.wrapping_add(b), ty),
            BinaryOp::Sub => affine(a.wrapping_sub(b), ty),
            BinaryOp::Mul => match (constant(0), constant(1)) {
                (_, Some(c)) => affine(a.wrapping_mul(c), ty),
                (Some(c), _) => affine(b.wrapping_mul(c), ty),
                _ => Varying,
            },
            BinaryOp::Shl => match constant(1) {
                Some(c) if c < u64::from(ty.bits()) => affine(a << c, ty),
                _ => Varying,
            },
            _ => Varying,
        }
    }

    /// A lane index `32 * k + lane` (`k` uniform) and a constant: its low
    /// bits (`and` with `width - 1`, `rem.u` by `width`) are tiled, or the
    /// lane itself for a width of 32; what is above them (`shr` by 5 or
    /// more, `div.u` by a multiple of 32) is uniform, as for the warp's
    /// index `local_index >> 5`. `None` for anything else.
    fn of_lane_index(&self, op: BinaryOp, i: &Inst, ty: Type) -> Option<LaneShape> {
        let c = match (op, i.args.as_slice()) {
            (_, [x, Operand::Const(c)]) if self.is_lane_index(x) => c.bits,
            (BinaryOp::And, [Operand::Const(c), x]) if self.is_lane_index(x) => c.bits,
            _ => return None,
        };
        let low_bits = |width: u64| match width {
            32 => Some(LaneShape::Affine { stride: 1 }),
            2 | 4 | 8 | 16 => Some(tiled(1, width as u32, ty)),
            _ => None,
        };
        match op {
            BinaryOp::And => low_bits(c.wrapping_add(1)),
            BinaryOp::RemU => low_bits(c),
            BinaryOp::ShrU | BinaryOp::ShrS if (5..32).contains(&c) => Some(LaneShape::Uniform),
            BinaryOp::DivU if c != 0 && c % 32 == 0 => Some(LaneShape::Uniform),
            _ => None,
        }
    }

    fn builtin(&self, b: Builtin) -> LaneShape {
        use LaneShape::{Affine, Uniform, Varying};
        let rows = self.layout == IdLayout::WarpInOneRow;
        match b {
            Builtin::LocalIndex | Builtin::LaneId => Affine { stride: 1 },
            Builtin::LocalId(Dim::X) | Builtin::GlobalId(Dim::X) if rows => Affine { stride: 1 },
            Builtin::LocalId(_) | Builtin::GlobalId(_) if rows => Uniform,
            Builtin::LocalId(_) | Builtin::GlobalId(_) => Varying,
            Builtin::WorkgroupId(_)
            | Builtin::NumWorkgroups(_)
            | Builtin::WorkgroupSize(_)
            | Builtin::WarpId
            | Builtin::SmId
            | Builtin::WarpSize
            | Builtin::WarpsPerSm
            | Builtin::SmCount => Uniform,
            Builtin::LaneMaskEq
            | Builtin::LaneMaskGe
            | Builtin::LaneMaskGt
            | Builtin::LaneMaskLe
            | Builtin::LaneMaskLt
            | Builtin::IsHelper => Varying,
        }
    }
}

/// The shape `base + l * stride` in an integer type of `ty`'s width.
fn affine(stride: u64, ty: Type) -> LaneShape {
    let stride = stride & ty.bit_mask();
    if stride == 0 {
        LaneShape::Uniform
    } else {
        LaneShape::Affine { stride }
    }
}

/// The shape `base + (l % width) * stride` in an integer type of `ty`'s
/// width.
fn tiled(stride: u64, width: u32, ty: Type) -> LaneShape {
    let stride = stride & ty.bit_mask();
    if stride == 0 {
        LaneShape::Uniform
    } else {
        LaneShape::Tiled { stride, width }
    }
}

/// Add, sub, mul and shl with one tiled operand: a uniform term moves the
/// base, a constant factor or shift scales the stride. `None` when no
/// operand is tiled.
fn tiled_binary(
    op: BinaryOp,
    args: &[LaneShape],
    first_const: Option<u64>,
    second_const: Option<u64>,
    ty: Type,
) -> Option<LaneShape> {
    use LaneShape::{Tiled, Uniform, Varying};
    let (a, b) = (*args.first()?, *args.get(1)?);
    if !matches!(a, Tiled { .. }) && !matches!(b, Tiled { .. }) {
        return None;
    }
    Some(match (op, a, b) {
        (BinaryOp::Add, Tiled { stride, width }, Uniform)
        | (BinaryOp::Add, Uniform, Tiled { stride, width })
        | (BinaryOp::Sub, Tiled { stride, width }, Uniform) => tiled(stride, width, ty),
        (BinaryOp::Sub, Uniform, Tiled { stride, width }) => {
            tiled(stride.wrapping_neg(), width, ty)
        }
        (BinaryOp::Mul, Tiled { stride, width }, _) if second_const.is_some() => {
            tiled(stride.wrapping_mul(second_const?), width, ty)
        }
        (BinaryOp::Mul, _, Tiled { stride, width }) if first_const.is_some() => {
            tiled(stride.wrapping_mul(first_const?), width, ty)
        }
        (BinaryOp::Shl, Tiled { stride, width }, _) => match second_const {
            Some(c) if c < u64::from(ty.bits()) => tiled(stride << c, width, ty),
            _ => Varying,
        },
        _ => Varying,
    })
}
