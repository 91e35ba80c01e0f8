//! §14 environment manifests: reading devcontainer.json (JSONC), the declarative subset,
//! substitutions, the normalised environment, verification and satisfaction.

use crate::compat::OptionExt;
use crate::error::{ensure, Code, R};
use crate::json::{self, Value};
use crate::wire;

pub const MANIFEST_TYPE: &str = "application/vnd.sandbox-attest.manifest+json";
/// §14.2 item 1: a source is at most 1 MiB.
pub const SOURCE_LIMIT: usize = 1024 * 1024;

/// A refusal member: (JSON pointer, code).
pub type Member = (String, &'static str);

/// The outcome of a failed ingestion: `ManifestParseError` or `ManifestRefused` and its members.
#[derive(Debug)]
pub struct Refusal {
    pub code: &'static str,
    pub members: Vec<Member>,
}

fn esc(k: &str) -> String {
    k.replace('~', "~0").replace('/', "~1")
}

// ---------------------------------------------------------------------------------------------
// §14.2 JSONC

struct Jsonc<'a> {
    s: &'a [u8],
    i: usize,
    structural: Vec<Member>,
}

type P<T> = Result<T, ()>;

impl Jsonc<'_> {
    fn skip(&mut self) -> P<()> {
        loop {
            match self.s.get(self.i) {
                Some(b' ' | b'\t' | b'\n' | b'\r') => self.i += 1,
                Some(b'/') if self.s.get(self.i + 1) == Some(&b'/') => {
                    while self.s.get(self.i).has(|c| *c != b'\n') {
                        self.i += 1;
                    }
                }
                Some(b'/') if self.s.get(self.i + 1) == Some(&b'*') => {
                    let rest = &self.s[self.i + 2..];
                    let end = rest.windows(2).position(|w| w == b"*/").ok_or(())?;
                    self.i += 2 + end + 2;
                }
                _ => return Ok(()),
            }
        }
    }
    fn value(&mut self, ptr: &str, depth: usize) -> P<Value> {
        self.skip()?;
        match self.s.get(self.i) {
            Some(b'{') => self.object(ptr, depth + 1),
            Some(b'[') => self.array(ptr, depth + 1),
            Some(b'"') => Ok(Value::Str(self.string(ptr)?)),
            Some(b't') => self.word("true", Value::Bool(true)),
            Some(b'f') => self.word("false", Value::Bool(false)),
            Some(b'n') => self.word("null", Value::Null),
            Some(b'-' | b'0'..=b'9') => self.number(),
            _ => Err(()),
        }
    }
    fn word(&mut self, w: &str, v: Value) -> P<Value> {
        if self.s[self.i..].starts_with(w.as_bytes()) {
            self.i += w.len();
            Ok(v)
        } else {
            Err(())
        }
    }
    fn number(&mut self) -> P<Value> {
        let start = self.i;
        while self.s.get(self.i).has(|c| c.is_ascii_digit() || b"+-.eE".contains(c)) {
            self.i += 1;
        }
        let t = std::str::from_utf8(&self.s[start..self.i]).map_err(|_| ())?;
        json::parse(t.as_bytes(), json::Mode::Lenient, usize::MAX).map_err(|_| ())
    }
    fn string(&mut self, ptr: &str) -> P<String> {
        let start = self.i;
        self.i += 1;
        loop {
            match self.s.get(self.i) {
                None | Some(b'\n') => return Err(()),
                Some(b'"') => break,
                Some(b'\\') => self.i += 2,
                Some(_) => self.i += 1,
            }
        }
        self.i += 1;
        match json::parse(&self.s[start..self.i], json::Mode::Lenient, usize::MAX) {
            Ok(Value::Str(s)) => Ok(s),
            Err(Code("LoneSurrogate")) => {
                self.structural.push((ptr.to_string(), "LoneSurrogate"));
                Ok(String::new())
            }
            _ => Err(()),
        }
    }
    fn array(&mut self, ptr: &str, depth: usize) -> P<Value> {
        if depth > json::MAX_DEPTH {
            return Err(());
        }
        self.i += 1;
        let mut out = Vec::new();
        loop {
            self.skip()?;
            if self.s.get(self.i) == Some(&b']') {
                self.i += 1;
                return Ok(Value::Arr(out));
            }
            out.push(self.value(&format!("{ptr}/{}", out.len()), depth)?);
            self.skip()?;
            match self.s.get(self.i) {
                Some(b',') => self.i += 1,
                Some(b']') => {}
                _ => return Err(()),
            }
        }
    }
    fn object(&mut self, ptr: &str, depth: usize) -> P<Value> {
        if depth > json::MAX_DEPTH {
            return Err(());
        }
        self.i += 1;
        let mut out: Vec<(String, Value)> = Vec::new();
        loop {
            self.skip()?;
            match self.s.get(self.i) {
                Some(b'}') => {
                    self.i += 1;
                    return Ok(Value::Obj(out));
                }
                Some(b'"') => {}
                _ => return Err(()),
            }
            let k = self.string(ptr)?;
            let here = format!("{ptr}/{}", esc(&k));
            self.skip()?;
            if self.s.get(self.i) != Some(&b':') {
                return Err(());
            }
            self.i += 1;
            let v = self.value(&here, depth)?;
            if ["__proto__", "constructor", "prototype"].contains(&k.as_str()) {
                self.structural.push((here.clone(), "ForbiddenKey"));
            } else if out.iter().any(|(n, _)| *n == k) {
                self.structural.push((here.clone(), "DuplicateKey"));
            } else {
                out.push((k, v));
            }
            self.skip()?;
            match self.s.get(self.i) {
                Some(b',') => self.i += 1,
                Some(b'}') => {}
                _ => return Err(()),
            }
        }
    }
}

