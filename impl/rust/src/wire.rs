//! §2.2–§2.7 wire primitives: amounts, digests, base64, did:key, Ed25519, DSSE, hash chains.

use crate::compat::OptionExt;
use crate::error::{ensure, Code, R};
use crate::json::{self, Value};

// ---------------------------------------------------------------------------------------------
// §2.2 amounts

/// parse_amount reads a §2.2 decimal string: `0|[1-9][0-9]*`, at most 2⁶⁴−1.
pub fn parse_amount(v: &Value) -> R<u64> {
    let s = v.as_str().ok_or(Code("BadAmount"))?;
    parse_amount_str(s)
}

/// parse_amount_str is parse_amount on text.
pub fn parse_amount_str(s: &str) -> R<u64> {
    let b = s.as_bytes();
    ensure(!b.is_empty() && b.iter().all(u8::is_ascii_digit), "BadAmount")?;
    ensure(b.len() == 1 || b[0] != b'0', "BadAmount")?;
    s.parse::<u64>().map_err(|_| Code("AmountOverflow"))
}

/// add_amounts sums amounts, refusing a sum above 2⁶⁴−1 (`AmountOverflow`).
pub fn add(a: u64, b: u64) -> R<u64> {
    a.checked_add(b).ok_or(Code("AmountOverflow"))
}

/// sub refuses a difference below zero (`AmountUnderflow`).
pub fn sub(a: u64, b: u64) -> R<u64> {
    a.checked_sub(b).ok_or(Code("AmountUnderflow"))
}

/// amount writes an amount as its decimal string.
pub fn amount(n: u64) -> Value {
    Value::Str(n.to_string())
}

// ---------------------------------------------------------------------------------------------
// §2.3 digests

/// A 32-byte BLAKE3 digest.
pub type Digest = [u8; 32];

/// blake3 hashes bytes.
pub fn blake3(bytes: &[u8]) -> Digest {
    *blake3::hash(bytes).as_bytes()
}

/// hex writes bytes as lowercase hexadecimal.
pub fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        out.push(DIGITS[usize::from(b >> 4)] as char);
        out.push(DIGITS[usize::from(b & 15)] as char);
    }
    out
}

/// unhex reads lowercase or uppercase hexadecimal; None on any other text.
pub fn unhex(s: &str) -> Option<Vec<u8>> {
    if s.len() & 1 == 1 || !s.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    (0..s.len()).step_by(2).map(|i| u8::from_str_radix(&s[i..i + 2], 16).ok()).collect()
}

/// digest_text writes `blake3:` and 64 lowercase hex digits.
pub fn digest_text(d: &Digest) -> String {
    format!("blake3:{}", hex(d))
}

/// digest_value is digest_text as a JSON string.
pub fn digest_value(d: &Digest) -> Value {
    Value::Str(digest_text(d))
}

/// parse_digest_str reads `blake3:` + 64 lowercase hex digits (§2.3 item 1), else `BadDigest`.
pub fn parse_digest_str(s: &str) -> R<Digest> {
    let h = s.strip_prefix("blake3:").ok_or(Code("BadDigest"))?;
    ensure(h.len() == 64 && h.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)), "BadDigest")?;
    let v = unhex(h).ok_or(Code("BadDigest"))?;
    let mut d = [0u8; 32];
    d.copy_from_slice(&v);
    Ok(d)
}

/// parse_digest reads a digest held in a JSON value.
pub fn parse_digest(v: &Value) -> R<Digest> {
    parse_digest_str(v.as_str().ok_or(Code("BadDigest"))?)
}

/// is_digest says whether a value is a well-formed digest.
pub fn is_digest(v: &Value) -> bool {
    parse_digest(v).is_ok()
}

/// address is the content address of a JSON value: BLAKE3 of its canonical bytes (§2.3 item 2).
pub fn address(v: &Value) -> Digest {
    blake3(&json::canonical_bytes(v))
}

// ---------------------------------------------------------------------------------------------
// §2.4 base64

