// §2.2 Integers: 64-bit quantities (microjoules, byte counts) travel as decimal strings, as in the
// proto3 JSON mapping. No sign, no leading zeros, no exponent; at most 2^64 − 1.
import { WireError } from "./errors.ts";

/** A 64-bit unsigned amount in wire form: a decimal string such as "1250000". */
export type Amount = string;

/** The largest amount: 2^64 − 1. */
export const AMOUNT_MAX = (1n << 64n) - 1n;

const AMOUNT_RE = /^(0|[1-9][0-9]{0,19})$/;
// Well-formed amounts of 20 digits compare as text exactly as they do as numbers.
const AMOUNT_MAX_TEXT = AMOUNT_MAX.toString();

/** isAmount reports whether `s` is a well-formed amount in range. */
export function isAmount(s: unknown): s is Amount {
  return typeof s === "string" && AMOUNT_RE.test(s) && (s.length < 20 || s <= AMOUNT_MAX_TEXT);
}

/** parseAmount reads an amount; throws `BadAmount` for any other form, `AmountOverflow` above 2^64 − 1. */
export function parseAmount(s: unknown): bigint {
  if (typeof s !== "string" || !AMOUNT_RE.test(s))
    throw new WireError("BadAmount", `not a decimal amount: ${String(s).slice(0, 40)}`);
  const n = BigInt(s);
  if (n > AMOUNT_MAX) throw new WireError("AmountOverflow", `${s} exceeds 2^64 - 1`);
  return n;
}

/** formatAmount writes a bigint as an amount; throws `AmountOverflow` / `AmountUnderflow` out of range. */
export function formatAmount(n: bigint): Amount {
  if (n < 0n) throw new WireError("AmountUnderflow", `${n} is negative`);
  if (n > AMOUNT_MAX) throw new WireError("AmountOverflow", `${n} exceeds 2^64 - 1`);
  return n.toString();
}

/** addAmounts sums amounts; throws `AmountOverflow` when the sum exceeds 2^64 − 1. */
export function addAmounts(...xs: readonly Amount[]): Amount {
  let sum = 0n;
  for (const x of xs) sum += parseAmount(x);
  return formatAmount(sum);
}

/** subAmounts returns a − b; throws `AmountUnderflow` when b > a. */
export function subAmounts(a: Amount, b: Amount): Amount {
  return formatAmount(parseAmount(a) - parseAmount(b));
}

/** compareAmounts orders two amounts numerically (−1, 0, 1). */
export function compareAmounts(a: Amount, b: Amount): -1 | 0 | 1 {
  const x = parseAmount(a);
  const y = parseAmount(b);
  return x < y ? -1 : x > y ? 1 : 0;
}
