//! exp2, log2, sin, cos and pow at every optimisation level: inline at
//! levels 2 and 3, calls of routines shared between modules at levels 0
//! and 1 (`lower/math.rs`). Both are the interpreter's operations, so
//! every lane's bits must match it, special values included.

mod direct;

use warpjit_ir::interp::{self, LaunchConfig};
use warpjit_jit::{compile, launch, JitOptions};

fn kernel(ty: &str, shift: u32) -> String {
    let step = 1 << shift;
    format!(
        "buffer @xs[0]: {ty}
buffer @out[1]: {ty}
kernel @main workgroup(64) {{
  %i = global_id.x
  %at = shl %i, {shift}
  %x = load.{ty} @xs, %at
  %a = exp2 %x
  %b = log2 %x
  %c = sin %x
  %d = cos %x
  %e = pow %x, %a
  %base = mul %i, 5
  %o0 = shl %base, {shift}
  store.{ty} @out, %o0, %a
  %o1 = add %o0, {step}
  store.{ty} @out, %o1, %b
  %o2 = add %o1, {step}
  store.{ty} @out, %o2, %c
  %o3 = add %o2, {step}
  store.{ty} @out, %o3, %d
  %o4 = add %o3, {step}
  store.{ty} @out, %o4, %e
}}"
    )
}

/// Special values first, then a spread of magnitudes and signs.
fn inputs() -> Vec<f64> {
    let mut xs = vec![
        0.0,
        -0.0,
        1.0,
        -1.0,
        0.5,
        f64::NAN,
        f64::INFINITY,
        f64::NEG_INFINITY,
        1e-40,
        -1e-310,
        127.9,
        128.0,
        -149.5,
        -1075.0,
        1023.5,
        1e30,
        std::f64::consts::PI,
        -std::f64::consts::FRAC_PI_2,
    ];
    let mut h = 0x9e37_79b9_u32;
    while xs.len() < 192 {
        h = h.wrapping_mul(2654435761).wrapping_add(12345);
        let unit = f64::from(h >> 8) / f64::from(1u32 << 24);
        let scale = [1.0, 10.0, 200.0, 1e-3][xs.len() % 4];
        xs.push((unit * 2.0 - 1.0) * scale);
    }
    xs
}

fn check(ty: &str, bytes: Vec<u8>, elem: usize) {
    let text = kernel(ty, elem.trailing_zeros());
    let m = direct::module(&text);
    let main = m.find_function("main").expect("@main");
    let cfg = LaunchConfig::new([3, 1, 1], [64, 1, 1]);
    let buffers = vec![bytes, vec![0u8; 192 * 5 * elem]];
    let mut expected = buffers.clone();
    interp::launch(&m, main, &cfg, &[], &mut expected).expect("interpreter");
    let routine = format!("@warpjit.math.exp2.f{}", elem * 8);
    for target in direct::TARGETS {
        for level in 0..=3u8 {
            let options = JitOptions {
                target,
                opt_level: level,
                ..JitOptions::default()
            };
            let compiled = compile(&m, &options).expect("compiles");
            let ir = compiled.llvm_ir().expect("IR");
            let calls = ir.contains(&format!(
                "call <32 x {}> {routine}",
                ["float", "double"][elem / 8]
            ));
            assert_eq!(calls, level < 2, "{target:?} level {level}: {ir}");
            let mut memory = buffers.clone();
            launch(&compiled, main, &cfg, &[], &mut memory).expect("runs");
            assert!(memory == expected, "{ty} on {target:?} at level {level}");
        }
    }
}

#[test]
fn math_matches_the_interpreter_inline_and_as_calls_f32() {
    let bytes = inputs()
        .iter()
        .flat_map(|x| (*x as f32).to_le_bytes())
        .collect();
    check("f32", bytes, 4);
}

#[test]
fn math_matches_the_interpreter_inline_and_as_calls_f64() {
    let bytes = inputs().iter().flat_map(|x| x.to_le_bytes()).collect();
    check("f64", bytes, 8);
}

/// A float type whose `exp2` and `log2` the sweeps check.
trait Float: Copy {
    const NAME: &'static str;
    /// Stored mantissa bits.
    const MANTISSA_BITS: u32;
    /// The largest biased exponent of a finite number.
    const MAX_EXPONENT: u64;
    /// The stored mantissa bits of sqrt(1/2), where log2 splits.
    const SQRT_HALF_MANTISSA: u64;
    fn to_bytes(self) -> Vec<u8>;
    fn from_bytes(bytes: &[u8]) -> Self;
    fn from_bits(bits: u64) -> Self;
    /// The interpreter's `exp2`.
    fn interpreter_exp2(self) -> Self;
    /// The interpreter's `log2`.
    fn interpreter_log2(self) -> Self;
    fn bits(self) -> u64;
    /// The bits a store writes: a NaN as the canonical NaN.
    fn stored_bits(self) -> u64;
}

macro_rules! float {
    ($t:ty, $bits:ty, $mantissa:expr, $sqrt_half:expr, $exp2:ident, $log2:ident) => {
        impl Float for $t {
            const NAME: &'static str = stringify!($t);
            const MANTISSA_BITS: u32 = $mantissa;
            const MAX_EXPONENT: u64 = (1 << (<$bits>::BITS - 1 - $mantissa)) - 2;
            const SQRT_HALF_MANTISSA: u64 = $sqrt_half & ((1 << $mantissa) - 1);
            fn to_bytes(self) -> Vec<u8> {
                self.to_le_bytes().to_vec()
            }
            fn from_bytes(bytes: &[u8]) -> $t {
                <$t>::from_le_bytes(bytes.try_into().expect("one element"))
            }
            fn from_bits(bits: u64) -> $t {
                <$t>::from_bits(bits as $bits)
            }
            fn interpreter_exp2(self) -> $t {
                warpjit_ir::semantics::math::$exp2(self)
            }
            fn interpreter_log2(self) -> $t {
                warpjit_ir::semantics::math::$log2(self)
            }
            fn bits(self) -> u64 {
                u64::from(self.to_bits())
            }
            fn stored_bits(self) -> u64 {
                if self.is_nan() {
                    u64::from(<$bits>::MAX >> 1)
                } else {
                    self.bits()
                }
            }
        }
    };
}

