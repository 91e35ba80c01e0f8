//! §13.8 the filesystem DAG of a snapshot.

use crate::compat::OptionExt;
use crate::error::{ensure, Code, R};
use crate::json::{self, Value};
use crate::wire;

const FORMAT: &str = "sandbox.fs.dir/1";

fn name_ok(n: &str) -> bool {
    (1..=255).contains(&n.len()) && !n.contains('/') && !n.contains('\0') && n != "." && n != ".."
}

fn entry_ok(e: &Value) -> bool {
    let kind = e.get("kind").and_then(Value::as_str);
    let mode = e.get("mode").and_then(Value::as_int);
    wire::exact_members(e, &["digest", "kind", "mode", "name", "size"])
        && e.get("digest").has(wire::is_digest)
        && matches!(kind, Some("file" | "dir" | "symlink"))
        && mode.has(|m| (0..=0o777).contains(&m))
        && (kind != Some("symlink") || mode == Some(0o777))
        && e.get("size").has(|s| wire::parse_amount(s).is_ok())
        && e.get("name").and_then(Value::as_str).has(name_ok)
}

/// parse_dir checks a directory object's bytes (§13.8, `BadFsTree`) and returns its entries.
pub fn parse_dir(bytes: &[u8]) -> R<Vec<Value>> {
    let v = json::parse_canonical(bytes, json::DEFAULT_LIMIT).map_err(|_| Code("BadFsTree"))?;
    ensure(wire::exact_members(&v, &["entries", "format"]), "BadFsTree")?;
    ensure(v.get("format").and_then(Value::as_str) == Some(FORMAT), "BadFsTree")?;
    let entries = v.get("entries").and_then(Value::as_arr).ok_or(Code("BadFsTree"))?;
    ensure(entries.iter().all(entry_ok), "BadFsTree")?;
    let names: Vec<&str> = entries.iter().filter_map(|e| e.get("name").and_then(Value::as_str)).collect();
    ensure(names.windows(2).all(|w| w[0].as_bytes() < w[1].as_bytes()), "BadFsTree")?;
    Ok(entries.clone())
}

/// dir_object builds the directory object of a tree given as `{name, kind, mode, content_hex |
/// target | entries}` items, returning its canonical bytes and the number of directory objects.
pub fn dir_object(items: &[Value]) -> R<(Vec<u8>, usize)> {
    let mut entries: Vec<(String, Value)> = Vec::new();
    let mut dirs = 1;
    for it in items {
        let name = it.get("name").and_then(Value::as_str).ok_or(Code("BadFsTree"))?;
        let kind = it.get("kind").and_then(Value::as_str).ok_or(Code("BadFsTree"))?;
        let (bytes, mode) = match kind {
            "file" => (
                it.get("content_hex").and_then(Value::as_str).and_then(wire::unhex).ok_or(Code("BadFsTree"))?,
                it.get("mode").and_then(Value::as_int).ok_or(Code("BadFsTree"))?,
            ),
            "symlink" => {
                (it.get("target").and_then(Value::as_str).ok_or(Code("BadFsTree"))?.as_bytes().to_vec(), 0o777)
            }
            "dir" => {
                let (b, n) = dir_object(it.get("entries").and_then(Value::as_arr).ok_or(Code("BadFsTree"))?)?;
                dirs += n;
                (b, it.get("mode").and_then(Value::as_int).ok_or(Code("BadFsTree"))?)
            }
            _ => return Err(Code("BadFsTree")),
        };
        let e = Value::obj(vec![
            ("digest", wire::digest_value(&wire::blake3(&bytes))),
            ("kind", Value::str(kind)),
            ("mode", Value::int(mode)),
            ("name", Value::str(name)),
            ("size", wire::amount(bytes.len() as u64)),
        ]);
        entries.push((name.to_string(), e));
    }
    entries.sort_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
    let obj = Value::obj(vec![
        ("entries", Value::Arr(entries.into_iter().map(|(_, e)| e).collect())),
        ("format", Value::str(FORMAT)),
    ]);
    let bytes = json::canonical_bytes(&obj);
    parse_dir(&bytes)?;
    Ok((bytes, dirs))
}
