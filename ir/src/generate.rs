//! Random valid programs, for property tests of the text format and the
//! verifier and for differential testing of the JIT against the
//! interpreter.
//!
//! Every generated module verifies and every launch of its kernel
//! terminates: each loop steps a reserved variable (up by 1, 2 or 3, or
//! down) and leaves with `break` once it passes a bound that allows at most
//! [`GenConfig::max_loop_trips`] runs of the body (lane-dependent), testing
//! it before any `continue` can restart the loop; a
//! function calls only functions generated before it, so there is no
//! recursion. The kernel, `@main` (the module's last function), writes
//! the values it computes to the output buffer, so a difference between
//! two backends becomes a difference in memory. With calls, one module in
//! eight has a second kernel, `@other`, just before `@main`, made by the
//! same rules and never launched.
//!
//! Results do not depend on how warps or workgroups are scheduled, only on
//! the semantics of the operations (including the ones that depend on lane
//! order, like atomics within a warp):
//! - `@out` (binding 0): each invocation writes only its own
//!   [`OUT_SLOT_BYTES`]-byte slot, or addresses past the end;
//! - `@in` (binding 1): only read, at any address;
//! - `@atom` (binding 2): each warp owns a [`ATOM_REGION_BYTES`]-byte region
//!   for atomics, loads and stores (stream compaction's, the lanes that
//!   pass a test one after another by their ballot rank, and stores of a
//!   consecutive run, one address, a tile or a run per group of 8 lanes);
//!   other accesses go past the end. In one program in six it takes only
//!   updates of one associative op whose results nothing reads, at any
//!   address (they commute), and no function has `membar`;
//! - `@shared`: two phases of one [`SHARED_WARP_BYTES`]-byte region per warp.
//!   Barriers appear only at the top level of the kernel or of a function
//!   with barriers (which the kernel calls only at its top level, and which
//!   has no `return` before its end), two to an iteration in a top-level
//!   loop that every warp runs the same number of times, or one on each
//!   side of a top-level `if` whose condition is the same in every
//!   invocation, so every warp that has not finished reaches them. Between
//!   barriers a warp writes only its own region of the current phase; it
//!   reads that region, or any region of the previous phase, which nobody
//!   writes until the next barrier;
//! - `@scratch` (in half the programs with shared memory, declared after
//!   `@shared`, so it does not start at the arena's first byte): each warp
//!   owns [`SCRATCH_WARP_BYTES`] bytes at `(local_index >> 5) *`
//!   [`SCRATCH_WARP_BYTES`], in every function, for loads, stores and
//!   atomics; other accesses go past the end;
//! - private arrays: any address, in bounds or not.
//!
//! The machine built-ins `sm_id`, `warps_per_sm` and `sm_count` (behind
//! [`Features::machine_ids`]) make results depend on the SM configuration:
//! run both sides with the same one.

mod consts;
mod func;
mod insts;
mod memory;
mod rng;

pub use rng::{ByteRng, RngLike, SplitMix64};

use crate::module::{BufferDecl, Function, Module, ParamDecl, SharedDecl};
use crate::ops::{AtomOp, NumFormat};
use crate::span::Span;
use func::{Env, FuncInfo};

/// Bytes of `@out` each invocation owns.
pub const OUT_SLOT_BYTES: u32 = 256;
/// Bytes of `@atom` each warp owns.
pub const ATOM_REGION_BYTES: u32 = 256;
/// Bytes of `@shared` each warp owns in one phase (32 bytes per lane).
pub const SHARED_WARP_BYTES: u32 = 1024;
/// Bytes of `@scratch` each warp owns.
pub const SCRATCH_WARP_BYTES: u32 = 64;
/// Binding of the output buffer `@out`.
pub const OUT_BINDING: u32 = 0;
/// Binding of the read-only input buffer `@in`.
pub const IN_BINDING: u32 = 1;
/// Binding of the atomics buffer `@atom`.
pub const ATOM_BINDING: u32 = 2;

/// Size knobs and feature switches. Each switch is independent: turning one
/// off removes exactly that kind of statement or operation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GenConfig {
    /// Statements per function body, nested ones included.
    pub max_stmts: usize,
    /// Deepest nesting of `if`, `loop` and `ordered` blocks (a loop's exit
    /// test adds one level).
    pub max_depth: usize,
    /// Functions besides the kernel.
    pub max_functions: usize,
    /// Most iterations any generated loop runs in one lane.
    pub max_loop_trips: u32,
    /// Most statements one invocation may execute, counting every loop at
    /// its most trips and every call's own work (limits calls in loops).
    pub max_work: u64,
    /// Module `param`s.
    pub max_params: usize,
    /// Largest workgroup, in invocations (at most 1024).
    pub max_workgroup: u32,
    /// Most workgroups in the launch grid.
    pub max_workgroups: u32,
    pub features: Features,
}