/// read parses a source (§14.2): `Err` is a syntax error (or size, UTF-8, depth).
fn read(bytes: &[u8]) -> Result<(Value, Vec<Member>), ()> {
    if bytes.len() > SOURCE_LIMIT {
        return Err(());
    }
    let body = bytes.strip_prefix(b"\xef\xbb\xbf").unwrap_or(bytes);
    std::str::from_utf8(body).map_err(|_| ())?;
    let mut p = Jsonc { s: body, i: 0, structural: vec![] };
    let v = p.value("", 0)?;
    p.skip()?;
    if p.i != body.len() {
        return Err(());
    }
    Ok((v, p.structural))
}

// ---------------------------------------------------------------------------------------------
// §14.3–§14.4 the subset and substitutions

const IGNORED: &[&str] = &[
    "customizations",
    "settings",
    "extensions",
    "devPort",
    "$schema",
    "shutdownAction",
    "updateRemoteUserUID",
    "userEnvProbe",
];
const KEPT: &[&str] = &[
    "image",
    "containerEnv",
    "remoteEnv",
    "containerUser",
    "remoteUser",
    "workspaceFolder",
    "hostRequirements",
    "init",
    "forwardPorts",
    "portsAttributes",
    "otherPortsAttributes",
    "overrideCommand",
    "privileged",
    "name",
];

fn refused_code(k: &str) -> &'static str {
    match k {
        "initializeCommand"
        | "onCreateCommand"
        | "updateContentCommand"
        | "postCreateCommand"
        | "postStartCommand"
        | "postAttachCommand"
        | "waitFor" => "LifecycleCommand",
        "capAdd" | "securityOpt" | "runArgs" | "mounts" | "workspaceMount" | "appPort" => "PrivilegeWidening",
        "build" | "dockerFile" | "context" | "dockerComposeFile" | "service" | "runServices" => "BuildOrCompose",
        "features" | "overrideFeatureInstallOrder" => "FeatureInstall",
        _ => "UnknownMember",
    }
}

/// substitutions lists the `${…}` names in a string; None when one is unterminated.
fn substitutions(s: &str) -> Option<Vec<&str>> {
    let mut out = Vec::new();
    let mut rest = s;
    while let Some(at) = rest.find("${") {
        let end = rest[at..].find('}')?;
        out.push(&rest[at + 2..at + end]);
        rest = &rest[at + end + 1..];
    }
    Some(out)
}

fn subst_code(name: &str) -> &'static str {
    let host = name.starts_with("localEnv:")
        || name.starts_with("env:")
        || name == "localWorkspaceFolder"
        || name == "localWorkspaceFolderBasename";
    if host {
        "HostSubstitution"
    } else {
        "UnknownSubstitution"
    }
}

struct Ctx {
    members: Vec<Member>,
    folder: String,
}

