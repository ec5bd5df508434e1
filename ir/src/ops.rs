//! Operations: what each instruction does, how it is spelled in the text
//! format, and its typing rule.
//!
//! Every non-structural instruction is an [`Op`] applied to operands. The
//! typing rule of an op is a [`Signature`]: operand and result slots that are
//! either a fixed type, the op's type variable `T` (constrained by a
//! [`TypeClass`]) or an address. The parser uses the signature to give bare
//! literals a type; the verifier uses it to check every instruction; the
//! printer uses it to decide when a literal needs a type suffix.

use crate::types::Type;
use std::fmt;

/// A dimension of a 3-D dispatch built-in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Dim {
    X,
    Y,
    Z,
}

impl Dim {
    pub const ALL: [Dim; 3] = [Dim::X, Dim::Y, Dim::Z];
    pub fn index(self) -> usize {
        self as usize
    }
    pub fn name(self) -> &'static str {
        ["x", "y", "z"][self as usize]
    }
}

/// Dispatch and warp built-in inputs: instructions with no operands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Builtin {
    GlobalId(Dim),
    LocalId(Dim),
    WorkgroupId(Dim),
    NumWorkgroups(Dim),
    WorkgroupSize(Dim),
    /// Linear index of the invocation in its workgroup (x fastest).
    LocalIndex,
    /// gl_ThreadInWarpNV.
    LaneId,
    LaneMaskEq,
    LaneMaskGe,
    LaneMaskGt,
    LaneMaskLe,
    LaneMaskLt,
    /// gl_WarpIDNV: the warp's slot on its SM.
    WarpId,
    /// gl_SMIDNV.
    SmId,
    /// gl_WarpSizeNV (always 32).
    WarpSize,
    /// gl_WarpsPerSMNV.
    WarpsPerSm,
    /// gl_SMCountNV.
    SmCount,
    /// gl_HelperThreadNV.
    IsHelper,
}

impl Builtin {
    pub fn ty(self) -> Type {
        match self {
            Builtin::IsHelper => Type::Bool,
            _ => Type::I32,
        }
    }

    pub fn name(self) -> String {
        match self {
            Builtin::GlobalId(d) => format!("global_id.{}", d.name()),
            Builtin::LocalId(d) => format!("local_id.{}", d.name()),
            Builtin::WorkgroupId(d) => format!("workgroup_id.{}", d.name()),
            Builtin::NumWorkgroups(d) => format!("num_workgroups.{}", d.name()),
            Builtin::WorkgroupSize(d) => format!("workgroup_size.{}", d.name()),
            Builtin::LocalIndex => "local_index".into(),
            Builtin::LaneId => "lane_id".into(),
            Builtin::LaneMaskEq => "lane_mask.eq".into(),
            Builtin::LaneMaskGe => "lane_mask.ge".into(),
            Builtin::LaneMaskGt => "lane_mask.gt".into(),
            Builtin::LaneMaskLe => "lane_mask.le".into(),
            Builtin::LaneMaskLt => "lane_mask.lt".into(),
            Builtin::WarpId => "warp_id".into(),
            Builtin::SmId => "sm_id".into(),
            Builtin::WarpSize => "warp_size".into(),
            Builtin::WarpsPerSm => "warps_per_sm".into(),
            Builtin::SmCount => "sm_count".into(),
            Builtin::IsHelper => "is_helper".into(),
        }
    }

