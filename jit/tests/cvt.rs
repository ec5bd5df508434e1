//! CVT on the JIT against the interpreter (`warpjit_ir::semantics::cvt`):
//! every destination, source and rounding modifier on edge values and
//! random bit patterns, and every f16 bit pattern exhaustively. The
//! directed int -> float and float -> float paths (nearest, then one ulp
//! step) and the integer-only f16 rounding are the code under test.

use warpjit_ir::generate::{RngLike, SplitMix64};
use warpjit_ir::interp::{self, LaunchConfig};
use warpjit_ir::semantics::ieee::f16_to_f32_bits;
use warpjit_ir::{NumFormat, VerifiedModule};
use warpjit_jit::{compile, launch, JitOptions, Target};

const ROUNDS: [&str; 4] = ["round", "ceil", "flr", "trunc"];

/// Text that leaves the value of format `src` for invocation `%gid` in `%x`.
fn load_source(src: NumFormat) -> String {
    let load = match src {
        NumFormat::S8 | NumFormat::U8 => "  %w = load.u32 @input, %addr\n  %x = cvt.u8.u32 %w\n",
        NumFormat::S16 | NumFormat::U16 => "  %w = load.u32 @input, %addr\n  %x = cvt.u16.u32 %w\n",
        NumFormat::F16 => {
            "  %w = load.u32 @input, %addr\n  %h = cvt.u16.u32 %w\n  %x = bitcast.f16 %h\n"
        }
        NumFormat::S32 | NumFormat::U32 => "  %x = load.u32 @input, %addr\n",
        NumFormat::S64 | NumFormat::U64 => "  %x = load.u64 @input, %addr\n",
        NumFormat::F32 => "  %x = load.f32 @input, %addr\n",
        NumFormat::F64 => "  %x = load.f64 @input, %addr\n",
    };
    load.to_string()
}

fn store_format(dst: NumFormat) -> &'static str {
    match dst.bits() {
        8 => "u8",
        16 if dst == NumFormat::F16 => "f16",
        16 => "u16",
        32 if dst == NumFormat::F32 => "f32",
        32 => "u32",
        _ if dst == NumFormat::F64 => "f64",
        _ => "u64",
    }
}

/// One kernel converting each invocation's input with every destination and
/// rounding; result k of invocation i goes to byte `(k * n + i) * 8`.
fn program(src: NumFormat, n: u32) -> (String, usize) {
    let mut text = String::from(
        "buffer @input[0]: u64\nbuffer @out[1]: u64\n\nkernel @main workgroup(256) {\n",
    );
    text.push_str("  %gid = global_id.x\n  %addr = mul %gid, 8\n");
    text.push_str(&load_source(src));
    let mut k = 0usize;
    for dst in NumFormat::ALL {
        for round in ROUNDS {
            let (s, d) = (src.name(), dst.name());
            let at = (k as u64) * u64::from(n) * 8;
            text.push_str(&format!(
                "  %y{k} = cvt.{d}.{s}.{round} %x\n  %a{k} = add %addr, {at}\n  store.{} @out, %a{k}, %y{k}\n",
                store_format(dst)
            ));
            k += 1;
        }
    }
    text.push_str("}\n");
    (text, k)
}

fn edge_values(src: NumFormat) -> Vec<u64> {
    let mut v: Vec<u64> = vec![0, 1, 2, 3, 0x7f, 0x80, 0xff, 0x7fff, 0x8000, 0xffff];
    v.extend([
        0x7fff_ffff,
        0x8000_0000,
        0xffff_ffff,
        0x0100_0001,
        0x0100_0003,
        0x00ff_ffff,
    ]);
    v.extend([
        i64::MAX as u64,
        i64::MIN as u64,
        u64::MAX,
        (1 << 53) + 1,
        (1 << 24) + 1,
    ]);
    v.extend([
        (1u64 << 63) + 1025,
        u64::MAX - 1024,
        65519,
        65520,
        65504,
        65505,
    ]);
    let floats32 = [
        0.5f32,
        1.5,
        2.5,
        -0.5,
        -1.5,
        -2.5,
        65519.0,
        65520.0,
        65504.0,
        -65520.0,
        1e6,
        -1e6,
        1e-8,
        -1e-8,
        5.9604645e-8,
        2.9802322e-8,
        2.0e9,
        4294967296.0,
        -2147483648.0,
        2147483648.0,
        9.223372e18,
        -9.223372e18,
        1.8446744e19,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::NAN,
        f32::MIN_POSITIVE,
        -0.0,
        6.1035156e-5,
        6.097555e-5,
        16777217.0,
    ];
    match src {
        NumFormat::F32 => v.extend(floats32.iter().map(|f| u64::from(f.to_bits()))),
        NumFormat::F64 => {
            v.extend(floats32.iter().map(|f| f64::from(*f).to_bits()));
            v.extend(
                [
                    1e300,
                    -1e300,
                    1e-300,
                    3.4028235677973366e38,
                    3.4028236e38,
                    1.401298464324817e-45,
                    7.006492321624085e-46,
                    65519.99,
                    9.223372036854775e18,
                    1.8446744073709552e19,
                ]
                .iter()
                .map(|f: &f64| f.to_bits()),
            );
        }
        _ => {}
    }
    v
}