impl Ctx {
    fn refuse(&mut self, ptr: &str, code: &'static str) {
        self.members.push((ptr.to_string(), code));
    }
    /// resolve replaces the two deterministic substitutions and refuses the others.
    fn resolve(&mut self, ptr: &str, s: &str) -> Option<String> {
        let names = match substitutions(s) {
            Some(n) => n,
            None => {
                self.refuse(ptr, "UnknownSubstitution");
                return None;
            }
        };
        let mut bad = false;
        for n in &names {
            if *n != "containerWorkspaceFolder" && *n != "containerWorkspaceFolderBasename" {
                self.refuse(ptr, subst_code(n));
                bad = true;
            }
        }
        if bad {
            return None;
        }
        let base = self.folder.rsplit('/').next().unwrap_or("").to_string();
        Some(
            s.replace("${containerWorkspaceFolderBasename}", &base)
                .replace("${containerWorkspaceFolder}", &self.folder),
        )
    }
    /// literal refuses any `${…}` (image, workspace folder, names, users).
    fn literal(&mut self, ptr: &str, s: &str) -> bool {
        match substitutions(s) {
            Some(n) if n.is_empty() => true,
            Some(n) => {
                for x in n {
                    self.refuse(ptr, subst_code(x));
                }
                false
            }
            None => {
                self.refuse(ptr, "UnknownSubstitution");
                false
            }
        }
    }
}

/// §14.3 "Value forms": a path component is runs of `[a-z0-9]`, each joined to the next by one
/// `.`, one `_`, two `_` or one or more `-`.
fn oci_component_ok(c: &str) -> bool {
    let run = |x: u8| x.is_ascii_lowercase() || x.is_ascii_digit();
    let b = c.as_bytes();
    if b.is_empty() || !run(b[0]) || !run(b[b.len() - 1]) {
        return false;
    }
    let mut i = 0;
    while i < b.len() {
        if run(b[i]) {
            i += 1;
            continue;
        }
        let start = i;
        while i < b.len() && !run(b[i]) {
            i += 1;
        }
        let sep = &c[start..i];
        if !(sep == "." || sep == "_" || sep == "__" || sep.bytes().all(|x| x == b'-')) {
            return false;
        }
    }
    true
}

/// §14.3 "Value forms": a registry host is dot-separated labels of ASCII letters and digits with
/// inner `-`, optionally `:` and a decimal port.
fn oci_host_ok(d: &str) -> bool {
    let (host, port) = match d.split_once(':') {
        Some((h, p)) => (h, Some(p)),
        None => (d, None),
    };
    let label_ok = |l: &str| {
        let b = l.as_bytes();
        !b.is_empty()
            && b[0].is_ascii_alphanumeric()
            && b[b.len() - 1].is_ascii_alphanumeric()
            && b.iter().all(|x| x.is_ascii_alphanumeric() || *x == b'-')
    };
    host.split('.').all(label_ok) && port.none_or(|p| !p.is_empty() && p.bytes().all(|x| x.is_ascii_digit()))
}

/// §14.3 "Value forms": `name[:tag]`, the name an optional registry host and `/` then path
/// components, the tag `[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}`.
fn oci_name_ok(name: &str) -> bool {
    let (path, tag) = match name.rfind(':') {
        Some(c) if !name[c..].contains('/') => (&name[..c], Some(&name[c + 1..])),
        _ => (name, None),
    };
    let tag_ok = tag.none_or(|t| {
        let b = t.as_bytes();
        !b.is_empty()
            && b.len() <= 128
            && (b[0].is_ascii_alphanumeric() || b[0] == b'_')
            && b.iter().all(|x| x.is_ascii_alphanumeric() || b"_.-".contains(x))
    });
    let comps: Vec<&str> = path.split('/').collect();
    let first_ok = oci_component_ok(comps[0]) || (comps.len() > 1 && oci_host_ok(comps[0]));
    tag_ok && first_ok && comps[1..].iter().all(|c| oci_component_ok(c))
}

fn image(cx: &mut Ctx, v: Option<&Value>) -> Option<String> {
    let v = match v {
        Some(v) => v,
        None => {
            cx.refuse("/image", "ImageMissing");
            return None;
        }
    };
    let s = match v.as_str() {
        Some(s) => s,
        None => {
            cx.refuse("/image", "InvalidValue");
            return None;
        }
    };
    let pinned = s
        .rsplit_once("@sha256:")
        .filter(|(_, h)| h.len() == 64 && h.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)));
    let out = match pinned {
        None => {
            cx.refuse("/image", "ImageNotPinned");
            None
        }
        Some((name, hex)) if s.len() <= 512 && oci_name_ok(name) => {
            let bare = match name.rfind(':') {
                Some(c) if !name[c..].contains('/') => &name[..c],
                _ => name,
            };
            Some(format!("{bare}@sha256:{hex}"))
        }
        Some((name, _)) if name.contains("${") => None,
        Some(_) => {
            cx.refuse("/image", "InvalidValue");
            None
        }
    };
    cx.literal("/image", s);
    out
}

/// §14.3 "Value forms": a variable name is a non-empty string without `=` or NUL.
fn env_name_ok(k: &str) -> bool {
    !k.is_empty() && !k.contains('=') && !k.contains('\0')
}

