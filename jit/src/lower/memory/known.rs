//! Loads and stores whose address shape the lane-shape analysis
//! (`lower/shape.rs`) knows, so the run-time shape tests of
//! [`super::address_shape`] are not needed:
//!
//! - one address for all active lanes: a load is checked and done once in
//!   scalar code and broadcast; a store writes the highest active lane's
//!   value once (what ascending lane order leaves in memory);
//! - lane `l` at `base + l * access size`: one run of consecutive accesses,
//!   a masked vector load or store (for x2/x4 formats, of the whole block,
//!   split into or built from components with shuffles) after checking
//!   only that the run from the first to the last active lane does not wrap
//!   and ends inside the memory; otherwise the per-lane path, which counts
//!   and reports faults as always;
//! - lane `l` at `base + (l % width) * access size` (`lane_id & 7` and the
//!   like): one vector load of the `width` elements, repeated across the
//!   lanes, when all of them are inside the memory; otherwise the per-lane
//!   path.
//!
//! Faults are the same as on the per-lane path: with one address all active
//! lanes are out of bounds or none, and a run that is inside the memory has
//! no out-of-bounds lane.

use super::{
    aligned_inside, any_lane, broadcast_components, either, elem_align, elem_vec, inside_memory,
    join_components, lanes, lanes_load, lanes_store, load_consecutive, record_faults, run_start,
    span, store_consecutive, V,
};
use crate::abi::{self, offsets};
use crate::emit::LANES;
use crate::lower::ops::workgroup_size;
use crate::lower::shape::IdLayout;
use crate::lower::{FnLowering, RemarkKind};
use crate::JitError;
use inkwell::types::VectorType;
use inkwell::values::IntValue;
use inkwell::IntPredicate;
use warpjit_ir::{Dim, MemFormat, MemRef, Type};

/// What the lane-shape analysis says about an access's address.
///
/// `every_lane`: the shape holds in lane 0 too, active or not, so lane 0
/// (a constant index) stands for the first active lane.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KnownAddress {
    /// All active lanes give one address.
    Same { every_lane: bool },
    /// Lane `l` gives `base + l * access size`.
    Consecutive { every_lane: bool },
    /// Lane `l` gives `base + (l % width) * access size`.
    Tiled { width: u32, every_lane: bool },
    /// A store whose `r`-th active lane gives `base + r * access size`
    /// (stream compaction, `shape::ranks`). Lane 0, whose rank is 0, gives
    /// `base` itself when the shape holds in every lane.
    Packed { every_lane: bool },
    /// Nothing: the shape is tested at run time.
    Unknown,
}

/// The address shape of one access for any workgroup, and for workgroups in
/// which each warp lies in one row (`IdLayout::WarpInOneRow`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AddressFacts {
    pub always: KnownAddress,
    pub in_one_row: KnownAddress,
}

impl AddressFacts {
    /// The shape to use, and whether it needs the launch's warps to lie in
    /// rows (a run-time test) because only that layout makes it known.
    /// Code for one workgroup size knows the layout (`in_rows`).
    fn plan(self, in_rows: Option<bool>) -> (KnownAddress, bool) {
        match in_rows {
            Some(true) => (self.in_one_row, false),
            Some(false) => (self.always, false),
            None if self.always == KnownAddress::Unknown
                && self.in_one_row != KnownAddress::Unknown =>
            {
                (self.in_one_row, true)
            }
            None => (self.always, false),
        }
    }
}

/// Whether each warp lies in one row of its workgroup, when the code is
/// compiled for one workgroup size (see [`warp_in_one_row`]).
fn rows_known(fl: &FnLowering<'_, '_>) -> Option<bool> {
    let workgroup = fl.e.workgroup?;
    Some(IdLayout::known(Some(workgroup)) == IdLayout::WarpInOneRow)
}

/// Whether each warp of the launch lies in one row of its workgroup: the x
/// size is a multiple of 32 or the workgroup is one-dimensional. Scalar
/// loads LLVM can hoist, and one test.
fn warp_in_one_row<'ctx>(fl: &FnLowering<'ctx, '_>) -> Result<IntValue<'ctx>, JitError> {
    let e = fl.e;
    let b = &e.b;
    let size = |d: u64| -> Result<IntValue<'ctx>, JitError> {
        Ok(
            e.load_invariant(fl.group, offsets::WORKGROUP_SIZE + 4 * d, e.i32().into(), 4)?
                .into_int_value(),
        )
    };
    let (sx, sy, sz) = (size(0)?, size(1)?, size(2)?);
    let rest = b.build_and(sx, e.i32().const_int(31, false), "")?;
    let whole = b.build_int_compare(IntPredicate::EQ, rest, e.i32().const_zero(), "")?;
    let one = e.i32().const_int(1, false);
    let flat_y = b.build_int_compare(IntPredicate::EQ, sy, one, "")?;
    let flat_z = b.build_int_compare(IntPredicate::EQ, sz, one, "")?;
    let flat = b.build_and(flat_y, flat_z, "")?;
    Ok(b.build_or(whole, flat, "")?)
}

type Components<'ctx> = Result<Vec<V<'ctx>>, JitError>;

/// Marks the conditional branch `br` as taking its first target almost
/// always: the known shape's path is the hot one, so the register
/// allocator keeps the other path's call (which clobbers every vector
/// register) and its spills off it.
fn likely<'ctx>(
    fl: &FnLowering<'ctx, '_>,
    br: inkwell::values::InstructionValue<'ctx>,
) -> Result<(), JitError> {
    let cx = fl.e.cx;
    let weight = |w: u64| cx.i32_type().const_int(w, false).into();
    let weights = cx.metadata_node(&[
        cx.metadata_string("branch_weights").into(),
        weight(2000),
        weight(1),
    ]);
    br.set_metadata(weights, cx.get_kind_id("prof"))
        .map_err(|e| JitError::Llvm(e.to_string()))
}