fn check(src: NumFormat, inputs: &[u64]) {
    let n = inputs.len() as u32;
    let (text, results) = program(src, n);
    let module = warpjit_ir::text::parse(&text).unwrap_or_else(|d| panic!("{d}\n{text}"));
    let module = VerifiedModule::new(module).unwrap_or_else(|d| panic!("{d}\n{text}"));
    let kernel = module.find_function("main").expect("@main");
    let mut cfg = LaunchConfig::new([n.div_ceil(256), 1, 1], [256, 1, 1]);
    cfg.sm_count = 1;
    let input: Vec<u8> = inputs.iter().flat_map(|v| v.to_le_bytes()).collect();
    // Spare room for the rounded-up last workgroup: its stores land past
    // the results of invocation n - 1 only within the buffer.
    let out = vec![0xa5u8; results * n.div_ceil(256) as usize * 256 * 8];
    let mut expected = vec![input.clone(), out.clone()];
    interp::launch(&module, kernel, &cfg, &[], &mut expected).expect("interpreter");
    for target in [Target::Native, Target::Avx2, Target::Sse42] {
        let compiled = compile(
            &module,
            &JitOptions {
                opt_level: 2,
                target,
                whole_warps: true,
                workgroup: None,
                prefetch_ahead: warpjit_jit::PrefetchAhead::On,
            },
        )
        .expect("compiles");
        let mut memory = vec![input.clone(), out.clone()];
        launch(&compiled, kernel, &cfg, &[], &mut memory).expect("runs");
        if memory != expected {
            let at = memory[1]
                .iter()
                .zip(&expected[1])
                .position(|(a, b)| a != b)
                .unwrap_or(0)
                / 8;
            let (k, i) = (at / n as usize, at % n as usize);
            let dst = NumFormat::ALL[k / 4];
            let word = |m: &Vec<Vec<u8>>| {
                u64::from_le_bytes(m[1][at * 8..at * 8 + 8].try_into().expect("8 bytes"))
            };
            panic!(
                "{target:?}: cvt.{}.{}.{} of {:#x}: jit {:#x}, interpreter {:#x}",
                dst.name(),
                src.name(),
                ROUNDS[k % 4],
                inputs.get(i).copied().unwrap_or(0),
                word(&memory),
                word(&expected)
            );
        }
    }
}

fn values(src: NumFormat, seed: u64, count: usize) -> Vec<u64> {
    let mut rng = SplitMix64::new(seed);
    let mut v = edge_values(src);
    while v.len() < count {
        let bits = rng.next_u64();
        // Half the random values are small, so narrow results are exact or near.
        let bits = match v.len() % 3 {
            0 => bits,
            1 => bits >> (bits % 64),
            // Near an f16 value, so narrowing to f16 meets ties and boundaries.
            _ => {
                let h = f16_to_f32_bits(bits as u16);
                let delta = rng.below(0x4001) as i64 - 0x2000;
                let f = (h as i64 + delta) as u32;
                match src {
                    NumFormat::F64 => f64::from(f32::from_bits(f)).to_bits() ^ (bits >> 40 & 0xfff),
                    _ => u64::from(f),
                }
            }
        };
        v.push(bits);
    }
    v
}

macro_rules! from_source {
    ($name:ident, $fmt:expr) => {
        #[test]
        fn $name() {
            check($fmt, &values($fmt, $fmt as u64 + 1, 2048));
        }
    };
}

from_source!(cvt_from_s8, NumFormat::S8);
from_source!(cvt_from_u16, NumFormat::U16);
from_source!(cvt_from_s32, NumFormat::S32);
from_source!(cvt_from_u32, NumFormat::U32);
from_source!(cvt_from_s64, NumFormat::S64);
from_source!(cvt_from_u64, NumFormat::U64);
from_source!(cvt_from_f32, NumFormat::F32);
from_source!(cvt_from_f64, NumFormat::F64);

/// Every f16 bit pattern, to every destination with every modifier.
#[test]
fn cvt_from_every_f16() {
    let all: Vec<u64> = (0..=0xffffu64).collect();
    check(NumFormat::F16, &all);
}