fn env(cx: &mut Ctx, key: &str, v: &Value, nulls: bool, out: &mut Vec<(String, Value)>) {
    let m = match v.as_obj() {
        Some(m) => m,
        None => return cx.refuse(&format!("/{key}"), "InvalidValue"),
    };
    for (k, x) in m {
        let ptr = format!("/{key}/{}", esc(k));
        if !cx.literal(&ptr, k) {
            continue;
        }
        if !env_name_ok(k) {
            cx.refuse(&ptr, "InvalidValue");
            continue;
        }
        let val = match x {
            Value::Str(s) => match cx.resolve(&ptr, s) {
                Some(r) => Value::Str(r),
                None => continue,
            },
            Value::Null if nulls => Value::Null,
            _ => {
                cx.refuse(&ptr, "InvalidValue");
                continue;
            }
        };
        out.retain(|(n, _)| n != k);
        out.push((k.clone(), val));
    }
}

/// §14.3 "Value forms": `[A-Za-z_][A-Za-z0-9_.-]*` optionally ending in `$`, or a numeric uid.
fn user_ok(s: &str) -> bool {
    if !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) {
        return true;
    }
    let b = s.strip_suffix('$').unwrap_or(s).as_bytes();
    !b.is_empty()
        && (b[0].is_ascii_alphabetic() || b[0] == b'_')
        && b.iter().all(|c| c.is_ascii_alphanumeric() || b"_.-".contains(c))
}

fn folder_ok(s: &str) -> bool {
    s == "/" || (s.starts_with('/') && s[1..].split('/').all(|seg| !seg.is_empty() && seg != "." && seg != ".."))
}

/// bytes_of reads `N[kb|mb|gb|tb]` (powers of 1024) as a byte count.
fn bytes_of(v: &Value) -> Option<u64> {
    let s = v.as_str()?;
    let (num, shift) = [("tb", 40), ("gb", 30), ("mb", 20), ("kb", 10)]
        .iter()
        .find_map(|(u, sh)| s.strip_suffix(u).map(|n| (n, *sh)))
        .unwrap_or((s, 0));
    if num.is_empty() || !num.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    num.parse::<u64>().ok()?.checked_mul(1u64 << shift)
}

fn host_requirements(cx: &mut Ctx, v: Option<&Value>) -> Value {
    let (mut cpus, mut mem, mut sto) = (1i64, 0u64, 0u64);
    let mut gpu = ("none", 0i64, 0u64);
    if let Some(v) = v {
        match v.as_obj() {
            None => cx.refuse("/hostRequirements", "InvalidValue"),
            Some(m) => {
                for (k, x) in m {
                    let ptr = format!("/hostRequirements/{}", esc(k));
                    match k.as_str() {
                        "cpus" => match x.as_int() {
                            Some(n) if n >= 1 => cpus = n,
                            _ => cx.refuse(&ptr, "InvalidValue"),
                        },
                        "memory" | "storage" => match bytes_of(x) {
                            Some(b) if k == "memory" => mem = b,
                            Some(b) => sto = b,
                            None => cx.refuse(&ptr, "InvalidValue"),
                        },
                        "gpu" => gpu = gpu_of(cx, &ptr, x),
                        _ => cx.refuse(&ptr, "UnknownMember"),
                    }
                }
            }
        }
    }
    Value::obj(vec![
        ("cpus", Value::int(cpus)),
        ("memory_bytes", wire::amount(mem)),
        ("storage_bytes", wire::amount(sto)),
        (
            "gpu",
            Value::obj(vec![
                ("mode", Value::str(gpu.0)),
                ("cores", Value::int(gpu.1)),
                ("memory_bytes", wire::amount(gpu.2)),
            ]),
        ),
    ])
}

fn gpu_of(cx: &mut Ctx, ptr: &str, x: &Value) -> (&'static str, i64, u64) {
    match x {
        Value::Bool(true) => ("required", 0, 0),
        Value::Bool(false) => ("none", 0, 0),
        Value::Str(s) if s == "optional" => ("optional", 0, 0),
        Value::Obj(m) => {
            let (mut cores, mut mem) = (0i64, 0u64);
            for (k, y) in m {
                let p = format!("{ptr}/{}", esc(k));
                match k.as_str() {
                    "cores" => match y.as_int() {
                        Some(n) if n >= 1 => cores = n,
                        _ => cx.refuse(&p, "InvalidValue"),
                    },
                    "memory" => match bytes_of(y) {
                        Some(b) => mem = b,
                        None => cx.refuse(&p, "InvalidValue"),
                    },
                    _ => cx.refuse(&p, "UnknownMember"),
                }
            }
            ("required", cores, mem)
        }
        _ => {
            cx.refuse(ptr, "InvalidValue");
            ("none", 0, 0)
        }
    }
}