/// `then()` where `cond` holds, else `otherwise()`: the components joined.
fn choose<'ctx>(
    fl: &FnLowering<'ctx, '_>,
    cond: IntValue<'ctx>,
    vt: VectorType<'ctx>,
    then: &dyn Fn() -> Components<'ctx>,
    otherwise: &dyn Fn() -> Components<'ctx>,
) -> Components<'ctx> {
    let e = fl.e;
    let b = &e.b;
    let then_bb = e.cx.append_basic_block(fl.func, "load.known");
    let else_bb = e.cx.append_basic_block(fl.func, "load.other");
    let join = e.cx.append_basic_block(fl.func, "load.joined");
    likely(fl, b.build_conditional_branch(cond, then_bb, else_bb)?)?;
    b.position_at_end(then_bb);
    let a = then()?;
    let a_end = e.current_block()?;
    b.build_unconditional_branch(join)?;
    b.position_at_end(else_bb);
    let c = otherwise()?;
    let c_end = e.current_block()?;
    b.build_unconditional_branch(join)?;
    b.position_at_end(join);
    join_components(e, vt, a.len(), &[(&a, a_end), (&c, c_end)])
}

/// `then()` where `cond` holds, else `otherwise()`, for stores.
fn choose_store<'ctx>(
    fl: &FnLowering<'ctx, '_>,
    cond: IntValue<'ctx>,
    then: &dyn Fn() -> Result<(), JitError>,
    otherwise: &dyn Fn() -> Result<(), JitError>,
) -> Result<(), JitError> {
    let e = fl.e;
    let b = &e.b;
    let then_bb = e.cx.append_basic_block(fl.func, "store.known");
    let else_bb = e.cx.append_basic_block(fl.func, "store.other");
    let done = e.cx.append_basic_block(fl.func, "store.joined");
    likely(fl, b.build_conditional_branch(cond, then_bb, else_bb)?)?;
    b.position_at_end(then_bb);
    then()?;
    b.build_unconditional_branch(done)?;
    b.position_at_end(else_bb);
    otherwise()?;
    b.build_unconditional_branch(done)?;
    b.position_at_end(done);
    Ok(())
}

/// A load's raw components by what is known of its address; `dynamic` is
/// the run-time-tested load for an unknown shape. A shape known only for
/// launches whose warps lie in rows is used behind that test, with the
/// per-lane path for other launches, as for runs that are not inside the
/// memory: there a warp spans rows, so addresses that follow the x or y
/// ID are neither one address nor one run and run-time shape tests would
/// almost never pass (inline, they cost a single access of its kind about
/// 1.5 ms of compile time).
#[allow(clippy::too_many_arguments)]
pub fn load<'ctx>(
    fl: &FnLowering<'ctx, '_>,
    mem: MemRef,
    format: MemFormat,
    addr: V<'ctx>,
    addr_ty: Type,
    m: V<'ctx>,
    facts: AddressFacts,
    dynamic: &dyn Fn() -> Components<'ctx>,
) -> Components<'ctx> {
    let (known, needs_rows) = facts.plan(rows_known(fl));
    let remark = |path| access_remark(fl, mem, format, path, needs_rows, false);
    let rows = if needs_rows {
        Some(warp_in_one_row(fl)?)
    } else {
        None
    };
    let vt = elem_vec(fl, format.elem);
    match known {
        KnownAddress::Unknown | KnownAddress::Packed { .. } => {
            remark(tested(fl, mem, format, addr_ty));
            dynamic()
        }
        KnownAddress::Same { every_lane } => {
            remark(AccessPath::OneAddress);
            let lanes = Lanes::new(addr, addr_ty, every_lane);
            let same = || same_address_load(fl, mem, format, lanes, m);
            let per_lane = || lanes_load(fl, mem, format, addr, addr_ty, m);
            match rows {
                None => same(),
                Some(rows) => choose(fl, rows, vt, &same, &per_lane),
            }
        }
        KnownAddress::Consecutive { every_lane } => {
            remark(AccessPath::Run);
            let lanes = Lanes::new(addr, addr_ty, every_lane);
            let run = consecutive_run(fl, mem, format.bytes(), lanes, m)?;
            let per_lane = || lanes_load(fl, mem, format, addr, addr_ty, m);
            let take = match rows {
                None => run.inside,
                Some(rows) => fl.e.b.build_and(rows, run.inside, "")?,
            };
            let fast = || run_load(fl, mem, format, &run, m);
            choose(fl, take, vt, &fast, &per_lane)
        }
        // One element per lane: a tile of x2/x4 blocks is rare.
        KnownAddress::Tiled { .. } if format.count != 1 => {
            remark(tested(fl, mem, format, addr_ty));
            dynamic()
        }
        KnownAddress::Tiled { width, every_lane } => {
            remark(AccessPath::Tile(width));
            let lanes = Lanes::new(addr, addr_ty, every_lane);
            let tile = tile(fl, mem, format.bytes(), width, lanes, m)?;
            let per_lane = || lanes_load(fl, mem, format, addr, addr_ty, m);
            let take = match rows {
                None => tile.inside,
                Some(rows) => fl.e.b.build_and(rows, tile.inside, "")?,
            };
            let fast = || tile_load(fl, format, &tile, width);
            choose(fl, take, vt, &fast, &per_lane)
        }
    }
}