/// b64_decode reads standard padded base64 that re-encodes to the same text (§2.4 item 1).
pub fn b64_decode(s: &str) -> Option<Vec<u8>> {
    let bytes = base64::decode_config(s, base64::STANDARD).ok()?;
    if base64::encode_config(&bytes, base64::STANDARD) != s {
        return None;
    }
    Some(bytes)
}

/// b64_encode writes standard padded base64.
pub fn b64_encode(bytes: &[u8]) -> String {
    base64::encode_config(bytes, base64::STANDARD)
}

// ---------------------------------------------------------------------------------------------
// §2.5 did:key

const B58: &[u8] = b"123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz";

fn b58_encode(bytes: &[u8]) -> String {
    let zeros = bytes.iter().take_while(|b| **b == 0).count();
    let mut digits: Vec<u8> = Vec::new(); // little-endian base-58 digits
    for &b in bytes {
        let mut carry = b as u32;
        for d in digits.iter_mut() {
            carry += (*d as u32) << 8;
            *d = (carry % 58) as u8;
            carry /= 58;
        }
        while carry > 0 {
            digits.push((carry % 58) as u8);
            carry /= 58;
        }
    }
    let mut out = "1".repeat(zeros);
    out.extend(digits.iter().rev().map(|d| B58[*d as usize] as char));
    out
}

fn b58_decode(s: &str) -> Option<Vec<u8>> {
    let zeros = s.bytes().take_while(|b| *b == b'1').count();
    let mut bytes: Vec<u8> = Vec::new(); // little-endian base-256
    for c in s.bytes() {
        let mut carry = B58.iter().position(|x| *x == c)? as u32;
        for b in bytes.iter_mut() {
            carry += (*b as u32) * 58;
            *b = (carry & 0xff) as u8;
            carry >>= 8;
        }
        while carry > 0 {
            bytes.push((carry & 0xff) as u8);
            carry >>= 8;
        }
    }
    let mut out = vec![0u8; zeros];
    out.extend(bytes.iter().rev());
    Some(out)
}

/// didkey_make writes the did:key of an Ed25519 public key, refusing a key §2.4 item 5 checks
/// 1–2 refuse (`BadDidKey`, §2.5).
pub fn didkey_make(pk: &[u8; 32]) -> R<String> {
    ensure(key_acceptable(pk), "BadDidKey")?;
    Ok(encode_raw(pk))
}

/// didkey_encode writes the did:key of a public key already known to be acceptable.
pub fn didkey_encode(pk: &[u8; 32]) -> String {
    encode_raw(pk)
}

fn encode_raw(pk: &[u8; 32]) -> String {
    let mut b = vec![0xed, 0x01];
    b.extend_from_slice(pk);
    format!("did:key:z{}", b58_encode(&b))
}

/// didkey_decode reads a did:key naming an Ed25519 key; anything else is `BadDidKey` (§2.5).
pub fn didkey_decode(did: &str) -> R<[u8; 32]> {
    let rest = did.strip_prefix("did:key:z").ok_or(Code("BadDidKey"))?;
    ensure(rest.len() <= 64, "BadDidKey")?;
    let b = b58_decode(rest).ok_or(Code("BadDidKey"))?;
    ensure(b.len() == 34 && b[0] == 0xed && b[1] == 0x01, "BadDidKey")?;
    let mut pk = [0u8; 32];
    pk.copy_from_slice(&b[2..]);
    ensure(encode_raw(&pk) == did, "BadDidKey")?;
    ensure(key_acceptable(&pk), "BadDidKey")?;
    Ok(pk)
}

/// is_didkey says whether a value is a string holding a valid did:key.
pub fn is_didkey(v: &Value) -> bool {
    v.as_str().has(|s| didkey_decode(s).is_ok())
}

// ---------------------------------------------------------------------------------------------
// §2.4 Ed25519

/// The group order L, little-endian (RFC 8032 §5.1).
const ORDER_L: [u8; 32] = [
    0xed, 0xd3, 0xf5, 0x5c, 0x1a, 0x63, 0x12, 0x58, 0xd6, 0x9c, 0xf7, 0xa2, 0xde, 0xf9, 0xde, 0x14, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0x10,
];

