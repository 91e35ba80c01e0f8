// C8: content-addressed process control (§5.5). Vectors: signed policies (valid, and broken one way
// at a time: signature, payload type, signer, form, order, duplicates, digests, members, address),
// canonicalisation of edits, and decisions (deny absolute in both modes) whose expected results are
// written here from the spec's rule, not computed by the implementation. Live: the kernel battery,
// and the sandbox escape battery (§5: every way out tried from inside a real sandbox must fail).
import {
  addressOf,
  digestBytes,
  signPayload,
  utf8,
  type Digest,
  type Json,
  type JsonObject,
} from "@sbx/wire";
import {
  EXEC_POLICY_PAYLOAD_TYPE,
  EXEC_POLICY_TYPE,
  decide,
  makePolicy,
  openPolicy,
  parsePolicy,
  type ExecPolicy,
} from "@sbx/sandbox-attest/execpolicy";
import { errCase, flipBase64Byte, okCase, signedRaw } from "../generate/build.ts";
import { obj, optionalStrings } from "./input.ts";
import { key } from "../generate/keys.ts";
import type { ConformanceClass, Handler, LiveCase, Vector } from "../types.ts";
import { routeBattery } from "../live/routes.ts";
import { execPolicyOracle } from "../oracle/execpolicy.ts";

const C = "C8" as const;
const steward = key("steward");
const T = EXEC_POLICY_PAYLOAD_TYPE;
const dg = (s: string): Digest => digestBytes(utf8(`c8:${s}`));
const [SH, MAKE, GIT, EVIL, TOOL] = [dg("sh"), dg("make"), dg("git"), dg("evil"), dg("tool")];

const strs = (v: Json | undefined): string[] => optionalStrings(v) ?? [];

const ops: Record<string, Handler> = {
  "execpolicy.open": (i) => {
    const o = obj(i);
    const stewards = o.stewards === undefined ? undefined : strs(o.stewards);
    const p = openPolicy(o.envelope, {
      ...(stewards ? { stewards } : {}),
      ...(typeof o.address === "string" ? { address: o.address as Digest } : {}),
    });
    return { address: p.address, policy: p.policy as unknown as JsonObject };
  },
  "execpolicy.make": (i) => {
    const o = obj(i);
    const p = makePolicy(typeof o.mode === "string" ? o.mode : "", strs(o.allow), strs(o.deny));
    return { address: addressOf(p), policy: p as unknown as JsonObject };
  },
  "execpolicy.decide": (i) => {
    const o = obj(i);
    const v = decide(parsePolicy(o.policy), o.digest as Digest);
    return { allowed: v.allowed, rule: v.rule };
  },
};

/** A steward-signed envelope over exact payload text (to sign non-canonical or malformed policies). */
function signRaw(text: string): JsonObject {
  return signedRaw(T, utf8(text), steward);
}

const valid: [string, string, ExecPolicy][] = [
  ["denylist-one", "denylist with one denied digest", makePolicy("denylist", [], [EVIL])],
  ["denylist-empty", "denylist that denies nothing", makePolicy("denylist")],
  ["allowlist-toolchain", "allowlist of a toolchain", makePolicy("allowlist", [SH, MAKE, GIT], [EVIL])],
  ["allowlist-empty", "allowlist that allows nothing", makePolicy("allowlist")],
  [
    "both-lists",
    "a digest on both lists (legal; deny wins at decision time)",
    makePolicy("allowlist", [SH, EVIL], [EVIL]),
  ],
];

/**
 * oracleOk is the output of a valid case as the independent oracle (oracle/execpolicy.ts) computes
 * it, never the implementation under test; a case the oracle refuses is a broken generator.
 */
function oracleOk(op: string, input: JsonObject): Json {
  const r = execPolicyOracle(op, input);
  if (r === undefined || !r.ok) throw new Error(`c08: the oracle refuses a valid ${op} case`);
  return r.output;
}

function validVectors(): Vector[] {
  return valid.map(([id, desc, p]) => {
    const input = { envelope: signPayload(T, p, steward) as unknown as JsonObject, stewards: [steward.did] };
    return okCase(
      C,
      `c8-open-${id}`,
      `a signed policy opens: ${desc}`,
      "execpolicy.open",
      input,
      oracleOk("execpolicy.open", input),
    );
  });
}