    pub fn all() -> Vec<Builtin> {
        let mut v = Vec::new();
        for d in Dim::ALL {
            v.extend([
                Builtin::GlobalId(d),
                Builtin::LocalId(d),
                Builtin::WorkgroupId(d),
                Builtin::NumWorkgroups(d),
                Builtin::WorkgroupSize(d),
            ]);
        }
        v.extend([
            Builtin::LocalIndex,
            Builtin::LaneId,
            Builtin::LaneMaskEq,
            Builtin::LaneMaskGe,
            Builtin::LaneMaskGt,
            Builtin::LaneMaskLe,
            Builtin::LaneMaskLt,
            Builtin::WarpId,
            Builtin::SmId,
            Builtin::WarpSize,
            Builtin::WarpsPerSm,
            Builtin::SmCount,
            Builtin::IsHelper,
        ]);
        v
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum UnaryOp {
    /// Wrapping integer negation, or float negation (flips the sign bit).
    Neg,
    /// Wrapping integer absolute value (abs(INT_MIN) = INT_MIN), or float abs.
    Abs,
    /// Bitwise not (integers) or logical not (bool).
    Not,
    Floor,
    Ceil,
    /// Round half to even (HARDWARE.md 24: GLSL round() is roundEven).
    Round,
    Trunc,
    /// x - floor(x).
    Fract,
    Sqrt,
    /// 1 / sqrt(x), two correctly rounded steps.
    Rsq,
    /// 1 / x, correctly rounded.
    Rcp,
    Exp2,
    Log2,
    Sin,
    Cos,
    /// True for NaN (bool result).
    IsNan,
    /// BFR: bit reverse.
    Bfr,
    /// BTC: population count (i32 result).
    Btc,
    /// BTFL: index of the least significant one bit, -1 if zero (i32 result).
    Btfl,
    /// BTFM.S: most significant bit differing from the sign (i32 result).
    BtfmS,
    /// BTFM.U: index of the most significant one bit, -1 if zero (i32 result).
    BtfmU,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BinaryOp {
    Add,
    Sub,
    Mul,
    /// Float division.
    Div,
    DivS,
    DivU,
    RemS,
    RemU,
    /// Float minimum/maximum (IEEE minimumNumber: NaN loses, -0 < +0).
    Min,
    Max,
    MinS,
    MinU,
    MaxS,
    MaxU,
    /// exp2(y * log2(x)).
    Pow,
    And,
    Or,
    Xor,
    Shl,
    ShrU,
    ShrS,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CmpOp {
    Eq,
    /// Integers and bools: not equal. Floats: unordered or not equal (NaN != x).
    Ne,
    LtS,
    LeS,
    GtS,
    GeS,
    LtU,
    LeU,
    GtU,
    GeU,
    /// Ordered float comparisons (false when either side is NaN).
    Lt,
    Le,
    Gt,
    Ge,
}

/// A number format: CVT's storage modifiers and the element of a memory access.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum NumFormat {
    S8,
    S16,
    S32,
    S64,
    U8,
    U16,
    U32,
    U64,
    F16,
    F32,
    F64,
}

impl NumFormat {
    pub const ALL: [NumFormat; 11] = [
        NumFormat::S8,
        NumFormat::S16,
        NumFormat::S32,
        NumFormat::S64,
        NumFormat::U8,
        NumFormat::U16,
        NumFormat::U32,
        NumFormat::U64,
        NumFormat::F16,
        NumFormat::F32,
        NumFormat::F64,
    ];

    pub fn name(self) -> &'static str {
        match self {
            NumFormat::S8 => "s8",
            NumFormat::S16 => "s16",
            NumFormat::S32 => "s32",
            NumFormat::S64 => "s64",
            NumFormat::U8 => "u8",
            NumFormat::U16 => "u16",
            NumFormat::U32 => "u32",
            NumFormat::U64 => "u64",
            NumFormat::F16 => "f16",
            NumFormat::F32 => "f32",
            NumFormat::F64 => "f64",
        }
    }

    pub fn from_name(s: &str) -> Option<NumFormat> {
        NumFormat::ALL.into_iter().find(|f| f.name() == s)
    }

    pub fn bits(self) -> u32 {
        match self {
            NumFormat::S8 | NumFormat::U8 => 8,
            NumFormat::S16 | NumFormat::U16 | NumFormat::F16 => 16,
            NumFormat::S32 | NumFormat::U32 | NumFormat::F32 => 32,
            NumFormat::S64 | NumFormat::U64 | NumFormat::F64 => 64,
        }
    }

    pub fn bytes(self) -> u32 {
        self.bits() / 8
    }

    pub fn is_float(self) -> bool {
        matches!(self, NumFormat::F16 | NumFormat::F32 | NumFormat::F64)
    }

    pub fn is_signed(self) -> bool {
        matches!(
            self,
            NumFormat::S8 | NumFormat::S16 | NumFormat::S32 | NumFormat::S64
        )
    }

    /// The IR type holding a value of exactly this format (CVT operands and results).
    pub fn ir_type(self) -> Type {
        match self {
            NumFormat::S8 | NumFormat::U8 => Type::I8,
            NumFormat::S16 | NumFormat::U16 => Type::I16,
            NumFormat::S32 | NumFormat::U32 => Type::I32,
            NumFormat::S64 | NumFormat::U64 => Type::I64,
            NumFormat::F16 => Type::F16,
            NumFormat::F32 => Type::F32,
            NumFormat::F64 => Type::F64,
        }
    }

    /// The register type a load of this format produces: narrow integers widen
    /// to i32 (sign- or zero-extended), f16 widens exactly to f32, as in
    /// NV_gpu_program5 where loads fill 32-bit registers.
    pub fn register_type(self) -> Type {
        match self {
            NumFormat::S8 | NumFormat::U8 | NumFormat::S16 | NumFormat::U16 => Type::I32,
            NumFormat::F16 => Type::F32,
            other => other.ir_type(),
        }
    }
}

/// CVT rounding modifier.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum Round {
    /// Nearest, ties to even (the default).
    #[default]
    Nearest,
    Ceil,
    Floor,
    Trunc,
}

impl Round {
    pub fn name(self) -> &'static str {
        match self {
            Round::Nearest => "round",
            Round::Ceil => "ceil",
            Round::Floor => "flr",
            Round::Trunc => "trunc",
        }
    }
}

