//! §2.1 JSON: a strict parser of protocol input, and the canonical form of RFC 8785 (JCS).
//!
//! One value type serves both the protocol's strict reading (integers in the I-JSON safe range
//! only) and the lenient reading the RFC 8785 examples and the adapter protocol need (any finite
//! double). Objects keep their members in input order; JCS sorts them when it writes.

use crate::error::{Code, R};

/// The largest integer a protocol number may hold (2⁵³−1, I-JSON).
pub const MAX_SAFE: f64 = 9_007_199_254_740_991.0;
/// §2.1: nesting deeper than this many arrays and objects is `TooDeep`.
pub const MAX_DEPTH: usize = 64;
/// §2.1: the default input limit, 16 MiB.
pub const DEFAULT_LIMIT: usize = 16 * 1024 * 1024;

/// A parsed JSON value.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    Null,
    Bool(bool),
    Num(f64),
    Str(String),
    Arr(Vec<Value>),
    Obj(Vec<(String, Value)>),
}

/// How strictly to read numbers and names.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// §2.1 item 2: protocol input.
    Strict,
    /// Any finite number, any name, any depth up to a generous bound (RFC 8785 examples, the
    /// adapter protocol's own lines).
    Lenient,
}

impl Value {
    /// get returns the member `name` of an object, or None (also for non-objects).
    pub fn get(&self, name: &str) -> Option<&Value> {
        match self {
            Value::Obj(m) => m.iter().find(|(k, _)| k == name).map(|(_, v)| v),
            _ => None,
        }
    }
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::Str(s) => Some(s),
            _ => None,
        }
    }
    pub fn as_arr(&self) -> Option<&Vec<Value>> {
        match self {
            Value::Arr(a) => Some(a),
            _ => None,
        }
    }
    pub fn as_obj(&self) -> Option<&Vec<(String, Value)>> {
        match self {
            Value::Obj(m) => Some(m),
            _ => None,
        }
    }
    pub fn as_bool(&self) -> Option<bool> {
        match self {
            Value::Bool(b) => Some(*b),
            _ => None,
        }
    }
    /// as_int returns a JSON integer in the safe range (§2.2 item 2), or None.
    pub fn as_int(&self) -> Option<i64> {
        match self {
            Value::Num(n) if n.fract() == 0.0 && n.abs() <= MAX_SAFE => Some(*n as i64),
            _ => None,
        }
    }
    pub fn is_obj(&self) -> bool {
        matches!(self, Value::Obj(_))
    }
    /// keys lists an object's member names (empty for non-objects).
    pub fn keys(&self) -> Vec<&str> {
        self.as_obj().map(|m| m.iter().map(|(k, _)| k.as_str()).collect()).unwrap_or_default()
    }
    pub fn str(s: &str) -> Value {
        Value::Str(s.to_string())
    }
    pub fn int(n: i64) -> Value {
        Value::Num(n as f64)
    }
    /// obj builds an object from (name, value) pairs.
    pub fn obj(members: Vec<(&str, Value)>) -> Value {
        Value::Obj(members.into_iter().map(|(k, v)| (k.to_string(), v)).collect())
    }
}

/// parse reads `bytes` as JSON under `mode`, refusing input above `limit` bytes first (§2.1).
pub fn parse(bytes: &[u8], mode: Mode, limit: usize) -> R<Value> {
    if bytes.len() > limit {
        return Err(Code("OversizeInput"));
    }
    let text = std::str::from_utf8(bytes).map_err(|_| Code("InvalidUtf8"))?;
    let mut p = Parser { s: text.as_bytes(), i: 0, mode };
    p.ws();
    let v = p.value(0)?;
    p.ws();
    if p.i != p.s.len() {
        return Err(Code("InvalidJson"));
    }
    Ok(v)
}

/// parse_strict reads protocol input with the default 16 MiB limit.
pub fn parse_strict(bytes: &[u8]) -> R<Value> {
    parse(bytes, Mode::Strict, DEFAULT_LIMIT)
}