/// s_below_order says whether the little-endian scalar S is below L (RFC 8032 §5.1.7).
fn s_below_order(s: &[u8]) -> bool {
    for i in (0..32).rev() {
        if s[i] != ORDER_L[i] {
            return s[i] < ORDER_L[i];
        }
    }
    false
}

/// ed25519_check applies the one Ed25519 rule of §2.4 item 5, checks 1–7 in order, with the
/// finer codes of the `ed25519.verify` operation. Checks 1–6 are made here; check 7, the
/// cofactorless equation, is ring's: its verify computes R' = [S]B − [k]A and compares R'
/// encoded with the R given, which for a canonical R is the equation [S]B = R + [k]A.
pub fn ed25519_check(pk: &[u8], msg: &[u8], sig: &[u8]) -> R<()> {
    ensure(crate::edpoint::is_canonical_point(pk), "NonCanonicalKey")?;
    ensure(!crate::edpoint::is_small_order(pk), "SmallOrderKey")?;
    ensure(sig.len() == 64, "BadSignature")?;
    ensure(crate::edpoint::is_canonical_point(&sig[..32]), "NonCanonicalR")?;
    ensure(!crate::edpoint::is_small_order(&sig[..32]), "SmallOrderR")?;
    ensure(s_below_order(&sig[32..]), "NonCanonicalS")?;
    let key = ring::signature::UnparsedPublicKey::new(&ring::signature::ED25519, pk);
    key.verify(msg, sig).map_err(|_| Code("BadSignature"))
}

/// key_acceptable says whether §2.4 item 5 checks 1–2 accept a public key (§2.5: a did:key of a
/// refused key is `BadDidKey`).
pub fn key_acceptable(pk: &[u8]) -> bool {
    crate::edpoint::is_canonical_point(pk) && !crate::edpoint::is_small_order(pk)
}

/// ed25519_verify is the rule as an envelope applies it (§2.4 item 5, last paragraph): a refused
/// key is `BadDidKey`, every other failure `BadSignature`.
pub fn ed25519_verify(pk: &[u8], msg: &[u8], sig: &[u8]) -> R<()> {
    ensure(key_acceptable(pk), "BadDidKey")?;
    ed25519_check(pk, msg, sig).map_err(|_| Code("BadSignature"))
}

/// testkey_public derives the public key of the test key named `name` (§2.10).
pub fn testkey_public(name: &str) -> [u8; 32] {
    use ring::signature::KeyPair;
    let seed = blake3(format!("sandbox-attest.testkey/1:{name}").as_bytes());
    let kp = ring::signature::Ed25519KeyPair::from_seed_unchecked(&seed).expect("a 32-byte seed is always valid");
    let mut pk = [0u8; 32];
    pk.copy_from_slice(kp.public_key().as_ref());
    pk
}

// ---------------------------------------------------------------------------------------------
// §2.4 DSSE

/// pae is the DSSE pre-authentication encoding.
pub fn pae(payload_type: &str, body: &[u8]) -> Vec<u8> {
    let mut out = format!("DSSEv1 {} {} {} ", payload_type.len(), payload_type, body.len()).into_bytes();
    out.extend_from_slice(body);
    out
}

/// An envelope that passed §2.4 item 4: its payload, address and signers in envelope order.
#[derive(Debug, Clone)]
pub struct Opened {
    pub payload: Value,
    pub bytes: Vec<u8>,
    pub address: Digest,
    pub signers: Vec<String>,
}

/// What a verifier expects of an envelope.
pub struct Expect<'a> {
    pub payload_type: &'a str,
    /// Payload size limit in bytes (decoded).
    pub limit: usize,
    /// When Some, at least one signer must be among these (`UnknownSigner`).
    pub signers: Option<&'a [String]>,
}