function brokenVectors(): Vector[] {
  const p = makePolicy("allowlist", [SH, MAKE, GIT], [EVIL]);
  const env = signPayload(T, p, steward) as unknown as {
    payloadType: string;
    payload: string;
    signatures: { keyid: string; sig: string }[];
  };
  const sig = env.signatures[0]!;
  const raw = (o: unknown) => signRaw(JSON.stringify(o));
  const canon = (o: object) => signPayload(T, o, steward) as unknown as JsonObject;
  const input = (e: JsonObject, extra: JsonObject = {}): JsonObject => ({
    envelope: e,
    stewards: [steward.did],
    ...extra,
  });
  const cases: [string, string, JsonObject, string][] = [
    [
      "sig-flip",
      "one bit of the signature flipped",
      input({ ...env, signatures: [{ ...sig, sig: flipBase64Byte(sig.sig, 5) }] }),
      "BadSignature",
    ],
    [
      "payload-flip",
      "one bit of the payload flipped",
      input({ ...env, payload: flipBase64Byte(env.payload, 40) }),
      "BadSignature",
    ],
    [
      "payload-type",
      "signed under another payload type",
      input(signPayload("application/vnd.sandbox-attest.manifest+json", p, steward) as unknown as JsonObject),
      "WrongPayloadType",
    ],
    [
      "signer",
      "signed by a key that is not the steward",
      input(signPayload(T, p, key("mallory")) as unknown as JsonObject),
      "UnknownSigner",
    ],
    [
      "not-canonical",
      "payload signed but not in JCS form",
      input(signRaw(JSON.stringify(p, null, 1))),
      "NotCanonical",
    ],
    [
      "unsorted",
      "allow list out of order",
      input(canon({ ...p, allow: [...p.allow].reverse() })),
      "ExecPolicyUnsorted",
    ],
    [
      "duplicate",
      "deny list repeats a digest",
      input(canon({ ...p, deny: [EVIL, EVIL] })),
      "ExecPolicyDuplicate",
    ],
    [
      "digest-upper",
      "digest in upper-case hex",
      input(canon({ ...p, deny: [EVIL.toUpperCase()] })),
      "ExecPolicyBadDigest",
    ],
    [
      "digest-sha256",
      "digest of another algorithm",
      input(canon({ ...p, deny: ["sha256:" + EVIL.slice(7)] })),
      "ExecPolicyBadDigest",
    ],
    [
      "digest-short",
      "digest one byte short",
      input(canon({ ...p, deny: [EVIL.slice(0, -2)] })),
      "ExecPolicyBadDigest",
    ],
    ["unknown-member", "an unknown member", input(canon({ ...p, note: "x" })), "BadExecPolicy"],
    [
      "missing-member",
      "the deny list missing",
      input(raw({ allow: p.allow, mode: p.mode, type: EXEC_POLICY_TYPE })),
      "BadExecPolicy",
    ],
    [
      "bad-mode",
      "mode neither allowlist nor denylist",
      input(canon({ ...p, mode: "audit" })),
      "BadExecPolicy",
    ],
    [
      "bad-type",
      "another type tag",
      input(canon({ ...p, type: "sandbox-attest/exec-policy/2" })),
      "BadExecPolicy",
    ],
    ["list-not-array", "allow is not a list", input(canon({ ...p, allow: SH })), "BadExecPolicy"],
    // §5.5.3 order of the payload checks: the whole allow list before the deny list, and each list
    // entry by entry (digest, repeat, order), so a later fault never hides an earlier one.
    [
      "order-allow-before-deny",
      "allow list unsorted, deny list holding a malformed digest",
      input(canon({ ...p, allow: [...p.allow].reverse(), deny: ["blake3:xyz"] })),
      "ExecPolicyUnsorted",
    ],
    [
      "order-allow-digest-before-deny-list",
      "allow list holding a malformed digest, deny not a list",
      input(canon({ ...p, allow: ["blake3:xyz"], deny: EVIL })),
      "ExecPolicyBadDigest",
    ],
    [
      "order-duplicate-before-later-digest",
      "allow list [A, A, malformed]: the repeat comes first",
      input(canon({ ...p, allow: [SH, SH, "x"] })),
      "ExecPolicyDuplicate",
    ],
    [
      "order-unsorted-before-later-digest",
      "allow list [B, A, malformed]: the order fault comes first",
      input(canon({ ...p, allow: [...[SH, GIT].sort().reverse(), "x"] })),
      "ExecPolicyUnsorted",
    ],
    [
      "address",
      "a policy other than the one bound",
      input(env, { address: addressOf(makePolicy("denylist")) }),
      "ExecPolicyMismatch",
    ],
  ];
  return cases.map(([id, desc, i, code]) =>
    errCase(C, `c8-open-${id}`, `refused: ${desc}`, "execpolicy.open", i, code),
  );
}

