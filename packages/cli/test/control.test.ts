// The supervisor's control channel (lifecycle/control.ts): a supervisor that accepts a request and
// goes away before answering (it was ending) is asked a resume again; once none listens,
// askSupervisor resolves undefined so the caller resumes from the record itself. A resume that keeps
// breaking, or a suspend or close that breaks, is ControlFailed; an answer that arrives is passed on.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { askSupervisor, serveControl } from "../src/commands/sbx/lifecycle/control.ts";

function listen(path: string, onConn: (s: import("node:net").Socket) => void): Promise<Server> {
  const server = createServer(onConn);
  return new Promise((resolve) => server.listen(path, () => resolve(server)));
}

test("a supervisor that breaks the channel unanswered, then goes, leaves the caller to act itself", async () => {
  const dir = mkdtempSync(join(tmpdir(), "sbx-control-"));
  const path = join(dir, "control.sock");
  try {
    let accepted = 0;
    const server = await listen(path, (sock) => {
      accepted++;
      sock.destroy();
      server.close(); // the departing supervisor: no longer listening after this one
    });
    const r = await askSupervisor(path, { op: "resume" });
    assert.equal(r, undefined);
    assert.equal(accepted, 1);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("a resume that keeps breaking unanswered, or any other request that breaks, is ControlFailed; a served answer passes", async () => {
  const dir = mkdtempSync(join(tmpdir(), "sbx-control-"));
  const path = join(dir, "control.sock");
  try {
    let accepted = 0;
    const server = await listen(path, (sock) => {
      accepted++;
      sock.destroy();
    });
    const failed = (e: Error & { code?: string }) => {
      assert.equal(e.code, "ControlFailed");
      return true;
    };
    await assert.rejects(askSupervisor(path, { op: "resume" }), failed);
    assert.equal(accepted, 5);
    // A suspend whose supervisor went away unanswered is reported, not asked again.
    await assert.rejects(askSupervisor(path, { op: "suspend", release: true }), failed);
    assert.equal(accepted, 6);
    await new Promise<void>((r) => server.close(() => r()));
    const served = await serveControl(path, () => Promise.resolve({ phase: "executing" }));
    assert.deepEqual(await askSupervisor(path, { op: "status" }), { result: { phase: "executing" } });
    await new Promise<void>((r) => served.close(() => r()));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
