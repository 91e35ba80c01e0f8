// Property tests (issue 4): (1) no sequence of attenuations, however the children are signed, yields
// a chain that verifies with more scope, budget, time or depth than its root; (2) any mutation of any
// grant in a valid chain, made without its issuer's key, is refused.
import assert from "node:assert/strict";
import { test } from "node:test";
import fc from "fast-check";
import { canonicalize, signPayload, toBase64, utf8, payloadOf, type Envelope, type KeyPair } from "@sbx/wire";
import {
  attenuate,
  GRANT_PAYLOAD_TYPE,
  isJcpError,
  verifyChain,
  type EffectiveGrant,
} from "../../src/index.ts";
import { alice, bob, carol, dave, HOUR, mallory, NOW, root, rootGrant } from "./fixtures.ts";

const KEYS: readonly KeyPair[] = [alice, bob, carol, dave];
const ACTIONS = ["exec", "read", "write"];
const ROOT_RES = ["/a/**", "/b/*"];
const rootEnv = rootGrant({
  resources: ROOT_RES,
  actions: ["read", "write"],
  uj: "1000",
  calls: 10,
  wall_ms: 500,
  depth: 5,
});

// Reference semantics of a scope: the (action, path) pairs it allows, paths over {a,b,c} up to length 4.
const PATHS: string[][] = [[]];
for (let n = 1, f: string[][] = [[]]; n <= 4; n++) {
  f = f.flatMap((p) => ["a", "b", "c"].map((s) => [...p, s]));
  PATHS.push(...f);
}
function refMatches(p: string, path: readonly string[]): boolean {
  const parts = p.slice(1).split("/");
  const sub = parts[parts.length - 1] === "**";
  const segs = sub ? parts.slice(0, -1) : parts;
  if (sub ? path.length < segs.length : path.length !== segs.length) return false;
  return segs.every((s, i) => s === "*" || s === path[i]);
}
function refAllows(g: EffectiveGrant, action: string, path: readonly string[]): boolean {
  return g.scope.actions.includes(action) && g.scope.resources.some((r) => refMatches(r, path));
}

const arbPattern = fc
  .tuple(fc.array(fc.constantFrom("a", "b", "c", "*"), { minLength: 0, maxLength: 3 }), fc.boolean())
  .filter(([s, sub]) => s.length > 0 || sub)
  .map(([s, sub]) => "/" + [...s, ...(sub ? ["**"] : [])].join("/"));
const sortedSet = <T extends string>(a: fc.Arbitrary<T>, max: number) =>
  fc.uniqueArray(a, { minLength: 1, maxLength: max }).map((xs) => [...xs].sort());

// A child's stated fields: each may be left out; values mostly narrow, sometimes widen (verification must catch it).
const mostly = <T>(narrow: fc.Arbitrary<T>, wide: fc.Arbitrary<T>) =>
  fc.oneof({ arbitrary: narrow, weight: 6 }, { arbitrary: wide, weight: 1 });
const narrowPattern = fc.constantFrom("/a", "/a/b", "/a/*", "/a/**", "/a/b/**", "/a/*/c", "/b/a", "/b/*");
const arbChild = fc
  .record(
    {
      resources: sortedSet(mostly(narrowPattern, arbPattern), 3),
      actions: sortedSet(mostly(fc.constantFrom("read", "write"), fc.constantFrom(...ACTIONS)), 2),
      uj: mostly(fc.integer({ min: 0, max: 600 }), fc.integer({ min: 0, max: 1500 })).map(String),
      calls: mostly(fc.integer({ min: 0, max: 6 }), fc.integer({ min: 0, max: 15 })),
      wall_ms: mostly(fc.integer({ min: 0, max: 300 }), fc.integer({ min: 0, max: 800 })),
      nbf_ms: mostly(
        fc.integer({ min: NOW - HOUR, max: NOW }),
        fc.integer({ min: NOW - 2 * HOUR, max: NOW }),
      ),
      depth: fc.integer({ min: 0, max: 7 }),
    },
    { requiredKeys: [] },
  )
  .chain((f) =>
    fc.record({
      f: fc.constant(f),
      exp_ms: mostly(
        fc.integer({ min: NOW + 1, max: NOW + 20 * HOUR }),
        fc.integer({ min: NOW + 1, max: NOW + 30 * HOUR }),
      ),
    }),
  );

type ChildSpec = { f: Record<string, unknown>; exp_ms: number };

function signChild(parent: EffectiveGrant, by: KeyPair, to: KeyPair, c: ChildSpec, i: number): Envelope {
  const { resources, actions, uj, calls, wall_ms, nbf_ms, depth } = c.f;
  const scope = { ...(resources ? { resources } : {}), ...(actions ? { actions } : {}) };
  const budget = {
    ...(uj !== undefined ? { uj } : {}),
    ...(calls !== undefined ? { calls } : {}),
    ...(wall_ms !== undefined ? { wall_ms } : {}),
  };
  const p = {
    issuer: by.did,
    holder: to.did,
    parent: parent.address,
    ...(Object.keys(scope).length ? { scope } : {}),
    ...(Object.keys(budget).length ? { budget } : {}),
    ...(nbf_ms !== undefined ? { nbf_ms } : {}),
    exp_ms: c.exp_ms,
    ...(depth !== undefined ? { depth } : {}),
    nonce: i.toString(16).padStart(32, "0"),
  };
  return signPayload(GRANT_PAYLOAD_TYPE, p, by);
}