/// A memory access format: element format and component count (1, 2 or 4).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct MemFormat {
    pub elem: NumFormat,
    pub count: u8,
}

impl MemFormat {
    pub fn bytes(self) -> u32 {
        self.elem.bytes() * self.count as u32
    }
    /// Vector forms exist for 32- and 64-bit elements only (NV_gpu_program5).
    pub fn is_valid(self) -> bool {
        match self.count {
            1 => true,
            2 | 4 => self.elem.bits() >= 32,
            _ => false,
        }
    }
    pub fn name(self) -> String {
        match self.count {
            1 => self.elem.name().to_string(),
            n => format!("{}x{}", self.elem.name(), n),
        }
    }
    pub fn from_name(s: &str) -> Option<MemFormat> {
        let (elem, count) = match s.split_once('x') {
            Some((e, "2")) => (e, 2),
            Some((e, "4")) => (e, 4),
            Some(_) => return None,
            None => (s, 1),
        };
        Some(MemFormat {
            elem: NumFormat::from_name(elem)?,
            count,
        })
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AtomOp {
    Add,
    Min,
    Max,
    Iwrap,
    Dwrap,
    And,
    Or,
    Xor,
    Exch,
    Cswap,
}

impl AtomOp {
    pub const ALL: [AtomOp; 10] = [
        AtomOp::Add,
        AtomOp::Min,
        AtomOp::Max,
        AtomOp::Iwrap,
        AtomOp::Dwrap,
        AtomOp::And,
        AtomOp::Or,
        AtomOp::Xor,
        AtomOp::Exch,
        AtomOp::Cswap,
    ];
    /// The ops whose updates combine in any order into the same memory
    /// (associative and commutative): what may be merged or posted.
    pub const COMBINABLE: [AtomOp; 6] = [
        AtomOp::Add,
        AtomOp::And,
        AtomOp::Or,
        AtomOp::Xor,
        AtomOp::Min,
        AtomOp::Max,
    ];
    pub fn name(self) -> &'static str {
        match self {
            AtomOp::Add => "add",
            AtomOp::Min => "min",
            AtomOp::Max => "max",
            AtomOp::Iwrap => "iwrap",
            AtomOp::Dwrap => "dwrap",
            AtomOp::And => "and",
            AtomOp::Or => "or",
            AtomOp::Xor => "xor",
            AtomOp::Exch => "exch",
            AtomOp::Cswap => "cswap",
        }
    }
    /// The storage modifiers NV_gpu_program5's ATOM table allows for this op.
    pub fn allows(self, f: NumFormat) -> bool {
        use NumFormat::*;
        match self {
            AtomOp::Add | AtomOp::Exch | AtomOp::Cswap => matches!(f, U32 | S32 | U64),
            AtomOp::Min | AtomOp::Max | AtomOp::And | AtomOp::Or | AtomOp::Xor => {
                matches!(f, U32 | S32)
            }
            AtomOp::Iwrap | AtomOp::Dwrap => matches!(f, U32),
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum VoteOp {
    All,
    Any,
    Eq,
}

/// TGALL/TGANY/TGEQ/TGBALLOT.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TgOp {
    All,
    Any,
    Eq,
    Ballot,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ShuffleMode {
    Idx,
    Up,
    Down,
    Xor,
}

impl ShuffleMode {
    pub fn name(self) -> &'static str {
        match self {
            ShuffleMode::Idx => "idx",
            ShuffleMode::Up => "up",
            ShuffleMode::Down => "down",
            ShuffleMode::Xor => "xor",
        }
    }
}

/// How a shuffle's third operand is read.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ShuffleForm {
    /// GLSL `shuffle*NV(data, index, width)`: the segment width.
    Width,
    /// Assembly `SHF*`: clamp in bits 0..4, segment mask in bits 8..12.
    Mask,
}

/// Which quad member a quad swizzle reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum QuadSel {
    Member(u8),
    X,
    Y,
}

impl QuadSel {
    pub fn name(self) -> String {
        match self {
            QuadSel::Member(n) => n.to_string(),
            QuadSel::X => "x".into(),
            QuadSel::Y => "y".into(),
        }
    }
    /// The quad member (0..3) that quad member `member` reads.
    pub fn source(self, member: u32) -> u32 {
        match self {
            QuadSel::Member(n) => n as u32,
            QuadSel::X => member ^ 1,
            QuadSel::Y => member ^ 2,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Axis {
    X,
    Y,
}

/// What a memory instruction addresses: a buffer binding, workgroup shared
/// memory, or a private per-lane array. Indices into the module's (or, for
/// private arrays, the function's) declaration lists.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MemRef {
    Buffer(u32),
    Shared(u32),
    Private(u32),
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Op {
    /// `mov %x`: copy (useful to assign a variable).
    Mov,
    /// `select %cond, %a, %b`.
    Select,
    Unary(UnaryOp),
    Binary(BinaryOp),
    /// Fused multiply-add, one rounding.
    Fma,
    Cmp(CmpOp),
    /// `bfe.s/.u %value, %offset, %bits` (GLSL bitfieldExtract order).
    Bfe {
        signed: bool,
    },
    /// `bfi %base, %insert, %offset, %bits` (GLSL bitfieldInsert order).
    Bfi,
    /// `cvt.DST.SRC[.round|.ceil|.flr|.trunc] %x`.
    Cvt {
        dst: NumFormat,
        src: NumFormat,
        round: Round,
    },
    /// `bitcast.TYPE %x`: same-width reinterpretation.
    Bitcast(Type),
    /// `pk64 %lo, %hi` -> i64.
    Pk64,
    /// `%lo, %hi = up64 %x`.
    Up64,
    Builtin(Builtin),
    /// activeThreadsNV().
    ActiveMask,
    /// ballotThreadNV(bool).
    Ballot,
    /// SASS VOTE: `%r[, %ballot] = vote.OP %pred[, guard %g]`.
    Vote {
        op: VoteOp,
        guarded: bool,
    },
    /// TGALL/TGANY/TGEQ (result of the operand's type) and TGBALLOT (i32).
    Tg(TgOp),
    /// `%v[, %valid] = shuffle.MODE %data, %index, width %w | mask %m`.
    Shuffle {
        mode: ShuffleMode,
        form: ShuffleForm,
    },
    /// `quad.N %v[, %add]`.
    Quad(QuadSel),
    /// `ddx.fine`, `ddx.coarse`, `ddy.fine`, `ddy.coarse`.
    Deriv {
        axis: Axis,
        fine: bool,
    },
    /// Turn the active lanes into helper lanes (NVIDIA's discard).
    Demote,
    /// `load.FMT @mem, %addr`.
    Load {
        mem: MemRef,
        format: MemFormat,
    },
    /// `store.FMT @mem, %addr, %v...`.
    Store {
        mem: MemRef,
        format: MemFormat,
    },
    /// `atom.OP.FMT @mem, %addr, %v[, %new]`.
    Atom {
        mem: MemRef,
        op: AtomOp,
        format: NumFormat,
    },
    /// MEMBAR.
    MemBar,
    /// Workgroup barrier.
    Barrier,
    /// `call @f(args)`: index into the module's functions.
    Call(u32),
}

/// The set of types the type variable `T` of a signature may take.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TypeClass {
    /// Every type.
    Any,
    /// i32, i64, f32, f64.
    Num,
    /// i32, i64.
    Int,
    /// f32, f64.
    Float,
    /// bool, i32, i64.
    IntOrBool,
    /// bool, i32, f32: thread-group votes and shuffles move 32-bit or bool data.
    Warp32,
    /// Exactly one type.
    Exact(Type),
}

impl TypeClass {
    pub fn contains(self, t: Type) -> bool {
        match self {
            TypeClass::Any => true,
            TypeClass::Num => t.is_arith_int() || t.is_arith_float(),
            TypeClass::Int => t.is_arith_int(),
            TypeClass::Float => t.is_arith_float(),
            TypeClass::IntOrBool => t.is_arith_int() || t == Type::Bool,
            TypeClass::Warp32 => matches!(t, Type::Bool | Type::I32 | Type::F32),
            TypeClass::Exact(e) => t == e,
        }
    }
    pub fn describe(self) -> String {
        match self {
            TypeClass::Any => "any type".into(),
            TypeClass::Num => "i32, i64, f32 or f64".into(),
            TypeClass::Int => "i32 or i64".into(),
            TypeClass::Float => "f32 or f64".into(),
            TypeClass::IntOrBool => "bool, i32 or i64".into(),
            TypeClass::Warp32 => "bool, i32 or f32".into(),
            TypeClass::Exact(t) => t.to_string(),
        }
    }
}

/// One operand or result position of a signature.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Slot {
    /// The signature's type variable.
    T,
    Fixed(Type),
    /// A byte address: i32 (read as unsigned) or i64. Literals default to i32.
    Addr,
    /// A value stored with a format: its register type, or for narrow
    /// formats also the exact narrow type (i8, i16, f16).
    Stored(NumFormat),
}

/// The typing rule of an op.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Signature {
    pub operands: Vec<Slot>,
    /// Trailing operands beyond this count are optional.
    pub min_operands: usize,
    pub results: Vec<Slot>,
    /// Trailing results beyond this count may be omitted.
    pub min_results: usize,
    pub t_class: TypeClass,
}

impl Signature {
    fn new(operands: Vec<Slot>, results: Vec<Slot>, t_class: TypeClass) -> Signature {
        Signature {
            min_operands: operands.len(),
            min_results: results.len(),
            operands,
            results,
            t_class,
        }
    }
}

impl Signature {
    /// The type variable `T` as the text format infers it: from the first
    /// operand in a `T` slot whose type is known (`operand_types[i]` is
    /// `None` for a bare literal), else from a variable assigned from a `T`
    /// result (`var_results[i]`), else from an exact type class.
    pub fn infer_t(
        &self,
        operand_types: &[Option<Type>],
        var_results: &[Option<Type>],
    ) -> Option<Type> {
        let in_t_slot = |i: usize, slots: &[Slot]| slots.get(i) == Some(&Slot::T);
        let from_operand = operand_types
            .iter()
            .enumerate()
            .find_map(|(i, t)| t.filter(|_| in_t_slot(i, &self.operands)));
        let from_var = || {
            var_results
                .iter()
                .enumerate()
                .find_map(|(i, t)| t.filter(|_| in_t_slot(i, &self.results)))
        };
        let exact = || match self.t_class {
            TypeClass::Exact(ty) => Some(ty),
            _ => None,
        };
        from_operand.or_else(from_var).or_else(exact)
    }
}

/// A callee's parameter and result types, for typing `call`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FuncSig {
    pub params: Vec<Type>,
    pub results: Vec<Type>,
}

