//! `run_workgroup_placed`, the entry a multithreaded runtime uses: warp ids
//! from the runtime's slot, cancellation before any statement, and `membar`
//! reaching the memory as a fence.

mod interp_support;
use interp_support::*;
use std::sync::atomic::AtomicBool;
use warpjit_ir::interp::{
    run_workgroup_placed, ExecError, GlobalMemory, LaunchConfig, LaunchReport, Placement,
};
use warpjit_ir::{AtomOp, NumFormat};

const WARP_IDS: &str = "
buffer @out[0]: u32
kernel @main workgroup(96) {
  %local = local_index
  %addr = shl %local, 2
  %warp = warp_id
  %sm = sm_id
  %both = shl %sm, 8
  %value = or %both, %warp
  store.u32 @out, %addr, %value
  membar
  membar
}";

fn placed(
    first_warp_slot: u32,
    cancel: Option<&AtomicBool>,
    memory: &mut dyn GlobalMemory,
) -> Result<LaunchReport, ExecError> {
    let module = compile(WARP_IDS);
    let mut cfg = LaunchConfig::new([2, 1, 1], [96, 1, 1]);
    cfg.sm_count = 4;
    cfg.warps_per_sm = 8;
    let mut report = LaunchReport::default();
    let placement = Placement {
        workgroup_id: [1, 0, 0],
        sm_id: 3,
        first_warp_slot,
    };
    run_workgroup_placed(
        &module,
        first_kernel(&module),
        &cfg,
        placement,
        &[],
        memory,
        &mut report,
        cancel,
    )?;
    Ok(report)
}

/// Buffers that count `membar`s.
struct Fences {
    buffers: Vec<Vec<u8>>,
    fences: u32,
}

impl GlobalMemory for Fences {
    fn buffer_count(&self) -> usize {
        self.buffers.buffer_count()
    }
    fn buffer_len(&self, buffer: u32) -> u64 {
        self.buffers.buffer_len(buffer)
    }
    fn read(&mut self, buffer: u32, offset: u64, out: &mut [u8]) {
        self.buffers.read(buffer, offset, out)
    }
    fn write(&mut self, buffer: u32, offset: u64, data: &[u8]) {
        self.buffers.write(buffer, offset, data)
    }
    fn atomic(&mut self, b: u32, o: u64, op: AtomOp, e: NumFormat, v: u64, v2: u64) -> u64 {
        self.buffers.atomic(b, o, op, e, v, v2)
    }
    fn fence(&mut self) {
        self.fences += 1;
    }
}

#[test]
fn warp_ids_start_at_the_given_slot_and_membar_fences_memory() {
    let mut memory = Fences {
        buffers: vec![words(96, 0)],
        fences: 0,
    };
    let report = placed(5, None, &mut memory).expect("slots 5..7 fit 8");
    assert_eq!(report.workgroups, 1);
    let expected: Vec<u32> = (0..96).map(|i| 3 << 8 | (5 + i / 32)).collect();
    assert_eq!(u32s(&memory.buffers[0]), expected);
    // Two membars in each of 3 warps.
    assert_eq!(memory.fences, 6);
}

#[test]
fn warps_past_the_last_slot_are_refused() {
    let mut memory = vec![words(96, 0)];
    let err = placed(6, None, &mut memory).expect_err("slots 6..8 do not fit 8");
    assert!(
        err.to_string()
            .contains("3 warps from slot 6 do not fit in 8 warp slots"),
        "{err}"
    );
    assert_eq!(u32s(&memory[0]), vec![0; 96], "nothing ran");
}

#[test]
fn a_raised_cancel_flag_stops_the_workgroup_before_its_first_statement() {
    let mut memory = vec![words(96, 0)];
    let cancel = AtomicBool::new(true);
    let err = placed(0, Some(&cancel), &mut memory).expect_err("cancelled");
    assert_eq!(err, ExecError::Cancelled);
    assert_eq!(u32s(&memory[0]), vec![0; 96], "no statement ran");
    let lowered = AtomicBool::new(false);
    placed(0, Some(&lowered), &mut memory).expect("a lowered flag changes nothing");
    assert_eq!(u32s(&memory[0])[95], 3 << 8 | 2);
}
