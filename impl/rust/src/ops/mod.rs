//! The operations of the adapter protocol (§11.2), one module per conformance class group, and
//! the capabilities this verifier declares.

use crate::error::{Code, R};
use crate::json::Value;

mod attest_ops;
mod input;
mod jcp_ops;
mod wire_ops;

/// The classes this verifier implements. Any other class is out of scope, and the harness counts
/// nothing of it as passed.
pub const CLASSES: &[&str] = &[
    "C1", "C2", "C3", "C4", "C5", "C6", "C7", "C8", "C9", "C10", "C11", "C12", "C13", "C14", "C15", "C16", "C17",
    "C18", "C19", "C20", "C21",
];

/// capabilities is the answer to `adapter.capabilities`: the classes implemented, and that no
/// live (host) cases are run by this verifier.
pub fn capabilities() -> Value {
    Value::obj(vec![
        ("classes", Value::Arr(CLASSES.iter().map(|c| Value::str(c)).collect())),
        ("live", Value::Bool(false)),
        ("name", Value::str("sandbox-attest-verify (Rust)")),
    ])
}

/// call performs one operation on its input.
pub fn call(op: &str, input: &Value) -> R<Value> {
    if op == "adapter.capabilities" {
        return Ok(capabilities());
    }
    if let Some(r) = wire_ops::call(op, input) {
        return r;
    }
    if let Some(r) = attest_ops::call(op, input) {
        return r;
    }
    if let Some(r) = jcp_ops::call(op, input) {
        return r;
    }
    Err(Code("UnknownOp"))
}
