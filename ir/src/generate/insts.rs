//! Generation of computational and warp instructions.

use super::func::{value_types, FnGen};
use super::rng::{pick, when, RngLike};
use crate::module::{Operand, Place};
use crate::ops::{
    all_binary, all_cmp, all_unary, Axis, Builtin, NumFormat, Op, QuadSel, Round, ShuffleForm,
    ShuffleMode, Slot, TgOp, TypeClass, VoteOp,
};
use crate::types::{Const, Type};

impl<R: RngLike> FnGen<'_, R> {
    /// One random instruction; sometimes records its first result.
    pub(super) fn instruction(&mut self) {
        let features = self.env.cfg.features;
        let floats = features.floats;
        let weights = [
            12,                                // unary
            16,                                // binary
            8,                                 // cmp
            when(floats, 2),                   // fma
            3,                                 // select
            3,                                 // mov
            4,                                 // bfe, bfi
            14,                                // cvt
            3,                                 // bitcast
            when(features.wide, 2),            // pk64, up64
            5,                                 // built-ins
            when(features.votes, 7),           // active mask, ballot, vote, tg
            when(features.shuffles, 6),        // shuffles
            when(features.quads && floats, 4), // quads, derivatives
        ];
        let produced = match self.rng.weighted(&weights) {
            0 => {
                let ops: Vec<Op> = all_unary().map(Op::Unary).collect();
                self.typed_from(&ops)
            }
            1 => {
                let ops: Vec<Op> = all_binary().map(Op::Binary).collect();
                self.typed_from(&ops)
            }
            2 => {
                let ops: Vec<Op> = all_cmp().map(Op::Cmp).collect();
                self.typed_from(&ops)
            }
            3 => self.typed(Op::Fma),
            4 => self.typed(Op::Select),
            5 => self.typed(Op::Mov),
            6 => self.bitfield(),
            7 => self.convert(),
            8 => self.bitcast(),
            9 => self.pack64(),
            10 => self.builtin(),
            11 => self.vote(),
            12 => self.shuffle(),
            _ => self.quad(),
        };
        if let Some((Place::Value(v), ty)) = produced.first() {
            if self.rng.chance(35) {
                self.record(Operand::Value(*v), *ty);
            }
        }
    }

    /// Every type the program may hold under the features, narrow ones
    /// included (for `mov`, `select`, `cmp.eq`, ...).
    fn all_types(&self) -> Vec<Type> {
        let features = self.env.cfg.features;
        let mut types = value_types(&self.env.cfg);
        if features.narrow {
            types.extend([Type::I8, Type::I16]);
            if features.floats {
                types.push(Type::F16);
            }
        }
        types
    }

    fn class_types(&self, class: TypeClass) -> Vec<Type> {
        self.all_types()
            .into_iter()
            .filter(|t| class.contains(*t))
            .collect()
    }

    /// Emits `op` with freshly chosen result places (after the operands).
    fn emit_op(&mut self, op: Op, result_types: &[Type], args: Vec<Operand>) -> Vec<(Place, Type)> {
        let places = self.results(result_types);
        let results: Vec<(Place, Type)> = places
            .into_iter()
            .zip(result_types.iter().copied())
            .collect();
        self.inst(op, results.iter().map(|(p, _)| *p).collect(), args);
        results
    }

    /// One of `ops` whose type class has a usable type.
    fn typed_from(&mut self, ops: &[Op]) -> Vec<(Place, Type)> {
        let usable: Vec<Op> = ops
            .iter()
            .filter(|op| !self.class_types(op.signature(None).t_class).is_empty())
            .cloned()
            .collect();
        let op = pick(self.rng, &usable).clone();
        self.typed(op)
    }

    /// An op typed only by its signature: T from its class, every operand
    /// and result by slot.
    fn typed(&mut self, op: Op) -> Vec<(Place, Type)> {
        let sig = op.signature(None);
        let ts = self.class_types(sig.t_class);
        let t = *pick(self.rng, &ts);
        let slot_type = |s: &Slot| match s {
            Slot::T => t,
            Slot::Fixed(f) => *f,
            Slot::Addr | Slot::Stored(_) => Type::I32,
        };
        let args = sig
            .operands
            .iter()
            .map(|s| {
                let ty = slot_type(s);
                if ty == Type::Bool && *s != Slot::T {
                    self.condition()
                } else {
                    self.operand(ty)
                }
            })
            .collect();
        let result_types: Vec<Type> = sig.results.iter().map(slot_type).collect();
        self.emit_op(op, &result_types, args)
    }

    /// Offsets and widths around the edges (HARDWARE.md 19: only the low 8
    /// bits count, bits past the top are not extracted).
    fn bitfield_operand(&mut self) -> Operand {
        if self.rng.chance(25) {
            return self.varying_i32();
        }
        let edges = [0, 1, 4, 8, 16, 24, 31, 32, 33, 63, 64, 255, 256, 259, -1];
        Operand::Const(Const::i32(*pick(self.rng, &edges)))
    }

    fn bitfield(&mut self) -> Vec<(Place, Type)> {
        let ts = self.class_types(TypeClass::Int);
        let t = *pick(self.rng, &ts);
        if self.rng.chance(50) {
            let value = self.operand(t);
            let offset = self.bitfield_operand();
            let bits = self.bitfield_operand();
            let op = Op::Bfe {
                signed: self.rng.chance(50),
            };
            self.emit_op(op, &[t], vec![value, offset, bits])
        } else {
            let base = self.operand(t);
            let insert = self.operand(t);
            let offset = self.bitfield_operand();
            let bits = self.bitfield_operand();
            self.emit_op(Op::Bfi, &[t], vec![base, insert, offset, bits])
        }
    }

    /// The number formats whose IR types the features allow.
    pub(super) fn formats(&self) -> Vec<NumFormat> {
        let types = self.all_types();
        NumFormat::ALL
            .into_iter()
            .filter(|f| types.contains(&f.ir_type()))
            .collect()
    }

    fn convert(&mut self) -> Vec<(Place, Type)> {
        let formats = self.formats();
        let dst = *pick(self.rng, &formats);
        let src = *pick(self.rng, &formats);
        let round = *pick(
            self.rng,
            &[Round::Nearest, Round::Ceil, Round::Floor, Round::Trunc],
        );
        let x = self.operand(src.ir_type());
        self.emit_op(Op::Cvt { dst, src, round }, &[dst.ir_type()], vec![x])
    }

    fn bitcast(&mut self) -> Vec<(Place, Type)> {
        let types: Vec<Type> = self
            .all_types()
            .into_iter()
            .filter(|t| *t != Type::Bool)
            .collect();
        let mut pairs = Vec::new();
        for from in &types {
            for to in &types {
                if from.bits() == to.bits() {
                    pairs.push((*from, *to));
                }
            }
        }
        let (from, to) = *pick(self.rng, &pairs);
        let x = self.operand(from);
        self.emit_op(Op::Bitcast(to), &[to], vec![x])
    }

    fn pack64(&mut self) -> Vec<(Place, Type)> {
        if self.rng.chance(50) {
            let lo = self.operand(Type::I32);
            let hi = self.operand(Type::I32);
            self.emit_op(Op::Pk64, &[Type::I64], vec![lo, hi])
        } else {
            let x = self.operand(Type::I64);
            self.emit_op(Op::Up64, &[Type::I32, Type::I32], vec![x])
        }
    }

    fn builtin(&mut self) -> Vec<(Place, Type)> {
        let machine_ids = self.env.cfg.features.machine_ids;
        let all: Vec<Builtin> = Builtin::all()
            .into_iter()
            .filter(|b| {
                machine_ids || !matches!(b, Builtin::SmId | Builtin::WarpsPerSm | Builtin::SmCount)
            })
            .collect();
        let b = *pick(self.rng, &all);
        self.emit_op(Op::Builtin(b), &[b.ty()], vec![])
    }

    fn warp32_type(&mut self) -> Type {
        let ts = self.class_types(TypeClass::Warp32);
        *pick(self.rng, &ts)
    }

    fn vote(&mut self) -> Vec<(Place, Type)> {
        match self.rng.below(4) {
            0 => self.emit_op(Op::ActiveMask, &[Type::I32], vec![]),
            1 => {
                let p = self.condition();
                self.emit_op(Op::Ballot, &[Type::I32], vec![p])
            }
            2 => {
                let op = *pick(self.rng, &[VoteOp::All, VoteOp::Any, VoteOp::Eq]);
                let guarded = self.rng.chance(50);
                let mut args = vec![self.condition()];
                if guarded {
                    args.push(self.condition());
                }
                let results: &[Type] = if self.rng.chance(50) {
                    &[Type::Bool, Type::I32]
                } else {
                    &[Type::Bool]
                };
                self.emit_op(Op::Vote { op, guarded }, results, args)
            }
            _ => {
                let op = *pick(self.rng, &[TgOp::All, TgOp::Any, TgOp::Eq, TgOp::Ballot]);
                let t = self.warp32_type();
                let x = self.operand(t);
                let result = if op == TgOp::Ballot { Type::I32 } else { t };
                self.emit_op(Op::Tg(op), &[result], vec![x])
            }
        }
    }

    fn shuffle(&mut self) -> Vec<(Place, Type)> {
        let mode = *pick(
            self.rng,
            &[
                ShuffleMode::Idx,
                ShuffleMode::Up,
                ShuffleMode::Down,
                ShuffleMode::Xor,
            ],
        );
        let form = *pick(self.rng, &[ShuffleForm::Width, ShuffleForm::Mask]);
        let t = self.warp32_type();
        let data = self.operand(t);
        let index = if self.rng.chance(60) {
            // HARDWARE.md 5: index bits above bit 4 are ignored.
            let edges = [0, 1, 2, 3, 5, 16, 31, 32, 35, 63, 64, -1];
            Operand::Const(Const::i32(*pick(self.rng, &edges)))
        } else {
            let lane = self.varying_i32();
            let k = Operand::Const(Const::i32(self.rng.between(0, 33) as i32));
            let op = *pick(
                self.rng,
                &[
                    crate::ops::BinaryOp::Xor,
                    crate::ops::BinaryOp::Add,
                    crate::ops::BinaryOp::Sub,
                ],
            );
            self.binary(op, Type::I32, lane, k)
        };
        let third = match (form, self.rng.below(3)) {
            (_, 0) => {
                // Lane-varying width or mask.
                let x = self.varying_i32();
                let m = Operand::Const(Const::i32(if form == ShuffleForm::Width {
                    0x27
                } else {
                    0x1f1f
                }));
                self.binary(crate::ops::BinaryOp::And, Type::I32, x, m)
            }
            (ShuffleForm::Width, _) => {
                // HARDWARE.md 6: 0, 64 and 96 act as 32; odd widths follow the model.
                let widths = [0, 1, 2, 3, 4, 5, 8, 16, 31, 32, 64, 96];
                Operand::Const(Const::i32(*pick(self.rng, &widths)))
            }
            (ShuffleForm::Mask, _) => {
                let width = *pick(self.rng, &[1u32, 2, 4, 8, 16, 32]);
                let seg = ((32 - width) & 31) << 8;
                let masks = [seg | 31, seg, 0x1f, 0, 0x1c1f, 0x0c0c, 0xffff_ffff];
                let m = if self.rng.chance(80) {
                    *pick(self.rng, &masks)
                } else {
                    self.rng.next_u64() as u32
                };
                Operand::Const(Const::i32(m as i32))
            }
        };
        let results: &[Type] = if self.rng.chance(50) {
            &[t, Type::Bool]
        } else {
            &[t]
        };
        let results = results.to_vec();
        self.emit_op(
            Op::Shuffle { mode, form },
            &results,
            vec![data, index, third],
        )
    }

    fn quad(&mut self) -> Vec<(Place, Type)> {
        let x = self.operand(Type::F32);
        if self.rng.chance(60) {
            let sel = *pick(
                self.rng,
                &[
                    QuadSel::Member(0),
                    QuadSel::Member(1),
                    QuadSel::Member(2),
                    QuadSel::Member(3),
                    QuadSel::X,
                    QuadSel::Y,
                ],
            );
            let mut args = vec![x];
            if self.rng.chance(50) {
                args.push(self.operand(Type::F32));
            }
            self.emit_op(Op::Quad(sel), &[Type::F32], args)
        } else {
            let axis = *pick(self.rng, &[Axis::X, Axis::Y]);
            let fine = self.rng.chance(50);
            self.emit_op(Op::Deriv { axis, fine }, &[Type::F32], vec![x])
        }
    }
}
