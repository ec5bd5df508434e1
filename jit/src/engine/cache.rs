//! The per-thread compile cache.
//!
//! Compiled code belongs to an LLVM context, which must not be used from
//! two threads, so each thread has its own cache; a runtime whose worker
//! threads compile the same kernel compiles it once per thread. The key is
//! the module's printed text (which holds everything that affects the code)
//! with the options; the printed text is compared in full, so two modules
//! never share code by a hash collision.

use super::Code;
use crate::JitOptions;
use std::cell::RefCell;
use std::sync::Arc;
use warpjit_ir::VerifiedModule;

/// How many compiled modules each thread keeps (least recently used go
/// first). A compiled module holds its LLVM context and machine code,
/// from about a hundred kilobytes to a few megabytes.
pub const COMPILE_CACHE_ENTRIES: usize = 16;

#[derive(Clone, PartialEq, Eq)]
pub(super) struct Key {
    text: String,
    options: JitOptions,
}

impl Key {
    pub fn new(module: &VerifiedModule, opts: &JitOptions) -> Key {
        Key {
            text: warpjit_ir::text::print(module),
            options: *opts,
        }
    }
}

thread_local! {
    /// Most recently used last.
    static CACHE: RefCell<Vec<(Key, Arc<Code>)>> = const { RefCell::new(Vec::new()) };
}

pub(super) fn get(key: &Key) -> Option<Arc<Code>> {
    CACHE.with(|c| {
        let mut c = c.borrow_mut();
        let at = c.iter().position(|(k, _)| k == key)?;
        let entry = c.remove(at);
        let code = entry.1.clone();
        c.push(entry);
        Some(code)
    })
}

pub(super) fn insert(key: Key, code: Arc<Code>) {
    CACHE.with(|c| {
        let mut c = c.borrow_mut();
        if c.len() >= COMPILE_CACHE_ENTRIES {
            c.remove(0);
        }
        c.push((key, code));
    });
}

/// Drops this thread's cached compilations (code still in use by a
/// [`crate::CompiledModule`] stays alive until that is dropped).
pub fn clear_compile_cache() {
    CACHE.with(|c| c.borrow_mut().clear());
}
