//! Refusals: every failure is one of the spec's codes (§2.6), never a message.

/// A refusal code, an UpperCamelCase identifier named by the spec section that defines it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Code(pub &'static str);

/// The result of every verifier operation.
pub type R<T> = Result<T, Code>;

impl std::fmt::Display for Code {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.0)
    }
}

/// fail returns the refusal `code`.
pub fn fail<T>(code: &'static str) -> R<T> {
    Err(Code(code))
}

/// ensure refuses with `code` unless `cond` holds.
pub fn ensure(cond: bool, code: &'static str) -> R<()> {
    if cond {
        Ok(())
    } else {
        Err(Code(code))
    }
}
