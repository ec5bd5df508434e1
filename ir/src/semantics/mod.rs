//! Scalar semantics of every operation: the oracle both backends follow.
