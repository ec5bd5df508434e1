//! Cases that once differed, or that pin down a lowering trick, kept as
//! programs with fixed inputs. A differential failure prints a
//! `Regression` literal to paste into [`REGRESSIONS`].

use crate::check::{self, Inputs};
use crate::report::decode_bytes;
use warpjit_ir::{FuncKind, VerifiedModule};
use warpjit_jit::Target;

pub struct Regression {
    pub name: &'static str,
    /// A `.warp` program whose kernel is `@main` with a `workgroup` size.
    pub program: &'static str,
    pub grid: [u32; 3],
    pub sm_count: u32,
    pub warps_per_sm: u32,
    pub params: &'static [u64],
    /// Each buffer's bytes as `report::encode_bytes` writes them.
    pub buffers: &'static [&'static str],
}

pub const REGRESSIONS: &[Regression] = &[
    // A module's only load of a kind declared the shared lane routine for
    // its fallback, and `default<O3>` removed the call and then the
    // declaration: the engine must skip routines no longer declared.
    Regression {
        name: "routine_call_removed_by_the_optimiser",
        program: r#"
param %u0: f64
buffer @out[0]: u32
buffer @in[1]: f32
buffer @atom[2]: u32
shared @shared[2048]

func @f0(%slot: i32, %wreg: i32, %sreg: i32) {
  var $x0: i32
  var $x1: i32
  private @stack0[100]
  private @stack1[24]
  %v11 = local_id.y
  %v12 = rem.u %v11, 256
  %v13 = mul %v12, 1
  $x1 = load.u8 @in, %v13
}

kernel @main workgroup(4, 4, 2) {
  var $x0: f64
  var $x1: i32
}
"#,
        grid: [1, 1, 1],
        sm_count: 1,
        warps_per_sm: 64,
        params: &[0x0],
        buffers: &[
            "z:8192",
            "z:256",
            "z:256",
        ],
    },
    // 32-bit division is lowered through f64 (x86 has no vector integer
    // division); every lane divides an edge value by another, including by
    // 0 and MIN by -1, and local_id.y/z divide by the workgroup size in a
    // 3-D workgroup whose second warp is partial.
    Regression {
        name: "division_edge_values",
        program: r#"
param %scale: i32
buffer @out[0]: u32
buffer @in[1]: u32

kernel @main workgroup(5, 4, 2) {
  %i = local_index
  %pair = shl %i, 3
  %x = load.u32 @in, %pair
  %y_at = add %pair, 4
  %y = load.u32 @in, %y_at
  %du = div.u %x, %y
  %ru = rem.u %x, %y
  %ds = div.s %x, %y
  %rs = rem.s %x, %y
  %xs = mul %x, %scale
  %dk = div.u %xs, 3
  %ly = local_id.y
  %lz = local_id.z
  %record = shl %i, 5
  store.u32 @out, %record, %du
  %a1 = add %record, 4
  store.u32 @out, %a1, %ru
  %a2 = add %record, 8
  store.u32 @out, %a2, %ds
  %a3 = add %record, 12
  store.u32 @out, %a3, %rs
  %a4 = add %record, 16
  store.u32 @out, %a4, %dk
  %a5 = add %record, 20
  store.u32 @out, %a5, %ly
  %a6 = add %record, 24
  store.u32 @out, %a6, %lz
}
"#,
        grid: [2, 1, 1],
        sm_count: 1,
        warps_per_sm: 4,
        params: &[0x9e3779b9],
        buffers: &["z:2560", "00000000030000000100000001000080020000000100000003000000000000800700000005000000f9fffffffefffffffeffffff78563412ffffffff0700000000000080fdffffffffffff7f0200000001000080ffffff7ffdffffff0000000064000000ffffffff78563412efbeaddeefbeaddef9ffffff050000006400000000000000030000000100000001000080020000000100000003000000000000800700000005000000f9fffffffefffffffeffffff78563412ffffffff0700000000000080fdffffffffffff7f0200000001000080ffffff7ffdffffff0000000064000000ffffffff78563412efbeaddeefbeaddef9ffffff050000006400000000000000030000000100000001000080020000000100000003000000000000800700000005000000f9fffffffefffffffeffffff78563412ffffffff07000000"],
    },
    // On AVX2 the masks are widened to 32-bit lanes after the optimiser.
    // At O3 the rounds of `ordered` keep their waiting lanes in a phi fed
    // by a shuffle of a 16-lane mask, which has no wide form of its own;
    // the phi's twin once took poison from it, and every round stored.
    Regression {
        name: "ordered_rounds_widened_phi",
        program: r#"
buffer @out[0]: u32

kernel @main workgroup(5, 3, 2) {
  %v0 = lane_id
  %v26 = shr.u %v0, 3
  ordered %v26 {
    store.f16 @out, 23079, -3084.0:f16
  }
}
"#,
        grid: [1, 1, 1],
        sm_count: 1,
        warps_per_sm: 1,
        params: &[],
        buffers: &["z:64"],
    },
];

fn inputs(r: &Regression, module: &VerifiedModule) -> Inputs {
    let kernel = module.find_function("main").expect("@main");
    let workgroup = match module.function(kernel).kind {
        FuncKind::Kernel { workgroup: Some(w) } => w,
        _ => panic!("{}: @main needs a workgroup size", r.name),
    };
    Inputs {
        params: r.params.to_vec(),
        buffers: r
            .buffers
            .iter()
            .map(|b| decode_bytes(b).unwrap_or_else(|e| panic!("{}: {e}", r.name)))
            .collect(),
        grid: r.grid,
        workgroup,
        sm_count: r.sm_count,
        warps_per_sm: r.warps_per_sm,
    }
}

#[test]
fn regressions_match_the_interpreter() {
    let at = [
        (Target::Native, 0),
        (Target::Native, 2),
        (Target::Avx2, 2),
        (Target::Sse42, 1),
        (Target::Native, 3),
        (Target::Avx2, 3),
    ];
    for r in REGRESSIONS {
        let module = warpjit_ir::text::parse(r.program)
            .map_err(|d| d.to_string())
            .and_then(|m| VerifiedModule::new(m).map_err(|d| d.to_string()))
            .unwrap_or_else(|e| panic!("{}: {e}", r.name));
        let inputs = inputs(r, &module);
        match check::check(&module, &inputs, &at, 1_000_000) {
            Ok(Ok(())) => {}
            Ok(Err(m)) => panic!("{}: {:?} O{}: {}", r.name, m.target, m.opt_level, m.detail),
            Err(e) => panic!("{}: {e}", r.name),
        }
    }
}
