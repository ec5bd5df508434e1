//! Running compiled kernels on the calling thread over byte buffers: one
//! workgroup at a time, its warps scheduled at barriers by [`sched`], with
//! the same IDs and memory rules as `warpjit_ir::interp`.

use crate::abi::{self, KernelFn, MemSpan, WarpContext};
use crate::sched::{self, KernelPlan, Stop, WorkgroupFrame};
use crate::{CompiledModule, JitError, JitOptions};
use std::sync::atomic::AtomicBool;
use warpjit_ir::interp::{
    validate_launch, AccessKind, ExecError, Fault, FaultReport, GlobalMemory, LaunchConfig,
    LaunchReport,
};
use warpjit_ir::{AtomOp, NumFormat};
use warpjit_ir::{FuncId, VerifiedModule};

/// The cancel flag of launches nothing can cancel.
static NEVER_CANCELLED: AtomicBool = AtomicBool::new(false);

/// Runs every workgroup of the grid in order (x fastest), workgroup `n` on
/// SM `n % sm_count`, like `warpjit_ir::interp::launch`. The report counts
/// workgroups and faults; compiled code does not count statements. The
/// launch is checked, planned and its shared memory allocated once, against
/// the module the code was compiled from ([`CompiledModule::module`]).
pub fn launch(
    compiled: &CompiledModule,
    kernel: FuncId,
    cfg: &LaunchConfig,
    params: &[u64],
    buffers: &mut [Vec<u8>],
) -> Result<LaunchReport, JitError> {
    let mut prepared = Prepared::new(compiled, kernel, cfg, params, buffers)?;
    let mut report = LaunchReport::default();
    let mut linear = 0u64;
    for z in 0..cfg.grid[2] {
        for y in 0..cfg.grid[1] {
            for x in 0..cfg.grid[0] {
                let sm = (linear % u64::from(cfg.sm_count.max(1))) as u32;
                prepared.run([x, y, z], sm, buffers, &mut report)?;
                linear += 1;
            }
        }
    }
    Ok(report)
}

impl CompiledModule {
    /// Runs one workgroup on SM `sm_id`, its warps in slots 0, 1, ..., as
    /// `warpjit_ir::interp::run_workgroup` does, adding to `report`.
    #[allow(clippy::too_many_arguments)]
    pub fn run_workgroup(
        &self,
        kernel: FuncId,
        cfg: &LaunchConfig,
        workgroup_id: [u32; 3],
        sm_id: u32,
        params: &[u64],
        buffers: &mut [Vec<u8>],
        report: &mut LaunchReport,
    ) -> Result<(), JitError> {
        let mut prepared = Prepared::new(self, kernel, cfg, params, buffers)?;
        for d in 0..3 {
            if workgroup_id[d] >= cfg.grid[d] {
                return Err(JitError::Launch(format!(
                    "workgroup id {workgroup_id:?} is outside the grid {:?}",
                    cfg.grid
                )));
            }
        }
        if sm_id >= cfg.sm_count {
            return Err(JitError::Launch(format!(
                "sm id {sm_id} is not below the SM count {}",
                cfg.sm_count
            )));
        }
        prepared.run(workgroup_id, sm_id, buffers, report)
    }
}

/// A checked launch with what all its workgroups share: the entry point,
/// the scheduling plan and the shared memory (zeroed for each workgroup).
struct Prepared<'a> {
    module: &'a VerifiedModule,
    cfg: &'a LaunchConfig,
    params: &'a [u64],
    entry: KernelFn,
    plan: KernelPlan,
    kernel_name: &'a str,
    shared: Vec<Vec<u8>>,
}

impl<'a> Prepared<'a> {
    fn new(
        compiled: &'a CompiledModule,
        kernel: FuncId,
        cfg: &'a LaunchConfig,
        params: &'a [u64],
        buffers: &[Vec<u8>],
    ) -> Result<Prepared<'a>, JitError> {
        let module = compiled.module();
        validate_launch(module, kernel, cfg, params, &Sizes(buffers)).map_err(|e| {
            JitError::Launch(match e {
                // Shown as "launch failed: ...", not "... invalid launch: ...".
                ExecError::InvalidLaunch(reason) => reason,
                e => e.to_string(),
            })
        })?;
        let entry = compiled.entry_point(kernel).ok_or_else(|| {
            JitError::Launch(format!("function {} is not a compiled kernel", kernel.0))
        })?;
        check_warps(compiled.options(), cfg.workgroup)?;
        let mut shared: Vec<Vec<u8>> = Vec::with_capacity(module.shared.len());
        for decl in &module.shared {
            let mut bytes = Vec::new();
            bytes.try_reserve_exact(decl.size as usize).map_err(|_| {
                JitError::Launch(format!(
                    "out of memory: cannot allocate {} bytes for shared memory @{}",
                    decl.size, decl.name
                ))
            })?;
            bytes.resize(decl.size as usize, 0);
            shared.push(bytes);
        }
        Ok(Prepared {
            module,
            cfg,
            params,
            entry,
            plan: KernelPlan::of(module, kernel),
            kernel_name: &module.function(kernel).name,
            shared,
        })
    }

    fn run(
        &mut self,
        workgroup_id: [u32; 3],
        sm_id: u32,
        buffers: &mut [Vec<u8>],
        report: &mut LaunchReport,
    ) -> Result<(), JitError> {
        let spans: Vec<MemSpan> = buffers
            .iter_mut()
            .map(|b| MemSpan {
                ptr: b.as_mut_ptr(),
                len: b.len() as u64,
            })
            .collect();
        let shared_spans: Vec<MemSpan> = self
            .shared
            .iter_mut()
            .map(|b| {
                b.fill(0);
                MemSpan {
                    ptr: b.as_mut_ptr(),
                    len: b.len() as u64,
                }
            })
            .collect();
        let frame = WorkgroupFrame {
            params: self.params,
            buffers: &spans,
            shared: &shared_spans,
            config: self.cfg,
            workgroup_id,
            sm_id,
            first_warp_slot: 0,
            cancel: &NEVER_CANCELLED,
        };
        let mut contexts = sched::warp_contexts(&frame);
        // SAFETY: the contexts point at live buffers of the stated lengths
        // for the whole call, and the compiled code keeps every access
        // inside them (bounds checks are folded into its masks).
        let mut first = None;
        let outcome = unsafe {
            sched::run_warps(
                self.entry,
                &self.plan,
                &mut contexts,
                &NEVER_CANCELLED,
                &mut first,
            )
        };
        let kernel_name = self.kernel_name;
        report.faults.merge(&workgroup_faults(
            &contexts,
            first,
            self.module,
            kernel_name,
            workgroup_id,
        ));
        match outcome {
            Ok(()) => {}
            Err(Stop::OutOfFuel { warp }) => {
                let [x, y, z] = workgroup_id;
                return Err(JitError::FuelExhausted(format!(
                    "kernel @{kernel_name}: fuel exhausted in workgroup ({x}, {y}, {z}), warp {warp} \
                     after {} loop tests (runaway kernel?)",
                    self.cfg.fuel.unwrap_or(u64::MAX)
                )));
            }
            Err(Stop::Cancelled) => return Err(JitError::Launch("cancelled".into())),
            Err(Stop::NoStack(why)) => return Err(JitError::Launch(why)),
        }
        report.workgroups += 1;
        Ok(())
    }
}