/// A store of raw components by what is known of its address; `dynamic` is
/// the run-time-tested store for an unknown shape (as for [`load`]).
#[allow(clippy::too_many_arguments)]
pub fn store<'ctx>(
    fl: &FnLowering<'ctx, '_>,
    mem: MemRef,
    format: MemFormat,
    addr: V<'ctx>,
    addr_ty: Type,
    m: V<'ctx>,
    raws: &[V<'ctx>],
    facts: AddressFacts,
    dynamic: &dyn Fn() -> Result<(), JitError>,
) -> Result<(), JitError> {
    let (known, needs_rows) = facts.plan(rows_known(fl));
    let remark = |path| access_remark(fl, mem, format, path, needs_rows, true);
    let rows = if needs_rows {
        Some(warp_in_one_row(fl)?)
    } else {
        None
    };
    match known {
        // Lanes of a tile store to the same addresses: the run-time tests
        // sort that out.
        KnownAddress::Unknown | KnownAddress::Tiled { .. } => {
            remark(tested(fl, mem, format, addr_ty));
            dynamic()
        }
        KnownAddress::Packed { .. } if !lanes::compresses(fl.e, format) => {
            remark(tested(fl, mem, format, addr_ty));
            dynamic()
        }
        KnownAddress::Packed { every_lane } => {
            remark(AccessPath::Packed);
            let span = span(fl, mem)?;
            let bits = fl.e.mask_to_bits(m)?;
            let lanes = Lanes::new(addr, addr_ty, every_lane);
            let (_, at) = lanes.reference(fl, fl.e.lowest_lane(bits)?)?;
            let run = lanes::packed_run(fl.e, span.base, span.len, bits, at, addr_ty)?;
            let fast = || lanes::compress_store(fl.e, bits, run.start, raws[0]);
            let per_lane = || lanes_store(fl, mem, format, addr, addr_ty, m, raws);
            choose_store(fl, run.inside, &fast, &per_lane)
        }
        KnownAddress::Same { every_lane } => {
            remark(AccessPath::OneAddress);
            let lanes = Lanes::new(addr, addr_ty, every_lane);
            let same = || same_address_store(fl, mem, format, lanes, m, raws);
            let per_lane = || lanes_store(fl, mem, format, addr, addr_ty, m, raws);
            match rows {
                None => same(),
                Some(rows) => choose_store(fl, rows, &same, &per_lane),
            }
        }
        KnownAddress::Consecutive { every_lane } => {
            remark(AccessPath::Run);
            let lanes = Lanes::new(addr, addr_ty, every_lane);
            let run = consecutive_run(fl, mem, format.bytes(), lanes, m)?;
            let per_lane = || lanes_store(fl, mem, format, addr, addr_ty, m, raws);
            let take = match rows {
                None => run.inside,
                Some(rows) => fl.e.b.build_and(rows, run.inside, "")?,
            };
            let fast = || run_store(fl, mem, format, &run, m, raws);
            choose_store(fl, take, &fast, &per_lane)
        }
    }
}

/// Which way [`load`] or [`store`] takes an access's lanes.
#[derive(Clone, Copy)]
enum AccessPath {
    OneAddress,
    Run,
    Tile(u32),
    Packed,
    /// The shape is tested at run time ([`super::address_shape`]); with
    /// `groups`, runs per group of lanes too (`lanes.rs`).
    Tested {
        groups: bool,
    },
}

/// The path of an access whose shape is tested at run time: with runs
/// per group of lanes where `lanes.rs` tests for them.
fn tested(fl: &FnLowering<'_, '_>, mem: MemRef, format: MemFormat, addr_ty: Type) -> AccessPath {
    AccessPath::Tested {
        groups: fl.e.row_groups
            && super::narrow_address(mem, addr_ty)
            && super::lanes::tests_groups(fl.e, format),
    }
}

/// The remark of a load or store of `mem` (a `write` for stores) that
/// takes `path`, behind the one-row test of the launch when `needs_rows`.
fn access_remark(
    fl: &FnLowering<'_, '_>,
    mem: MemRef,
    format: MemFormat,
    path: AccessPath,
    needs_rows: bool,
    write: bool,
) {
    if !fl.wants_remarks() {
        return;
    }
    let name = memory_name(fl, mem);
    let (message, lane_by_lane) = match path {
        AccessPath::OneAddress if write => (
            format!(
                "{name}: one address for the warp: one scalar store of the highest active \
                 lane's value"
            ),
            false,
        ),
        AccessPath::OneAddress => (
            format!("{name}: one address for the warp: one scalar load, broadcast to the lanes"),
            false,
        ),
        AccessPath::Run => (
            format!(
                "{name}: consecutive addresses: one vector {} of the warp's {} bytes \
                 (lane by lane where the run leaves the memory)",
                if write { "store" } else { "load" },
                LANES * format.bytes()
            ),
            false,
        ),
        AccessPath::Tile(width) => (
            format!(
                "{name}: {width} consecutive addresses repeated across the warp: one vector \
                 load of {width} elements (lane by lane where they leave the memory)"
            ),
            false,
        ),
        AccessPath::Packed => (
            format!(
                "{name}: addresses packed by the active lanes' ranks: one compressing store \
                 of the active lanes"
            ),
            false,
        ),
        AccessPath::Tested { groups } => {
            let rest = if write {
                "else lane by lane (a scatter)"
            } else {
                "else lane by lane (a gather)"
            };
            let groups = if groups {
                ", a run per group of 8 lanes (rows 8 or 16 wide)"
            } else {
                ""
            };
            let message = format!(
                "{name}: address shape unknown when compiling: each warp tests for one \
                 address, a consecutive run{groups}, {rest}"
            );
            // The one-row test guards only known shapes.
            return fl.remark(RemarkKind::Memory, true, message);
        }
    };
    let message = if needs_rows {
        format!(
            "{message}; for launches whose warps each lie in one row of the workgroup, \
             lane by lane for others"
        )
    } else {
        message
    };
    fl.remark(RemarkKind::Memory, lane_by_lane, message);
}

/// `@name` of a buffer, shared array or private array of the function.
pub(crate) fn memory_name(fl: &FnLowering<'_, '_>, mem: MemRef) -> String {
    match fl.module.memory_name(fl.f, mem) {
        Some(name) => format!("@{name}"),
        None => "memory".to_string(),
    }
}

/// The addresses of an access whose shape is known.
#[derive(Clone, Copy)]
struct Lanes<'ctx> {
    addr: V<'ctx>,
    ty: Type,
    /// The shape holds in lane 0 too, active or not.
    every_lane: bool,
}

