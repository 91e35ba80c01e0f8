//! sandbox-attest-verify: a second, independent verifier of sandbox-attest and JCP records,
//! written from `spec/sandbox-attest.md` and `spec/jcp.md` alone.
//!
//! Layers follow the spec: `json` and `wire` (§2), then one module per record kind, then `ops`,
//! the operations of the conformance adapter protocol (§11.2).

pub mod attest;
pub mod compat;
pub mod edpoint;
pub mod error;
pub mod jcp;
pub mod json;
pub mod ops;
pub mod wire;
