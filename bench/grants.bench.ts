// JCP grant benchmarks (issue 4). Verification of a 5-grant chain (root + 4 attenuations) per
// second, cold (every signature checked) and with the verified-envelope cache, against the Ed25519
// verify rate measured in this same run (the anchor); grant issuance per second; and, side by
// side, a Biscuit token with the same shape (authority block + 4 attenuation blocks) verified and
// authorized by @biscuit-auth/biscuit-wasm. Biscuit's documentation puts verification at ~1 ms.
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { ed25519, fromBase64, pae, testKey, type Envelope } from "@sbx/wire";
import { attenuate, GrantCache, issueGrant, verifyChain } from "@sbx/jcp-grant/grant";
import { median, rate, row, timeRunsAsync } from "./measure.ts";

const BATCH = Number(process.env.BENCH_GRANT_BATCH ?? 200);
const RUNS = 7;

/**
 * interleaved measures several subjects round-robin (RUNS rounds, `batch` calls each per round) so
 * that load from other processes falls on all of them alike; returns calls per second (medians).
 */
function interleaved(subjects: readonly (readonly [() => void, number])[]): number[] {
  const times: number[][] = subjects.map(() => []);
  for (const [fn] of subjects) fn();
  for (let r = 0; r < RUNS; r++)
    subjects.forEach(([fn, batch], i) => {
      const t = process.hrtime.bigint();
      for (let k = 0; k < batch; k++) fn();
      times[i]!.push(Number(process.hrtime.bigint() - t) / 1e9 / batch);
    });
  return times.map((xs) => 1 / median(xs));
}

function buildChain(now: number): Envelope[] {
  const keys = ["root-issuer", "alice", "bob", "carol", "dave", "mallory"].map(testKey);
  const chain = [
    issueGrant(keys[0]!, {
      holder: keys[1]!.did,
      resources: ["/fs/work/**", "/net/api.example.com/**"],
      actions: ["read", "write"],
      uj: "5000000",
      calls: 100,
      exp_ms: now + 3_600_000,
      depth: 5,
    }),
  ];
  for (let i = 1; i < 5; i++)
    chain.push(
      attenuate(chain, keys[i]!, {
        holder: keys[i + 1]!.did,
        resources: [`/fs/work/${Array<string>(i).fill("d").join("/")}/**`],
        uj: String(5_000_000 - i * 1000),
      }),
    );
  return chain;
}

interface BiscuitApi {
  KeyPair: new (alg: number) => { getPublicKey(): unknown; getPrivateKey(): unknown };
  BiscuitBuilder: new () => { addCode(s: string): void; build(k: unknown): BiscuitToken };
  BlockBuilder: new () => { addCode(s: string): void };
  AuthorizerBuilder: new () => {
    addCode(s: string): void;
    buildAuthenticated(t: BiscuitToken): { authorizeWithLimits(l: object): number; free(): void };
    free(): void;
  };
  Biscuit: { fromBase64(s: string, root: unknown): BiscuitToken };
}
interface BiscuitToken {
  appendBlock(b: unknown): BiscuitToken;
  toBase64(): string;
  free(): void;
}

// The little of the WebAssembly JS API used here (the project's lib settings carry no DOM types).
interface WasmApi {
  Module: { new (bytes: Uint8Array): object; imports(m: object): { module: string }[] };
  Instance: new (m: object, imports: Record<string, unknown>) => { exports: Record<string, unknown> };
}

/** loadBiscuit instantiates the wasm module by hand (its ESM entry imports .wasm, which Node 20 cannot). */
async function loadBiscuit(): Promise<BiscuitApi | null> {
  try {
    const dir = dirname(fileURLToPath(import.meta.resolve("@biscuit-auth/biscuit-wasm")));
    const bg = (await import(pathToFileURL(join(dir, "biscuit_bg.js")).href)) as Record<string, unknown> & {
      __wbg_set_wasm(x: unknown): void;
    };
    const W = (globalThis as unknown as { WebAssembly: WasmApi }).WebAssembly;
    const mod = new W.Module(readFileSync(join(dir, "biscuit_bg.wasm")));
    const imports: Record<string, unknown> = {};
    for (const name of new Set(W.Module.imports(mod).map((i) => i.module)))
      imports[name] = name === "./biscuit_bg.js" ? bg : await import(pathToFileURL(join(dir, name)).href);
    const inst = new W.Instance(mod, imports);
    bg.__wbg_set_wasm(inst.exports);
    (inst.exports.__wbindgen_start as () => void)();
    return bg as unknown as BiscuitApi;
  } catch (e) {
    console.log(`  @biscuit-auth/biscuit-wasm not available: ${(e as Error).message}`);
    return null;
  }
}

function biscuitVerify(b: BiscuitApi): () => void {
  const kp = new b.KeyPair(0);
  const builder = new b.BiscuitBuilder();
  builder.addCode(
    'right("/fs/work", "read"); right("/fs/work", "write"); check if time($t), $t < 2100-01-01T00:00:00Z;',
  );
  let token = builder.build(kp.getPrivateKey());
  for (let i = 1; i < 5; i++) {
    const blk = new b.BlockBuilder();
    blk.addCode(
      `check if resource($r), $r.starts_with("/fs/work/${Array<string>(i).fill("d").join("/")}/"); check if operation("read");`,
    );
    token = token.appendBlock(blk);
  }
  const text = token.toBase64();
  const root = kp.getPublicKey();
  const run = () => {
    const t = b.Biscuit.fromBase64(text, root);
    const ab = new b.AuthorizerBuilder();
    ab.addCode(
      'resource("/fs/work/d/d/d/d/x"); operation("read"); time(2026-01-01T00:00:00Z); allow if right("/fs/work", "read");',
    );
    const az = ab.buildAuthenticated(t);
    az.authorizeWithLimits({ max_facts: 1000, max_iterations: 100, max_time_micro: 1_000_000 });
    az.free();
    t.free();
  };
  // The first evaluations after load can exceed any run limit while the module compiles: prime it.
  for (let i = 0; i < 5; i++)
    try {
      run();
    } catch {
      /* compiling */
    }
  run();
  return run;
}