impl<'ctx> Lanes<'ctx> {
    fn new(addr: V<'ctx>, ty: Type, every_lane: bool) -> Lanes<'ctx> {
        Lanes {
            addr,
            ty,
            every_lane,
        }
    }

    /// A lane whose address has the access's shape (lane 0 when every
    /// lane has it: a constant index, no spill; else `first`, the first
    /// active lane) and that address, zero-extended to 64 bits.
    fn reference(
        &self,
        fl: &FnLowering<'ctx, '_>,
        first: IntValue<'ctx>,
    ) -> Result<(IntValue<'ctx>, IntValue<'ctx>), JitError> {
        let e = fl.e;
        let lane = if self.every_lane {
            e.i32().const_zero()
        } else {
            first
        };
        let at =
            e.b.build_extract_element(self.addr, lane, "")?
                .into_int_value();
        let at = if self.ty == Type::I64 {
            at
        } else {
            e.b.build_int_z_extend(at, e.i64(), "")?
        };
        Ok((lane, at))
    }
}

/// One address for all active lanes: a scalar load of each component at
/// the first active lane's address (checked once) broadcast to the active
/// lanes, 0 elsewhere. Out of bounds, every active lane faults and reads 0.
/// With no active lane nothing is recorded (the fault bit set is empty).
fn same_address_load<'ctx>(
    fl: &FnLowering<'ctx, '_>,
    mem: MemRef,
    format: MemFormat,
    lanes: Lanes<'ctx>,
    m: V<'ctx>,
) -> Result<Vec<V<'ctx>>, JitError> {
    let e = fl.e;
    let b = &e.b;
    let vt = elem_vec(fl, format.elem);
    let bits = e.mask_to_bits(m)?;
    let first = fl.e.lowest_lane(bits)?;
    let (_, at) = lanes.reference(fl, first)?;
    let span = span(fl, mem)?;
    let size = u64::from(format.bytes());
    let (aligned, inside) = aligned_inside(fl.e, span.len, size, at)?;
    let inside_bb = e.cx.append_basic_block(fl.func, "load.same.inside");
    let outside_bb = e.cx.append_basic_block(fl.func, "load.same.outside");
    let join = e.cx.append_basic_block(fl.func, "load.same.done");
    b.build_conditional_branch(inside, inside_bb, outside_bb)?;

    b.position_at_end(outside_bb);
    record_faults(fl, bits, e.splat(at.into())?, abi::FAULT_LOAD, &span)?;
    b.build_unconditional_branch(join)?;

    b.position_at_end(inside_bb);
    let loaded = broadcast_components(e, span.base, aligned, format, vt)?;
    b.build_unconditional_branch(join)?;

    b.position_at_end(join);
    let zeros = vec![vt.const_zero(); loaded.len()];
    join_components(
        e,
        vt,
        loaded.len(),
        &[(&loaded, inside_bb), (&zeros, outside_bb)],
    )
}

/// One address for all storing lanes: the highest one's components are
/// what storing in ascending lane order leaves, written once.
fn same_address_store<'ctx>(
    fl: &FnLowering<'ctx, '_>,
    mem: MemRef,
    format: MemFormat,
    lanes: Lanes<'ctx>,
    m: V<'ctx>,
    raws: &[V<'ctx>],
) -> Result<(), JitError> {
    let e = fl.e;
    let b = &e.b;
    let bits = e.mask_to_bits(m)?;
    let last = fl.e.highest_lane(bits)?;
    let (_, at) = lanes.reference(fl, last)?;
    let span = span(fl, mem)?;
    let size = u64::from(format.bytes());
    let (aligned, inside) = aligned_inside(fl.e, span.len, size, at)?;
    let some = any_lane(fl, bits)?;
    let write = b.build_and(inside, some, "")?;
    let write_bb = e.cx.append_basic_block(fl.func, "store.same.inside");
    let outside_bb = e.cx.append_basic_block(fl.func, "store.same.outside");
    let done = e.cx.append_basic_block(fl.func, "store.same.done");
    b.build_conditional_branch(write, write_bb, outside_bb)?;

    b.position_at_end(outside_bb);
    // No lane, or all out of bounds: recording an empty bit set is a no-op.
    record_faults(fl, bits, e.splat(at.into())?, abi::FAULT_STORE, &span)?;
    b.build_unconditional_branch(done)?;

    b.position_at_end(write_bb);
    let elem_bytes = u64::from(format.elem.bytes());
    for (i, raw) in raws.iter().enumerate() {
        let off = b.build_int_add(aligned, e.i64().const_int(i as u64 * elem_bytes, false), "")?;
        // SAFETY (for LLVM): checked above, the component is in bounds.
        let ptr = unsafe { b.build_gep(e.cx.i8_type(), span.base, &[off], "")? };
        let x = b.build_extract_element(*raw, last, "")?;
        e.store_aligned(ptr, x, format.elem.bytes())?;
    }
    b.build_unconditional_branch(done)?;
    b.position_at_end(done);
    Ok(())
}

/// Where the run of an affine access is, from its first and last active
/// lanes: whether it is whole (it does not wrap, and its last access ends
/// inside the memory) and where lane 0's access would start.
struct Run<'ctx> {
    inside: IntValue<'ctx>,
    start: inkwell::values::PointerValue<'ctx>,
}