fn port_ok(n: i64) -> bool {
    (1..=65535).contains(&n)
}

fn forward_ports(cx: &mut Ctx, v: Option<&Value>) -> Value {
    let (mut nums, mut strs): (Vec<i64>, Vec<String>) = (vec![], vec![]);
    if let Some(v) = v {
        match v.as_arr() {
            None => cx.refuse("/forwardPorts", "InvalidValue"),
            Some(a) => {
                for (i, x) in a.iter().enumerate() {
                    let ok = match x {
                        Value::Num(_) => x.as_int().filter(|n| port_ok(*n)).map(|n| nums.push(n)).is_some(),
                        Value::Str(s) => s
                            .rsplit_once(':')
                            .filter(|(h, p)| {
                                !h.is_empty()
                                    && h.bytes().all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b))
                                    && (1..=5).contains(&p.len())
                                    && p.bytes().all(|b| b.is_ascii_digit())
                                    && p.parse::<i64>().ok().has(port_ok)
                            })
                            .map(|_| strs.push(s.clone()))
                            .is_some(),
                        _ => false,
                    };
                    if !ok {
                        cx.refuse(&format!("/forwardPorts/{i}"), "InvalidValue");
                    }
                }
            }
        }
    }
    nums.sort_unstable();
    nums.dedup();
    strs.sort_by(|a, b| json::cmp_utf16(a, b));
    strs.dedup();
    Value::Arr(nums.into_iter().map(Value::int).chain(strs.into_iter().map(Value::Str)).collect())
}

const ON_AUTO: &[&str] = &["notify", "openBrowser", "openBrowserOnce", "openPreview", "silent", "ignore"];

fn port_attributes(cx: &mut Ctx, ptr: &str, v: &Value) -> Value {
    let (mut label, mut proto, mut auto, mut local) =
        (Value::str("Application"), Value::Null, Value::str("notify"), Value::Bool(false));
    match v.as_obj() {
        None => cx.refuse(ptr, "InvalidValue"),
        Some(m) => {
            for (k, x) in m {
                let p = format!("{ptr}/{}", esc(k));
                match (k.as_str(), x) {
                    ("label", Value::Str(s)) => {
                        if let Some(r) = cx.resolve(&p, s) {
                            label = Value::Str(r)
                        }
                    }
                    ("protocol", Value::Str(s)) if s == "http" || s == "https" => proto = x.clone(),
                    ("onAutoForward", Value::Str(s)) if ON_AUTO.contains(&s.as_str()) => auto = x.clone(),
                    ("requireLocalPort", Value::Bool(_)) => local = x.clone(),
                    ("elevateIfNeeded", Value::Bool(true)) => cx.refuse(&p, "PrivilegeWidening"),
                    ("elevateIfNeeded", Value::Bool(false)) => {}
                    ("label" | "protocol" | "onAutoForward" | "requireLocalPort" | "elevateIfNeeded", _) => {
                        cx.refuse(&p, "InvalidValue")
                    }
                    _ => cx.refuse(&p, "UnknownMember"),
                }
            }
        }
    }
    Value::obj(vec![("label", label), ("protocol", proto), ("on_auto_forward", auto), ("require_local_port", local)])
}

fn ports_attributes(cx: &mut Ctx, v: Option<&Value>) -> Value {
    let mut out = Vec::new();
    if let Some(v) = v {
        match v.as_obj() {
            None => cx.refuse("/portsAttributes", "InvalidValue"),
            Some(m) => {
                for (k, x) in m {
                    let p = format!("/portsAttributes/{}", esc(k));
                    out.push((k.clone(), port_attributes(cx, &p, x)));
                }
            }
        }
    }
    Value::Obj(out)
}