impl Default for GenConfig {
    fn default() -> GenConfig {
        GenConfig {
            max_stmts: 60,
            max_depth: 4,
            max_functions: 3,
            max_loop_trips: 4,
            max_work: 20_000,
            max_params: 3,
            max_workgroup: 128,
            max_workgroups: 4,
            features: Features::all(),
        }
    }
}

impl GenConfig {
    /// Long programs with deep nests: 160 statements a kernel, blocks nested
    /// 7 deep, up to 4 functions and loops of up to 6 trips (the default
    /// work bound still holds). Otherwise the defaults.
    pub fn deep() -> GenConfig {
        GenConfig {
            max_stmts: 160,
            max_depth: 7,
            max_functions: 4,
            max_loop_trips: 6,
            ..GenConfig::default()
        }
    }

    /// Short kernels (at most three statements, no function) with nothing
    /// between workgroups but a new id and zeroed shared memory (no loop,
    /// `kill` or `demote`), on grids of up to 32 workgroups: the shape of
    /// kernel the JIT runs many workgroups per call, with runs of several
    /// workgroups per SM. Otherwise `features`.
    pub fn short_kernels(features: Features) -> GenConfig {
        GenConfig {
            max_stmts: 3,
            max_functions: 0,
            max_workgroups: 32,
            features: Features {
                loops: false,
                kill: false,
                demote: false,
                ..features
            },
            ..GenConfig::default()
        }
    }
}

/// What the generator may use.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Features {
    /// f32 (and with `wide`, f64) values and float operations.
    pub floats: bool,
    /// i64 (and with `floats`, f64) values, `pk64`, `up64`.
    pub wide: bool,
    /// i8, i16 and f16 values (through `cvt` and `bitcast`), narrow stores.
    pub narrow: bool,
    pub ifs: bool,
    pub loops: bool,
    pub calls: bool,
    /// `return` before the end of a function or kernel.
    pub early_returns: bool,
    pub kill: bool,
    pub demote: bool,
    pub ordered: bool,
    pub barriers: bool,
    /// Loads and stores beyond the result records: `@in`, `@out`, `@atom`.
    pub buffers: bool,
    /// Addresses past the end of memories.
    pub out_of_bounds: bool,
    pub atomics: bool,
    pub shared: bool,
    pub private: bool,
    /// `active_mask`, `ballot`, `vote`, `tgall`/`tgany`/`tgeq`/`tgballot`.
    pub votes: bool,
    pub shuffles: bool,
    /// Quad swizzles and derivatives.
    pub quads: bool,
    /// `sm_id`, `warps_per_sm`, `sm_count`.
    pub machine_ids: bool,
}

impl Features {
    pub fn all() -> Features {
        Features {
            floats: true,
            wide: true,
            narrow: true,
            ifs: true,
            loops: true,
            calls: true,
            early_returns: true,
            kill: true,
            demote: true,
            ordered: true,
            barriers: true,
            buffers: true,
            out_of_bounds: true,
            atomics: true,
            shared: true,
            private: true,
            votes: true,
            shuffles: true,
            quads: true,
            machine_ids: true,
        }
    }

    /// Straight-line 32-bit integer code and result records only.
    pub fn none() -> Features {
        Features {
            floats: false,
            wide: false,
            narrow: false,
            ifs: false,
            loops: false,
            calls: false,
            early_returns: false,
            kill: false,
            demote: false,
            ordered: false,
            barriers: false,
            buffers: false,
            out_of_bounds: false,
            atomics: false,
            shared: false,
            private: false,
            votes: false,
            shuffles: false,
            quads: false,
            machine_ids: false,
        }
    }
}

/// A generated program with everything needed to launch it.
#[derive(Clone, Debug, PartialEq)]
pub struct GeneratedCase {
    pub module: Module,
    /// Byte size of the buffer at each binding (0, 1, 2).
    pub buffer_sizes: Vec<usize>,
    /// Initial contents of each buffer (`buffer_sizes[i]` bytes).
    pub buffer_data: Vec<Vec<u8>>,
    /// Bit patterns of the module parameters, in declaration order.
    pub params: Vec<u64>,
    /// Workgroup size (also the kernel's `workgroup` attribute).
    pub workgroup: [u32; 3],
    /// Number of workgroups in each dimension (z is always 1).
    pub grid: [u32; 3],
}