fn consecutive_run<'ctx>(
    fl: &FnLowering<'ctx, '_>,
    mem: MemRef,
    size: u32,
    lanes: Lanes<'ctx>,
    m: V<'ctx>,
) -> Result<Run<'ctx>, JitError> {
    let e = fl.e;
    let b = &e.b;
    let bits = e.mask_to_bits(m)?;
    let first = fl.e.lowest_lane(bits)?;
    let last = fl.e.highest_lane(bits)?;
    let (reference, at_ref) = lanes.reference(fl, first)?;
    // Lane `l`'s address is `at_ref + (l - reference) * size` modulo the
    // address width (the reference lane is at or below the first active
    // lane): the run does not wrap when that sum, taken in 64 bits, fits
    // the width at the last active lane. Rounding down to the access size
    // keeps the accesses consecutive.
    let size64 = e.i64().const_int(u64::from(size), false);
    let lane_offset = |lane: IntValue<'ctx>| -> Result<IntValue<'ctx>, JitError> {
        let n = b.build_int_sub(lane, reference, "")?;
        let n = b.build_int_z_extend(n, e.i64(), "")?;
        Ok(b.build_int_add(at_ref, b.build_int_mul(n, size64, "")?, "")?)
    };
    let at_first = lane_offset(first)?;
    let at_last = lane_offset(last)?;
    let no_wrap = if lanes.ty == Type::I64 {
        b.build_int_compare(IntPredicate::UGE, at_last, at_ref, "")?
    } else {
        let top = e.i64().const_int(u64::from(u32::MAX), false);
        b.build_int_compare(IntPredicate::ULE, at_last, top, "")?
    };
    let round = e.i64().const_int(!(u64::from(size) - 1), false);
    let first_aligned = b.build_and(at_first, round, "")?;
    let last_aligned = b.build_and(at_last, round, "")?;
    let span = span(fl, mem)?;
    let ends_inside = inside_memory(fl.e, span.len, u64::from(size), last_aligned)?;
    let inside = b.build_and(no_wrap, ends_inside, "")?;
    let (_, start) = run_start(fl, span.base, first, first_aligned, size)?;
    Ok(Run { inside, start })
}

/// The `width` elements a tiled access reads, as a [`Run`]: whether they
/// are all inside the memory (and do not wrap around the address width),
/// and where the first one is.
fn tile<'ctx>(
    fl: &FnLowering<'ctx, '_>,
    mem: MemRef,
    size: u32,
    width: u32,
    lanes: Lanes<'ctx>,
    m: V<'ctx>,
) -> Result<Run<'ctx>, JitError> {
    let e = fl.e;
    let b = &e.b;
    let bits = e.mask_to_bits(m)?;
    let first = fl.e.lowest_lane(bits)?;
    let (reference, at_ref) = lanes.reference(fl, first)?;
    // The reference lane is element `reference % width` of the tile.
    let within = b.build_and(
        reference,
        e.i32().const_int(u64::from(width - 1), false),
        "",
    )?;
    let within = b.build_int_z_extend(within, e.i64(), "")?;
    let back = b.build_int_mul(within, e.i64().const_int(u64::from(size), false), "")?;
    // A tile that starts below 0 wraps to the top of the 64 bits here and
    // is not inside the memory.
    let at = b.build_int_sub(at_ref, back, "")?;
    let bytes = u64::from(width) * u64::from(size);
    let round = e.i64().const_int(!(u64::from(size) - 1), false);
    let aligned = b.build_and(at, round, "")?;
    let span = span(fl, mem)?;
    let mut inside = inside_memory(fl.e, span.len, bytes, aligned)?;
    if lanes.ty != Type::I64 {
        // With 32-bit addresses, a tile must also end at or below 2^32 (a
        // memory over 4 GiB could hold one that wraps).
        let end = b.build_int_add(at, e.i64().const_int(bytes, false), "")?;
        let top = e.i64().const_int(1 << 32, false);
        let below_top = b.build_int_compare(IntPredicate::ULE, end, top, "")?;
        inside = b.build_and(inside, below_top, "")?;
    }
    // SAFETY (for LLVM): only dereferenced where `inside` holds.
    let start = unsafe { b.build_gep(e.cx.i8_type(), span.base, &[aligned], "")? };
    Ok(Run { inside, start })
}

/// A tile that is inside the memory: one vector load of its elements,
/// repeated across every lane, the inactive ones included (see the
/// `memory` module's documentation).
fn tile_load<'ctx>(
    fl: &FnLowering<'ctx, '_>,
    format: MemFormat,
    tile: &Run<'ctx>,
    width: u32,
) -> Components<'ctx> {
    let e = fl.e;
    let b = &e.b;
    let vt = elem_vec(fl, format.elem);
    let tile_t = vt.get_element_type().into_int_type().vec_type(width);
    let elems = e.load_aligned(tile_t.into(), tile.start, format.elem.bytes())?;
    let repeat: Vec<_> = (0..LANES)
        .map(|l| e.i32().const_int(u64::from(l % width), false))
        .collect();
    Ok(vec![b.build_shuffle_vector(
        elems.into_vector_value(),
        tile_t.get_poison(),
        VectorType::const_vector(&repeat),
        "",
    )?])
}

/// `<32 * count x i1>`: each lane's bit repeated for its components.
fn component_mask<'ctx>(
    fl: &FnLowering<'ctx, '_>,
    m: V<'ctx>,
    count: u32,
) -> Result<V<'ctx>, JitError> {
    let e = fl.e;
    let idx: Vec<_> = (0..LANES * count)
        .map(|j| e.i32().const_int(u64::from(j / count), false))
        .collect();
    Ok(e.b.build_shuffle_vector(
        m,
        m.get_type().get_poison(),
        VectorType::const_vector(&idx),
        "",
    )?)
}

/// The components of a run that is inside the memory: one masked vector
/// load of the block, the components split out with shuffles.
fn run_load<'ctx>(
    fl: &FnLowering<'ctx, '_>,
    mem: MemRef,
    format: MemFormat,
    run: &Run<'ctx>,
    m: V<'ctx>,
) -> Components<'ctx> {
    let e = fl.e;
    let b = &e.b;
    let vt = elem_vec(fl, format.elem);
    let align = elem_align(fl, format.elem);
    let count = u32::from(format.count);
    prefetch_for(fl, mem, format, run.start, false)?;
    if count == 1 {
        return Ok(vec![load_consecutive(e, fl.func, vt, run.start, align, m)?]);
    }
    let block_t = vt
        .get_element_type()
        .into_int_type()
        .vec_type(LANES * count);
    let block_mask = component_mask(fl, m, count)?;
    let block = load_consecutive(e, fl.func, block_t, run.start, align, block_mask)?;
    if !e.avx512 && e.avx2 && format.elem.bytes() == 4 && matches!(count, 2 | 4) {
        return split_by_eights(fl, block, count);
    }
    (0..count)
        .map(|c| {
            let idx: Vec<_> = (0..LANES)
                .map(|l| e.i32().const_int(u64::from(l * count + c), false))
                .collect();
            Ok(b.build_shuffle_vector(
                block,
                block_t.get_poison(),
                VectorType::const_vector(&idx),
                "",
            )?)
        })
        .collect()
}

