//! Atomics with conflicting addresses against the interpreter, on every
//! target: every op and format, on shared memory and on buffers, with the
//! old values used and unused, under lane masks (partial warps, divergent,
//! single lanes, none), for address patterns from one address for all
//! lanes to all distinct, pairs, dense and sparse random ones, unaligned
//! and out-of-bounds ones. Compares all memory and the fault reports.

mod direct;

use direct::module;
use warpjit_ir::interp::{self, LaunchConfig};
use warpjit_jit::{compile, launch, JitOptions, Target};

/// Invocations per workgroup: two full warps and a partial one.
const GROUP: u32 = 72;
/// Bytes of each op's shared array and buffer.
const MEMORY: u32 = 256;

/// Every op and format the language allows, then some with constant
/// operands (`!` after the op): the same value in every lane.
const OPS: &[(&str, &str)] = &[
    ("add", "u32"),
    ("add", "s32"),
    ("and", "u32"),
    ("or", "s32"),
    ("xor", "u32"),
    ("min", "s32"),
    ("min", "u32"),
    ("max", "s32"),
    ("max", "u32"),
    ("exch", "u32"),
    ("cswap", "u32"),
    ("iwrap", "u32"),
    ("dwrap", "u32"),
    ("add", "u64"),
    ("exch", "u64"),
    ("cswap", "u64"),
    ("add!", "u32"),
    ("max!", "s32"),
    ("cswap!", "u32"),
];

/// A kernel doing every op of [`OPS`] in turn, op `k` on bytes `k * 256`
/// onwards of `@mem` (`shared`: a shared array loaded from and copied back
/// to `@mem`), storing the old values when `used`. Lane `l` of every warp
/// takes part when bit `l` of `%active` is set. Addresses past 256 reach
/// the next op's bytes, and past the memory for the last op.
fn kernel(shared: bool, used: bool) -> String {
    let bytes = OPS.len() as u32 * MEMORY;
    let mut t = String::from(
        "param %active: i32\nbuffer @addr[0]: u32\nbuffer @val[1]: u32\nbuffer @out[2]: u32\n",
    );
    t += "buffer @g[3]: u32\nbuffer @empty[4]: u32\n";
    let mem = if shared {
        t += &format!("shared @s[{bytes}]\n");
        "@s"
    } else {
        "@g"
    };
    // Invocation i copies words i, i + GROUP, ... between @g and @s.
    let copy = |from: &str, to: &str| {
        format!(
            "  $w = mov %i
  loop {{
    %done_{from} = cmp.ge.u $w, {}
    if %done_{from} {{
      break
    }}
    %wa_{from} = shl $w, 2
    %word_{from} = load.u32 @{from}, %wa_{from}
    store.u32 @{to}, %wa_{from}, %word_{from}
    $w = add $w, {GROUP}
  }}
",
            bytes / 4
        )
    };
    t += &format!(
        "kernel @main workgroup({GROUP}) {{
  var $w: i32
  %i = local_index
  %lane = lane_id
  %bits = shr.u %active, %lane
  %bit = and %bits, 1
  %on = cmp.eq %bit, 1
  %a4 = shl %i, 2
  %a8 = shl %i, 3
  %a = load.u32 @addr, %a4
  %x = load.u32 @val, %a8
  %y = load.u32 @val, %a4
  %x64 = load.u64 @val, %a8
  %y64 = pk64 %y, %x
"
    );
    if shared {
        t += &copy("g", "s");
        t += "  barrier\n";
    }
    t += "  if %on {\n";
    for (k, (op, format)) in OPS.iter().enumerate() {
        let wide = *format == "u64";
        let constant = op.ends_with('!');
        let op = op.trim_end_matches('!');
        let (x, y) = match (constant, wide) {
            (true, _) => ("3", "1"),
            (false, true) => ("%x64", "%y64"),
            (false, false) => ("%x", "%y"),
        };
        let operands = if op == "cswap" {
            format!("{x}, {y}")
        } else {
            x.to_string()
        };
        t += &format!("    %at_mem{k} = add %a, {}\n", k as u32 * MEMORY);
        t += &format!("    %old{k} = atom.{op}.{format} {mem}, %at_mem{k}, {operands}\n");
        if used {
            let slot = k as u32 * GROUP * 8;
            t += &format!("    %at{k} = add %a8, {slot}\n");
            let store = if wide { "store.u64" } else { "store.u32" };
            t += &format!("    {store} @out, %at{k}, %old{k}\n");
        }
    }
    // Every lane is out of bounds of an empty buffer: nothing is touched.
    t += "    %none = atom.add.u32 @empty, %a, %x\n";
    if used {
        let slot = OPS.len() as u32 * GROUP * 8;
        t += &format!("    %at_none = add %a8, {slot}\n    store.u32 @out, %at_none, %none\n");
    }
    t += "  }\n";
    if shared {
        t += "  barrier\n";
        t += &copy("s", "g");
    }
    t + "}\n"
}

/// A small deterministic generator (SplitMix64).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: u32) -> u32 {
        (self.next() % u64::from(n)) as u32
    }
}

