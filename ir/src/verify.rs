//! The verifier.

use crate::module::Module;

/// A module the verifier accepted. Backends take only this type.
#[derive(Clone, Debug)]
pub struct VerifiedModule {
    module: Module,
}

impl std::ops::Deref for VerifiedModule {
    type Target = Module;
    fn deref(&self) -> &Module {
        &self.module
    }
}