/// The `count` components (2 or 4) of a block of 32-bit elements, element
/// `l * count + c` being component `c` of lane `l`, by shuffles of 8-lane
/// pieces (ymm registers): each 8 lanes of a component come from `count`
/// consecutive pieces. On AVX2 one 32-lane shuffle per component cost
/// LLVM's DAG combiner about 35 ms of code generation for a 4-component
/// load; these small ones it selects directly (`vperm2f128`, `vunpcklps`,
/// `vunpcklpd` and their high halves).
fn split_by_eights<'ctx>(
    fl: &FnLowering<'ctx, '_>,
    block: V<'ctx>,
    count: u32,
) -> Components<'ctx> {
    let e = fl.e;
    let b = &e.b;
    let shuffle = |x: V<'ctx>, y: V<'ctx>, picks: [u32; 8]| -> Result<V<'ctx>, JitError> {
        let idx: Vec<_> = picks
            .iter()
            .map(|&p| e.i32().const_int(u64::from(p), false))
            .collect();
        Ok(b.build_shuffle_vector(x, y, VectorType::const_vector(&idx), "")?)
    };
    let mut quarters: Vec<Vec<V<'ctx>>> = vec![Vec::new(); count as usize];
    for q in 0..4 {
        let pieces = (0..count)
            .map(|k| e.lane_run(block, 8 * (q * count + k), 8))
            .collect::<Result<Vec<_>, _>>()?;
        let parts = if count == 2 {
            // [x0 y0 .. x3 y3], [x4 y4 .. x7 y7]
            vec![
                shuffle(pieces[0], pieces[1], [0, 2, 4, 6, 8, 10, 12, 14])?,
                shuffle(pieces[0], pieces[1], [1, 3, 5, 7, 9, 11, 13, 15])?,
            ]
        } else {
            // Pieces hold lanes (0, 1), (2, 3), (4, 5), (6, 7): pair each
            // 128-bit half with the one four lanes on, then transpose the
            // 4 x 4 blocks within the halves.
            let (p0, p1, p2, p3) = (pieces[0], pieces[1], pieces[2], pieces[3]);
            let s0 = shuffle(p0, p2, [0, 1, 2, 3, 8, 9, 10, 11])?; // lanes 0, 4
            let s1 = shuffle(p0, p2, [4, 5, 6, 7, 12, 13, 14, 15])?; // 1, 5
            let s2 = shuffle(p1, p3, [0, 1, 2, 3, 8, 9, 10, 11])?; // 2, 6
            let s3 = shuffle(p1, p3, [4, 5, 6, 7, 12, 13, 14, 15])?; // 3, 7
            let lo01 = shuffle(s0, s1, [0, 8, 1, 9, 4, 12, 5, 13])?; // x0 x1 y0 y1
            let hi01 = shuffle(s0, s1, [2, 10, 3, 11, 6, 14, 7, 15])?; // z0 z1 w0 w1
            let lo23 = shuffle(s2, s3, [0, 8, 1, 9, 4, 12, 5, 13])?;
            let hi23 = shuffle(s2, s3, [2, 10, 3, 11, 6, 14, 7, 15])?;
            vec![
                shuffle(lo01, lo23, [0, 1, 8, 9, 4, 5, 12, 13])?,
                shuffle(lo01, lo23, [2, 3, 10, 11, 6, 7, 14, 15])?,
                shuffle(hi01, hi23, [0, 1, 8, 9, 4, 5, 12, 13])?,
                shuffle(hi01, hi23, [2, 3, 10, 11, 6, 7, 14, 15])?,
            ]
        };
        for (c, part) in parts.into_iter().enumerate() {
            quarters[c].push(part);
        }
    }
    quarters
        .into_iter()
        .map(|q| e.concat(e.concat(q[0], q[1])?, e.concat(q[2], q[3])?))
        .collect()
}

/// The prefetch of a warp's consecutive access of `mem` starting at
/// `start`, for buffers only (shared and private memory stay in cache): in a
/// loop, where a load reads next ([`prefetch_next_run`]; a store's line is
/// not prefetched there); outside loops, a page ahead ([`prefetch_ahead`])
/// unless the options say not to (`JitOptions::prefetch_ahead`).
fn prefetch_for<'ctx>(
    fl: &FnLowering<'ctx, '_>,
    mem: MemRef,
    format: MemFormat,
    start: inkwell::values::PointerValue<'ctx>,
    write: bool,
) -> Result<(), JitError> {
    match (mem, fl.in_loop(), write) {
        (MemRef::Buffer(_), true, false) => prefetch_next_run(fl, format, start),
        (MemRef::Buffer(_), false, _) if fl.e.prefetch_ahead => {
            prefetch_ahead(fl, format, start, write)
        }
        _ => Ok(()),
    }
}