/// environment applies §14.3–§14.5 to a parsed document, collecting every refusal.
fn environment(doc: &Value, cx: &mut Ctx) -> (Value, Vec<String>) {
    let m = doc.as_obj().cloned().unwrap_or_default();
    let mut ignored = Vec::new();
    for (k, x) in &m {
        let ptr = format!("/{}", esc(k));
        if IGNORED.contains(&k.as_str()) {
            ignored.push(ptr);
        } else if k == "overrideCommand" {
            match x {
                Value::Bool(true) => {}
                Value::Bool(false) => cx.refuse(&ptr, "LifecycleCommand"),
                _ => cx.refuse(&ptr, "InvalidValue"),
            }
        } else if k == "privileged" {
            // §14.3: false is the default and narrows nothing (accepted, not part of the
            // environment); true lifts the kernel's confinement.
            match x {
                Value::Bool(false) => {}
                Value::Bool(true) => cx.refuse(&ptr, "PrivilegeWidening"),
                _ => cx.refuse(&ptr, "InvalidValue"),
            }
        } else if k == "name" {
            if x.as_str().is_none() {
                cx.refuse(&ptr, "InvalidValue");
            }
        } else if !KEPT.contains(&k.as_str()) {
            cx.refuse(&ptr, refused_code(k));
        }
    }
    if let Some(w) = doc.get("workspaceFolder") {
        match w.as_str() {
            Some(s) if cx.literal("/workspaceFolder", s) => {
                if folder_ok(s) {
                    cx.folder = s.to_string();
                } else {
                    cx.refuse("/workspaceFolder", "InvalidValue");
                }
            }
            Some(_) => {}
            None => cx.refuse("/workspaceFolder", "InvalidValue"),
        }
    }
    let img = image(cx, doc.get("image"));
    let mut env_out = Vec::new();
    if let Some(v) = doc.get("containerEnv") {
        env(cx, "containerEnv", v, false, &mut env_out);
    }
    if let Some(v) = doc.get("remoteEnv") {
        env(cx, "remoteEnv", v, true, &mut env_out);
    }
    let mut user = Value::Null;
    for key in ["containerUser", "remoteUser"] {
        if let Some(u) = doc.get(key) {
            let ptr = format!("/{key}");
            // §14.3 "Value forms": a refused substitution gets its code; a user is never
            // substituted, so one holding only deterministic substitutions is `InvalidValue`.
            match u.as_str() {
                Some(s) if cx.resolve(&ptr, s).is_some() => {
                    if user_ok(s) {
                        user = Value::str(s);
                    } else {
                        cx.refuse(&ptr, "InvalidValue");
                    }
                }
                Some(_) => {}
                None => cx.refuse(&ptr, "InvalidValue"),
            }
        }
    }
    let hr = host_requirements(cx, doc.get("hostRequirements"));
    let init = match doc.get("init") {
        None => false,
        Some(Value::Bool(b)) => *b,
        Some(_) => {
            cx.refuse("/init", "InvalidValue");
            false
        }
    };
    let fp = forward_ports(cx, doc.get("forwardPorts"));
    let pa = ports_attributes(cx, doc.get("portsAttributes"));
    let opa = match doc.get("otherPortsAttributes") {
        None | Some(Value::Null) => Value::Null,
        Some(v) => port_attributes(cx, "/otherPortsAttributes", v),
    };
    ignored.sort_by(|a, b| json::cmp_utf16(a, b));
    let env_v = Value::obj(vec![
        ("image", img.map(Value::Str).unwrap_or(Value::Null)),
        ("env", Value::Obj(env_out)),
        ("user", user),
        ("workspace_folder", Value::Str(cx.folder.clone())),
        ("host_requirements", hr),
        ("init", Value::Bool(init)),
        ("forward_ports", fp),
        ("ports_attributes", pa),
        ("other_ports_attributes", opa),
    ]);
    (env_v, ignored)
}

/// ingest reads a devcontainer.json source into a manifest document (§14.2–§14.5).
pub fn ingest(bytes: &[u8]) -> Result<Value, Refusal> {
    let (doc, structural) = read(bytes).map_err(|_| Refusal { code: "ManifestParseError", members: vec![] })?;
    let mut cx = Ctx { members: structural, folder: "/workspace".into() };
    if !doc.is_obj() {
        // Nothing else of a non-object can be read (c7-refusals-not-object names only this).
        return Err(Refusal { code: "ManifestRefused", members: vec![(String::new(), "NotAnObject")] });
    }
    let (env, ignored) = environment(&doc, &mut cx);
    if !cx.members.is_empty() {
        let mut m = cx.members;
        m.sort_by(|a, b| json::cmp_utf16(&a.0, &b.0).then_with(|| json::cmp_utf16(a.1, b.1)));
        m.dedup();
        return Err(Refusal { code: "ManifestRefused", members: m });
    }
    Ok(Value::obj(vec![
        ("type", Value::str("sandbox-attest.manifest/1")),
        ("address", wire::digest_value(&wire::address(&env))),
        ("name", doc.get("name").cloned().unwrap_or(Value::Null)),
        ("environment", env),
        (
            "source",
            Value::obj(vec![
                ("digest", wire::digest_value(&wire::blake3(bytes))),
                ("size", Value::Num(bytes.len() as f64)),
            ]),
        ),
        ("ignored", Value::Arr(ignored.into_iter().map(Value::Str).collect())),
    ]))
}

