//! §2.8, §8.1 Merkle trees of RFC 9162 §2.1 with a pluggable hash (BLAKE3 on the wire, SHA-256
//! for the published RFC 6962 vectors).

use crate::error::{ensure, R};

/// A 32-byte hash function.
pub type Hash = fn(&[u8]) -> [u8; 32];

pub fn blake3(b: &[u8]) -> [u8; 32] {
    crate::wire::blake3(b)
}

pub fn sha256(b: &[u8]) -> [u8; 32] {
    use sha2::Digest;
    sha2::Sha256::digest(b).into()
}

/// leaf_hash is H(0x00 ‖ leaf).
pub fn leaf_hash(h: Hash, leaf: &[u8]) -> [u8; 32] {
    let mut b = Vec::with_capacity(leaf.len() + 1);
    b.push(0);
    b.extend_from_slice(leaf);
    h(&b)
}

/// node is H(0x01 ‖ left ‖ right).
pub fn node(h: Hash, l: &[u8; 32], r: &[u8; 32]) -> [u8; 32] {
    let mut b = [0u8; 65];
    b[0] = 1;
    b[1..33].copy_from_slice(l);
    b[33..].copy_from_slice(r);
    h(&b)
}

/// split is the largest power of two below n (n ≥ 2).
fn split(n: usize) -> usize {
    let mut k = 1;
    while k * 2 < n {
        k *= 2;
    }
    k
}

/// root computes MTH over leaf hashes (RFC 9162 §2.1.1); H("") for none.
pub fn root(h: Hash, leaves: &[[u8; 32]]) -> [u8; 32] {
    match leaves.len() {
        0 => h(b""),
        1 => leaves[0],
        n => {
            let k = split(n);
            node(h, &root(h, &leaves[..k]), &root(h, &leaves[k..]))
        }
    }
}

/// path is PATH(m, D[n]) of RFC 9162 §2.1.3.1, nearest the leaf first.
pub fn path(h: Hash, m: usize, leaves: &[[u8; 32]]) -> Vec<[u8; 32]> {
    let n = leaves.len();
    if n <= 1 {
        return vec![];
    }
    let k = split(n);
    if m < k {
        let mut p = path(h, m, &leaves[..k]);
        p.push(root(h, &leaves[k..]));
        p
    } else {
        let mut p = path(h, m - k, &leaves[k..]);
        p.push(root(h, &leaves[..k]));
        p
    }
}

/// proof is PROOF(m, D[n]) of RFC 9162 §2.1.4.1.
pub fn proof(h: Hash, m: usize, leaves: &[[u8; 32]]) -> Vec<[u8; 32]> {
    fn sub(h: Hash, m: usize, d: &[[u8; 32]], b: bool) -> Vec<[u8; 32]> {
        let n = d.len();
        if m == n {
            return if b { vec![] } else { vec![root(h, d)] };
        }
        let k = split(n);
        if m <= k {
            let mut p = sub(h, m, &d[..k], b);
            p.push(root(h, &d[k..]));
            p
        } else {
            let mut p = sub(h, m - k, &d[k..], false);
            p.push(root(h, &d[..k]));
            p
        }
    }
    sub(h, m, leaves, true)
}

/// verify_inclusion is RFC 9162 §2.1.3.2; any failure is `code`.
pub fn verify_inclusion(
    h: Hash,
    index: u64,
    size: u64,
    leaf: &[u8; 32],
    proof: &[[u8; 32]],
    root: &[u8; 32],
    code: &'static str,
) -> R<()> {
    ensure(index < size, code)?;
    let (mut f, mut s, mut r) = (index, size - 1, *leaf);
    for p in proof {
        ensure(s != 0, code)?;
        if f & 1 == 1 || f == s {
            r = node(h, p, &r);
            while f & 1 == 0 && f != 0 {
                f >>= 1;
                s >>= 1;
            }
        } else {
            r = node(h, &r, p);
        }
        f >>= 1;
        s >>= 1;
    }
    ensure(s == 0 && r == *root, code)
}

/// verify_consistency is RFC 9162 §2.1.4.2, refusing size 0 and a non-empty proof between equal
/// sizes; any failure is `code`.
#[allow(clippy::too_many_arguments)]
pub fn verify_consistency(
    h: Hash,
    size1: u64,
    size2: u64,
    root1: &[u8; 32],
    root2: &[u8; 32],
    proof: &[[u8; 32]],
    code: &'static str,
) -> R<()> {
    ensure(size1 != 0 && size1 <= size2, code)?;
    if size1 == size2 {
        return ensure(proof.is_empty() && root1 == root2, code);
    }
    ensure(!proof.is_empty(), code)?;
    let mut p: Vec<[u8; 32]> = Vec::with_capacity(proof.len() + 1);
    if size1.is_power_of_two() {
        p.push(*root1);
    }
    p.extend_from_slice(proof);
    let (mut f, mut s) = (size1 - 1, size2 - 1);
    while f & 1 == 1 {
        f >>= 1;
        s >>= 1;
    }
    let (mut fr, mut sr) = (p[0], p[0]);
    for c in &p[1..] {
        ensure(s != 0, code)?;
        if f & 1 == 1 || f == s {
            fr = node(h, c, &fr);
            sr = node(h, c, &sr);
            while f & 1 == 0 && f != 0 {
                f >>= 1;
                s >>= 1;
            }
        } else {
            sr = node(h, &sr, c);
        }
        f >>= 1;
        s >>= 1;
    }
    ensure(fr == *root1 && sr == *root2 && s == 0, code)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn leaves(n: usize) -> Vec<[u8; 32]> {
        (0..n).map(|i| leaf_hash(blake3, &[i as u8])).collect()
    }

    #[test]
    fn every_generated_proof_verifies_and_no_neighbour_does() {
        for n in 1..20 {
            let d = leaves(n);
            let r = root(blake3, &d);
            for m in 0..n {
                let p = path(blake3, m, &d);
                assert!(verify_inclusion(blake3, m as u64, n as u64, &d[m], &p, &r, "X").is_ok(), "{m}/{n}");
                if n > 1 {
                    let o = (m + 1) % n;
                    assert!(verify_inclusion(blake3, o as u64, n as u64, &d[m], &p, &r, "X").is_err());
                }
                let older = root(blake3, &d[..m + 1]);
                let c = proof(blake3, m + 1, &d);
                assert!(verify_consistency(blake3, m as u64 + 1, n as u64, &older, &r, &c, "X").is_ok(), "{m}/{n}");
            }
        }
    }
}
