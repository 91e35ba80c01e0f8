//! sbx-adapter: the JSON-lines adapter protocol (sandbox-attest §11.2) over this crate.
//!
//! Reads one request per line on stdin, `{"id":n,"op":"…","input":…}`, and writes one response per
//! line on stdout, `{"id":n,"ok":true,"output":…}` or `{"id":n,"ok":false,"error":"Code"}`, in order.
//! `--help` prints usage; `--capabilities` prints the classes it implements.

use sbxverify::json::{self, Mode, Value};
use std::io::{BufRead, Write};

const HELP: &str = "usage: sbx-adapter [--capabilities]
  Speaks the sandbox-attest §11.2 JSON-lines adapter protocol on stdin/stdout.
  --capabilities   print the classes this verifier implements, as JSON, and exit
exit: 0 at end of input; 2 usage error";

fn respond(id: Value, result: Result<Value, sbxverify::error::Code>) -> String {
    let mut m = vec![("id", id)];
    match result {
        Ok(out) => {
            m.push(("ok", Value::Bool(true)));
            m.push(("output", out));
        }
        Err(code) => {
            m.push(("ok", Value::Bool(false)));
            m.push(("error", Value::str(code.0)));
        }
    }
    json::canonical(&Value::obj(m))
}

fn handle(line: &str) -> Option<String> {
    let req = json::parse(line.as_bytes(), Mode::Lenient, usize::MAX).ok()?;
    let id = req.get("id")?.clone();
    let op = req.get("op").and_then(Value::as_str).unwrap_or("");
    let input = req.get("input").cloned().unwrap_or(Value::Null);
    Some(respond(id, sbxverify::ops::call(op, &input)))
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        None => {}
        Some("--help" | "-h") => {
            println!("{HELP}");
            return;
        }
        Some("--capabilities") => {
            println!("{}", json::canonical(&sbxverify::ops::capabilities()));
            return;
        }
        Some(other) => {
            eprintln!("sbx-adapter: unknown argument {other}\n{HELP}");
            std::process::exit(2);
        }
    }
    let stdin = std::io::stdin();
    let mut out = std::io::stdout().lock();
    for line in stdin.lock().lines() {
        let line = match line {
            Ok(l) => l,
            Err(_) => break,
        };
        if line.trim().is_empty() {
            continue;
        }
        if let Some(resp) = handle(&line) {
            if writeln!(out, "{resp}").and_then(|_| out.flush()).is_err() {
                break;
            }
        }
    }
}
