//! Atomics under contention from every SM on the JIT: the runtime's checks
//! (`runtime/tests/support/contention.rs`) with compiled code, whose
//! atomics are LLVM's on the same words.

mod support;
use support::{contention, jit};

#[test]
fn ten_million_increments_of_one_counter_from_every_sm_are_all_counted() {
    contention::ten_million_increments_of_one_counter_are_all_counted(jit());
}

#[test]
fn u64_additions_carry_across_the_halves_without_losses() {
    contention::u64_additions_carry_across_the_halves_without_losses(jit());
}

#[test]
fn every_atomic_operation_gives_its_defined_result_under_contention() {
    contention::every_atomic_operation_gives_its_defined_result(jit());
}

#[test]
fn iwrap_and_dwrap_from_every_sm_count_as_hardware_md_29_measured() {
    contention::iwrap_and_dwrap_count_as_hardware_md_29_measured(jit());
}
