// The trust every verify command is given explicitly: the did:keys whose signatures it accepts
// (`--trust FILE|did:key`, repeatable), or `--any-signer`, which checks every signature but trusts
// no signer and so says UNTRUSTED, naming the signers, instead of VALID.
import { CliError } from "./errors.ts";
import { readPrincipal } from "@sbx/host/keys";

/** The options every verify command takes. */
export const TRUST_OPTIONS = {
  trust: { type: "string", multiple: true },
  "any-signer": { type: "boolean" },
} as const;

/** The help lines of TRUST_OPTIONS. */
export const TRUST_HELP = `  --trust FILE|DID  a trusted signer: a did:key, or a key file (SPKI PEM public key, or a private key)
                    whose did:key is meant (repeatable; at least one, unless --any-signer)
  --any-signer      check every signature but trust no signer: the verdict is UNTRUSTED (exit 0),
                    naming the signers, never VALID`;

/** The trust a verification runs under: the trusted did:keys, or null for --any-signer. */
export interface Trust {
  readonly keys: readonly string[] | null;
}

/**
 * trustOf reads --trust (and a command's older synonym of it, e.g. --host) into a trust set. Refuses
 * (exit 2) no trusted key without --any-signer (`NoTrust`), and both at once (`Usage`).
 */
export function trustOf(
  v: { readonly trust?: string[] | undefined; readonly "any-signer"?: boolean | undefined },
  synonym: readonly string[] = [],
): Trust {
  const given = [...(v.trust ?? []), ...synonym];
  if (v["any-signer"] === true) {
    if (given.length) throw new CliError("Usage", "give --trust or --any-signer, not both");
    return { keys: null };
  }
  if (given.length === 0)
    throw new CliError(
      "NoTrust",
      "no trusted key given: pass --trust FILE|did:key (repeatable), or --any-signer to check signatures without trusting a signer",
    );
  return { keys: [...new Set(given.map((g) => readPrincipal(g)))] };
}

/** trustedOption is the keys as a library's `hosts`/`signers` option: absent for --any-signer. */
export function trustedOption<K extends string>(t: Trust, name: K): { [P in K]?: readonly string[] } {
  return (t.keys === null ? {} : { [name]: t.keys }) as { [P in K]?: readonly string[] };
}

/** verdict is the word for a successful verification under `t`: VALID, or UNTRUSTED for --any-signer. */
export function verdict(t: Trust): "VALID" | "UNTRUSTED" {
  return t.keys === null ? "UNTRUSTED" : "VALID";
}