/// parse_canonical reads protocol input and refuses bytes that are not already canonical (§2.1 item 4).
pub fn parse_canonical(bytes: &[u8], limit: usize) -> R<Value> {
    let v = parse(bytes, Mode::Strict, limit)?;
    if canonical(&v).as_bytes() != bytes {
        return Err(Code("NotCanonical"));
    }
    Ok(v)
}

struct Parser<'a> {
    s: &'a [u8],
    i: usize,
    mode: Mode,
}

fn invalid<T>() -> R<T> {
    Err(Code("InvalidJson"))
}

impl Parser<'_> {
    fn peek(&self) -> Option<u8> {
        self.s.get(self.i).copied()
    }
    fn ws(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.peek() {
            self.i += 1;
        }
    }
    fn lit(&mut self, word: &str, v: Value) -> R<Value> {
        if self.s[self.i..].starts_with(word.as_bytes()) {
            self.i += word.len();
            Ok(v)
        } else {
            invalid()
        }
    }
    fn value(&mut self, depth: usize) -> R<Value> {
        match self.peek() {
            Some(b'{') => self.object(depth + 1),
            Some(b'[') => self.array(depth + 1),
            Some(b'"') => Ok(Value::Str(self.string()?)),
            Some(b't') => self.lit("true", Value::Bool(true)),
            Some(b'f') => self.lit("false", Value::Bool(false)),
            Some(b'n') => self.lit("null", Value::Null),
            Some(b'-' | b'0'..=b'9') => self.number(),
            _ => invalid(),
        }
    }
    fn check_depth(&self, depth: usize) -> R<()> {
        let max = if self.mode == Mode::Strict { MAX_DEPTH } else { 1000 };
        if depth > max {
            return Err(Code("TooDeep"));
        }
        Ok(())
    }
    fn array(&mut self, depth: usize) -> R<Value> {
        self.check_depth(depth)?;
        self.i += 1;
        let mut out = Vec::new();
        self.ws();
        if self.peek() == Some(b']') {
            self.i += 1;
            return Ok(Value::Arr(out));
        }
        loop {
            self.ws();
            out.push(self.value(depth)?);
            self.ws();
            match self.peek() {
                Some(b',') => self.i += 1,
                Some(b']') => {
                    self.i += 1;
                    return Ok(Value::Arr(out));
                }
                _ => return invalid(),
            }
        }
    }
    fn object(&mut self, depth: usize) -> R<Value> {
        self.check_depth(depth)?;
        self.i += 1;
        let mut out: Vec<(String, Value)> = Vec::new();
        self.ws();
        if self.peek() == Some(b'}') {
            self.i += 1;
            return Ok(Value::Obj(out));
        }
        loop {
            self.ws();
            if self.peek() != Some(b'"') {
                return invalid();
            }
            let k = self.string()?;
            if out.iter().any(|(n, _)| *n == k) {
                return Err(Code("DuplicateKey"));
            }
            if self.mode == Mode::Strict && matches!(k.as_str(), "__proto__" | "constructor" | "prototype") {
                return Err(Code("ForbiddenKey"));
            }
            self.ws();
            if self.peek() != Some(b':') {
                return invalid();
            }
            self.i += 1;
            self.ws();
            let v = self.value(depth)?;
            out.push((k, v));
            self.ws();
            match self.peek() {
                Some(b',') => self.i += 1,
                Some(b'}') => {
                    self.i += 1;
                    return Ok(Value::Obj(out));
                }
                _ => return invalid(),
            }
        }
    }
    fn hex4(&mut self) -> R<u32> {
        let h = self.s.get(self.i..self.i + 4).ok_or(Code("InvalidJson"))?;
        let t = std::str::from_utf8(h).map_err(|_| Code("InvalidJson"))?;
        if !t.bytes().all(|b| b.is_ascii_hexdigit()) {
            return invalid();
        }
        self.i += 4;
        u32::from_str_radix(t, 16).map_err(|_| Code("InvalidJson"))
    }
    fn string(&mut self) -> R<String> {
        self.i += 1;
        let mut out = String::new();
        loop {
            let start = self.i;
            while let Some(b) = self.peek() {
                if b == b'"' || b == b'\\' || b < 0x20 {
                    break;
                }
                self.i += 1;
            }
            // The input is valid UTF-8 and we stopped on ASCII bytes, so the slice is a str.
            out.push_str(std::str::from_utf8(&self.s[start..self.i]).map_err(|_| Code("InvalidUtf8"))?);
            match self.peek() {
                Some(b'"') => {
                    self.i += 1;
                    return Ok(out);
                }
                Some(b'\\') => {
                    self.i += 1;
                    self.escape(&mut out)?;
                }
                _ => return invalid(),
            }
        }
    }
    fn escape(&mut self, out: &mut String) -> R<()> {
        let c = self.peek().ok_or(Code("InvalidJson"))?;
        self.i += 1;
        let ch = match c {
            b'"' => '"',
            b'\\' => '\\',
            b'/' => '/',
            b'b' => '\u{8}',
            b'f' => '\u{c}',
            b'n' => '\n',
            b'r' => '\r',
            b't' => '\t',
            b'u' => return self.unicode(out),
            _ => return invalid(),
        };
        out.push(ch);
        Ok(())
    }
    fn unicode(&mut self, out: &mut String) -> R<()> {
        let u = self.hex4()?;
        if (0xDC00..0xE000).contains(&u) {
            return Err(Code("LoneSurrogate"));
        }
        if (0xD800..0xDC00).contains(&u) {
            if !self.s[self.i..].starts_with(b"\\u") {
                return Err(Code("LoneSurrogate"));
            }
            self.i += 2;
            let lo = self.hex4()?;
            if !(0xDC00..0xE000).contains(&lo) {
                return Err(Code("LoneSurrogate"));
            }
            let cp = 0x10000 + ((u - 0xD800) << 10) + (lo - 0xDC00);
            out.push(char::from_u32(cp).ok_or(Code("InvalidJson"))?);
            return Ok(());
        }
        out.push(char::from_u32(u).ok_or(Code("InvalidJson"))?);
        Ok(())
    }
    fn digits(&mut self) -> usize {
        let start = self.i;
        while let Some(b'0'..=b'9') = self.peek() {
            self.i += 1;
        }
        self.i - start
    }
    fn number(&mut self) -> R<Value> {
        let start = self.i;
        if self.peek() == Some(b'-') {
            self.i += 1;
        }
        let int_start = self.i;
        let n = self.digits();
        if n == 0 || (n > 1 && self.s[int_start] == b'0') {
            return invalid();
        }
        let mut integer_text = true;
        if self.peek() == Some(b'.') {
            integer_text = false;
            self.i += 1;
            if self.digits() == 0 {
                return invalid();
            }
        }
        if let Some(b'e' | b'E') = self.peek() {
            integer_text = false;
            self.i += 1;
            if let Some(b'+' | b'-') = self.peek() {
                self.i += 1;
            }
            if self.digits() == 0 {
                return invalid();
            }
        }
        let text = std::str::from_utf8(&self.s[start..self.i]).map_err(|_| Code("InvalidJson"))?;
        if self.mode == Mode::Strict {
            // §2.1 item 2: an integer by its text, `-?(0|[1-9][0-9]*)`, whose exact value lies in
            // ±(2⁵³−1); decided on the digits, never on a rounded double.
            if !integer_text || n > 16 {
                return Err(Code("UnsafeNumber"));
            }
            let magnitude: u64 = self.s[int_start..int_start + n].iter().fold(0, |a, d| a * 10 + u64::from(d - b'0'));
            if magnitude > 9_007_199_254_740_991 {
                return Err(Code("UnsafeNumber"));
            }
            let x = magnitude as f64;
            return Ok(Value::Num(if int_start > start && magnitude != 0 { -x } else { x }));
        }
        let x: f64 = text.parse().map_err(|_| Code("InvalidJson"))?;
        if !x.is_finite() {
            return Err(Code("UnsafeNumber"));
        }
        Ok(Value::Num(x))
    }
}

