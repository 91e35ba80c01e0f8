//! JCP (spec/jcp.md) §4: grants, scopes, budgets, chains, revocation, spend, grant sets,
//! standing grants and checkpoint logs.

pub mod chain;
pub mod checkpoint;
pub mod grant;
pub mod grantset;
pub mod pattern;
pub mod revoke;
pub mod spend;
pub mod standing;
