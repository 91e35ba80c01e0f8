//! §2.4 item 5 checks 1, 2, 4 and 5: RFC 8032 §5.1.3 point decoding, in plain field arithmetic
//! modulo p = 2²⁵⁵ − 19 (five 51-bit limbs; speed is not the point, obviousness is).

/// A field element as five 51-bit limbs, least significant first (value Σ hᵢ·2⁵¹ⁱ).
#[derive(Clone, Copy, Debug)]
struct Fe([u64; 5]);

const MASK: u64 = (1 << 51) - 1;

impl Fe {
    const ZERO: Fe = Fe([0; 5]);
    const ONE: Fe = Fe([1, 0, 0, 0, 0]);

    fn small(n: u64) -> Fe {
        Fe([n, 0, 0, 0, 0])
    }

    /// from_bytes reads the low 255 bits of a little-endian encoding (the caller checks y < p).
    fn from_bytes(b: &[u8; 32]) -> Fe {
        let mut bits = [0u64; 5];
        for (i, limb) in bits.iter_mut().enumerate() {
            let mut v = 0u64;
            for k in 0..51 {
                let bit = i * 51 + k;
                if (b[bit / 8] >> (bit % 8)) & 1 == 1 {
                    v |= 1 << k;
                }
            }
            *limb = v;
        }
        Fe(bits)
    }

    /// carry brings every limb below 2⁵¹ plus a little, folding 2²⁵⁵ back as 19.
    fn carry(mut self) -> Fe {
        for _ in 0..2 {
            for i in 0..4 {
                let c = self.0[i] >> 51;
                self.0[i] &= MASK;
                self.0[i + 1] += c;
            }
            let c = self.0[4] >> 51;
            self.0[4] &= MASK;
            self.0[0] += 19 * c;
        }
        self
    }

    fn add(self, o: Fe) -> Fe {
        let mut h = self.0;
        for (x, y) in h.iter_mut().zip(o.0.iter()) {
            *x += y;
        }
        Fe(h).carry()
    }

    /// sub adds 4p before subtracting, so no limb goes below zero (limbs of `o` are < 2⁵²).
    fn sub(self, o: Fe) -> Fe {
        let four_p = [4 * (MASK - 18), 4 * MASK, 4 * MASK, 4 * MASK, 4 * MASK];
        let mut h = [0u64; 5];
        for i in 0..5 {
            h[i] = self.0[i] + four_p[i] - o.0[i];
        }
        Fe(h).carry()
    }

    fn mul(self, o: Fe) -> Fe {
        let mut r = [0u128; 5];
        for i in 0..5 {
            for j in 0..5 {
                let p = u128::from(self.0[i]) * u128::from(o.0[j]);
                if i + j < 5 {
                    r[i + j] += p;
                } else {
                    r[i + j - 5] += 19 * p;
                }
            }
        }
        for i in 0..4 {
            let c = r[i] >> 51;
            r[i] &= u128::from(MASK);
            r[i + 1] += c;
        }
        let c = r[4] >> 51;
        r[4] &= u128::from(MASK);
        r[0] += 19 * c;
        let c = r[0] >> 51;
        r[0] &= u128::from(MASK);
        r[1] += c;
        Fe([r[0] as u64, r[1] as u64, r[2] as u64, r[3] as u64, r[4] as u64]).carry()
    }

    /// pow raises to a 256-bit little-endian exponent by square and multiply.
    fn pow(self, e: &[u8; 32]) -> Fe {
        let mut acc = Fe::ONE;
        for i in (0..256).rev() {
            acc = acc.mul(acc);
            if (e[i / 8] >> (i % 8)) & 1 == 1 {
                acc = acc.mul(self);
            }
        }
        acc
    }

    fn invert(self) -> Fe {
        self.pow(&P_MINUS_2)
    }

    /// canonical writes the unique representative in [0, p) as five limbs.
    fn canonical(self) -> [u64; 5] {
        let mut h = self.carry().0;
        // h < 2²⁵⁵ + small; q = 1 exactly when h ≥ p.
        let mut q = (h[0] + 19) >> 51;
        for limb in h.iter().skip(1) {
            q = (limb + q) >> 51;
        }
        h[0] += 19 * q;
        for i in 0..4 {
            let c = h[i] >> 51;
            h[i] &= MASK;
            h[i + 1] += c;
        }
        h[4] &= MASK;
        h
    }

    fn eq(self, o: Fe) -> bool {
        self.canonical() == o.canonical()
    }

    fn is_zero(self) -> bool {
        self.eq(Fe::ZERO)
    }
}