/// The buffer sizes, for launch validation (which reads nothing else).
struct Sizes<'a>(&'a [Vec<u8>]);

impl GlobalMemory for Sizes<'_> {
    fn buffer_count(&self) -> usize {
        self.0.len()
    }
    fn buffer_len(&self, buffer: u32) -> u64 {
        self.0.get(buffer as usize).map_or(0, |b| b.len() as u64)
    }
    fn read(&mut self, _: u32, _: u64, out: &mut [u8]) {
        out.fill(0);
    }
    fn write(&mut self, _: u32, _: u64, _: &[u8]) {}
    fn atomic(&mut self, _: u32, _: u64, _: AtomOp, _: NumFormat, _: u64, _: u64) -> u64 {
        0
    }
}

/// The fault report of one workgroup: every warp's counts, and the first
/// fault of warp `first` (the one that faulted first in the schedule).
pub(crate) fn workgroup_faults(
    contexts: &[WarpContext],
    first: Option<usize>,
    module: &VerifiedModule,
    kernel_name: &str,
    workgroup: [u32; 3],
) -> FaultReport {
    let mut report = FaultReport::default();
    if let Some(ctx) = first.and_then(|w| contexts.get(w)) {
        report.first = faults_of(ctx, module, kernel_name, workgroup).first;
    }
    // Most workgroups never fault: build reports only for warps that did.
    for ctx in contexts.iter().filter(|ctx| sched::faulted(ctx)) {
        report.merge(&faults_of(ctx, module, kernel_name, workgroup));
    }
    report
}

pub(crate) fn faults_of(
    ctx: &WarpContext,
    module: &VerifiedModule,
    kernel_name: &str,
    workgroup: [u32; 3],
) -> FaultReport {
    let access = match ctx.first_fault_kind {
        abi::FAULT_LOAD => Some(AccessKind::Load),
        abi::FAULT_STORE => Some(AccessKind::Store),
        abi::FAULT_ATOMIC => Some(AccessKind::Atomic),
        _ => None,
    };
    let first = access.map(|access| {
        let index = ctx.first_fault_index as usize;
        let memory = match ctx.first_fault_space {
            abi::SPACE_BUFFER => module.buffers.get(index).map(|d| d.name.clone()),
            abi::SPACE_SHARED => module.shared.get(index).map(|d| d.name.clone()),
            _ => module
                .functions
                .get(ctx.first_fault_function as usize)
                .and_then(|f| f.privates.get(index))
                .map(|d| d.name.clone()),
        };
        Fault {
            access,
            memory: memory.unwrap_or_default(),
            address: ctx.first_fault_address,
            lane: ctx.first_fault_lane,
            warp: ctx.warp_index,
            workgroup,
            kernel: kernel_name.to_string(),
        }
    });
    FaultReport {
        loads: ctx.load_faults,
        stores: ctx.store_faults,
        atomics: ctx.atomic_faults,
        first,
    }
}

/// Code compiled for whole warps runs only workgroups of whole warps, and
/// code compiled for one workgroup size only workgroups of that size.
pub(crate) fn check_warps(options: JitOptions, workgroup: [u32; 3]) -> Result<(), JitError> {
    if let Some(size) = options.workgroup.filter(|&size| size != workgroup) {
        return Err(JitError::Launch(format!(
            "the code was compiled for workgroups of {}x{}x{}, not {}x{}x{}",
            size[0], size[1], size[2], workgroup[0], workgroup[1], workgroup[2]
        )));
    }
    if options.whole_warps && !crate::whole_warps(workgroup) {
        return Err(JitError::Launch(format!(
            "the code was compiled for whole warps, but a workgroup of {}x{}x{} has {} \
             invocations, not a multiple of 32",
            workgroup[0],
            workgroup[1],
            workgroup[2],
            crate::invocations(workgroup)
        )));
    }
    Ok(())
}