/// Prefetches where a load of a buffer in a loop will read next: its start plus the
/// distance it moved since the last iteration. In a grid-stride loop each
/// warp's run moves by the whole grid's width, far more than a page, which
/// the hardware prefetchers do not follow, so every iteration waited for
/// memory. (The first iteration prefetches its own start; a prefetch never
/// faults.)
///
/// Where the run moved at least a page ([`FAR`]), it also prefetches the
/// block one workgroup further on ([`next_workgroup_block`]): the runtime
/// hands each SM thread consecutive workgroups, so where addresses follow
/// the global id the next workgroup reads there in the same iteration. One
/// iteration ahead is too short for a loop that waits on memory in every
/// iteration; the hardware prefetchers, which follow a page's lines in
/// order, would bring that block in if they tracked as many pages as such
/// a loop walks at once (W6: 64). Where the run moves less, they follow it,
/// and that prefetch (then of the run's own start, which the load reads
/// anyway) only got in their way: W5's tile loops, 128 bytes an iteration,
/// ran 20% faster on one SM without it.
fn prefetch_next_run<'ctx>(
    fl: &FnLowering<'ctx, '_>,
    format: MemFormat,
    start: inkwell::values::PointerValue<'ctx>,
) -> Result<(), JitError> {
    let e = fl.e;
    let b = &e.b;
    let i64t = e.i64();
    let here = b.build_ptr_to_int(start, i64t, "")?;
    let slot = e.entry_slot(i64t.const_zero().into(), "last_start")?;
    let last = b.build_load(i64t, slot, "")?.into_int_value();
    b.build_store(slot, here)?;
    let first = b.build_int_compare(IntPredicate::EQ, last, i64t.const_zero(), "")?;
    let moved = b.build_int_sub(here, last, "")?;
    let moved = b
        .build_select(first, i64t.const_zero(), moved, "")?
        .into_int_value();
    prefetch(fl, start, moved, false)?;
    // |moved| >= FAR, as one unsigned compare.
    let far = b.build_int_add(moved, i64t.const_int(FAR - 1, false), "")?;
    let far = b.build_int_compare(
        IntPredicate::UGT,
        far,
        i64t.const_int(2 * FAR - 2, false),
        "",
    )?;
    let block = next_workgroup_block(fl, format)?;
    let block = b.build_select(far, block, i64t.const_zero(), "")?;
    prefetch(fl, start, block.into_int_value(), false)
}

/// How far a run in a loop moves in one iteration, either way, before the
/// next workgroup's block is prefetched too: a page, which the hardware
/// prefetchers do not follow a run out of.
const FAR: u64 = 4096;

/// How far the same access of the next workgroup along x lies when
/// addresses follow the global id: the workgroup's x size in elements.
fn next_workgroup_block<'ctx>(
    fl: &FnLowering<'ctx, '_>,
    format: MemFormat,
) -> Result<IntValue<'ctx>, JitError> {
    let e = fl.e;
    let size_x = workgroup_size(fl, Dim::X)?;
    let size_x = e.b.build_int_z_extend(size_x, e.i64(), "")?;
    let bytes = e.i64().const_int(u64::from(format.bytes()), false);
    Ok(e.b.build_int_mul(size_x, bytes, "")?)
}

/// How far ahead of a warp's block in a buffer, outside loops, a load or
/// store prefetches its lines: a page, four workgroups of 256 threads making
/// 32-bit accesses. The runtime hands each SM thread consecutive
/// workgroups, so where addresses follow the global id the warps after
/// this one access there; the hardware prefetchers, which stop at page
/// boundaries and see a few accesses between each warp's bookkeeping,
/// keep too few lines in flight. A store prefetches for writing: the line
/// is then owned before the store needs it.
const PREFETCH_AHEAD: u64 = 4096;

/// Prefetches each cache line of the block [`PREFETCH_AHEAD`] bytes past
/// `start` (a prefetch never faults).
fn prefetch_ahead<'ctx>(
    fl: &FnLowering<'ctx, '_>,
    format: MemFormat,
    start: inkwell::values::PointerValue<'ctx>,
    write: bool,
) -> Result<(), JitError> {
    let block = u64::from(LANES * format.bytes());
    for line in 0..block.div_ceil(64) {
        let offset = fl.e.i64().const_int(PREFETCH_AHEAD + 64 * line, false);
        prefetch(fl, start, offset, write)?;
    }
    Ok(())
}

/// Prefetches the line `offset` bytes past `start`, for reading or for
/// writing, into all cache levels.
fn prefetch<'ctx>(
    fl: &FnLowering<'ctx, '_>,
    start: inkwell::values::PointerValue<'ctx>,
    offset: IntValue<'ctx>,
    write: bool,
) -> Result<(), JitError> {
    let e = fl.e;
    // SAFETY (for LLVM): only prefetched, never dereferenced.
    let at = unsafe { e.b.build_gep(e.cx.i8_type(), start, &[offset], "")? };
    let int = |v: u64| e.i32().const_int(v, false).into();
    e.call_void_intrinsic(
        "llvm.prefetch",
        &[at.get_type().into()],
        &[at.into(), int(u64::from(write)), int(3), int(1)],
    )
}

/// The components of a run that is inside the memory: one masked vector
/// store of the block, built from the components with shuffles.
fn run_store<'ctx>(
    fl: &FnLowering<'ctx, '_>,
    mem: MemRef,
    format: MemFormat,
    run: &Run<'ctx>,
    m: V<'ctx>,
    raws: &[V<'ctx>],
) -> Result<(), JitError> {
    let align = elem_align(fl, format.elem);
    let count = u32::from(format.count);
    prefetch_for(fl, mem, format, run.start, true)?;
    if count == 1 {
        if streams(fl, mem, format) {
            return stream_or_store(fl, mem, raws[0], run.start, align, m);
        }
        return store_consecutive(fl.e, fl.func, raws[0], run.start, align, m);
    }
    let block = interleave(fl, raws)?;
    let block_mask = component_mask(fl, m, count)?;
    store_consecutive(fl.e, fl.func, block, run.start, align, block_mask)
}

/// How the functions of a module use one buffer: whether some `store`s to
/// it, and whether some `load`s from it or updates it atomically. A module
/// that stores to no buffer prefetches under
/// `PrefetchAhead::WithoutStores`; a buffer stored to and never read is
/// streamed to ([`Streams::buffers`]).
///
/// [`Streams::buffers`]: crate::emit::Streams::buffers
#[derive(Clone, Copy, Debug, Default)]
pub struct BufferUse {
    pub stored: bool,
    pub read: bool,
}

