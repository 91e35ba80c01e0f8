// Resume refusals of a durable run under a grant (jcp §4.5, §4.7; lifecycle/granted.ts mayResume):
// the issuer's amendment in the leaf's checkpoint log (--amendments, read again at every check)
// brings the grant's expiry before now (`Expired`) or its budget below what the ledger has spent
// (`BudgetExhausted`), or the issuer revokes it (`Revoked`, on the --revocations list); a resume is
// then refused with that code on both paths, the thaw of a frozen run by its live supervisor
// (suspend without --release: the refusal crosses the control socket with its own code, never as
// ControlFailed) and the restore of a released one (--release, resume under --trust/--ledger);
// nothing is appended to the record and nothing is debited, and the run can still be closed.
import { test } from "node:test";
import assert from "node:assert/strict";
import { rmSync } from "node:fs";
import { isCodedError, type Digest } from "@sbx/wire";
import { FileStore } from "@sbx/host/store";
import { askSupervisor } from "@sbx/host/durable";
import { runPaths } from "@sbx/host/durable";
import { spawnDetached } from "../src/commands/sbx/lifecycle/detach.ts";
import { kinds, sbx, waitFor } from "./lifecycle-helpers.ts";
import { granted, jcp, ledgerSpends, startAgent, type Granted } from "./granted-helpers.ts";

type Code = "Expired" | "BudgetExhausted" | "Revoked";

/** tighten makes the issuer refuse the grant from now on with `code`: an amendment, or a revocation. */
async function tighten(g: Granted, code: Code, log: string): Promise<void> {
  if (code === "Revoked") {
    const rv = await jcp([
      "revoke",
      "--key",
      g.p("root.key"),
      "--chain",
      g.p("alice.chain"),
      "--list",
      g.p("revoked"),
    ]);
    assert.equal(rv.code, 0, rv.err);
    return;
  }
  const amend = ["amend", "--key", g.p("root.key"), "--chain", g.p("alice.chain"), "--log", log];
  const exp = Date.now() + 300;
  const a = await jcp([...amend, ...(code === "Expired" ? ["--exp", String(exp)] : ["--uj", "1"])]);
  assert.equal(a.code, 0, a.err);
  if (code === "Expired") await waitFor(() => Date.now() > exp + 50, "the amended expiry");
}

/**
 * askedResume asks the frozen run's live supervisor to resume, over its control socket, and returns
 * the refusal as the client rebuilt it: the structured value that crossed, not a line of stderr.
 */
async function askedResume(store: string, id: Digest): Promise<unknown> {
  const socket = runPaths(FileStore.open(store, { readOnly: true }).root, id).socket;
  try {
    return { answered: await askSupervisor(socket, { op: "resume" }) };
  } catch (e) {
    return e;
  }
}

/**
 * detachedResume runs `sbx resume --detach` as the command does (spawnDetached) and returns how it
 * ended: the refusal the detached child told its parent over the pipe, rebuilt, or its exit code.
 */
async function detachedResume(store: string, args: readonly string[]): Promise<unknown> {
  const io = { out: () => undefined, err: () => undefined };
  try {
    return { exit: await spawnDetached(store, ["resume", ...args], io) };
  } catch (e) {
    return e;
  }
}

async function refusedResume(code: Code, release: boolean): Promise<void> {
  const g0 = await granted("100J");
  const log = g0.p("amendments");
  const g = { ...g0, flags: [...g0.flags, "--amendments", log] };
  try {
    // The holder's checkpoint, which the issuer's amendment answers (jcp §4.7).
    const cp = await jcp([
      ...["checkpoint", "--key", g.p("alice.key"), "--chain", g.p("alice.chain"), "--log", log],
      ...["--state", `blake3:${"0".repeat(64)}`, "--spent-uj", "0"],
    ]);
    assert.equal(cp.code, 0, cp.err);
    const { store, id } = await startAgent(g);
    const park = ["suspend", id, "--store", store, ...(release ? ["--release"] : [])];
    assert.equal((await sbx(park)).code, 0);
    await waitFor(() => ledgerSpends(g.p("ledger")).length === 1, "the first interval's debit");
    await tighten(g, code, log);
    const before = await kinds(store, id);
    assert.deepEqual(before, ["executed", "suspended"]);
    if (!release) {
      // The refusal crosses the supervisor's socket as {code, message, detail}: rebuilt with the
      // issuer's code (not ControlFailed around it), its reason and a detail object.
      const e = await askedResume(store, id);
      assert.ok(isCodedError(e, code), `want ${code} across the socket, got ${String(e)}`);
      assert.equal(e.code, code);
      assert.ok(e.reason.length > 0 && !e.reason.startsWith(`${code}:`), e.reason);
      assert.equal(typeof e.detail, "object");
    }
    if (release) {
      // The detached child's refusal crosses its pipe to the parent as {code, message, detail}.
      const e = await detachedResume(store, [id, "--store", store, "--workspace", g.p("ws3"), ...g.flags]);
      assert.ok(isCodedError(e, code), `want ${code} from the detached child, got ${JSON.stringify(e)}`);
      assert.ok(e.reason.length > 0 && !e.reason.startsWith(`${code}:`), e.reason);
    }
    const resume = release
      ? ["resume", id, "--store", store, "--workspace", g.p("ws2"), ...g.flags]
      : ["resume", id, "--store", store];
    const r = await sbx(resume);
    assert.equal(r.code, 1, `${code}: ${r.out}${r.err}`);
    // The error line states the refusal's own code first (errorExit), not a ControlFailed around it.
    const last = r.err.trimEnd().split("\n").at(-1) ?? "";
    assert.ok(last.startsWith(`sbx resume: ${code}: `), `want ${code}, got: ${r.err}`);
    assert.deepEqual(await kinds(store, id), before, "nothing appended");
    assert.equal(ledgerSpends(g.p("ledger")).length, 1, "nothing debited");
    assert.equal((await sbx(["close", id, "--store", store])).code, 0);
    assert.deepEqual(await kinds(store, id), [...before, "closed"]);
  } finally {
    rmSync(g.dir, { recursive: true, force: true });
  }
}

for (const code of ["Expired", "BudgetExhausted", "Revoked"] as const)
  for (const release of [false, true])
    test(`a resume ${release ? "by restore (--release)" : "by thaw (frozen)"} is refused ${code} by the issuer`, () =>
      refusedResume(code, release));
