//! The published vectors kept in `testdata/vectors` (BLAKE3, RFC 8032, RFC 8785, RFC 6962 and
//! transparency-dev/merkle), each case looped with its id in the assertion message.

use sbxverify::attest::merkle::{self, sha256};
use sbxverify::json::{self, Mode, Value};
use sbxverify::wire;
use std::path::PathBuf;

fn testdata(rel: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../testdata/vectors").join(rel)
}

fn load(rel: &str) -> Value {
    let bytes = std::fs::read(testdata(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"));
    json::parse(&bytes, Mode::Lenient, usize::MAX).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

fn s<'a>(v: &'a Value, k: &str) -> &'a str {
    v.get(k).and_then(Value::as_str).unwrap_or_else(|| panic!("member {k}"))
}

fn int(v: &Value, k: &str) -> u64 {
    v.get(k).and_then(Value::as_int).unwrap_or_else(|| panic!("member {k}")) as u64
}

fn h32(x: &str) -> [u8; 32] {
    wire::unhex(x).expect("hex").try_into().expect("32 bytes")
}

fn hashes(v: &Value, k: &str) -> Vec<[u8; 32]> {
    v.get(k).and_then(Value::as_arr).expect("list").iter().map(|x| h32(x.as_str().expect("hex"))).collect()
}

#[test]
fn blake3_official_vectors() {
    let d = load("blake3/test_vectors.json");
    for c in d.get("cases").and_then(Value::as_arr).expect("cases") {
        let n = int(c, "input_len");
        let input: Vec<u8> = (0..n).map(|i| (i % 251) as u8).collect();
        assert_eq!(wire::hex(&wire::blake3(&input)), s(c, "hash")[..64], "input_len {n}");
    }
}

#[test]
fn rfc8032_vectors() {
    let d = load("ed25519/rfc8032.json");
    for c in d.get("cases").and_then(Value::as_arr).expect("cases") {
        let (pk, msg, sig) =
            (wire::unhex(s(c, "public_key")), wire::unhex(s(c, "message")), wire::unhex(s(c, "signature")));
        let ok = wire::ed25519_verify(&pk.expect("pk"), &msg.expect("msg"), &sig.expect("sig")).is_ok();
        assert_eq!(ok, s(c, "expect") == "valid", "{}", s(c, "id"));
    }
}

#[test]
fn rfc8785_vectors() {
    for name in ["arrays", "french", "structures", "unicode", "values", "weird"] {
        let input = std::fs::read(testdata(&format!("jcs/input/{name}.json"))).expect("input");
        let want = std::fs::read_to_string(testdata(&format!("jcs/output/{name}.json"))).expect("output");
        let v = json::parse(&input, Mode::Lenient, json::DEFAULT_LIMIT).expect(name);
        assert_eq!(json::canonical(&v), want.trim_end_matches('\n'), "{name}");
    }
}

#[test]
fn rfc6962_roots_and_proofs() {
    let d = load("rfc6962/rfc6962-sha256-vectors.json");
    let leaves: Vec<[u8; 32]> = d
        .get("leaves")
        .and_then(Value::as_arr)
        .expect("leaves")
        .iter()
        .map(|l| merkle::leaf_hash(sha256, &wire::unhex(l.as_str().expect("hex")).expect("hex")))
        .collect();
    for (n, r) in d.get("rootsBySize").and_then(Value::as_arr).expect("roots").iter().enumerate() {
        assert_eq!(wire::hex(&merkle::root(sha256, &leaves[..n])), r.as_str().expect("hex"), "root of {n}");
    }
    for c in d.get("inclusionAll").and_then(Value::as_arr).expect("inclusion") {
        let (i, n) = (int(c, "leafIndex"), int(c, "treeSize"));
        let proof = hashes(c, "proof");
        let (leaf, root) = (h32(s(c, "leafHash")), h32(s(c, "root")));
        assert!(merkle::verify_inclusion(sha256, i, n, &leaf, &proof, &root, "X").is_ok(), "inclusion {i}/{n}");
        if (n as usize) <= leaves.len() {
            assert_eq!(merkle::path(sha256, i as usize, &leaves[..n as usize]), proof, "path {i}/{n}");
        }
        for k in 0..proof.len() {
            let mut bad = proof.clone();
            bad[k][0] ^= 1;
            assert!(merkle::verify_inclusion(sha256, i, n, &leaf, &bad, &root, "X").is_err(), "flip {k} of {i}/{n}");
        }
    }
    for c in d.get("consistencyAll").and_then(Value::as_arr).expect("consistency") {
        let (m, n) = (int(c, "size1"), int(c, "size2"));
        let proof = hashes(c, "proof");
        let (r1, r2) = (h32(s(c, "root1")), h32(s(c, "root2")));
        assert!(merkle::verify_consistency(sha256, m, n, &r1, &r2, &proof, "X").is_ok(), "consistency {m}->{n}");
        if (n as usize) <= leaves.len() && m < n {
            assert_eq!(merkle::proof(sha256, m as usize, &leaves[..n as usize]), proof, "proof {m}->{n}");
        }
        for k in 0..proof.len() {
            let mut bad = proof.clone();
            bad[k][31] ^= 0x80;
            assert!(merkle::verify_consistency(sha256, m, n, &r1, &r2, &bad, "X").is_err(), "flip {k} of {m}->{n}");
        }
    }
}