impl Op {
    /// The typing rule. `callee` must be given for `Op::Call`.
    pub fn signature(&self, callee: Option<&FuncSig>) -> Signature {
        use Slot::*;
        use TypeClass as C;
        let i32_ = Fixed(Type::I32);
        let bool_ = Fixed(Type::Bool);
        match self {
            Op::Mov => Signature::new(vec![T], vec![T], C::Any),
            Op::Select => Signature::new(vec![bool_, T, T], vec![T], C::Any),
            Op::Unary(u) => {
                use UnaryOp::*;
                match u {
                    Neg | Abs => Signature::new(vec![T], vec![T], C::Num),
                    Not => Signature::new(vec![T], vec![T], C::IntOrBool),
                    Floor | Ceil | Round | Trunc | Fract | Sqrt | Rsq | Rcp | Exp2 | Log2 | Sin
                    | Cos => Signature::new(vec![T], vec![T], C::Float),
                    IsNan => Signature::new(vec![T], vec![bool_], C::Float),
                    Bfr => Signature::new(vec![T], vec![T], C::Int),
                    Btc | Btfl | BtfmS | BtfmU => Signature::new(vec![T], vec![i32_], C::Int),
                }
            }
            Op::Binary(b) => {
                use BinaryOp::*;
                let class = match b {
                    Add | Sub | Mul => C::Num,
                    Div | Min | Max | Pow => C::Float,
                    DivS | DivU | RemS | RemU | MinS | MinU | MaxS | MaxU | Shl | ShrU | ShrS => {
                        C::Int
                    }
                    And | Or | Xor => C::IntOrBool,
                };
                Signature::new(vec![T, T], vec![T], class)
            }
            Op::Fma => Signature::new(vec![T, T, T], vec![T], C::Float),
            Op::Cmp(c) => {
                use CmpOp::*;
                let class = match c {
                    Eq | Ne => C::Any,
                    LtS | LeS | GtS | GeS | LtU | LeU | GtU | GeU => C::Int,
                    Lt | Le | Gt | Ge => C::Float,
                };
                Signature::new(vec![T, T], vec![bool_], class)
            }
            Op::Bfe { .. } => Signature::new(vec![T, i32_, i32_], vec![T], C::Int),
            Op::Bfi => Signature::new(vec![T, T, i32_, i32_], vec![T], C::Int),
            Op::Cvt { dst, src, .. } => Signature::new(
                vec![Fixed(src.ir_type())],
                vec![Fixed(dst.ir_type())],
                C::Any,
            ),
            Op::Bitcast(to) => Signature::new(vec![T], vec![Fixed(*to)], C::Any),
            Op::Pk64 => Signature::new(vec![i32_, i32_], vec![Fixed(Type::I64)], C::Any),
            Op::Up64 => Signature::new(vec![Fixed(Type::I64)], vec![i32_, i32_], C::Any),
            Op::Builtin(b) => Signature::new(vec![], vec![Fixed(b.ty())], C::Any),
            Op::ActiveMask => Signature::new(vec![], vec![i32_], C::Any),
            Op::Ballot => Signature::new(vec![bool_], vec![i32_], C::Any),
            Op::Vote { guarded, .. } => {
                let operands = if *guarded {
                    vec![bool_, bool_]
                } else {
                    vec![bool_]
                };
                let mut s = Signature::new(operands, vec![bool_, i32_], C::Any);
                s.min_results = 1;
                s
            }
            Op::Tg(TgOp::Ballot) => Signature::new(vec![T], vec![i32_], C::Warp32),
            Op::Tg(_) => Signature::new(vec![T], vec![T], C::Warp32),
            Op::Shuffle { .. } => {
                let mut s = Signature::new(vec![T, i32_, i32_], vec![T, bool_], C::Warp32);
                s.min_results = 1;
                s
            }
            Op::Quad(_) => {
                let mut s = Signature::new(vec![T, T], vec![T], C::Exact(Type::F32));
                s.min_operands = 1;
                s
            }
            Op::Deriv { .. } => Signature::new(vec![T], vec![T], C::Exact(Type::F32)),
            Op::Demote | Op::MemBar | Op::Barrier => Signature::new(vec![], vec![], C::Any),
            Op::Load { format, .. } => Signature::new(
                vec![Addr],
                vec![Fixed(format.elem.register_type()); format.count as usize],
                C::Any,
            ),
            Op::Store { format, .. } => {
                let mut operands = vec![Addr];
                operands.extend(std::iter::repeat_n(
                    Stored(format.elem),
                    format.count as usize,
                ));
                Signature::new(operands, vec![], C::Any)
            }
            Op::Atom { op, format, .. } => {
                let t = Fixed(format.ir_type());
                let operands = if *op == AtomOp::Cswap {
                    vec![Addr, t, t]
                } else {
                    vec![Addr, t]
                };
                Signature::new(operands, vec![t], C::Any)
            }
            Op::Call(_) => {
                let sig = callee.expect("typing a call needs the callee's signature");
                Signature::new(
                    sig.params.iter().map(|t| Fixed(*t)).collect(),
                    sig.results.iter().map(|t| Fixed(*t)).collect(),
                    C::Any,
                )
            }
        }
    }