/// A DSSE envelope whose shape (§2.4 item 1) is right; nothing about it is verified yet.
pub struct Envelope<'a> {
    pub payload_type: &'a str,
    pub payload: Vec<u8>,
    /// Each signature's keyid and its `sig` text, decoded when it is verified (§2.4 item 4).
    pub sigs: Vec<(&'a str, &'a str)>,
}

/// text_len is a string's length in characters as sandbox-attest §2.9 counts them: UTF-16 code
/// units, so a character above U+FFFF counts two.
pub fn text_len(s: &str) -> usize {
    s.encode_utf16().count()
}

/// exact_members says whether `v` is an object with exactly the members `names`.
pub fn exact_members(v: &Value, names: &[&str]) -> bool {
    let keys = v.keys();
    v.is_obj() && keys.len() == names.len() && names.iter().all(|n| keys.contains(n))
}

/// An envelope whose shape is right except that its payload is still base64 text, not yet checked
/// to be base64 (JCP §4.1 checks a grant's size on that text first).
pub struct RawEnvelope<'a> {
    pub payload_type: &'a str,
    pub payload_text: &'a str,
    pub sigs: Vec<(&'a str, &'a str)>,
}

/// parse_envelope_raw checks the envelope's shape (`BadEnvelope`): its members and their JSON
/// types, and one to sixteen signatures; not yet the base64 of `payload` or of any `sig`, which
/// §2.4 item 4 reads after the payload type (the payload) and with each signature (its `sig`).
pub fn parse_envelope_raw(env: &Value) -> R<RawEnvelope<'_>> {
    ensure(exact_members(env, &["payloadType", "payload", "signatures"]), "BadEnvelope")?;
    let pt = env.get("payloadType").and_then(Value::as_str).ok_or(Code("BadEnvelope"))?;
    let payload_text = env.get("payload").and_then(Value::as_str).ok_or(Code("BadEnvelope"))?;
    let list = env.get("signatures").and_then(Value::as_arr).ok_or(Code("BadEnvelope"))?;
    ensure((1..=16).contains(&list.len()), "BadEnvelope")?;
    let mut sigs = Vec::new();
    for s in list {
        ensure(exact_members(s, &["keyid", "sig"]), "BadEnvelope")?;
        let keyid = s.get("keyid").and_then(Value::as_str).ok_or(Code("BadEnvelope"))?;
        let sig = s.get("sig").and_then(Value::as_str).ok_or(Code("BadEnvelope"))?;
        sigs.push((keyid, sig));
    }
    Ok(RawEnvelope { payload_type: pt, payload_text, sigs })
}

impl<'a> RawEnvelope<'a> {
    /// decode decodes the payload (`BadEnvelope` unless canonical base64).
    pub fn decode(self) -> R<Envelope<'a>> {
        let payload = b64_decode(self.payload_text).ok_or(Code("BadEnvelope"))?;
        Ok(Envelope { payload_type: self.payload_type, payload, sigs: self.sigs })
    }
}

/// parse_envelope checks the envelope's shape and decodes its payload (`BadEnvelope`).
pub fn parse_envelope(env: &Value) -> R<Envelope<'_>> {
    parse_envelope_raw(env)?.decode()
}

/// parse_envelope_of checks the envelope's shape, then that its payload type is one `accept`
/// takes (`WrongPayloadType`), then decodes the payload (`BadEnvelope`): §2.4 item 4's order.
pub fn parse_envelope_of(env: &Value, accept: impl Fn(&str) -> bool) -> R<Envelope<'_>> {
    let raw = parse_envelope_raw(env)?;
    ensure(accept(raw.payload_type), "WrongPayloadType")?;
    raw.decode()
}

impl Envelope<'_> {
    /// verify_signatures checks every signature in turn: the key its keyid names (`BadDidKey`), its
    /// `sig` canonical base64 (`BadEnvelope`), the signature (`BadSignature`); returns the signers
    /// in envelope order.
    pub fn verify_signatures(&self) -> R<Vec<String>> {
        let msg = pae(self.payload_type, &self.payload);
        let mut signers = Vec::new();
        for (keyid, sig) in &self.sigs {
            let pk = didkey_decode(keyid)?;
            let sig = b64_decode(sig).ok_or(Code("BadEnvelope"))?;
            ed25519_verify(&pk, &msg, &sig)?;
            signers.push(keyid.to_string());
        }
        Ok(signers)
    }
}