/// Byte addresses per invocation: one address, all distinct (the last
/// lanes out of bounds), pairs, reversed pairs, a permutation, dense and
/// sparse random words, and random unaligned bytes partly out of bounds.
fn address_patterns(rng: &mut Rng) -> Vec<Vec<u32>> {
    let n = GROUP;
    let words = MEMORY / 4;
    vec![
        vec![12; n as usize],
        (0..n).map(|i| 4 * i).collect(),
        (0..n).map(|i| 4 * (i / 2)).collect(),
        (0..n).map(|i| 4 * ((31 - i % 32) / 2)).collect(),
        (0..n).map(|i| 4 * ((i * 7) % words)).collect(),
        (0..n).map(|_| 4 * rng.below(3)).collect(),
        (0..n).map(|_| 4 * rng.below(words)).collect(),
        (0..n).map(|_| rng.below(MEMORY + 40)).collect(),
    ]
}

/// Lane masks: all, alternate, both ends, halves, one lane, none, random.
fn lane_masks(rng: &mut Rng) -> Vec<u64> {
    vec![
        0xffff_ffff,
        0x5555_5555,
        0x8000_0001,
        0xffff_0000,
        0x0000_ffff,
        1 << 7,
        0,
        rng.next() & 0xffff_ffff,
    ]
}

fn bytes(words: impl IntoIterator<Item = u32>) -> Vec<u8> {
    words.into_iter().flat_map(u32::to_le_bytes).collect()
}

/// Buffers for one launch: addresses, values (small ones half the time, so
/// `cswap` compares succeed and `iwrap`/`dwrap` wrap), outputs, and the
/// ops' memory.
fn buffers(rng: &mut Rng, addresses: &[u32], small: bool) -> Vec<Vec<u8>> {
    let value = |rng: &mut Rng| {
        if small {
            rng.below(4)
        } else {
            rng.next() as u32
        }
    };
    let vals: Vec<u32> = (0..2 * GROUP).map(|_| value(rng)).collect();
    let mut out = vec![
        bytes(addresses.iter().copied()),
        bytes(vals),
        vec![0u8; (OPS.len() + 1) * GROUP as usize * 8],
    ];
    let words = OPS.len() as u32 * MEMORY / 4;
    out.push(bytes((0..words).map(|_| value(rng))));
    out.push(Vec::new());
    out
}

/// Compiles the kernel once per target and compares every launch with the
/// interpreter's.
fn same_as_interpreter(shared: bool, used: bool, targets: &[Target]) {
    let text = kernel(shared, used);
    let m = module(&text);
    let main = m.find_function("main").expect("@main");
    let cfg = LaunchConfig::new([2, 1, 1], [GROUP, 1, 1]);
    let mut rng = Rng(u64::from(shared) * 2 + u64::from(used));
    let mut cases = Vec::new();
    for (p, addresses) in address_patterns(&mut rng).iter().enumerate() {
        for active in lane_masks(&mut rng) {
            let small = (p as u64 + active).is_multiple_of(2);
            cases.push((active, buffers(&mut rng, addresses, small)));
        }
    }
    for &target in targets {
        let options = JitOptions {
            opt_level: 2,
            target,
            ..JitOptions::default()
        }
        .for_workgroup([GROUP, 1, 1]);
        let compiled = compile(&m, &options).expect("compiles");
        for (active, buffers) in &cases {
            let params = [*active];
            let mut expected = buffers.clone();
            let want = interp::launch(&m, main, &cfg, &params, &mut expected).expect("interpreter");
            let mut memory = buffers.clone();
            let got = launch(&compiled, main, &cfg, &params, &mut memory).expect("runs");
            for (b, (g, w)) in memory.iter().zip(&expected).enumerate() {
                if let Some(at) = g.iter().zip(w).position(|(g, w)| g != w) {
                    let (op, format) = match b {
                        2 => OPS[(at / (GROUP as usize * 8)).min(OPS.len() - 1)],
                        3 => OPS[(at / MEMORY as usize).min(OPS.len() - 1)],
                        _ => ("", ""),
                    };
                    panic!(
                        "{target:?}, lanes {active:#x}, addresses {:?}: buffer {b} differs at byte {at} (atom.{op}.{format})",
                        &buffers[0][..16]
                    );
                }
            }
            assert_eq!(
                got.faults, want.faults,
                "{target:?}, lanes {active:#x}: faults"
            );
        }
    }
}

#[test]
fn shared_atomics_with_old_values_used() {
    same_as_interpreter(true, true, &[Target::Native, Target::Avx2, Target::Sse42]);
}

#[test]
fn shared_atomics_with_old_values_unused() {
    same_as_interpreter(true, false, &[Target::Native, Target::Avx2]);
}

#[test]
fn buffer_atomics_with_old_values_used() {
    same_as_interpreter(false, true, &[Target::Native, Target::Avx2]);
}

#[test]
fn buffer_atomics_with_old_values_unused() {
    same_as_interpreter(false, false, &[Target::Native, Target::Avx2]);
}
