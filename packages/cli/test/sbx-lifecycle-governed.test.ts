// Durable runs (§13) governed like one-shot runs: --exec-policy gates every executed interval of a
// durable run (the first, one thawed after a frozen suspend, and one restored into a fresh sandbox
// after --release or on another store), the policy is named by the unit and travels in the run's
// archive, and a resume that cannot apply it is refused with a code, appending nothing.
import { test } from "node:test";
import assert from "node:assert/strict";
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { canonicalize, parseDigest, toHex, type Digest } from "@sbx/wire";
import { makePolicy, policyAddress } from "@sbx/sandbox-attest/execpolicy";
import { verifyAttestation } from "@sbx/sandbox-attest/attestation";
import { decodeRecord } from "@sbx/sandbox-attest/runrecord";
import { hashFile } from "@sbx/host/gate";
import { FileStore } from "@sbx/host/store";
import { fileIs, kinds, sbx, startAgentRun, waitFor, waitKinds } from "./lifecycle-helpers.ts";

/**
 * A gated agent: each of its four steps tries a denied program (/usr/bin/id) and records the exit
 * status it got in `ids`; after step 2 it waits for `go`; at the end it writes `result`.
 */
const GATED_AGENT = `#!/bin/sh
n=$(cat state 2>/dev/null || echo 0)
while [ "$n" -lt 4 ]; do
  n=$((n+1))
  /usr/bin/id >/dev/null 2>&1; echo "$n $?" >> ids
  echo $n > state
  while [ "$n" = 2 ] && [ ! -e go ]; do sleep 0.02; done
done
echo done > result
`;

function workspace(dir: string): string {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "agent.sh"), GATED_AGENT);
  chmodSync(join(dir, "agent.sh"), 0o755);
  return dir;
}

async function deniedPolicy(dir: string): Promise<{ file: string; address: Digest }> {
  const p = makePolicy("denylist", [], [(await hashFile("/usr/bin/id")).digest]);
  const file = join(dir, "policy.json");
  writeFileSync(file, canonicalize(p));
  return { file, address: policyAddress(p) };
}

/** The executed attestations' exec policies and levels, in record order. */
async function executed(storeDir: string, id: Digest): Promise<{ policy: string; level: string }[]> {
  const store = FileStore.open(storeDir, { readOnly: true });
  const rec = decodeRecord((await store.readRecordBytes(id))!).record;
  const out: { policy: string; level: string }[] = [];
  for (const s of rec.segments)
    if (s.kind === "executed") {
      const p = verifyAttestation(await store.getSigned(s.attestation)).predicate;
      out.push({ policy: p.exec_policy, level: p.level });
    }
  return out;
}

test("sbx run --durable --exec-policy: every interval is gated, thawed or restored, here or on another store", async () => {
  const dir = mkdtempSync(join("/var/tmp", "sbx-governed-"));
  try {
    const { file, address } = await deniedPolicy(dir);
    const store = join(dir, "store");
    const ws = workspace(join(dir, "ws"));
    const id = await startAgentRun({ store, ws, args: ["--exec-policy", file] });
    // Frozen suspend, then thaw: the same gate holds the thawed interval.
    assert.equal((await sbx(["suspend", id, "--store", store])).code, 0);
    assert.equal((await sbx(["resume", id, "--store", store])).code, 0);
    // Parked with --release, then restored into a fresh sandbox: gated again from the stored policy.
    assert.equal((await sbx(["suspend", id, "--release", "--store", store])).code, 0);
    const ws2 = join(dir, "ws2");
    const res = await sbx(["resume", id, "--store", store, "--workspace", ws2, "--detach"]);
    assert.equal(res.code, 0, res.err);
    writeFileSync(join(ws2, "go"), "");
    await waitFor(() => fileIs(join(ws2, "result")) === "done", "the agent's result");
    assert.deepEqual(
      fileIs(join(ws2, "ids"))?.split("\n"),
      ["1 126", "2 126", "3 126", "4 126"],
      "every step's /usr/bin/id was refused by the gate",
    );
    await waitKinds(store, id, 7);
    const ex = await executed(store, id);
    assert.equal(ex.length, 3);
    assert.deepEqual(
      ex,
      [0, 1, 2].map(() => ({ policy: address, level: "S6" })),
    );
    // The policy travels in the archive: a second store resumes the run under it, or not at all.
    assert.equal((await sbx(["suspend", id, "--store", store])).code, 0);
    const tar = join(dir, "run.tar");
    assert.equal((await sbx(["export", id, "--store", store, "--out", tar])).code, 0);
    const store2 = join(dir, "store2");
    const im = await sbx(["import", tar, "--store", store2, "--any-signer"]);
    assert.equal(im.code, 0, im.err);
    const hex = toHex(parseDigest(address));
    const policyFile = join(store2, "objects", hex.slice(0, 2), hex.slice(2));
    assert.equal(readFileSync(policyFile, "utf8"), readFileSync(file, "utf8"), "the policy was imported");
    // Without it (removed here), the resume is refused with a code and appends nothing.
    rmSync(policyFile);
    const before = await kinds(store2, id);
    const refused = await sbx(["resume", id, "--store", store2, "--workspace", join(dir, "ws3")]);
    assert.equal(refused.code, 1);
    assert.match(refused.err, /ObjectMissing/);
    assert.deepEqual(await kinds(store2, id), before);
    // A policy object that is not the one named: refused too (ObjectMismatch).
    writeFileSync(policyFile, canonicalize(makePolicy("denylist", [], [])));
    const wrong = await sbx(["resume", id, "--store", store2, "--workspace", join(dir, "ws4")]);
    assert.equal(wrong.code, 1);
    assert.match(wrong.err, /ObjectMismatch/);
    assert.deepEqual(await kinds(store2, id), before);
    assert.equal((await sbx(["close", id, "--store", store])).code, 0);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