/// The launch geometry and memory sizes of one case.
#[derive(Clone, Debug)]
pub(crate) struct Layout {
    pub workgroup: [u32; 3],
    pub grid: [u32; 3],
    pub wg_size: u32,
    pub warps_per_wg: u32,
    pub out_bytes: u32,
    pub in_bytes: u32,
    pub atom_bytes: u32,
    /// One phase of `@shared`: every warp's region.
    pub shared_phase_bytes: u32,
}

impl Layout {
    fn choose(rng: &mut impl RngLike, cfg: &GenConfig) -> Layout {
        // Rows of x sizes that are not a multiple of 32 (48x2, 33x3, ...)
        // make warps that span rows: the IDs' shapes are not known then.
        const SHAPES: [[u32; 3]; 21] = [
            [48, 2, 1],
            [33, 3, 1],
            [40, 3, 1],
            [20, 3, 2],
            [64, 2, 1],
            [1, 1, 1],
            [7, 1, 1],
            [32, 1, 1],
            [33, 1, 1],
            [48, 1, 1],
            [64, 1, 1],
            [96, 1, 1],
            [128, 1, 1],
            [8, 4, 1],
            [16, 4, 1],
            [4, 4, 2],
            [8, 8, 1],
            [16, 2, 1],
            [8, 2, 2],
            [5, 3, 2],
            [32, 2, 1],
        ];
        let max_wg = cfg.max_workgroup.clamp(1, 1024);
        let fitting: Vec<[u32; 3]> = SHAPES
            .into_iter()
            .filter(|s| s[0] * s[1] * s[2] <= max_wg)
            .collect();
        let workgroup = *rng::pick(rng, &fitting);
        let max_groups = cfg.max_workgroups.max(1);
        // Up to 3 x 2 for the small grids of the defaults; a larger limit
        // gives up to a quarter of it in x and an eighth in y.
        let gx_max = max_groups.min(3).max(max_groups / 4);
        let gx = rng.between(1, u64::from(gx_max)) as u32;
        let gy_max = (max_groups / gx).clamp(1, (max_groups / 8).max(2));
        let gy = rng.between(1, u64::from(gy_max)) as u32;
        // Sometimes a second layer of workgroups in z, where the limit
        // leaves room for it.
        let gz = if gx * gy * 2 <= max_groups && rng.below(4) == 0 {
            2
        } else {
            1
        };
        let grid = [gx, gy, gz];
        let wg_size = workgroup.iter().product::<u32>();
        let warps_per_wg = wg_size.div_ceil(32);
        let workgroups = gx * gy * gz;
        let in_bytes = *rng::pick(rng, &[4u32, 60, 64, 256, 1000, 1022, 1024]);
        Layout {
            workgroup,
            grid,
            wg_size,
            warps_per_wg,
            out_bytes: workgroups * wg_size * OUT_SLOT_BYTES,
            in_bytes,
            atom_bytes: workgroups * warps_per_wg * ATOM_REGION_BYTES,
            shared_phase_bytes: warps_per_wg * SHARED_WARP_BYTES,
        }
    }
}

/// Generates a module whose kernel `@main` verifies and terminates.
pub fn generate(rng: &mut impl RngLike, cfg: &GenConfig) -> Module {
    generate_case(rng, cfg).module
}