/// The [`BufferUse`] of each buffer of `module`.
pub fn buffer_uses(module: &warpjit_ir::Module) -> Vec<BufferUse> {
    let mut uses = vec![BufferUse::default(); module.buffers.len()];
    for f in &module.functions {
        warpjit_ir::walk_block(&f.body, &mut |s| {
            let warpjit_ir::Stmt::Inst(i) = s else { return };
            let (MemRef::Buffer(b), stored) = (match &i.op {
                warpjit_ir::Op::Store { mem, .. } => (*mem, true),
                warpjit_ir::Op::Load { mem, .. } | warpjit_ir::Op::Atom { mem, .. } => {
                    (*mem, false)
                }
                _ => return,
            }) else {
                return;
            };
            if let Some(u) = uses.get_mut(b as usize) {
                u.stored |= stored;
                u.read |= !stored;
            }
        });
    }
    uses
}

/// Buffers at least this large take non-temporal stores: larger than the
/// last-level cache share of the hosts measured, so what a kernel writes
/// there would be evicted before anything read it again.
const STREAM_MIN: u64 = 16 << 20;

/// Whether a run of `format` into `mem` may be a non-temporal store: a
/// buffer the module only stores to, in elements of at least 4 bytes (a
/// whole warp's run that starts on a cache line is then whole lines).
fn streams(fl: &FnLowering<'_, '_>, mem: MemRef, format: MemFormat) -> bool {
    let MemRef::Buffer(b) = mem else { return false };
    fl.e.streams
        .buffers
        .get(b as usize)
        .copied()
        .unwrap_or(false)
        && format.elem.bytes() >= 4
}

/// An `sfence` before a buffer atomic in a module that may stream: what
/// this thread stored non-temporally is then seen by other SM threads
/// before the atomic. Removed after lowering if nothing was streamed.
pub fn fence_streams(fl: &FnLowering<'_, '_>) -> Result<(), JitError> {
    let e = fl.e;
    if !e.streams.may_stream() {
        return Ok(());
    }
    e.call_void_intrinsic("llvm.x86.sse.sfence", &[], &[])?;
    let fence = e
        .current_block()?
        .get_last_instruction()
        .ok_or_else(|| JitError::Internal("no sfence after building one".into()))?;
    e.streams.fences.borrow_mut().push(fence);
    Ok(())
}

/// A run of every lane that starts on a cache line of a buffer of at least
/// [`STREAM_MIN`] bytes, in a launch on several SMs: one non-temporal store
/// (`vmovntdq`), which writes
/// whole lines without reading them into the cache first, so a kernel that
/// only writes its output moves a third less memory. Other runs: the
/// masked store. Other SM threads see such stores after an `sfence`: the
/// runtime's at the end of each run of workgroups (`backend.rs`), the
/// `mfence` of `membar`, and the one before a buffer atomic in modules
/// that stream (`lower/atomic.rs`).
fn stream_or_store<'ctx>(
    fl: &FnLowering<'ctx, '_>,
    mem: MemRef,
    value: V<'ctx>,
    start: inkwell::values::PointerValue<'ctx>,
    align: IntValue<'ctx>,
    m: V<'ctx>,
) -> Result<(), JitError> {
    let e = fl.e;
    let b = &e.b;
    let len = span(fl, mem)?.len;
    let large = b.build_int_compare(
        IntPredicate::UGE,
        len,
        e.i64().const_int(STREAM_MIN, false),
        "",
    )?;
    let bits = e.mask_to_bits(m)?;
    let every_lane = b.build_int_compare(IntPredicate::EQ, bits, e.i32().const_all_ones(), "")?;
    let at = b.build_ptr_to_int(start, e.i64(), "")?;
    let within_line = b.build_and(at, e.i64().const_int(63, false), "")?;
    let on_line = b.build_int_compare(IntPredicate::EQ, within_line, e.i64().const_zero(), "")?;
    // One SM thread does not use the memory's bandwidth up, and there
    // these stores measured slower.
    let sms = e.at_entry(|| e.load_invariant(fl.group, offsets::SM_COUNT, e.i32().into(), 4))?;
    let several = b.build_int_compare(
        IntPredicate::UGT,
        sms.into_int_value(),
        e.i32().const_int(1, false),
        "",
    )?;
    let launch_streams = b.build_and(large, several, "")?;
    let stream = b.build_and(b.build_and(launch_streams, every_lane, "")?, on_line, "")?;
    e.streams.emitted.set(true);
    either(e, fl.func, stream, |streamed| {
        if !streamed {
            store_consecutive(e, fl.func, value, start, align, m)?;
            return Ok(None);
        }
        let st = b.build_store(start, value)?;
        st.set_alignment(64)
            .map_err(|e| JitError::Llvm(e.to_string()))?;
        let one = e.cx.metadata_node(&[e.i32().const_int(1, false).into()]);
        st.set_metadata(one, e.cx.get_kind_id("nontemporal"))
            .map_err(|e| JitError::Llvm(e.to_string()))?;
        Ok(None)
    })?;
    Ok(())
}

/// The components of 32 lanes as one block, lane by lane:
/// element `l * count + c` is component `c` of lane `l`.
fn interleave<'ctx>(fl: &FnLowering<'ctx, '_>, raws: &[V<'ctx>]) -> Result<V<'ctx>, JitError> {
    let e = fl.e;
    let b = &e.b;
    let consts = |range: std::ops::Range<u32>, f: &dyn Fn(u32) -> u32| {
        let idx: Vec<_> = range
            .map(|j| e.i32().const_int(u64::from(f(j)), false))
            .collect();
        VectorType::const_vector(&idx)
    };
    // Concatenate the components (pairs first), then pick lane by lane.
    let mut parts = raws.to_vec();
    while parts.len() > 1 {
        let mut next = Vec::new();
        for pair in parts.chunks(2) {
            let (a, c) = (pair[0], pair[1]);
            let n = a.get_type().get_size() * 2;
            next.push(b.build_shuffle_vector(a, c, consts(0..n, &|j| j), "")?);
        }
        parts = next;
    }
    let all = parts[0];
    let count = raws.len() as u32;
    let picks = consts(0..LANES * count, &|j| (j % count) * LANES + j / count);
    Ok(b.build_shuffle_vector(all, all.get_type().get_poison(), picks, "")?)
}