    /// True for ops whose result depends on other lanes or on the active set
    /// (the JIT must not speculate them; the verifier checks their operands).
    pub fn is_warp_collective(&self) -> bool {
        matches!(
            self,
            Op::ActiveMask
                | Op::Ballot
                | Op::Vote { .. }
                | Op::Tg(_)
                | Op::Shuffle { .. }
                | Op::Quad(_)
                | Op::Deriv { .. }
        )
    }

    /// True for ops with effects beyond their results.
    pub fn has_side_effects(&self) -> bool {
        matches!(
            self,
            Op::Store { .. }
                | Op::Atom { .. }
                | Op::MemBar
                | Op::Barrier
                | Op::Demote
                | Op::Call(_)
        )
    }

    /// The mnemonic, without memory operand or callee (those the printer
    /// writes as `@name` after it).
    pub fn mnemonic(&self) -> String {
        match self {
            Op::Mov => "mov".into(),
            Op::Select => "select".into(),
            Op::Unary(u) => unary_name(*u).into(),
            Op::Binary(b) => binary_name(*b).into(),
            Op::Fma => "fma".into(),
            Op::Cmp(c) => format!("cmp.{}", cmp_name(*c)),
            Op::Bfe { signed } => if *signed { "bfe.s" } else { "bfe.u" }.into(),
            Op::Bfi => "bfi".into(),
            Op::Cvt { dst, src, round } => match round {
                Round::Nearest => format!("cvt.{}.{}", dst.name(), src.name()),
                r => format!("cvt.{}.{}.{}", dst.name(), src.name(), r.name()),
            },
            Op::Bitcast(t) => format!("bitcast.{t}"),
            Op::Pk64 => "pk64".into(),
            Op::Up64 => "up64".into(),
            Op::Builtin(b) => b.name(),
            Op::ActiveMask => "active_mask".into(),
            Op::Ballot => "ballot".into(),
            Op::Vote { op, .. } => format!("vote.{}", vote_name(*op)),
            Op::Tg(t) => match t {
                TgOp::All => "tgall",
                TgOp::Any => "tgany",
                TgOp::Eq => "tgeq",
                TgOp::Ballot => "tgballot",
            }
            .into(),
            Op::Shuffle { mode, .. } => format!("shuffle.{}", mode.name()),
            Op::Quad(q) => format!("quad.{}", q.name()),
            Op::Deriv { axis, fine } => format!(
                "dd{}.{}",
                if *axis == Axis::X { "x" } else { "y" },
                if *fine { "fine" } else { "coarse" }
            ),
            Op::Demote => "demote".into(),
            Op::Load { format, .. } => format!("load.{}", format.name()),
            Op::Store { format, .. } => format!("store.{}", format.name()),
            Op::Atom { op, format, .. } => format!("atom.{}.{}", op.name(), format.name()),
            Op::MemBar => "membar".into(),
            Op::Barrier => "barrier".into(),
            Op::Call(_) => "call".into(),
        }
    }

