//! sbx-adapter: the JSON-lines adapter protocol (sandbox-attest §11.2) over this crate.
//!
//! Reads one request per line on stdin, `{"id":n,"op":"…","input":…}`, and writes one response per
//! line on stdout, `{"id":n,"ok":true,"output":…}` or `{"id":n,"ok":false,"error":"Code"}`, in order.
//! `--help` prints usage; `--capabilities` prints the classes it implements.

use sbxverify::json::{self, Mode, Value};
use std::io::{BufRead, Write};

const HELP: &str = "usage: sbx-adapter [--capabilities | --bench CALLS]
  Speaks the sandbox-attest §11.2 JSON-lines adapter protocol on stdin/stdout.
  --capabilities   print the classes this verifier implements, as JSON, and exit
  --bench CALLS    for each stdin line {\"op\",\"input\"}: after one warm-up call, 7 rounds of CALLS
                   calls; print {\"op\",\"ok\",\"s_per_call\"} (median of the rounds) per line
exit: 0 at end of input; 2 usage error";

/// bench times one op in process: the figures bench/rust.bench.ts sets beside the reference's.
fn bench(calls: u32, line: &str) -> Option<String> {
    let req = json::parse(line.as_bytes(), Mode::Lenient, usize::MAX).ok()?;
    let op = req.get("op").and_then(Value::as_str)?.to_string();
    let input = req.get("input").cloned().unwrap_or(Value::Null);
    let ok = sbxverify::ops::call(&op, &input).is_ok();
    // Every result is folded into `oks`, which is printed, so no call can be optimised away
    // (std::hint::black_box is newer than Debian's rustc 1.63).
    let mut oks = 0u64;
    let mut rounds: Vec<f64> = (0..7)
        .map(|_| {
            let t = std::time::Instant::now();
            for _ in 0..calls {
                oks += u64::from(sbxverify::ops::call(&op, &input).is_ok());
            }
            t.elapsed().as_secs_f64() / f64::from(calls)
        })
        .collect();
    rounds.sort_by(|a, b| a.partial_cmp(b).unwrap_or(std::cmp::Ordering::Equal));
    let out = Value::obj(vec![
        ("op", Value::Str(op)),
        ("ok", Value::Bool(ok)),
        ("oks", Value::Num(oks as f64)),
        ("s_per_call", Value::Num(rounds[3])),
    ]);
    Some(json::canonical(&out))
}

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

/// line_id finds `"id":<digits>` in a line this reader cannot parse (a lone surrogate in an input,
/// say), so that even that request gets its answer and the harness never waits forever.
fn line_id(line: &str) -> Option<Value> {
    let at = line.find("\"id\":")? + 5;
    let digits: String = line[at..].trim_start().chars().take_while(char::is_ascii_digit).collect();
    digits.parse::<u32>().ok().map(|n| Value::Num(f64::from(n)))
}

fn handle(line: &str) -> Option<String> {
    match json::parse(line.as_bytes(), Mode::Lenient, usize::MAX) {
        Ok(req) => {
            let id = req.get("id")?.clone();
            let op = req.get("op").and_then(Value::as_str).unwrap_or("");
            let input = req.get("input").cloned().unwrap_or(Value::Null);
            Some(respond(id, sbxverify::ops::call(op, &input)))
        }
        // The request is unreadable to this implementation: answer with the reader's own code.
        Err(code) => Some(respond(line_id(line)?, Err(code))),
    }
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
        Some("--bench") => {
            let calls: u32 = match args.get(1).and_then(|n| n.parse().ok()) {
                Some(n) if n > 0 => n,
                _ => {
                    eprintln!("sbx-adapter: --bench needs a positive number of calls\n{HELP}");
                    std::process::exit(2);
                }
            };
            for line in std::io::stdin().lock().lines().map_while(Result::ok) {
                match bench(calls, &line) {
                    Some(out) => println!("{out}"),
                    None => {
                        eprintln!("sbx-adapter: --bench: unreadable line");
                        std::process::exit(2);
                    }
                }
            }
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