test("property: a chain that verifies is never wider than its root", () => {
  let verified = 0;
  fc.assert(
    fc.property(
      fc.array(arbChild, { minLength: 1, maxLength: 6 }),
      mostly(fc.constant(NOW), fc.integer({ min: NOW - HOUR, max: NOW + 24 * HOUR })),
      (children, at) => {
        const chain: Envelope[] = [rootEnv];
        const [r0] = verifyChain(chain, { roots: [root.did], at_ms: NOW }).grants;
        let last = r0!;
        for (const [i, c] of children.entries()) {
          chain.push(signChild(last, KEYS[i % 4]!, KEYS[(i + 1) % 4]!, c, i));
          let v;
          try {
            v = verifyChain(chain, { roots: [root.did], at_ms: at });
          } catch (e) {
            if (!isJcpError(e)) throw e;
            return;
          }
          verified++;
          const leaf = v.leaf;
          last = leaf;
          const rt = v.grants[0]!;
          for (const a of ACTIONS)
            for (const p of PATHS)
              if (refAllows(leaf, a, p)) assert.ok(refAllows(rt, a, p), `leaf allows ${a} /${p.join("/")}`);
          assert.ok(leaf.budget.uj <= rt.budget.uj);
          assert.ok(leaf.budget.calls !== null && leaf.budget.calls <= rt.budget.calls!);
          assert.ok(leaf.budget.wall_ms !== null && leaf.budget.wall_ms <= rt.budget.wall_ms!);
          assert.ok(leaf.nbf_ms >= rt.nbf_ms && leaf.exp_ms <= rt.exp_ms);
          assert.ok(leaf.depth <= rt.depth - (v.grants.length - 1));
        }
      },
    ),
    { numRuns: 400 },
  );
  assert.ok(verified > 100, `only ${verified} chains verified: the property would be vacuous`);
});

// Valid chains built by attenuate, narrowing a little at each step.
const arbValidChain = fc.integer({ min: 1, max: 5 }).map((n) => {
  const chain: Envelope[] = [rootEnv];
  for (let i = 1; i < n; i++)
    chain.push(
      attenuate(chain, KEYS[(i - 1) % 4]!, {
        holder: KEYS[i % 4]!.did,
        uj: String(1000 - 100 * i),
        nonce: i.toString(16).padStart(32, "0"),
      }),
    );
  return chain;
});

type Mutation = "field" | "resign" | "flip-payload" | "flip-sig" | "drop" | "swap";
const FIELDS: [string, unknown][] = [
  ["holder", mallory.did],
  ["issuer", mallory.did],
  ["scope", { resources: ["/**"], actions: ["exec", "read", "write"] }],
  ["budget", { uj: "999999" }],
  ["exp_ms", NOW + 48 * HOUR],
  ["nbf_ms", 0],
  ["depth", 15],
  ["nonce", "f".repeat(32)],
  ["parent", null],
];

function mutate(
  chain: Envelope[],
  i: number,
  kind: Mutation,
  field: number,
  byte: number,
): Envelope[] | null {
  const out = [...chain];
  const env = out[i]!;
  if (kind === "drop") return chain.length > 1 && i < chain.length - 1 ? out.filter((_, j) => j !== i) : null;
  if (kind === "swap")
    return i + 1 < chain.length ? [...out.slice(0, i), out[i + 1]!, out[i]!, ...out.slice(i + 2)] : null;
  if (kind === "flip-payload" || kind === "flip-sig") {
    const s = env.signatures[0]!;
    const b = Buffer.from(kind === "flip-payload" ? env.payload : s.sig, "base64");
    b[byte % b.length]! ^= 1 << (byte % 8);
    out[i] =
      kind === "flip-payload"
        ? { ...env, payload: b.toString("base64") }
        : { ...env, signatures: [{ keyid: s.keyid, sig: b.toString("base64") }] };
    return out;
  }
  const [k, v] = FIELDS[field % FIELDS.length]!;
  const p = { ...(payloadOf(env) as Record<string, unknown>), [k]: v };
  if (canonicalize(p) === canonicalize(payloadOf(env))) return null;
  out[i] =
    kind === "resign"
      ? signPayload(GRANT_PAYLOAD_TYPE, p, mallory)
      : { ...env, payload: toBase64(utf8(canonicalize(p))) };
  return out;
}

test("property: any mutation of any grant in a valid chain, without its issuer's key, is refused", () => {
  fc.assert(
    fc.property(
      arbValidChain,
      fc.nat(),
      fc.constantFrom<Mutation>("field", "resign", "flip-payload", "flip-sig", "drop", "swap"),
      fc.nat(),
      fc.nat(),
      (chain, idx, kind, field, byte) => {
        assert.equal(verifyChain(chain, { roots: [root.did], at_ms: NOW }).grants.length, chain.length);
        const bad = mutate(chain, idx % chain.length, kind, field, byte);
        if (bad === null) return;
        assert.throws(
          () => verifyChain(bad, { roots: [root.did], at_ms: NOW }),
          (e) => isJcpError(e),
          `${kind} at ${idx % chain.length}`,
        );
      },
    ),
    { numRuns: 500 },
  );
});
