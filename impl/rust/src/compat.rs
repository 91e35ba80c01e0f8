//! Option helpers that read the same on Debian's toolchain (rustc 1.63, which CI installs on a
//! fresh machine), since it predates `Option::is_some_and` and `Option::is_none_or`.

/// `has` and `none_or` on Option.
pub trait OptionExt<T> {
    /// has is true when the option holds a value that satisfies `f`.
    fn has(self, f: impl FnOnce(T) -> bool) -> bool;
    /// none_or is true when the option is empty or holds a value that satisfies `f`.
    fn none_or(self, f: impl FnOnce(T) -> bool) -> bool;
}

impl<T> OptionExt<T> for Option<T> {
    fn has(self, f: impl FnOnce(T) -> bool) -> bool {
        match self {
            Some(x) => f(x),
            None => false,
        }
    }
    fn none_or(self, f: impl FnOnce(T) -> bool) -> bool {
        match self {
            Some(x) => f(x),
            None => true,
        }
    }
}
