//! A kernel prepared for launches.

use crate::backend::PreparedCode;
use std::fmt;
use std::sync::Arc;
use warpjit_ir::{FuncId, FuncKind, VerifiedModule};

/// A kernel of a verified module, prepared by a runtime's backend once and
/// launched any number of times. Cheap to clone.
#[derive(Clone)]
pub struct Kernel {
    inner: Arc<KernelInner>,
}

struct KernelInner {
    module: Arc<VerifiedModule>,
    function: FuncId,
    name: String,
    backend: String,
    code: PreparedCode,
}

impl Kernel {
    pub(crate) fn new(
        module: Arc<VerifiedModule>,
        function: FuncId,
        backend: &str,
        code: PreparedCode,
    ) -> Kernel {
        let name = module.function(function).name.clone();
        Kernel {
            inner: Arc::new(KernelInner {
                module,
                function,
                name,
                backend: backend.to_string(),
                code,
            }),
        }
    }

    /// The module the kernel belongs to.
    pub fn module(&self) -> &VerifiedModule {
        &self.inner.module
    }

    /// The kernel's id in its module.
    pub fn function(&self) -> FuncId {
        self.inner.function
    }

    /// The kernel's name (without `@`).
    pub fn name(&self) -> &str {
        &self.inner.name
    }

    /// The backend that prepared it.
    pub fn backend(&self) -> &str {
        &self.inner.backend
    }

    /// What the backend prepared.
    pub fn code(&self) -> &PreparedCode {
        &self.inner.code
    }

    /// The workgroup size the kernel declares, if any.
    pub fn declared_workgroup(&self) -> Option<[u32; 3]> {
        match self.module().function(self.function()).kind {
            FuncKind::Kernel { workgroup } => workgroup,
            _ => None,
        }
    }
}

impl fmt::Debug for Kernel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Kernel(@{} on {})", self.inner.name, self.inner.backend)
    }
}