// ---------------------------------------------------------------------------------------------
// §14.6 verification

/// write_back spells an environment as a devcontainer.json (§14.5 fixed point).
fn write_back(e: &Value) -> Option<Value> {
    let env = e.get("env")?.as_obj()?;
    let strings: Vec<(String, Value)> = env.iter().filter(|(_, v)| v.as_str().is_some()).cloned().collect();
    let nulls: Vec<(String, Value)> = env.iter().filter(|(_, v)| *v == Value::Null).cloned().collect();
    let hr = e.get("host_requirements")?;
    let gpu = hr.get("gpu")?;
    let gpu_v = match gpu.get("mode")?.as_str()? {
        "none" => Value::Bool(false),
        "optional" => Value::str("optional"),
        // §14.5 the write-back: `cores` only above 0, `memory` only when not "0", `true` for neither.
        _ => {
            let mut m = Vec::new();
            if gpu.get("cores")?.as_int() != Some(0) {
                m.push(("cores".to_string(), gpu.get("cores")?.clone()));
            }
            if gpu.get("memory_bytes")?.as_str() != Some("0") {
                m.push(("memory".to_string(), gpu.get("memory_bytes")?.clone()));
            }
            if m.is_empty() {
                Value::Bool(true)
            } else {
                Value::Obj(m)
            }
        }
    };
    let attrs = |a: &Value| -> Option<Value> {
        Some(Value::obj(vec![
            ("label", a.get("label")?.clone()),
            ("onAutoForward", a.get("on_auto_forward")?.clone()),
            ("requireLocalPort", a.get("require_local_port")?.clone()),
        ]))
        .map(|mut v| {
            if let (Value::Obj(m), Some(p)) = (&mut v, a.get("protocol").filter(|p| **p != Value::Null)) {
                m.push(("protocol".into(), p.clone()));
            }
            v
        })
    };
    let pa: Vec<(String, Value)> = e
        .get("ports_attributes")?
        .as_obj()?
        .iter()
        .map(|(k, v)| attrs(v).map(|a| (k.clone(), a)))
        .collect::<Option<_>>()?;
    let mut out = vec![
        ("image", e.get("image")?.clone()),
        ("containerEnv", Value::Obj(strings)),
        ("remoteEnv", Value::Obj(nulls)),
        ("workspaceFolder", e.get("workspace_folder")?.clone()),
        (
            "hostRequirements",
            Value::obj(vec![
                ("cpus", hr.get("cpus")?.clone()),
                ("memory", hr.get("memory_bytes")?.clone()),
                ("storage", hr.get("storage_bytes")?.clone()),
                ("gpu", gpu_v),
            ]),
        ),
        ("init", e.get("init")?.clone()),
        ("forwardPorts", e.get("forward_ports")?.clone()),
        ("portsAttributes", Value::Obj(pa)),
    ];
    if let Some(u) = e.get("user").filter(|u| **u != Value::Null) {
        out.push(("remoteUser", u.clone()));
    }
    if let Some(o) = e.get("other_ports_attributes").filter(|o| **o != Value::Null) {
        out.push(("otherPortsAttributes", attrs(o)?));
    }
    Some(Value::obj(out))
}

const ENV_MEMBERS: &[&str] = &[
    "image",
    "env",
    "user",
    "workspace_folder",
    "host_requirements",
    "init",
    "forward_ports",
    "ports_attributes",
    "other_ports_attributes",
];