/// open_envelope verifies a DSSE envelope in the order of §2.4 item 4 and parses its payload.
pub fn open_envelope(env: &Value, want: &Expect) -> R<Opened> {
    let e = parse_envelope_of(env, |t| t == want.payload_type)?;
    ensure(e.payload.len() <= want.limit, "OversizeInput")?;
    let signers = e.verify_signatures()?;
    if let Some(accept) = want.signers {
        ensure(signers.iter().any(|s| accept.contains(s)), "UnknownSigner")?;
    }
    let payload = json::parse_canonical(&e.payload, want.limit)?;
    Ok(Opened { address: blake3(&e.payload), bytes: e.payload, payload, signers })
}

/// open_signed_by opens an envelope of one kind that must carry exactly one signature, by the
/// principal its payload names in `member` (the JCP rule for receipts, revocations, policies,
/// ledger entries and log entries): shape, payload type, `oversize` code past `limit`, signatures,
/// canonical payload, `form` (which names its own code), then the one signer (`BadSignature`).
pub fn open_signed_by(
    env: &Value,
    payload_type: &str,
    limit: usize,
    oversize: &'static str,
    member: &str,
    form: impl Fn(&Value) -> R<()>,
) -> R<Opened> {
    let e = parse_envelope_of(env, |t| t == payload_type)?;
    ensure(e.payload.len() <= limit, oversize)?;
    let signers = e.verify_signatures()?;
    let payload = json::parse_canonical(&e.payload, limit)?;
    form(&payload)?;
    let by = payload.get(member).and_then(Value::as_str).unwrap_or("");
    ensure(signers.len() == 1 && signers[0] == by, "BadSignature")?;
    Ok(Opened { address: blake3(&e.payload), bytes: e.payload, payload, signers })
}

// ---------------------------------------------------------------------------------------------
// §2.7 hash chains

/// chain_genesis computes head₀ = BLAKE3(tag ‖ id₁ ‖ … ‖ idₖ).
pub fn chain_genesis(tag: &str, ids: &[Digest]) -> Digest {
    let mut h = blake3::Hasher::new();
    h.update(tag.as_bytes());
    for id in ids {
        h.update(id);
    }
    *h.finalize().as_bytes()
}

/// chain_next computes headₙ = BLAKE3(headₙ₋₁ ‖ JCS(entry)).
pub fn chain_next(head: &Digest, entry: &Value) -> Digest {
    let mut h = blake3::Hasher::new();
    h.update(head);
    h.update(json::canonical(entry).as_bytes());
    *h.finalize().as_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base58_round_trip() {
        for b in [vec![], vec![0], vec![0, 0, 1], vec![255; 34], (0..40).collect::<Vec<u8>>()] {
            assert_eq!(b58_decode(&b58_encode(&b)).unwrap(), b);
        }
    }

    #[test]
    fn zero_key_zero_signature_refused() {
        // ring 0.16 accepts this pair; §2.4 forbids trusting the library on it.
        assert_eq!(ed25519_verify(&[0u8; 32], b"", &[0u8; 64]), Err(Code("BadDidKey")));
    }

    #[test]
    fn small_order_keys_refused() {
        let zero = [0u8; 32];
        assert_eq!(ed25519_check(&zero, b"", &[0u8; 64]), Err(Code("SmallOrderKey")));
        assert_eq!(didkey_make(&zero), Err(Code("BadDidKey")));
        assert!(key_acceptable(&testkey_public("steward")));
    }

    #[test]
    fn s_equal_to_order_refused() {
        assert!(!s_below_order(&ORDER_L));
        let mut s = ORDER_L;
        s[0] -= 1;
        assert!(s_below_order(&s));
    }
}