/// cmp_utf16 orders member names by their UTF-16 code units (RFC 8785 §3.2.3).
pub fn cmp_utf16(a: &str, b: &str) -> std::cmp::Ordering {
    a.encode_utf16().cmp(b.encode_utf16())
}

/// canonical writes `v` in the canonical form of RFC 8785.
pub fn canonical(v: &Value) -> String {
    let mut out = String::new();
    write(v, &mut out);
    out
}

/// canonical_bytes is `canonical` as bytes, the input of every content address (§2.3).
pub fn canonical_bytes(v: &Value) -> Vec<u8> {
    canonical(v).into_bytes()
}

fn write(v: &Value, out: &mut String) {
    match v {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Num(x) => out.push_str(&es_number(*x)),
        Value::Str(s) => write_str(s, out),
        Value::Arr(a) => {
            out.push('[');
            for (i, x) in a.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write(x, out);
            }
            out.push(']');
        }
        Value::Obj(m) => {
            let mut sorted: Vec<&(String, Value)> = m.iter().collect();
            sorted.sort_by(|a, b| cmp_utf16(&a.0, &b.0));
            out.push('{');
            for (i, (k, x)) in sorted.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_str(k, out);
                out.push(':');
                write(x, out);
            }
            out.push('}');
        }
    }
}

