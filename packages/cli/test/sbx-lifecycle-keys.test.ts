// Which key signs a durable run on this host (issue 38; sandbox-attest §13.10a item 7): a run
// remembers the key it was started with here; `--key` naming another is said, naming both
// did:keys, and then remembered; a remembered key file that changed or went is refused with its
// code and nothing is appended; `--key` for a thaw of processes resident under another key is
// refused; the store's own key is made only when no key was given, and said when made. An ungranted
// run's `sbx show` says it had no grants.
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { join } from "node:path";
import type { Digest } from "@sbx/wire";
import { FINISH_AGENT, kinds, runIdOf, sbx, startAgentRun, workspaceWithAgent } from "./lifecycle-helpers.ts";

function scratch(): string {
  return mkdtempSync(join("/var/tmp", "sbx-keys-"));
}

async function keygen(path: string): Promise<string> {
  const r = await sbx(["keygen", "--out", path, "--force"]);
  assert.equal(r.code, 0, r.err);
  return r.out.trim().split("\n")[0]!;
}

async function ok(args: string[]): Promise<string> {
  const r = await sbx(args);
  assert.equal(r.code, 0, `sbx ${args.join(" ")}: ${r.err}`);
  return r.err;
}

/** The host of each executed segment's attestation, as `sbx show --json` reports them, in order. */
async function hosts(store: string, id: Digest): Promise<string[]> {
  const r = await sbx(["show", id, "--store", store, "--json"]);
  assert.equal(r.code, 0, r.err);
  return (JSON.parse(r.out) as { attestations: { host: string }[] }).attestations.map((a) => a.host);
}

test("resume --key OTHER says the run is now signed by a second key, naming both; later commands keep OTHER", async () => {
  const dir = scratch();
  try {
    const store = join(dir, "store");
    const h = await keygen(join(dir, "h.pem"));
    const o = await keygen(join(dir, "o.pem"));
    const id = await startAgentRun({
      store,
      ws: workspaceWithAgent(join(dir, "ws")),
      args: ["--key", join(dir, "h.pem")],
    });
    await ok(["suspend", id, "--release", "--store", store]);
    const r = await ok(["resume", id, "--store", store, "--key", join(dir, "o.pem"), ...FINISH_AGENT]);
    assert.match(
      r,
      new RegExp(`now signed by a second key: ${o} .*earlier intervals on this host were signed by ${h}`),
    );
    // The agent ended; suspend from its workspace, resume without --key: signed by o, nothing said.
    await ok(["suspend", id, "--store", store]);
    const again = await ok(["resume", id, "--store", store, "--", "/bin/true"]);
    assert.doesNotMatch(again, /second key/);
    assert.match(again, new RegExp(`signed by ${o}`));
    await ok(["close", id, "--store", store]);
    assert.deepEqual(await hosts(store, id), [h, o, o]);
    const one = await sbx(["verify", id, "--store", store, "--trust", h, "--json"]);
    assert.equal(one.code, 1);
    assert.equal((JSON.parse(one.out) as { error: { code: string } }).error.code, "HostMismatch");
    assert.equal((await sbx(["verify", id, "--store", store, "--trust", h, "--trust", o])).code, 0);
    assert.equal(existsSync(join(store, "host-key.pem")), false, "keys were given: no store key made");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("the remembered key file changed or gone: resume refused with its code, nothing appended; --key then serves", async () => {
  const dir = scratch();
  try {
    const store = join(dir, "store");
    const key = join(dir, "h.pem");
    const h = await keygen(key);
    const id = await startAgentRun({ store, ws: workspaceWithAgent(join(dir, "ws")), args: ["--key", key] });
    await ok(["suspend", id, "--release", "--store", store]);
    const before = await kinds(store, id);
    await keygen(key); // another key at the same path
    const changed = await sbx(["resume", id, "--store", store, ...FINISH_AGENT]);
    assert.equal(changed.code, 2);
    assert.match(changed.err, /^sbx resume: KeyMismatch: /m);
    assert.match(changed.err, new RegExp(h));
    rmSync(key);
    const gone = await sbx(["resume", id, "--store", store, ...FINISH_AGENT]);
    assert.equal(gone.code, 2);
    assert.match(gone.err, /^sbx resume: Unreadable: /m);
    assert.deepEqual(await kinds(store, id), before, "nothing appended");
    const o = await keygen(join(dir, "o.pem"));
    const r = await ok(["resume", id, "--store", store, "--key", join(dir, "o.pem"), ...FINISH_AGENT]);
    assert.match(r, new RegExp(`now signed by a second key: ${o} .*${h}`));
    await ok(["close", id, "--store", store]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("--key for a thaw of processes resident under another key is refused; without it they thaw", async () => {
  const dir = scratch();
  try {
    const store = join(dir, "store");
    await keygen(join(dir, "h.pem"));
    await keygen(join(dir, "o.pem"));
    const id = await startAgentRun({
      store,
      ws: workspaceWithAgent(join(dir, "ws")),
      args: ["--key", join(dir, "h.pem")],
    });
    await ok(["suspend", id, "--store", store]);
    const r = await sbx(["resume", id, "--store", store, "--key", join(dir, "o.pem")]);
    assert.equal(r.code, 2);
    assert.match(r.err, /^sbx resume: KeyMismatch: /m);
    assert.deepEqual(await kinds(store, id), ["executed", "suspended"]);
    const same = await sbx(["resume", id, "--store", store, "--key", join(dir, "h.pem")]);
    assert.equal(same.code, 0, same.err);
    assert.match(same.out, /thawed true/);
    await ok(["close", id, "--store", store]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("no key given: the store's key is made on first use and said, once; sbx show says the run had no grants", async () => {
  const dir = scratch();
  try {
    const store = join(dir, "store");
    const ws = workspaceWithAgent(join(dir, "ws"));
    const first = await sbx(["run", "--detach", "--store", store, "--workspace", ws, "--", "/bin/true"]);
    assert.equal(first.code, 0, first.err);
    assert.match(first.err, /made this store's host key .*host-key\.pem \(did:key:/);
    assert.ok(existsSync(join(store, "host-key.pem")));
    const id = runIdOf(first.out);
    const ws2 = workspaceWithAgent(join(dir, "ws2"));
    const second = await sbx(["run", "--detach", "--store", store, "--workspace", ws2, "--", "/bin/true"]);
    assert.equal(second.code, 0, second.err);
    assert.doesNotMatch(second.err, /made this store's host key/);
    for (;;) {
      if ((await kinds(store, id)).length === 1) break;
      await new Promise((r) => setTimeout(r, 25));
    }
    const show = await sbx(["show", id, "--store", store]);
    assert.equal(show.code, 0, show.err);
    assert.match(show.out, /^no grants: this run was not governed by a grant$/m);
    const json = await sbx(["show", id, "--store", store, "--json"]);
    assert.equal((JSON.parse(json.out) as { governed: boolean }).governed, false);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