float!(f32, u32, 23, 0x3f35_04f3, exp2_f32, log2_f32);
float!(f64, u64, 52, 0x3fe6_a09e_667f_3bcd, exp2_f64, log2_f64);

/// Output `output` of `kernel` (0 exp2, 1 log2) for every `xs`, at levels
/// 0 and 2 on every target, against the interpreter's routine `reference`,
/// bit for bit.
fn sweep<T: Float>(xs: &[T], output: usize, reference: fn(T) -> T) {
    let ty = T::NAME;
    let elem = std::mem::size_of::<T>();
    let shift = elem.trailing_zeros();
    let text = kernel(ty, shift);
    let m = direct::module(&text);
    let main = m.find_function("main").expect("@main");
    assert_eq!(xs.len() % 64, 0);
    let cfg = LaunchConfig::new([(xs.len() / 64) as u32, 1, 1], [64, 1, 1]);
    let input: Vec<u8> = xs.iter().flat_map(|&x| x.to_bytes()).collect();
    for target in direct::TARGETS {
        for level in [0, 2] {
            let options = JitOptions {
                target,
                opt_level: level,
                ..JitOptions::default()
            };
            let compiled = compile(&m, &options).expect("compiles");
            let mut memory = vec![input.clone(), vec![0u8; 5 * input.len()]];
            launch(&compiled, main, &cfg, &[], &mut memory).expect("runs");
            for (k, (&x, got)) in xs.iter().zip(memory[1].chunks(5 * elem)).enumerate() {
                let got = &got[output * elem..(output + 1) * elem];
                assert_eq!(
                    T::from_bytes(got).bits(),
                    reference(x).stored_bits(),
                    "{ty} output {output} of element {k} ({:#x}) on {target:?} at level {level}",
                    x.bits()
                );
            }
        }
    }
}

/// The last step of `exp2` scales by `2^n` (with AVX-512 one `vscalef`
/// instruction, elsewhere two multiplies): every `n` of the clamped range,
/// with fractions on both sides of each integer, through overflow and the
/// denormals down to zero.
#[test]
fn exp2_scaling_matches_the_interpreter_at_every_exponent_f32() {
    let xs: Vec<f32> = (0..(283 * 64))
        .map(|k| -153.0 + k as f32 / 64.0 + 1.0 / 4096.0)
        .collect();
    sweep(&xs, 0, f32::interpreter_exp2);
}

#[test]
fn exp2_scaling_matches_the_interpreter_at_every_exponent_f64() {
    let xs: Vec<f64> = (0..(2112 * 16))
        .map(|k| -1078.0 + k as f64 / 16.0 + 1.0 / 65536.0)
        .collect();
    sweep(&xs, 0, f64::interpreter_exp2);
}

/// Inputs for `log2`'s reduction to an exponent and a mantissa in
/// [sqrt(1/2), sqrt(2)): in every binade, denormals included, the
/// mantissas at both ends and on both sides of sqrt(2)'s; every denormal
/// power of two and sqrt(1/2)'s bits shifted into the denormals; zeros,
/// infinities, NaN and negatives.
fn log2_inputs<T: Float>() -> Vec<T> {
    let top = (1u64 << T::MANTISSA_BITS) - 1;
    let split = T::SQRT_HALF_MANTISSA;
    let mantissas = [0, 1, split - 1, split, split + 1, top / 3, top - 1, top];
    let mut bits: Vec<u64> = (0..=T::MAX_EXPONENT)
        .flat_map(|e| mantissas.map(|m| (e << T::MANTISSA_BITS) | m))
        .collect();
    let sqrt_half = (1u64 << T::MANTISSA_BITS) | split;
    for k in 0..T::MANTISSA_BITS {
        bits.extend([1 << k, (1 << k) + 1, sqrt_half >> k, (sqrt_half >> k) + 1]);
    }
    let infinity = (T::MAX_EXPONENT + 1) << T::MANTISSA_BITS;
    let negative = 1u64 << (std::mem::size_of::<T>() * 8 - 1);
    bits.extend([
        negative,
        infinity,
        infinity | negative,
        infinity | 1,
        infinity | top,
        negative | 1,
        negative | (1 << T::MANTISSA_BITS),
        negative | (T::MAX_EXPONENT << T::MANTISSA_BITS) | top,
    ]);
    // Padding: numbers just above 1.
    let one = (T::MAX_EXPONENT / 2) << T::MANTISSA_BITS;
    while !bits.len().is_multiple_of(64) {
        bits.push(one | bits.len() as u64);
    }
    bits.into_iter().map(T::from_bits).collect()
}

#[test]
fn log2_reduction_matches_the_interpreter_in_every_binade_f32() {
    sweep(&log2_inputs::<f32>(), 1, f32::interpreter_log2);
}

#[test]
fn log2_reduction_matches_the_interpreter_in_every_binade_f64() {
    sweep(&log2_inputs::<f64>(), 1, f64::interpreter_log2);
}
