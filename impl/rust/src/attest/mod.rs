//! sandbox-attest (spec/sandbox-attest.md) §4–§16: units, energy, attestations, audit chains,
//! journals, run records, manifests, pools and fleets.

pub mod attestation;
pub mod audit;
pub mod energy;
pub mod execpolicy;
pub mod fleet;
pub mod fstree;
pub mod journal;
pub mod manifest;
pub mod merkle;
pub mod runrecord;
pub mod unit;
pub mod warmpool;