/** ucanVerify builds a 5-UCAN delegation chain with @ucans/ucans 0.12.0 and returns its verification. */
async function ucanVerify(): Promise<(() => Promise<void>) | null> {
  try {
    const ucans = await import("@ucans/ucans");
    const keys = await Promise.all([0, 1, 2, 3, 4, 5].map(() => ucans.EdKeypair.create()));
    const cap = {
      with: { scheme: "mailto", hierPart: "agent@example.com" },
      can: { namespace: "msg", segments: ["SEND"] },
    };
    let token = "";
    for (let i = 0; i < 5; i++)
      token = ucans.encode(
        await ucans.build({
          issuer: keys[i]!,
          audience: keys[i + 1]!.did(),
          capabilities: [cap],
          lifetimeInSeconds: 3600,
          proofs: token ? [token] : [],
        }),
      );
    const opts = {
      audience: keys[5]!.did(),
      requiredCapabilities: [{ capability: cap, rootIssuer: keys[0]!.did() }],
    };
    return async () => {
      const r = await ucans.verify(token, opts);
      if (!r.ok) throw new Error("bench setup: the UCAN chain does not verify");
    };
  } catch (e) {
    console.log(`  @ucans/ucans not available: ${(e as Error).message}`);
    return null;
  }
}

export default async function grantsBench(): Promise<void> {
  const now = Date.now();
  const chain = buildChain(now);
  const opts = { roots: [testKey("root-issuer").did], at_ms: now };
  const env = chain[4]!;
  const pk = testKey("dave").publicKey;
  const msg = pae(env.payloadType, fromBase64(env.payload)!);
  const sig = fromBase64(env.signatures[0]!.sig)!;
  if (!ed25519.verify(pk, msg, sig)) throw new Error("bench setup: the leaf's signature does not verify");

  console.log(
    `JCP grants: a 5-grant chain (root + 4 attenuations), ${Buffer.from(chain.map((e) => e.payload).join("")).length} bytes of payload base64; medians of ${RUNS} runs:`,
  );
  const cache = new GrantCache();
  verifyChain(chain, { ...opts, cache });
  const root = testKey("root-issuer");
  const alice = testKey("alice").did;
  const leafHolder = testKey("mallory");
  const b = await loadBiscuit();
  const subjects: [() => void, number][] = [
    [() => ed25519.verify(pk, msg, sig), BATCH * 5],
    [() => verifyChain(chain, opts), BATCH],
    [() => verifyChain(chain, { ...opts, cache }), BATCH * 10],
    [
      () =>
        issueGrant(root, {
          holder: alice,
          resources: ["/fs/work/**"],
          actions: ["read"],
          uj: "1000",
          exp_ms: now + 60_000,
          depth: 2,
        }),
      BATCH,
    ],
    [() => attenuate(chain, leafHolder, { holder: alice, uj: "10" }, { cache }), BATCH],
  ];
  if (b) subjects.push([biscuitVerify(b), Math.max(10, BATCH / 10)]);
  const [anchor, cold, warm, issue, att, bv] = interleaved(subjects) as [
    number,
    number,
    number,
    number,
    number,
    number | undefined,
  ];
  const A = `Ed25519 verify (${ed25519.name})`;
  row(`${A} (anchor)`, rate(anchor), 1, A);
  row("verifyChain, cold (5 signatures checked)", rate(cold), cold / anchor, A);
  row("verifyChain, verified-envelope cache", rate(warm), warm / anchor, A);
  row("issueGrant (root, signed)", rate(issue), issue / anchor, A);
  row("attenuate under the chain (parent cached)", rate(att), att / anchor, A);
  if (bv !== undefined) row("biscuit-wasm 0.6.0: parse+verify+authorize, 5 blocks", rate(bv), bv / anchor, A);
  console.log(
    `  cold chain verification: ${(1000 / cold).toFixed(3)} ms = ${(anchor / cold).toFixed(1)} Ed25519 verifies (5 are inherent); cached: ${(1000 / warm).toFixed(4)} ms`,
  );

  const uv = await ucanVerify();
  if (uv) {
    const u = 1 / (await timeRunsAsync(5, uv));
    row("@ucans/ucans 0.12.0 verify, 5-UCAN chain (not interleaved)", rate(u), u / anchor, A);
    console.log(`  UCAN here: ${(1000 / u).toFixed(1)} ms per chain (its Ed25519 is @stablelib's pure JS)`);
  }
  if (bv !== undefined)
    console.log(
      `  biscuit-wasm here: ${(1000 / bv).toFixed(3)} ms per token; Biscuit's documentation: ~1 ms; JCP cold: ${(1000 / cold).toFixed(3)} ms (${(cold / bv).toFixed(1)}× biscuit-wasm's rate)`,
    );
  else
    console.log(
      `  Biscuit's documentation puts verification at ~1 ms; JCP cold here: ${(1000 / cold).toFixed(3)} ms`,
    );
}