    /// Parses a mnemonic of an op that takes no memory operand and is not a
    /// call. Shuffles parse with [`ShuffleForm::Width`] and votes unguarded;
    /// the parser adjusts them from the `mask`/`guard` operand labels.
    pub fn from_mnemonic(s: &str) -> Option<Op> {
        if let Some(u) = UNARY.iter().find(|(_, n)| *n == s) {
            return Some(Op::Unary(u.0));
        }
        if let Some(b) = BINARY.iter().find(|(_, n)| *n == s) {
            return Some(Op::Binary(b.0));
        }
        if let Some(rest) = s.strip_prefix("cmp.") {
            return CMP.iter().find(|(_, n)| *n == rest).map(|c| Op::Cmp(c.0));
        }
        if let Some(b) = Builtin::all().into_iter().find(|b| b.name() == s) {
            return Some(Op::Builtin(b));
        }
        let op = match s {
            "mov" => Op::Mov,
            "select" => Op::Select,
            "fma" => Op::Fma,
            "bfe.s" => Op::Bfe { signed: true },
            "bfe.u" => Op::Bfe { signed: false },
            "bfi" => Op::Bfi,
            "pk64" => Op::Pk64,
            "up64" => Op::Up64,
            "active_mask" => Op::ActiveMask,
            "ballot" => Op::Ballot,
            "vote.all" => Op::Vote {
                op: VoteOp::All,
                guarded: false,
            },
            "vote.any" => Op::Vote {
                op: VoteOp::Any,
                guarded: false,
            },
            "vote.eq" => Op::Vote {
                op: VoteOp::Eq,
                guarded: false,
            },
            "tgall" => Op::Tg(TgOp::All),
            "tgany" => Op::Tg(TgOp::Any),
            "tgeq" => Op::Tg(TgOp::Eq),
            "tgballot" => Op::Tg(TgOp::Ballot),
            "ddx.fine" => Op::Deriv {
                axis: Axis::X,
                fine: true,
            },
            "ddx.coarse" => Op::Deriv {
                axis: Axis::X,
                fine: false,
            },
            "ddy.fine" => Op::Deriv {
                axis: Axis::Y,
                fine: true,
            },
            "ddy.coarse" => Op::Deriv {
                axis: Axis::Y,
                fine: false,
            },
            "demote" => Op::Demote,
            "membar" => Op::MemBar,
            "barrier" => Op::Barrier,
            _ => {
                if let Some(rest) = s.strip_prefix("shuffle.") {
                    let mode = [
                        ShuffleMode::Idx,
                        ShuffleMode::Up,
                        ShuffleMode::Down,
                        ShuffleMode::Xor,
                    ]
                    .into_iter()
                    .find(|m| m.name() == rest)?;
                    return Some(Op::Shuffle {
                        mode,
                        form: ShuffleForm::Width,
                    });
                }
                if let Some(rest) = s.strip_prefix("quad.") {
                    let q = match rest {
                        "0" => QuadSel::Member(0),
                        "1" => QuadSel::Member(1),
                        "2" => QuadSel::Member(2),
                        "3" => QuadSel::Member(3),
                        "x" => QuadSel::X,
                        "y" => QuadSel::Y,
                        _ => return None,
                    };
                    return Some(Op::Quad(q));
                }
                if let Some(rest) = s.strip_prefix("bitcast.") {
                    return Type::from_name(rest).map(Op::Bitcast);
                }
                if let Some(rest) = s.strip_prefix("cvt.") {
                    let parts: Vec<&str> = rest.split('.').collect();
                    let (dst, src, round) = match parts.as_slice() {
                        [d, s] => (*d, *s, Round::Nearest),
                        [d, s, r] => (
                            *d,
                            *s,
                            match *r {
                                "round" => Round::Nearest,
                                "ceil" => Round::Ceil,
                                "flr" => Round::Floor,
                                "trunc" => Round::Trunc,
                                _ => return None,
                            },
                        ),
                        _ => return None,
                    };
                    return Some(Op::Cvt {
                        dst: NumFormat::from_name(dst)?,
                        src: NumFormat::from_name(src)?,
                        round,
                    });
                }
                return None;
            }
        };
        Some(op)
    }

