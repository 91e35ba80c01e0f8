//! Reading an op's input: a member the op needs that is missing or of the wrong JSON type is the
//! caller's error (`BadInput`), not a verdict on a record.

use crate::error::{Code, R};
use crate::json::Value;

/// need returns the member `name`, or `BadInput`.
pub fn need<'a>(input: &'a Value, name: &str) -> R<&'a Value> {
    input.get(name).ok_or(Code("BadInput"))
}

/// need_str returns the string member `name`, or `BadInput`.
pub fn need_str<'a>(input: &'a Value, name: &str) -> R<&'a str> {
    need(input, name)?.as_str().ok_or(Code("BadInput"))
}

/// need_arr returns the array member `name`, or `BadInput`.
pub fn need_arr<'a>(input: &'a Value, name: &str) -> R<&'a Vec<Value>> {
    need(input, name)?.as_arr().ok_or(Code("BadInput"))
}

/// opt returns the member `name` unless it is absent or null.
pub fn opt<'a>(input: &'a Value, name: &str) -> Option<&'a Value> {
    input.get(name).filter(|v| **v != Value::Null)
}

/// strings reads an array of strings, or `BadInput`.
pub fn strings(v: &Value) -> R<Vec<String>> {
    let a = v.as_arr().ok_or(Code("BadInput"))?;
    a.iter().map(|x| x.as_str().map(str::to_string).ok_or(Code("BadInput"))).collect()
}

/// hex_bytes reads a hex string member, or `BadInput`.
pub fn hex_bytes(input: &Value, name: &str) -> R<Vec<u8>> {
    crate::wire::unhex(need_str(input, name)?).ok_or(Code("BadInput"))
}