/// p − 2, the exponent of inversion (Fermat), little-endian.
const P_MINUS_2: [u8; 32] = {
    let mut b = [0xff; 32];
    b[0] = 0xeb;
    b[31] = 0x7f;
    b
};

/// (p − 1)/2 = 2²⁵⁴ − 10, the exponent of Euler's criterion, little-endian.
const HALF_P_MINUS_1: [u8; 32] = {
    let mut b = [0xff; 32];
    b[0] = 0xf6;
    b[31] = 0x3f;
    b
};

/// y_below_p says whether the low 255 bits of an encoding, read little-endian, are below p.
fn y_below_p(b: &[u8; 32]) -> bool {
    let mut y = *b;
    y[31] &= 0x7f;
    let mut p = [0xff; 32];
    p[0] = 0xed;
    p[31] = 0x7f;
    for i in (0..32).rev() {
        if y[i] != p[i] {
            return y[i] < p[i];
        }
    }
    false
}

/// is_canonical_point applies §2.4 item 5 check 1 (RFC 8032 §5.1.3): 32 bytes, y < p, x² =
/// (y² − 1)/(d·y² + 1) has a root, and the sign bit is clear when that root is 0. Whether a root
/// exists is decided by Euler's criterion (a nonzero w is a square exactly when w^((p−1)/2) = 1),
/// which is the same question the RFC's (p+3)/8 exponent and √−1 fix-up answer.
pub fn is_canonical_point(enc: &[u8]) -> bool {
    let b: [u8; 32] = match enc.try_into() {
        Ok(b) => b,
        Err(_) => return false,
    };
    if !y_below_p(&b) {
        return false;
    }
    let sign = b[31] >> 7;
    let y = Fe::from_bytes(&b);
    let yy = y.mul(y);
    // d = −121665 / 121666.
    let d = Fe::ZERO.sub(Fe::small(121_665)).mul(Fe::small(121_666).invert());
    let u = yy.sub(Fe::ONE);
    let v = d.mul(yy).add(Fe::ONE);
    if u.is_zero() {
        // x = 0 (y = ±1): only the encoding with the sign bit clear is canonical.
        return sign == 0;
    }
    let w = u.mul(v.invert());
    w.pow(&HALF_P_MINUS_1).eq(Fe::ONE)
}

/// The canonical encodings (hex) of the eight points of small order (§2.4 item 5).
const SMALL_ORDER: [&str; 8] = [
    "0100000000000000000000000000000000000000000000000000000000000000",
    "ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",
    "0000000000000000000000000000000000000000000000000000000000000000",
    "0000000000000000000000000000000000000000000000000000000000000080",
    "26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05",
    "26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc85",
    "c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a",
    "c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac03fa",
];

/// is_small_order says whether a canonical encoding is one of the eight points of small order.
pub fn is_small_order(enc: &[u8]) -> bool {
    let h = crate::wire::hex(enc);
    SMALL_ORDER.contains(&h.as_str())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unhex32(s: &str) -> Vec<u8> {
        crate::wire::unhex(s).unwrap()
    }

    #[test]
    fn base_point_and_small_order_points_decode() {
        assert!(is_canonical_point(&unhex32("5866666666666666666666666666666666666666666666666666666666666666")));
        for s in SMALL_ORDER {
            assert!(is_canonical_point(&unhex32(s)), "{s}");
            assert!(is_small_order(&unhex32(s)));
        }
    }

    #[test]
    fn noncanonical_encodings_refused() {
        // the identity with the sign bit set; y = p; y = p + 1; (0, −1) with the sign bit set.
        for s in [
            "0100000000000000000000000000000000000000000000000000000000000080",
            "edffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",
            "eeffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",
            "ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff",
        ] {
            assert!(!is_canonical_point(&unhex32(s)), "{s}");
        }
    }

    #[test]
    fn small_y_on_and_off_the_curve() {
        // Whether y = 2…11 has an x, computed independently with Python's big integers by both
        // Euler's criterion and RFC 8032's (p+3)/8 root (they agree on 2,000 random y as well).
        let on = [false, true, true, true, true, false, false, true, true, false];
        for (i, want) in on.iter().enumerate() {
            let mut enc = [0u8; 32];
            enc[0] = (i + 2) as u8;
            assert_eq!(is_canonical_point(&enc), *want, "y = {}", i + 2);
        }
    }

    #[test]
    fn field_inverse_round_trips() {
        let a = Fe::small(121_666);
        assert!(a.mul(a.invert()).eq(Fe::ONE));
        assert!(Fe::ZERO.sub(Fe::ONE).add(Fe::ONE).is_zero());
    }
}
