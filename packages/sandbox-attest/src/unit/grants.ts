// §4.3 Grant binding: `grants_id` is the address of the JCP grant set (jcp §4, class C19) a run
// is bound to. This module accepts any well-formed digest; what it addresses is JCP's to check.
import { isDigest, type Digest } from "@sbx/wire";
import { SandboxAttestError } from "../errors.ts";

/** parseGrantsId returns a `grants_id` (§4.3); refuses anything but a blake3 digest (`BadUnit`). */
export function parseGrantsId(value: unknown): Digest {
  if (!isDigest(value)) throw new SandboxAttestError("BadUnit", "grants_id is not a blake3 digest");
  return value;
}
