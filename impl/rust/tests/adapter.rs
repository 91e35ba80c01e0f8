//! The adapter binary speaks §11.2: one answer per request line, in order, with its id; an unknown
//! op is `UnknownOp`; even a line its reader refuses gets an answer; capabilities are declared.

use std::io::Write;
use std::process::{Command, Stdio};

fn run(args: &[&str], input: &str) -> String {
    let mut child = Command::new(env!("CARGO_BIN_EXE_sbx-adapter"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("spawn");
    child.stdin.take().expect("stdin").write_all(input.as_bytes()).expect("write");
    let out = child.wait_with_output().expect("wait");
    assert!(out.status.success());
    String::from_utf8(out.stdout).expect("utf8")
}

#[test]
fn answers_every_line_in_order() {
    let input = concat!(
        "{\"id\":0,\"op\":\"amount.add\",\"input\":{\"amounts\":[\"1\",\"2\"]}}\n",
        "{\"id\":1,\"op\":\"no.such.op\",\"input\":{}}\n",
        "{\"id\":2,\"op\":\"journal.head\",\"input\":{\"events\":[{\"type\":\"\\udc00\"}]}}\n",
        "{\"id\":3,\"op\":\"amount.parse\",\"input\":{\"amount\":\"01\"}}\n",
    );
    let lines: Vec<String> = run(&[], input).lines().map(str::to_string).collect();
    assert_eq!(
        lines,
        vec![
            "{\"id\":0,\"ok\":true,\"output\":{\"sum\":\"3\"}}",
            "{\"error\":\"UnknownOp\",\"id\":1,\"ok\":false}",
            "{\"error\":\"LoneSurrogate\",\"id\":2,\"ok\":false}",
            "{\"error\":\"BadAmount\",\"id\":3,\"ok\":false}",
        ]
    );
}

#[test]
fn declares_its_classes_and_no_live_cases() {
    let caps = run(&["--capabilities"], "");
    assert!(caps.contains("\"live\":false"), "{caps}");
    assert!(caps.contains("\"C1\"") && caps.contains("\"C21\""), "{caps}");
    let by_op = run(&[], "{\"id\":5,\"op\":\"adapter.capabilities\",\"input\":{}}\n");
    assert!(by_op.starts_with("{\"id\":5,\"ok\":true,\"output\":{\"classes\":[\"C1\""), "{by_op}");
}
