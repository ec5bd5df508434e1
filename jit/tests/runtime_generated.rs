//! Generated programs, barriers included, give the interpreter's results on
//! the JIT backend of the runtime on several machine shapes: the same
//! memory, fault counts, first fault and workgroup count. Generated
//! programs are race-free by construction (see `warpjit_ir::generate`), so
//! the schedule does not matter.
//!
//! Compiling dominates the time, so each program is compiled once (at -O0,
//! every tenth at -O2) and that code shared by the runtimes.

mod support;
use std::sync::{Arc, Mutex};
use support::*;
use warpjit_ir::generate::{generate_case, Features, GenConfig, SplitMix64};
use warpjit_ir::interp::{self, ExecError, LaunchConfig};
use warpjit_ir::{FuncId, Op, Stmt, VerifiedModule};
use warpjit_jit::{JitBackend, JitOptions};
use warpjit_runtime::{Backend, Buffer, PreparedCode, SmMemory, Workgroup, WorkgroupReport};

/// The JIT backend, compiling a module once for all runtimes that share
/// this backend: the code of the last module prepared is reused.
struct CompileOnce {
    opt_level: Mutex<u8>,
    last: Mutex<Option<(Arc<VerifiedModule>, PreparedCode)>>,
}

impl Backend for CompileOnce {
    fn name(&self) -> &str {
        "jit"
    }

    fn prepare(
        &self,
        module: &Arc<VerifiedModule>,
        kernel: FuncId,
    ) -> Result<PreparedCode, String> {
        let mut last = self.last.lock().expect("not poisoned");
        if let Some((m, code)) = last.as_ref() {
            if Arc::ptr_eq(m, module) {
                return Ok(Arc::clone(code));
            }
        }
        let opt_level = *self.opt_level.lock().expect("not poisoned");
        let jit = JitBackend::new(JitOptions {
            opt_level,
            ..JitOptions::default()
        });
        let code = jit.prepare(module, kernel)?;
        *last = Some((Arc::clone(module), Arc::clone(&code)));
        Ok(code)
    }

    fn run_workgroup(
        &self,
        work: &Workgroup<'_>,
        memory: &mut SmMemory<'_>,
    ) -> Result<WorkgroupReport, ExecError> {
        JitBackend::default().run_workgroup(work, memory)
    }
}

/// Programs per run; `WARPJIT_PROPTEST_CASES` overrides it.
const CASES: u64 = 50;

fn has_barrier(module: &VerifiedModule) -> bool {
    let mut found = false;
    for f in &module.functions {
        warpjit_ir::walk_block(&f.body, &mut |s| {
            if let Stmt::Inst(i) = s {
                found |= i.op == Op::Barrier;
            }
        });
    }
    found
}

#[test]
fn generated_programs_match_the_interpreter_on_the_jit_backend() {
    let cfg = GenConfig {
        max_workgroups: 6,
        features: Features {
            // sm_id depends on which SM took a workgroup, and sm_count /
            // warps_per_sm on the machine: leave them out.
            machine_ids: false,
            ..Features::all()
        },
        ..GenConfig::default()
    };
    let cases = std::env::var("WARPJIT_PROPTEST_CASES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(CASES);
    // Generated workgroups have at most 128 invocations: 4 warps.
    let backend = Arc::new(CompileOnce {
        opt_level: Mutex::new(0),
        last: Mutex::new(None),
    });
    let runtimes: Vec<_> = [(1, 4), (3, 64)]
        .iter()
        .map(|&(sms, slots)| runtime_on(backend.clone(), sms, slots))
        .collect();
    let (mut faulting, mut with_barriers, mut multi_warp) = (0, 0, 0);
    for seed in 0..cases {
        let case = generate_case(&mut SplitMix64::new(seed), &cfg);
        let module =
            Arc::new(VerifiedModule::new(case.module.clone()).expect("generated modules verify"));
        let kernel_id = FuncId(module.functions.len() as u32 - 1);
        *backend.opt_level.lock().expect("not poisoned") = if seed % 10 == 9 { 2 } else { 0 };
        if has_barrier(&module) {
            with_barriers += 1;
            if case.workgroup.iter().product::<u32>() > 32 {
                multi_warp += 1;
            }
        }
        let mut expected_memory = case.buffer_data.clone();
        let expected = interp::launch(
            &module,
            kernel_id,
            &LaunchConfig::new(case.grid, case.workgroup),
            &case.params,
            &mut expected_memory,
        )
        .unwrap_or_else(|e| panic!("seed {seed}: the interpreter failed: {e}"));
        if !expected.faults.is_empty() {
            faulting += 1;
        }
        for runtime in &runtimes {
            let shape = format!(
                "seed {seed} on {} SMs x {} slots",
                runtime.config().sm_count,
                runtime.config().warps_per_sm
            );
            let kernel = runtime
                .prepare_function(Arc::clone(&module), kernel_id)
                .unwrap_or_else(|e| panic!("{shape}: {e}"));
            let mut buffers: Vec<Buffer> = case
                .buffer_data
                .iter()
                .map(|bytes| Buffer::from_bytes(bytes).expect("small"))
                .collect();
            let report = runtime
                .launch(
                    &kernel,
                    case.grid,
                    case.workgroup,
                    &case.params,
                    &mut buffers,
                )
                .unwrap_or_else(|e| panic!("{shape}: {e}"));
            for (i, (buffer, want)) in buffers.iter().zip(&expected_memory).enumerate() {
                assert!(
                    buffer.to_bytes() == *want,
                    "{shape}: buffer {i} differs; the program:\n{}",
                    warpjit_ir::text::print(&case.module)
                );
            }
            assert_eq!(report.faults, expected.faults, "{shape}");
            assert_eq!(report.workgroups, expected.workgroups, "{shape}");
        }
    }
    if cases >= CASES {
        // The cases exercise what they are meant to.
        assert!(faulting > 2, "only {faulting} cases faulted");
        assert!(
            multi_warp > 5,
            "only {multi_warp} multi-warp cases with barriers ({with_barriers} with barriers)"
        );
    }
}