/// write_str writes a string with the minimal escapes of RFC 8785 §3.2.2.2.
fn write_str(s: &str, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
}

/// es_number writes a finite double as ECMAScript's Number.prototype.toString does (RFC 8785 §3.2.2.3).
pub fn es_number(x: f64) -> String {
    if x == 0.0 {
        return "0".into();
    }
    if x < 0.0 {
        return format!("-{}", es_number(-x));
    }
    // Shortest round-trip digits and exponent from Rust's `{:e}` form, e.g. "1.2345e-7".
    let sci = format!("{:e}", x);
    let (mant, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let digits: String = mant.chars().filter(|c| *c != '.').collect();
    let k = digits.len() as i32;
    let n = exp.parse::<i32>().unwrap_or(0) + 1; // decimal point position
    if k <= n && n <= 21 {
        format!("{}{}", digits, "0".repeat((n - k) as usize))
    } else if 0 < n && n <= 21 {
        format!("{}.{}", &digits[..n as usize], &digits[n as usize..])
    } else if -6 < n && n <= 0 {
        format!("0.{}{}", "0".repeat((-n) as usize), digits)
    } else {
        let e = n - 1;
        let sign = if e >= 0 { "+" } else { "-" };
        if k == 1 {
            format!("{}e{}{}", digits, sign, e.abs())
        } else {
            format!("{}.{}e{}{}", &digits[..1], &digits[1..], sign, e.abs())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn es_numbers() {
        for (x, s) in [
            (1.0, "1"),
            (1e21, "1e+21"),
            (1e20, "100000000000000000000"),
            (0.000001, "0.000001"),
            (1e-7, "1e-7"),
            (-1.5, "-1.5"),
            (333333333.3333333, "333333333.3333333"),
            (4.5, "4.5"),
            (2e-3, "0.002"),
            (5e-324, "5e-324"),
            (1.7976931348623157e308, "1.7976931348623157e+308"),
        ] {
            assert_eq!(es_number(x), s, "{x}");
        }
    }

    #[test]
    fn sorts_by_utf16() {
        let v = parse(br#"{"\u20ac":1,"\ud83d\ude00":2,"a":3}"#, Mode::Strict, DEFAULT_LIMIT).unwrap();
        // U+20AC is 0x20AC in UTF-16, U+1F600 is 0xD83D 0xDE00: the euro sorts first.
        assert_eq!(canonical(&v), "{\"a\":3,\"\u{20ac}\":1,\"\u{1F600}\":2}");
    }
}
