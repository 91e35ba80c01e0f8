//! C1 ops: §2 wire rules.

use super::input::{hex_bytes, need, need_arr, need_str, opt, strings};
use crate::error::{Code, R};
use crate::json::{self, Mode, Value};
use crate::wire;

/// call performs a C1 op, or returns None when `op` is not one.
pub fn call(op: &str, input: &Value) -> Option<R<Value>> {
    Some(match op {
        "json.parse_strict" => parse_strict(input),
        "json.parse_canonical" => parse_canonical(input),
        "jcs.canonicalize" => canonicalize(input),
        "digest.blake3" => digest_blake3(input),
        "digest.address" => need(input, "value").map(|v| addr(&wire::address(v))),
        "ed25519.verify" => ed25519(input),
        "didkey.encode" => didkey_encode(input),
        "didkey.decode" => didkey_decode(input),
        "testkey.derive" => testkey(input),
        "dsse.pae" => pae(input),
        "dsse.verify" => dsse_verify(input),
        "chain.heads" => chain_heads(input),
        "amount.parse" => {
            need(input, "amount").and_then(wire::parse_amount).map(|n| Value::obj(vec![("value", wire::amount(n))]))
        }
        "amount.add" => amount_add(input),
        _ => return None,
    })
}

fn addr(d: &wire::Digest) -> Value {
    Value::obj(vec![("address", wire::digest_value(d))])
}

fn limit_of(input: &Value) -> usize {
    opt(input, "limit").and_then(Value::as_int).map(|n| n as usize).unwrap_or(json::DEFAULT_LIMIT)
}

fn parse_strict(input: &Value) -> R<Value> {
    let v = json::parse(need_str(input, "text")?.as_bytes(), Mode::Strict, limit_of(input))?;
    Ok(Value::obj(vec![("canonical", Value::Str(json::canonical(&v)))]))
}

fn parse_canonical(input: &Value) -> R<Value> {
    let v = json::parse_canonical(need_str(input, "text")?.as_bytes(), limit_of(input))?;
    Ok(addr(&wire::address(&v)))
}

fn canonicalize(input: &Value) -> R<Value> {
    let v = json::parse(need_str(input, "text")?.as_bytes(), Mode::Lenient, json::DEFAULT_LIMIT)?;
    Ok(Value::obj(vec![("canonical", Value::Str(json::canonical(&v)))]))
}

fn digest_blake3(input: &Value) -> R<Value> {
    let bytes: Vec<u8> = if let Some(n) = opt(input, "pattern_len").and_then(Value::as_int) {
        (0..n).map(|i| (i % 251) as u8).collect()
    } else if let Some(t) = opt(input, "text").and_then(Value::as_str) {
        t.as_bytes().to_vec()
    } else {
        hex_bytes(input, "hex")?
    };
    Ok(Value::obj(vec![("digest", wire::digest_value(&wire::blake3(&bytes)))]))
}

fn ed25519(input: &Value) -> R<Value> {
    let pk = hex_bytes(input, "public_key")?;
    let msg = hex_bytes(input, "message")?;
    let sig = hex_bytes(input, "signature")?;
    wire::ed25519_check(&pk, &msg, &sig)?;
    Ok(Value::Null)
}

fn didkey_encode(input: &Value) -> R<Value> {
    let pk: [u8; 32] = hex_bytes(input, "public_key")?.try_into().map_err(|_| Code("BadDidKey"))?;
    Ok(Value::obj(vec![("did", Value::Str(wire::didkey_make(&pk)?))]))
}

fn didkey_decode(input: &Value) -> R<Value> {
    let pk = wire::didkey_decode(need_str(input, "did")?)?;
    Ok(Value::obj(vec![("public_key", Value::Str(wire::hex(&pk)))]))
}

fn testkey(input: &Value) -> R<Value> {
    let pk = wire::testkey_public(need_str(input, "name")?);
    Ok(Value::obj(vec![("did", Value::Str(wire::didkey_encode(&pk)))]))
}

fn pae(input: &Value) -> R<Value> {
    let body = hex_bytes(input, "body_hex")?;
    let out = wire::pae(need_str(input, "payloadType")?, &body);
    Ok(Value::obj(vec![("pae", Value::Str(wire::hex(&out)))]))
}

fn dsse_verify(input: &Value) -> R<Value> {
    let signers = opt(input, "signers").map(strings).transpose()?;
    let want = wire::Expect {
        payload_type: need_str(input, "payloadType")?,
        limit: limit_of(input),
        signers: signers.as_deref(),
    };
    let o = wire::open_envelope(need(input, "envelope")?, &want)?;
    Ok(Value::obj(vec![
        ("address", wire::digest_value(&o.address)),
        ("payload", o.payload),
        ("signers", Value::Arr(o.signers.into_iter().map(Value::Str).collect())),
    ]))
}

fn chain_heads(input: &Value) -> R<Value> {
    let ids: Vec<wire::Digest> = need_arr(input, "ids")?.iter().map(wire::parse_digest).collect::<R<_>>()?;
    let mut head = wire::chain_genesis(need_str(input, "tag")?, &ids);
    let mut heads = vec![wire::digest_value(&head)];
    for e in need_arr(input, "entries")? {
        head = wire::chain_next(&head, e);
        heads.push(wire::digest_value(&head));
    }
    Ok(Value::obj(vec![("heads", Value::Arr(heads))]))
}

fn amount_add(input: &Value) -> R<Value> {
    let mut sum = 0u64;
    for a in need_arr(input, "amounts")? {
        sum = wire::add(sum, wire::parse_amount(a)?)?;
    }
    Ok(Value::obj(vec![("sum", wire::amount(sum))]))
}
