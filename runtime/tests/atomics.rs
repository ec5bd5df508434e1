//! Atomics under contention from every SM on the interpreter (the checks
//! are in `support/contention.rs`, which the JIT's tests run too).

mod support;
use std::sync::Arc;
use support::contention;
use warpjit_runtime::InterpreterBackend;

#[test]
fn ten_million_increments_of_one_counter_from_every_sm_are_all_counted() {
    contention::ten_million_increments_of_one_counter_are_all_counted(Arc::new(InterpreterBackend));
}

#[test]
fn u64_additions_carry_across_the_halves_without_losses() {
    contention::u64_additions_carry_across_the_halves_without_losses(Arc::new(InterpreterBackend));
}

#[test]
fn every_atomic_operation_gives_its_defined_result_under_contention() {
    contention::every_atomic_operation_gives_its_defined_result(Arc::new(InterpreterBackend));
}

#[test]
fn iwrap_and_dwrap_from_every_sm_count_as_hardware_md_29_measured() {
    contention::iwrap_and_dwrap_count_as_hardware_md_29_measured(Arc::new(InterpreterBackend));
}
