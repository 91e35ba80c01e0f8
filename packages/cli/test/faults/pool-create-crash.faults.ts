// npm run test:faults. `sbx pool create` SIGKILLed at every write step of creating a one-item pool of parked sandboxes
// (SBX_STORE_CRASH_AT, host/src/store/fault.ts; the steps include each of the item's starting
// records, pool/starting.ts): whatever it had made (the sandbox and its keeper, the run cgroup, the
// per-item /etc and seccomp folder, the workspace mountpoint) is found and removed by the next
// `sbx pool list`, `destroy` or `create`, and the pool that is left verifies. Before the starting
// record, a pool create killed after starting its keeper left a live sandbox that nothing named.
import assert from "node:assert/strict";
import { chmodSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import { verifyLedger } from "@sbx/sandbox-attest/warmpool";
import { openPoolDir, poolPaths, readParked } from "@sbx/host/pool";
import { hostHierarchies } from "@sbx/host/sandbox";
import { sbx } from "../lifecycle-helpers.ts";

const store = mkdtempSync(join(tmpdir(), "sbx-pool-crash-"));
after(async () => {
  // Even when an assertion failed midway: every pool's sandboxes end before the folder goes.
  const pools = existsSync(join(store, "pools")) ? readdirSync(join(store, "pools")) : [];
  for (const name of pools) await sbx(["pool", "destroy", "--store", store, "--pool", name]);
  rmSync(store, { recursive: true, force: true });
});
const MANIFEST = "blake3:" + "cd".repeat(32);
const poolDir = (name: string) => join(store, "pools", name);

const create = (name: string, env: Record<string, string> = {}) =>
  sbx(["pool", "create", "--store", store, "--pool", name, "--manifest", MANIFEST, "-n", "1"], env);

/**
 * The processes whose command line names `dir` (the keeper, the launcher, bwrap all do), but none
 * of the folders in `except`.
 */
function processesNaming(dir: string, except: readonly string[] = []): number[] {
  const out: number[] = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const cmd = readFileSync(`/proc/${name}/cmdline`, "utf8");
      if (cmd.includes(dir) && !except.some((e) => cmd.includes(e + "/"))) out.push(Number(name));
    } catch {
      // gone
    }
  }
  return out;
}

/** The run cgroups made by process `pid` (named sbx-run-<pid>-…), in every hierarchy. */
function cgroupsOf(pid: number): string[] {
  const h = hostHierarchies();
  const parents = [
    ...(h.v2 === null ? [] : [join(h.v2, h.v2Self)]),
    ...Object.values(h.v1).map((m) => join(m.mount, m.self)),
  ];
  return [...new Set(parents)].flatMap((d) =>
    readdirSync(d)
      .filter((n) => n.startsWith(`sbx-run-${String(pid)}-`))
      .map((n) => join(d, n)),
  );
}

/**
 * What a killed create may have left that no item of the ledger owns: processes, cgroups, host
 * folders, item folders. (A create killed after its item's `provisioned` entry left a whole pool.)
 */
function leftovers(name: string, pid: number, tmp: string) {
  const dir = poolDir(name);
  const items = existsSync(join(dir, "items")) ? readdirSync(join(dir, "items")) : [];
  const ledger = existsSync(poolPaths(dir).ledger) ? openPoolDir(dir).account.items : new Map();
  const owned = items.filter((i) => ledger.has(i)).map((i) => join(dir, "items", i));
  const ownedFolders = owned.flatMap((d) => {
    const info = readParked(d);
    return info === null ? [] : [info.system, info.mountpoint ?? ""];
  });
  return {
    processes: processesNaming(dir, owned),
    cgroups: cgroupsOf(pid).filter((cg) => !owned.some((d) => readParked(d)?.cgroup.dirs.includes(cg))),
    folders: readdirSync(tmp)
      .filter((n) => n.startsWith("sbx-pool-"))
      .filter((n) => !ownedFolders.includes(join(tmp, n))),
    unledgered: items.filter((i) => !ledger.has(i)),
  };
}

test("sbx pool create killed at every step leaves nothing that list, destroy or create does not remove", async () => {
  // The host key is made by the first create; the traced run then counts the steps of a create.
  assert.equal((await create("warm")).code, 0);
  const traced = await create("traced", { SBX_STORE_CRASH_TRACE: "1" });
  assert.equal(traced.code, 0, traced.err);
  const steps = [...traced.err.matchAll(/^step (\d+) (.*)$/gm)].map((m) => m[2] ?? "");
  for (const point of ["pool-park:cgroup-made", "pool-park:keeper-started", "pool-park:launched"])
    assert.ok(steps.includes(point), `the steps include ${point}`);
  let leftLive = 0;
  for (let k = 1; k <= steps.length; k++) {
    const name = `crash${String(k)}`;
    // The sandbox's uid must reach its /etc folder: a temporary folder of this attempt's own, 0755.
    const tmp = mkdtempSync(join(tmpdir(), "sbx-pool-crash-tmp-"));
    chmodSync(tmp, 0o755);
    const killed = await create(name, { SBX_STORE_CRASH_AT: String(k), TMPDIR: tmp });
    assert.equal(killed.code, null, `step ${String(k)} (${steps[k - 1] ?? ""}): killed (${killed.err})`);
    const before = leftovers(name, killed.pid, tmp);
    if (before.processes.length > 0) leftLive++;
    // The next command on the pool reaps what the killed one left: list, destroy or create in turn.
    const how = (["list", "destroy", "create"] as const)[k % 3] ?? "list";
    const hasPool = existsSync(join(poolDir(name), "pool.json"));
    const next =
      how === "create"
        ? await create(name, { TMPDIR: tmp })
        : await sbx(["pool", how, "--store", store, "--pool", name], { TMPDIR: tmp });
    const want = !hasPool ? (how === "create" ? 0 : 2) : how === "create" ? 1 : 0;
    assert.equal(next.code, want, `step ${String(k)}: sbx pool ${how} (${next.err})`);
    if (how === "create" && hasPool) assert.match(next.err, /PoolExists/);
    const after = leftovers(name, killed.pid, tmp);
    const at = `step ${String(k)} (${steps[k - 1] ?? ""}), then ${how}`;
    assert.deepEqual(after.processes, [], `${at}: no process outside the ledger is left`);
    assert.deepEqual(after.folders, [], `${at}: no host folder outside the ledger is left`);
    assert.deepEqual(after.cgroups, [], `${at}: no cgroup of the killed create is left`);
    assert.deepEqual(after.unledgered, [], `${at}: no item outside the ledger is left`);
    if (existsSync(poolPaths(poolDir(name)).ledger)) {
      verifyLedger(openPoolDir(poolDir(name)));
      assert.equal((await sbx(["pool", "destroy", "--store", store, "--pool", name])).code, 0);
    }
    const end = leftovers(name, killed.pid, tmp);
    assert.deepEqual(end.processes, [], `${at}: after destroy, no process of the pool is left`);
    assert.deepEqual(end.folders, [], `${at}: after destroy, no host folder is left`);
    rmSync(tmp, { recursive: true, force: true });
  }
  assert.ok(leftLive > 0, "some steps left a live sandbox behind for the next command to end");
  for (const name of ["warm", "traced"])
    assert.equal((await sbx(["pool", "destroy", "--store", store, "--pool", name])).code, 0);
});