    /// For `load.FMT`, `store.FMT` and `atom.OP.FMT` mnemonics: the op with
    /// the given memory reference.
    pub fn from_memory_mnemonic(s: &str, mem: MemRef) -> Option<Op> {
        if let Some(f) = s.strip_prefix("load.") {
            return Some(Op::Load {
                mem,
                format: MemFormat::from_name(f)?,
            });
        }
        if let Some(f) = s.strip_prefix("store.") {
            return Some(Op::Store {
                mem,
                format: MemFormat::from_name(f)?,
            });
        }
        if let Some(rest) = s.strip_prefix("atom.") {
            let (op, f) = rest.split_once('.')?;
            let op = AtomOp::ALL.into_iter().find(|a| a.name() == op)?;
            return Some(Op::Atom {
                mem,
                op,
                format: NumFormat::from_name(f)?,
            });
        }
        None
    }

    pub fn is_memory_mnemonic(s: &str) -> bool {
        s.starts_with("load.") || s.starts_with("store.") || s.starts_with("atom.")
    }
}

impl fmt::Display for Op {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.mnemonic())
    }
}

const UNARY: &[(UnaryOp, &str)] = &[
    (UnaryOp::Neg, "neg"),
    (UnaryOp::Abs, "abs"),
    (UnaryOp::Not, "not"),
    (UnaryOp::Floor, "floor"),
    (UnaryOp::Ceil, "ceil"),
    (UnaryOp::Round, "round"),
    (UnaryOp::Trunc, "trunc"),
    (UnaryOp::Fract, "fract"),
    (UnaryOp::Sqrt, "sqrt"),
    (UnaryOp::Rsq, "rsq"),
    (UnaryOp::Rcp, "rcp"),
    (UnaryOp::Exp2, "exp2"),
    (UnaryOp::Log2, "log2"),
    (UnaryOp::Sin, "sin"),
    (UnaryOp::Cos, "cos"),
    (UnaryOp::IsNan, "isnan"),
    (UnaryOp::Bfr, "bfr"),
    (UnaryOp::Btc, "btc"),
    (UnaryOp::Btfl, "btfl"),
    (UnaryOp::BtfmS, "btfm.s"),
    (UnaryOp::BtfmU, "btfm.u"),
];