function makeVectors(): Vector[] {
  const sorts = { mode: "allowlist", allow: [GIT, SH, GIT, MAKE], deny: [EVIL, EVIL] };
  return [
    okCase(
      C,
      "c8-make-sorts",
      "edits are sorted and deduplicated",
      "execpolicy.make",
      sorts,
      oracleOk("execpolicy.make", sorts),
    ),
    errCase(
      C,
      "c8-make-mode-before-digest",
      "an unknown mode and a malformed digest: the mode is checked first (§5.5.3)",
      "execpolicy.make",
      { mode: "both", allow: ["blake3:xyz"], deny: [] },
      "BadExecPolicy",
    ),
    errCase(
      C,
      "c8-make-bad-mode",
      "an unknown mode is refused",
      "execpolicy.make",
      { mode: "both", allow: [], deny: [] },
      "BadExecPolicy",
    ),
    errCase(
      C,
      "c8-make-bad-digest",
      "a malformed digest is refused",
      "execpolicy.make",
      { mode: "denylist", allow: [], deny: ["blake3:xyz"] },
      "ExecPolicyBadDigest",
    ),
  ];
}

function decideVectors(): Vector[] {
  // [id, mode, allow, deny, digest, allowed, rule]: the expected column is the spec's rule (§5.5.4).
  const table: [string, string, Digest[], Digest[], Digest, boolean, string][] = [
    ["deny-absolute-allowlist", "allowlist", [EVIL, SH], [EVIL], EVIL, false, "denied"],
    ["deny-absolute-denylist", "denylist", [EVIL], [EVIL], EVIL, false, "denied"],
    ["denylist-listed", "denylist", [], [EVIL], EVIL, false, "denied"],
    ["denylist-other", "denylist", [], [EVIL], TOOL, true, "default"],
    ["allowlist-listed", "allowlist", [SH, MAKE], [EVIL], MAKE, true, "allowed"],
    ["allowlist-unlisted", "allowlist", [SH, MAKE], [EVIL], TOOL, false, "not-allowed"],
    ["allowlist-empty", "allowlist", [], [], SH, false, "not-allowed"],
    ["denylist-empty", "denylist", [], [], SH, true, "default"],
  ];
  const rows = table.map(([id, mode, allow, deny, d, allowed, rule]) =>
    okCase(
      C,
      `c8-decide-${id}`,
      `decision: ${id}`,
      "execpolicy.decide",
      { policy: makePolicy(mode, allow, deny) as unknown as JsonObject, digest: d },
      { allowed, rule },
    ),
  );
  const p = makePolicy("denylist", [], [EVIL]) as unknown as JsonObject;
  return [
    ...rows,
    errCase(
      C,
      "c8-decide-unsorted-policy",
      "a policy out of canonical order is refused before deciding",
      "execpolicy.decide",
      { policy: { ...p, deny: [TOOL, EVIL].sort().reverse() }, digest: EVIL },
      "ExecPolicyUnsorted",
    ),
  ];
}

async function live(): Promise<LiveCase[]> {
  const battery = await import("../live/execgate.ts");
  // §5 isolation: the sandbox units run in, tried from inside by the escape battery.
  const sandbox = await import("../live/sandbox.ts");
  return [...(await battery.runBattery()), ...(await routeBattery()), ...(await sandbox.runEscapeBattery())];
}

export const klass: ConformanceClass = {
  id: C,
  title: "process control",
  file: "durable.json",
  ops,
  generate: () => [...validVectors(), ...brokenVectors(), ...makeVectors(), ...decideVectors()],
  live,
};
