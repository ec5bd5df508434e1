//! Generation of loads, stores and atomics that keep results independent
//! of the warp schedule (see the `generate` module documentation), and of
//! the result records written to `@out`.

use super::func::FnGen;
use super::rng::{pick, when, RngLike};
use super::{
    ATOM_BINDING, IN_BINDING, OUT_BINDING, OUT_SLOT_BYTES, SCRATCH_WARP_BYTES, SHARED_WARP_BYTES,
};
use crate::module::{Block, Inst, Operand, Place, Stmt};
use crate::ops::{
    AtomOp, BinaryOp, Builtin, Dim, MemFormat, MemRef, NumFormat, Op, Round, UnaryOp,
};
use crate::span::Span;
use crate::types::{Const, Type};

/// Records are 8 bytes apart: the kernel's in the first half of the slot,
/// functions' in the second.
const RECORD_BYTES: u32 = 8;
const RECORDS_PER_HALF: u32 = OUT_SLOT_BYTES / 2 / RECORD_BYTES;

fn c32(x: u32) -> Operand {
    Operand::Const(Const::i32(x as i32))
}

impl<R: RngLike> FnGen<'_, R> {
    pub(super) fn memory_available(&self) -> bool {
        let features = self.env.cfg.features;
        features.buffers
            || features.atomics
            || features.shared
            || (features.private && !self.f.privates.is_empty())
    }

    /// Stores `value` (of type `ty`) at the next record place of the slot.
    pub(super) fn record(&mut self, value: Operand, ty: Type) {
        let (elem, value) = match ty {
            Type::Bool => {
                let v = self.value(Op::Select, Type::I32, vec![value, c32(1), c32(0)]);
                (NumFormat::U32, Operand::Value(v))
            }
            Type::I8 => (*pick(self.rng, &[NumFormat::S8, NumFormat::U8]), value),
            Type::I16 => (*pick(self.rng, &[NumFormat::S16, NumFormat::U16]), value),
            Type::I32 => (*pick(self.rng, &[NumFormat::U32, NumFormat::S32]), value),
            Type::I64 => (*pick(self.rng, &[NumFormat::U64, NumFormat::S64]), value),
            Type::F16 => (NumFormat::F16, value),
            Type::F32 => {
                // Sometimes through the narrowing f16 store.
                let narrow = self.env.cfg.features.narrow && self.rng.chance(20);
                (
                    if narrow {
                        NumFormat::F16
                    } else {
                        NumFormat::F32
                    },
                    value,
                )
            }
            Type::F64 => (NumFormat::F64, value),
        };
        let half = if self.is_kernel {
            0
        } else {
            OUT_SLOT_BYTES / 2
        };
        let offset = half + (self.records % RECORDS_PER_HALF) * RECORD_BYTES;
        self.records += 1;
        let addr = self.binary(BinaryOp::Add, Type::I32, self.mem.slot, c32(offset));
        let format = MemFormat { elem, count: 1 };
        self.inst(
            Op::Store {
                mem: MemRef::Buffer(OUT_BINDING),
                format,
            },
            vec![],
            vec![addr, value],
        );
    }

    pub(super) fn memory_access(&mut self) {
        let features = self.env.cfg.features;
        let has_private = features.private && !self.f.privates.is_empty();
        let weights = [
            when(features.buffers, 4),                     // @out own slot
            when(features.buffers, 4),                     // @in
            when(features.buffers || features.atomics, 4), // @atom region
            when(features.shared, 5),                      // @shared
            when(has_private, 4),                          // private
            when(self.env.posted.is_none(), 1),            // membar
            when(self.env.scratch, 3),                     // @scratch
        ];
        match self.rng.weighted(&weights) {
            0 => self.out_slot_access(),
            1 => {
                let format = self.mem_format();
                let size = self.env.layout.in_bytes;
                let addr = self.any_address(size, format);
                self.load(MemRef::Buffer(IN_BINDING), format, addr);
            }
            2 => self.atom_region_access(),
            3 => self.shared_access(),
            4 => self.private_access(),
            5 => self.inst(Op::MemBar, vec![], vec![]),
            _ => self.scratch_access(),
        }
    }

    fn mem_format(&mut self) -> MemFormat {
        let formats = self.formats();
        let elem = *pick(self.rng, &formats);
        let count = match self.rng.below(10) {
            0..=6 => 1,
            7 | 8 => 2,
            _ => 4,
        };
        let format = MemFormat { elem, count };
        if format.is_valid() {
            format
        } else {
            MemFormat { elem, count: 1 }
        }
    }

    fn load(&mut self, mem: MemRef, format: MemFormat, addr: Operand) {
        let ty = format.elem.register_type();
        let results = self.results(&vec![ty; format.count as usize]);
        self.inst(Op::Load { mem, format }, results, vec![addr]);
    }

    fn store(&mut self, mem: MemRef, format: MemFormat, addr: Operand) {
        let mut args = vec![addr];
        for _ in 0..format.count {
            let register = format.elem.register_type();
            let exact = format.elem.ir_type();
            let ty = if exact != register && self.rng.chance(40) {
                exact
            } else {
                register
            };
            args.push(self.operand(ty));
        }
        self.inst(Op::Store { mem, format }, vec![], args);
    }

    fn atomic(&mut self, mem: MemRef, addr: Operand) {
        let mut formats: Vec<NumFormat> = vec![NumFormat::U32, NumFormat::S32];
        if self.env.cfg.features.wide {
            formats.push(NumFormat::U64);
        }
        let format = *pick(self.rng, &formats);
        let ops: Vec<AtomOp> = AtomOp::ALL
            .into_iter()
            .filter(|o| o.allows(format))
            .collect();
        let op = *pick(self.rng, &ops);
        let t = format.ir_type();
        let mut args = vec![addr, self.small_or_any(t)];
        if op == AtomOp::Cswap {
            args.push(self.operand(t));
        }
        let result = self.result(t);
        self.inst(Op::Atom { mem, op, format }, vec![result], args);
    }

    /// An update of `@atom` whose result nothing reads (it goes to a value
    /// outside every scope), at any address: updates of one associative op
    /// land in the same memory in any order, so warps and workgroups may
    /// share addresses, and one address for the whole warp is common.
    fn posted_update(&mut self, op: AtomOp, format: NumFormat) {
        let size = self.env.layout.atom_bytes;
        let slots = (size / 8).max(1);
        // `past_end` and `inside_varying` widen addresses themselves.
        let addr = match self.rng.below(4) {
            0 => {
                let at = c32(8 * self.rng.below(u64::from(slots.min(4))) as u32);
                self.maybe_wide(at)
            }
            1 if self.env.cfg.features.out_of_bounds => self.past_end(size),
            2 => self.inside_varying(self.mem.wreg, super::ATOM_REGION_BYTES - 1),
            _ => {
                let x = self.varying_i32();
                let slot = self.binary(BinaryOp::RemU, Type::I32, x, c32(slots));
                let at = self.binary(BinaryOp::Mul, Type::I32, slot, c32(8));
                self.maybe_wide(at)
            }
        };
        let t = format.ir_type();
        let value = self.small_or_any(t);
        let unread = Place::Value(self.new_value(t));
        self.emit(Stmt::Inst(Inst {
            op: Op::Atom {
                mem: MemRef::Buffer(ATOM_BINDING),
                op,
                format,
            },
            args: vec![addr, value],
            results: vec![unread],
            span: Span::NONE,
        }));
    }

    /// Atomic operands: small values hit the wrap and compare cases of
    /// memory that starts with small counters.
    fn small_or_any(&mut self, t: Type) -> Operand {
        if self.rng.chance(50) {
            return self.operand(t);
        }
        let k = self.rng.below(24);
        Operand::Const(Const::new(t, k))
    }

    /// Sometimes the same address as an i64 (zero-extended).
    fn maybe_wide(&mut self, addr: Operand) -> Operand {
        if !self.env.cfg.features.wide || !self.rng.chance(25) {
            return addr;
        }
        let cvt = Op::Cvt {
            dst: NumFormat::U64,
            src: NumFormat::U32,
            round: Round::Nearest,
        };
        Operand::Value(self.value(cvt, Type::I64, vec![addr]))
    }

    /// `base + offset`, the offset a multiple of the access size below `span`.
    fn inside(&mut self, base: Operand, span: u32, format: MemFormat) -> Operand {
        let bytes = format.bytes().max(1);
        let slots = (span / bytes).max(1);
        let offset = self.rng.below(u64::from(slots)) as u32 * bytes;
        let addr = self.binary(BinaryOp::Add, Type::I32, base, c32(offset));
        self.maybe_wide(addr)
    }

    /// `base + (x & mask)`: lane-varying, inside a region of `mask + 1`
    /// bytes (a power of two) that starts at an aligned `base`.
    fn inside_varying(&mut self, base: Operand, mask: u32) -> Operand {
        let x = self.varying_i32();
        let low = self.binary(BinaryOp::And, Type::I32, x, c32(mask));
        let addr = self.binary(BinaryOp::Add, Type::I32, base, low);
        self.maybe_wide(addr)
    }

    /// An address at or past `size` (a multiple of every access size, so
    /// rounding down keeps it outside).
    fn past_end(&mut self, size: u32) -> Operand {
        match self.rng.below(4) {
            0 => c32(size + self.rng.below(64) as u32),
            1 => c32(0xffff_fff0),
            2 => {
                let x = self.varying_i32();
                let low = self.binary(BinaryOp::And, Type::I32, x, c32(0xff));
                self.binary(BinaryOp::Add, Type::I32, low, c32(size))
            }
            _ if self.env.cfg.features.wide => {
                // >= 2^32: out of every memory.
                let lo = self.varying_i32();
                Operand::Value(self.value(Op::Pk64, Type::I64, vec![lo, c32(1)]))
            }
            _ => c32(size.saturating_add(256)),
        }
    }

    /// Any address in, straddling or past a memory of `size` bytes (for
    /// reads, and for memories only this lane touches).
    fn any_address(&mut self, size: u32, format: MemFormat) -> Operand {
        let oob = self.env.cfg.features.out_of_bounds;
        // Rows 8 or 16 wide are where runs per group of lanes occur.
        let narrow_rows = matches!(self.env.layout.workgroup[0], 8 | 16);
        if self.rng.chance(if narrow_rows { 30 } else { 8 }) {
            if let Some(addr) = self.row_address(size, format, oob) {
                return addr;
            }
        }
        match self.rng.below(5) {
            0 if oob => self.past_end(size),
            1 if oob => {
                // Straddling the end: the whole access is out of bounds.
                let back = *pick(self.rng, &[1u32, 2, 4, 8]);
                c32(size.saturating_sub(back))
            }
            2 if oob => {
                let x = self.varying_i32();
                let mask = size.max(1).next_power_of_two() * 2 - 1;
                let addr = self.binary(BinaryOp::And, Type::I32, x, c32(mask));
                self.maybe_wide(addr)
            }
            3 if oob => {
                // Consecutive accesses from a lane-linear index (one block
                // per warp), starting anywhere up to past the end.
                let b = *pick(self.rng, &[Builtin::LaneId, Builtin::LocalIndex]);
                let index = Operand::Value(self.value(Op::Builtin(b), Type::I32, vec![]));
                let index = self.maybe_hidden(index);
                let bytes = format.bytes().max(1);
                let scaled = self.binary(BinaryOp::Mul, Type::I32, index, c32(bytes));
                let start = self.rng.below(u64::from(size) + 64) as u32;
                let addr = self.binary(BinaryOp::Add, Type::I32, scaled, c32(start));
                self.maybe_wide(addr)
            }
            _ => {
                // In bounds: a lane-varying multiple of the access size.
                let bytes = format.bytes().max(1);
                let slots = (size / bytes).max(1);
                let x = self.varying_i32();
                let index = self.binary(BinaryOp::RemU, Type::I32, x, c32(slots));
                let addr = self.binary(BinaryOp::Mul, Type::I32, index, c32(bytes));
                self.maybe_wide(addr)
            }
        }
    }

    /// `(local_id.x + local_id.y * row) * bytes + start`: a 2D
    /// workgroup's rows, `row` elements apart; in workgroups 8 or 16 wide
    /// each group of 8 lanes reads a run (the JIT's run-time test for runs
    /// per group). Only where every address is inside `size` bytes unless
    /// `oob`.
    fn row_address(&mut self, size: u32, format: MemFormat, oob: bool) -> Option<Operand> {
        let bytes = format.bytes().max(1);
        let row = *pick(self.rng, &[0u32, 4, 8, 16, 24]);
        let [wx, wy, _] = self.env.layout.workgroup;
        let last = (wx - 1 + (wy - 1) * row) * bytes;
        let room = size.checked_sub(last + bytes);
        let start = match room {
            Some(room) => self.rng.below(u64::from(room / bytes) + 1) as u32 * bytes,
            None if oob => self.rng.below(u64::from(size) + 64) as u32,
            None => return None,
        };
        let x =
            Operand::Value(self.value(Op::Builtin(Builtin::LocalId(Dim::X)), Type::I32, vec![]));
        let y =
            Operand::Value(self.value(Op::Builtin(Builtin::LocalId(Dim::Y)), Type::I32, vec![]));
        let y = self.maybe_hidden(y);
        let rows = self.binary(BinaryOp::Mul, Type::I32, y, c32(row));
        let index = self.binary(BinaryOp::Add, Type::I32, x, rows);
        let scaled = self.binary(BinaryOp::Mul, Type::I32, index, c32(bytes));
        let addr = self.binary(BinaryOp::Add, Type::I32, scaled, c32(start));
        Some(self.maybe_wide(addr))
    }

    fn out_slot_access(&mut self) {
        let format = self.mem_format();
        let oob = self.env.cfg.features.out_of_bounds && self.rng.chance(25);
        let addr = if oob {
            self.past_end(self.env.layout.out_bytes)
        } else {
            self.inside(self.mem.slot, OUT_SLOT_BYTES, format)
        };
        let mem = MemRef::Buffer(OUT_BINDING);
        if self.rng.chance(50) {
            self.store(mem, format, addr);
        } else {
            self.load(mem, format, addr);
        }
    }

    fn atom_region_access(&mut self) {
        let features = self.env.cfg.features;
        if let Some((op, format)) = self.env.posted {
            return self.posted_update(op, format);
        }
        if features.votes && self.rng.chance(15) {
            return self.packed_store();
        }
        if features.buffers && self.rng.chance(20) {
            let region = super::ATOM_REGION_BYTES;
            return self.shaped_store(MemRef::Buffer(ATOM_BINDING), self.mem.wreg, region);
        }
        let size = self.env.layout.atom_bytes;
        let mem = MemRef::Buffer(ATOM_BINDING);
        let oob = features.out_of_bounds && self.rng.chance(20);
        let region = super::ATOM_REGION_BYTES;
        if features.atomics && (!features.buffers || self.rng.chance(70)) {
            let addr = if oob {
                self.past_end(size)
            } else if self.rng.chance(50) {
                self.inside_varying(self.mem.wreg, region - 1)
            } else {
                let format = MemFormat {
                    elem: NumFormat::U64,
                    count: 1,
                };
                self.inside(self.mem.wreg, region, format)
            };
            self.atomic(mem, addr);
        } else {
            let format = self.mem_format();
            let addr = if oob {
                self.past_end(size)
            } else {
                self.inside_varying(self.mem.wreg, region - 1)
            };
            self.load(mem, format, addr);
        }
    }

    /// Stream compaction's store into the warp's `@atom` region: the lanes
    /// that pass a test, one after another,
    /// `if t { store base + btc(ballot(t) & lane_mask.lt) * 4 }`; sometimes
    /// on another test or in another format (then not packed), from a
    /// misaligned base or past the end.
    fn packed_store(&mut self) {
        let test = self.condition();
        let ballot = Operand::Value(self.value(Op::Ballot, Type::I32, vec![test]));
        let lower = Operand::Value(self.value(Op::Builtin(Builtin::LaneMaskLt), Type::I32, vec![]));
        let below = if self.rng.chance(50) {
            self.binary(BinaryOp::And, Type::I32, ballot, lower)
        } else {
            self.binary(BinaryOp::And, Type::I32, lower, ballot)
        };
        let rank = Operand::Value(self.value(Op::Unary(UnaryOp::Btc), Type::I32, vec![below]));
        let bytes = if self.rng.chance(50) {
            self.binary(BinaryOp::Shl, Type::I32, rank, c32(2))
        } else {
            self.binary(BinaryOp::Mul, Type::I32, rank, c32(4))
        };
        let offset = match self.rng.below(10) {
            0 if self.env.cfg.features.out_of_bounds => self.env.layout.atom_bytes,
            1 => 4 * self.rng.between(0, 32) as u32 + 2,
            _ => 4 * self.rng.between(0, 32) as u32,
        };
        let base = self.binary(BinaryOp::Add, Type::I32, self.mem.wreg, c32(offset));
        let addr = self.binary(BinaryOp::Add, Type::I32, base, bytes);
        let stored = if self.rng.chance(15) {
            self.condition()
        } else {
            test
        };
        let format = if self.rng.chance(80) {
            MemFormat {
                elem: *pick(self.rng, &[NumFormat::U32, NumFormat::S32, NumFormat::F32]),
                count: 1,
            }
        } else {
            self.mem_format()
        };
        self.open();
        self.store(MemRef::Buffer(ATOM_BINDING), format, addr);
        let then_body = self.close();
        self.emit_if(stored, then_body, Block::default());
    }

    /// A store whose lanes' addresses have a shape the JIT can know: one
    /// run of consecutive elements, one address for the whole warp (the
    /// highest active lane's value stays), or a run of 2 to 16 elements
    /// repeated across the warp, all inside the warp's own `region` bytes
    /// from `base` (so no other warp touches them), from an aligned or
    /// misaligned start.
    fn shaped_store(&mut self, mem: MemRef, base: Operand, region: u32) {
        let format = self.mem_format();
        let bytes = format.bytes().max(1);
        let lane = self.lane_id();
        let lane = self.maybe_hidden(lane);
        let (index, lanes) = match self.rng.below(4) {
            0 => (Some(lane), 32),
            1 => (None, 1),
            2 => {
                // A run per group of 8 lanes, the groups `apart` elements
                // apart: on top of each other (the higher lanes' values
                // stay), overlapping, or with gaps.
                let apart = *pick(self.rng, &[0u32, 4, 12, 16]);
                let within = self.binary(BinaryOp::And, Type::I32, lane, c32(7));
                let group = self.binary(BinaryOp::ShrU, Type::I32, lane, c32(3));
                // `+ (local_id.y & 0)`: the JIT tests for runs per group
                // only in modules that read a y or z id.
                let y = Builtin::LocalId(Dim::Y);
                let y = Operand::Value(self.value(Op::Builtin(y), Type::I32, vec![]));
                let none = self.binary(BinaryOp::And, Type::I32, y, c32(0));
                let group = self.binary(BinaryOp::Add, Type::I32, group, none);
                let rows = self.binary(BinaryOp::Mul, Type::I32, group, c32(apart));
                let index = self.binary(BinaryOp::Add, Type::I32, within, rows);
                (Some(index), 3 * apart + 8)
            }
            _ => {
                let width = *pick(self.rng, &[2u32, 4, 8, 16]);
                let tile = self.binary(BinaryOp::And, Type::I32, lane, c32(width - 1));
                (Some(tile), width)
            }
        };
        let span = lanes * bytes;
        if span > region {
            // Too large for the region at this format: one address instead.
            let addr = self.inside(base, region, format);
            return self.store(mem, format, addr);
        }
        let room = region - span;
        let start = if room >= 2 && self.rng.chance(15) {
            2 // misaligned: rounded down, still inside the region
        } else {
            let aligned = room / bytes;
            self.rng.below(u64::from(aligned) + 1) as u32 * bytes
        };
        let start = self.binary(BinaryOp::Add, Type::I32, base, c32(start));
        let addr = match index {
            Some(index) => {
                let offset = if bytes.is_power_of_two() && self.rng.chance(50) {
                    self.binary(BinaryOp::Shl, Type::I32, index, c32(bytes.trailing_zeros()))
                } else {
                    self.binary(BinaryOp::Mul, Type::I32, index, c32(bytes))
                };
                self.binary(BinaryOp::Add, Type::I32, start, offset)
            }
            None => start,
        };
        let addr = self.maybe_wide(addr);
        self.store(mem, format, addr);
    }

    /// Sometimes `(x ^ v) ^ v` for a varying `v`: `x` again, but of a shape
    /// the JIT cannot know when compiling, so the address tests it makes at
    /// run time (one address? one consecutive run?) find what it could not.
    fn maybe_hidden(&mut self, x: Operand) -> Operand {
        if !self.rng.chance(30) {
            return x;
        }
        let v = self.varying_i32();
        let mixed = self.binary(BinaryOp::Xor, Type::I32, x, v);
        self.binary(BinaryOp::Xor, Type::I32, mixed, v)
    }

    /// This lane's 32 bytes of the current phase region.
    fn shared_lane_base(&mut self) -> Operand {
        let lane_shared = match self.lane_shared {
            Some(v) => Operand::Value(v),
            None => {
                let lane = self.lane_id();
                self.binary(BinaryOp::Shl, Type::I32, lane, c32(5))
            }
        };
        self.binary(BinaryOp::Add, Type::I32, self.mem.sreg, lane_shared)
    }

    fn shared_access(&mut self) {
        let features = self.env.cfg.features;
        let mem = MemRef::Shared(0);
        let size = 2 * self.env.layout.shared_phase_bytes;
        let oob = features.out_of_bounds && self.rng.chance(15);
        let weights = [
            4,                                      // store to this lane's bytes
            2,                                      // a store of a known shape
            3,                                      // load from this warp's region
            when(features.atomics, 3),              // atomic in this warp's region
            when(self.mem.prev_phase.is_some(), 3), // load from the previous phase
        ];
        match self.rng.weighted(&weights) {
            0 => {
                let format = self.mem_format();
                let addr = if oob {
                    self.past_end(size)
                } else {
                    let base = self.shared_lane_base();
                    self.inside(base, 32, format)
                };
                self.store(mem, format, addr);
            }
            1 => self.shaped_store(mem, self.mem.sreg, SHARED_WARP_BYTES),
            2 => {
                let format = self.mem_format();
                let addr = if oob {
                    self.past_end(size)
                } else {
                    self.inside_varying(self.mem.sreg, SHARED_WARP_BYTES - 1)
                };
                self.load(mem, format, addr);
            }
            3 => {
                let addr = if oob {
                    self.past_end(size)
                } else {
                    self.inside_varying(self.mem.sreg, SHARED_WARP_BYTES - 1)
                };
                self.atomic(mem, addr);
            }
            _ => {
                let phase_bytes = self.env.layout.shared_phase_bytes;
                let prev = self.mem.prev_phase.unwrap_or(0);
                let base = (prev % 2) * phase_bytes;
                let x = self.varying_i32();
                let offset = self.binary(BinaryOp::RemU, Type::I32, x, c32(phase_bytes));
                let addr = self.binary(BinaryOp::Add, Type::I32, offset, c32(base));
                let format = self.mem_format();
                let addr = self.maybe_wide(addr);
                self.load(mem, format, addr);
            }
        }
    }

    /// `@scratch`: this warp's bytes, found from `local_index` in any
    /// function, or past the end.
    fn scratch_access(&mut self) {
        let mem = MemRef::Shared(1);
        let size = self.env.layout.warps_per_wg * SCRATCH_WARP_BYTES;
        let local = Operand::Value(self.value(Op::Builtin(Builtin::LocalIndex), Type::I32, vec![]));
        let warp = self.binary(BinaryOp::ShrU, Type::I32, local, c32(5));
        let base = self.binary(BinaryOp::Mul, Type::I32, warp, c32(SCRATCH_WARP_BYTES));
        let oob = self.env.cfg.features.out_of_bounds && self.rng.chance(10);
        let weights = [
            3,                                      // a store at one or varying addresses
            2,                                      // a store of a known shape
            3,                                      // a load
            when(self.env.cfg.features.atomics, 2), // an atomic
        ];
        let kind = self.rng.weighted(&weights);
        if kind == 1 && !oob {
            return self.shaped_store(mem, base, SCRATCH_WARP_BYTES);
        }
        let format = self.mem_format();
        let addr = if oob {
            self.past_end(size)
        } else if self.rng.chance(30) {
            self.inside(base, SCRATCH_WARP_BYTES, format)
        } else {
            self.inside_varying(base, SCRATCH_WARP_BYTES - 1)
        };
        match kind {
            0 | 1 => self.store(mem, format, addr),
            2 => self.load(mem, format, addr),
            _ => self.atomic(mem, addr),
        }
    }

    fn private_access(&mut self) {
        let index = self.rng.below(self.f.privates.len() as u64) as u32;
        let size = self.f.privates[index as usize].size;
        let format = self.mem_format();
        let addr = self.any_address(size, format);
        let mem = MemRef::Private(index);
        if self.rng.chance(50) {
            self.store(mem, format, addr);
        } else {
            self.load(mem, format, addr);
        }
    }
}