const BINARY: &[(BinaryOp, &str)] = &[
    (BinaryOp::Add, "add"),
    (BinaryOp::Sub, "sub"),
    (BinaryOp::Mul, "mul"),
    (BinaryOp::Div, "div"),
    (BinaryOp::DivS, "div.s"),
    (BinaryOp::DivU, "div.u"),
    (BinaryOp::RemS, "rem.s"),
    (BinaryOp::RemU, "rem.u"),
    (BinaryOp::Min, "min"),
    (BinaryOp::Max, "max"),
    (BinaryOp::MinS, "min.s"),
    (BinaryOp::MinU, "min.u"),
    (BinaryOp::MaxS, "max.s"),
    (BinaryOp::MaxU, "max.u"),
    (BinaryOp::Pow, "pow"),
    (BinaryOp::And, "and"),
    (BinaryOp::Or, "or"),
    (BinaryOp::Xor, "xor"),
    (BinaryOp::Shl, "shl"),
    (BinaryOp::ShrU, "shr.u"),
    (BinaryOp::ShrS, "shr.s"),
];

const CMP: &[(CmpOp, &str)] = &[
    (CmpOp::Eq, "eq"),
    (CmpOp::Ne, "ne"),
    (CmpOp::LtS, "lt.s"),
    (CmpOp::LeS, "le.s"),
    (CmpOp::GtS, "gt.s"),
    (CmpOp::GeS, "ge.s"),
    (CmpOp::LtU, "lt.u"),
    (CmpOp::LeU, "le.u"),
    (CmpOp::GtU, "gt.u"),
    (CmpOp::GeU, "ge.u"),
    (CmpOp::Lt, "lt"),
    (CmpOp::Le, "le"),
    (CmpOp::Gt, "gt"),
    (CmpOp::Ge, "ge"),
];

pub fn unary_name(u: UnaryOp) -> &'static str {
    UNARY.iter().find(|(o, _)| *o == u).unwrap().1
}
pub fn binary_name(b: BinaryOp) -> &'static str {
    BINARY.iter().find(|(o, _)| *o == b).unwrap().1
}
pub fn cmp_name(c: CmpOp) -> &'static str {
    CMP.iter().find(|(o, _)| *o == c).unwrap().1
}
pub fn vote_name(v: VoteOp) -> &'static str {
    match v {
        VoteOp::All => "all",
        VoteOp::Any => "any",
        VoteOp::Eq => "eq",
    }
}

pub fn all_unary() -> impl Iterator<Item = UnaryOp> {
    UNARY.iter().map(|(o, _)| *o)
}
pub fn all_binary() -> impl Iterator<Item = BinaryOp> {
    BINARY.iter().map(|(o, _)| *o)
}
pub fn all_cmp() -> impl Iterator<Item = CmpOp> {
    CMP.iter().map(|(o, _)| *o)
}