/// Generates a module and the launch it expects.
pub fn generate_case(rng: &mut impl RngLike, cfg: &GenConfig) -> GeneratedCase {
    let layout = Layout::choose(rng, cfg);
    let features = cfg.features;
    let types = func::parameter_types(cfg);
    let param_count = rng.below(cfg.max_params as u64 + 1) as usize;
    let mut params = Vec::new();
    let mut param_bits = Vec::new();
    for i in 0..param_count {
        let ty = *rng::pick(rng, &types);
        params.push(ParamDecl {
            name: format!("u{i}"),
            ty,
            span: Span::NONE,
        });
        param_bits.push(consts::interesting(rng, ty).bits);
    }
    // One program in six uses `@atom` only for unread updates of one
    // associative op and format, with no `membar`: the JIT posts them.
    let posted = if features.atomics && rng.chance(17) {
        let mut formats = vec![NumFormat::U32, NumFormat::S32];
        if features.wide {
            formats.push(NumFormat::U64);
        }
        let format = *rng::pick(rng, &formats);
        let ops: Vec<AtomOp> = AtomOp::COMBINABLE
            .into_iter()
            .filter(|o| o.allows(format))
            .collect();
        Some((*rng::pick(rng, &ops), format))
    } else {
        None
    };
    let scratch = features.shared
        && 2 * layout.shared_phase_bytes + layout.warps_per_wg * SCRATCH_WARP_BYTES
            <= crate::verify::MAX_SHARED_BYTES
        && rng.chance(50);
    let mut env = Env {
        cfg: cfg.clone(),
        layout: layout.clone(),
        params: params.iter().map(|p| p.ty).collect(),
        funcs: Vec::new(),
        posted,
        scratch,
    };
    let function_count = if features.calls {
        rng.below(cfg.max_functions as u64 + 1) as usize
    } else {
        0
    };
    let mut functions: Vec<Function> = Vec::new();
    for i in 0..function_count {
        let (f, info): (Function, FuncInfo) = func::gen_function(rng, &env, i);
        functions.push(f);
        env.funcs.push(info);
    }
    // One module in eight with calls also has a kernel that is never
    // launched, `@other`, before `@main`: the JIT then lowers two kernels,
    // and the functions both call have callers in each.
    if features.calls && rng.chance(12) {
        functions.push(func::gen_kernel(rng, &env, "other"));
    }
    functions.push(func::gen_kernel(rng, &env, "main"));

    let buffers = vec![
        buffer("out", OUT_BINDING, NumFormat::U32),
        buffer("in", IN_BINDING, NumFormat::F32),
        buffer("atom", ATOM_BINDING, NumFormat::U32),
    ];
    let mut shared = Vec::new();
    if features.shared {
        shared.push(SharedDecl {
            name: "shared".into(),
            size: 2 * layout.shared_phase_bytes,
            span: Span::NONE,
        });
    }
    if scratch {
        shared.push(SharedDecl {
            name: "scratch".into(),
            size: layout.warps_per_wg * SCRATCH_WARP_BYTES,
            span: Span::NONE,
        });
    }
    let module = Module {
        params,
        buffers,
        shared,
        functions,
    };
    let buffer_sizes = vec![
        layout.out_bytes as usize,
        layout.in_bytes as usize,
        layout.atom_bytes as usize,
    ];
    let buffer_data = vec![
        consts::buffer_bytes(rng, layout.out_bytes as usize, consts::Fill::Random),
        consts::buffer_bytes(rng, layout.in_bytes as usize, consts::Fill::Values),
        consts::buffer_bytes(rng, layout.atom_bytes as usize, consts::Fill::Counters),
    ];
    GeneratedCase {
        module,
        buffer_sizes,
        buffer_data,
        params: param_bits,
        workgroup: layout.workgroup,
        grid: layout.grid,
    }
}

/// New parameter values and buffer contents for `case`'s program, drawn as
/// [`generate_case`] draws them: one program can be launched on many inputs
/// for the price of one compile.
pub fn redraw_inputs(rng: &mut impl RngLike, case: &GeneratedCase) -> (Vec<u64>, Vec<Vec<u8>>) {
    let params = case
        .module
        .params
        .iter()
        .map(|p| consts::interesting(rng, p.ty).bits)
        .collect();
    let fills = [
        consts::Fill::Random,
        consts::Fill::Values,
        consts::Fill::Counters,
    ];
    let buffers = case
        .buffer_sizes
        .iter()
        .zip(fills)
        .map(|(&len, fill)| consts::buffer_bytes(rng, len, fill))
        .collect();
    (params, buffers)
}

fn buffer(name: &str, binding: u32, elem: NumFormat) -> BufferDecl {
    BufferDecl {
        name: name.into(),
        binding,
        elem,
        span: Span::NONE,
    }
}

/// proptest strategies over generated programs (feature `proptest`).
/// Shrinking lowers the statement budget and the seed, so failures shrink
/// toward smaller programs.
#[cfg(feature = "proptest")]
pub mod strategy {
    use super::{generate_case, GenConfig, GeneratedCase, SplitMix64};
    use crate::module::Module;
    use proptest::prelude::*;

    pub fn cases(cfg: GenConfig) -> impl Strategy<Value = GeneratedCase> {
        let max = cfg.max_stmts.max(1);
        (any::<u64>(), 1..=max).prop_map(move |(seed, stmts)| {
            let mut c = cfg.clone();
            c.max_stmts = stmts;
            generate_case(&mut SplitMix64::new(seed), &c)
        })
    }

    pub fn modules(cfg: GenConfig) -> impl Strategy<Value = Module> {
        cases(cfg).prop_map(|c| c.module)
    }
}
