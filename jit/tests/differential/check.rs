//! One comparison: a program and its inputs on the interpreter and on the
//! JIT at some targets and optimisation levels.

use warpjit_ir::interp::{self, FaultReport, LaunchConfig};
use warpjit_ir::VerifiedModule;
use warpjit_jit::{compile, launch, JitOptions, Target};

/// Everything a launch needs besides the program.
#[derive(Clone, Debug, PartialEq)]
pub struct Inputs {
    pub params: Vec<u64>,
    pub buffers: Vec<Vec<u8>>,
    pub grid: [u32; 3],
    pub workgroup: [u32; 3],
    pub sm_count: u32,
    pub warps_per_sm: u32,
}

impl Inputs {
    pub fn config(&self, fuel: u64) -> LaunchConfig {
        let mut cfg = LaunchConfig::new(self.grid, self.workgroup);
        cfg.sm_count = self.sm_count;
        cfg.warps_per_sm = self.warps_per_sm;
        cfg.fuel = Some(fuel);
        cfg
    }
}

/// What went wrong, coarsely: shrinking keeps a smaller program only if it
/// still fails the same way.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Compile,
    Launch,
    Memory,
    Faults,
}

#[derive(Clone, Debug)]
pub struct Mismatch {
    pub target: Target,
    pub opt_level: u8,
    pub kind: Kind,
    pub detail: String,
}

/// The interpreter's result, the reference.
pub struct Expected {
    faults: FaultReport,
    memory: Vec<Vec<u8>>,
}

/// Runs the interpreter; an error means there is nothing to compare against.
pub fn expected(module: &VerifiedModule, inputs: &Inputs, fuel: u64) -> Result<Expected, String> {
    let kernel = module.find_function("main").ok_or("no @main")?;
    let mut memory = inputs.buffers.clone();
    let report = interp::launch(
        module,
        kernel,
        &inputs.config(fuel),
        &inputs.params,
        &mut memory,
    )
    .map_err(|e| format!("interpreter: {e}"))?;
    Ok(Expected {
        faults: report.faults,
        memory,
    })
}

/// Compiles (the JIT's per-thread cache makes repeated launches of one
/// program cheap) and runs at one target and level.
pub fn compare_at(
    module: &VerifiedModule,
    inputs: &Inputs,
    want: &Expected,
    target: Target,
    opt_level: u8,
    fuel: u64,
) -> Result<(), Mismatch> {
    let fail = |kind, detail: String| Mismatch {
        target,
        opt_level,
        kind,
        detail,
    };
    let kernel = module
        .find_function("main")
        .ok_or_else(|| fail(Kind::Launch, "no @main".into()))?;
    // The kind of code the runtime would run for this workgroup size.
    let options = JitOptions {
        opt_level,
        target,
        ..JitOptions::default()
    }
    .for_workgroup(inputs.workgroup);
    let compiled = compile(module, &options).map_err(|e| fail(Kind::Compile, e.to_string()))?;
    let mut memory = inputs.buffers.clone();
    let got = launch(
        &compiled,
        kernel,
        &inputs.config(fuel),
        &inputs.params,
        &mut memory,
    )
    .map_err(|e| fail(Kind::Launch, e.to_string()))?;
    for (i, (m, x)) in memory.iter().zip(&want.memory).enumerate() {
        if m != x {
            let at = m.iter().zip(x).position(|(a, b)| a != b).unwrap_or(0);
            let end = (at + 8).min(m.len());
            return Err(fail(
                Kind::Memory,
                format!(
                    "buffer {i} differs first at byte {at} (jit {:02x?}, interpreter {:02x?})",
                    &m[at..end],
                    &x[at..end]
                ),
            ));
        }
    }
    let summary = |f: &FaultReport| (f.loads, f.stores, f.atomics, f.first.clone());
    if summary(&got.faults) != summary(&want.faults) {
        return Err(fail(
            Kind::Faults,
            format!(
                "fault reports differ: jit {:?}, interpreter {:?}",
                got.faults, want.faults
            ),
        ));
    }
    Ok(())
}

/// Runs the interpreter, then compares at every (target, level). The
/// outer error is the interpreter's: then there is nothing to compare.
pub fn check(
    module: &VerifiedModule,
    inputs: &Inputs,
    at: &[(Target, u8)],
    fuel: u64,
) -> Result<Result<(), Mismatch>, String> {
    let want = expected(module, inputs, fuel)?;
    for &(target, opt_level) in at {
        if let Err(m) = compare_at(module, inputs, &want, target, opt_level, fuel) {
            return Ok(Err(m));
        }
    }
    Ok(Ok(()))
}