/// check_document applies §14.6's document checks (`BadManifest`).
pub fn check_document(d: &Value) -> R<()> {
    const BAD: &str = "BadManifest";
    ensure(wire::exact_members(d, &["type", "address", "name", "environment", "source", "ignored"]), BAD)?;
    ensure(d.get("type").and_then(Value::as_str) == Some("sandbox-attest.manifest/1"), BAD)?;
    ensure(d.get("name").has(|n| *n == Value::Null || n.as_str().is_some()), BAD)?;
    let src = d.get("source").unwrap_or(&Value::Null);
    let src_ok = wire::exact_members(src, &["digest", "size"])
        && src.get("digest").has(wire::is_digest)
        && src.get("size").and_then(Value::as_int).has(|n| n >= 0);
    ensure(src_ok, BAD)?;
    let ign: Vec<&str> =
        d.get("ignored").and_then(Value::as_arr).ok_or(Code(BAD))?.iter().filter_map(Value::as_str).collect();
    let ign_ok = ign.len() == d.get("ignored").and_then(Value::as_arr).map(Vec::len).unwrap_or(0)
        && ign.iter().all(|p| p.strip_prefix('/').has(|k| IGNORED.contains(&k)))
        && ign.windows(2).all(|w| json::cmp_utf16(w[0], w[1]) == std::cmp::Ordering::Less);
    ensure(ign_ok, BAD)?;
    let e = d.get("environment").unwrap_or(&Value::Null);
    ensure(wire::exact_members(e, ENV_MEMBERS), BAD)?;
    let back = write_back(e).ok_or(Code(BAD))?;
    let again = ingest(json::canonical(&back).as_bytes()).map_err(|_| Code(BAD))?;
    ensure(again.get("environment").map(json::canonical) == Some(json::canonical(e)), BAD)?;
    ensure(d.get("address").and_then(|a| wire::parse_digest(a).ok()) == Some(wire::address(e)), BAD)
}

/// verify opens a signed manifest document (§14.6).
pub fn verify(env: &Value, stewards: Option<&[String]>) -> R<(wire::Digest, Value)> {
    let want = wire::Expect { payload_type: MANIFEST_TYPE, limit: json::DEFAULT_LIMIT, signers: stewards };
    let o = wire::open_envelope(env, &want)?;
    check_document(&o.payload)?;
    Ok((o.address, o.payload))
}

// ---------------------------------------------------------------------------------------------
// §14.7 satisfaction

fn sha(img: &str) -> Option<&str> {
    img.rsplit_once("@sha256:").map(|(_, h)| h)
}

fn amount_of(v: Option<&Value>) -> u64 {
    v.and_then(|x| wire::parse_amount(x).ok()).unwrap_or(0)
}

/// satisfies answers §14.7: Ok(None) when it does, Ok(Some((code, pointers))) when not.
pub fn satisfies(doc: &Value, offered: &Value, address: Option<&Value>) -> R<Option<(&'static str, Vec<String>)>> {
    let e = doc.get("environment").ok_or(Code("BadManifest"))?;
    let own = wire::address(e);
    let stated = doc.get("address").and_then(|a| wire::parse_digest(a).ok());
    let asked = address.map(|a| wire::parse_digest(a).ok());
    if stated != Some(own) || asked.has(|a| a != Some(own)) {
        return Ok(Some(("ManifestMismatch", vec![String::new()])));
    }
    let mut p = Vec::new();
    if sha(e.get("image").and_then(Value::as_str).unwrap_or(""))
        != offered.get("image").and_then(Value::as_str).and_then(sha)
    {
        p.push("/image".to_string());
    }
    let (want, got) = (e.get("env").and_then(Value::as_obj), offered.get("env").and_then(Value::as_obj));
    let mut names: Vec<&String> = want.iter().chain(got.iter()).flat_map(|m| m.iter().map(|(k, _)| k)).collect();
    names.sort_by(|a, b| json::cmp_utf16(a, b));
    names.dedup();
    for n in names {
        let w = e.get("env").and_then(|m| m.get(n));
        let g = offered.get("env").and_then(|m| m.get(n));
        if w != g {
            p.push(format!("/env/{}", esc(n)));
        }
    }
    for k in ["user", "workspace_folder"] {
        if e.get(k) != offered.get(k) {
            p.push(format!("/{k}"));
        }
    }
    let hr = e.get("host_requirements").unwrap_or(&Value::Null);
    let host = offered.get("host").unwrap_or(&Value::Null);
    if hr.get("cpus").and_then(Value::as_int) > host.get("cpus").and_then(Value::as_int) {
        p.push("/host_requirements/cpus".into());
    }
    for k in ["memory_bytes", "storage_bytes"] {
        if amount_of(hr.get(k)) > amount_of(host.get(k)) {
            p.push(format!("/host_requirements/{k}"));
        }
    }
    let g = hr.get("gpu").unwrap_or(&Value::Null);
    if g.get("mode").and_then(Value::as_str) == Some("required") {
        let hg = host.get("gpu").filter(|x| **x != Value::Null);
        let small = hg.none_or(|hg| {
            g.get("cores").and_then(Value::as_int) > hg.get("cores").and_then(Value::as_int)
                || amount_of(g.get("memory_bytes")) > amount_of(hg.get("memory_bytes"))
        });
        if small {
            p.push("/host_requirements/gpu".into());
        }
    }
    Ok(if p.is_empty() { None } else { Some(("EnvironmentMismatch", p)) })
}
