// The supervisor's control channel (lifecycle/control.ts): a supervisor that accepts a request and
// goes away before answering (it was ending) is asked a resume again; once none listens,
// askSupervisor resolves undefined so the caller resumes from the record itself. A resume that keeps
// breaking, or a suspend or close that breaks, is ControlFailed; an answer that arrives is passed on,
// a refusal with its own code (errorToJson / errorFromJson), never ControlFailed in its place.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { isCodedError, WireError } from "@sbx/wire";
import { JcpError } from "@sbx/jcp-grant/grant";
import { SandboxAttestError } from "@sbx/sandbox-attest/runrecord";
import { HostError } from "@sbx/host";
import { askSupervisor, serveControl, Unanswerable } from "@sbx/host/durable";

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
    served.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("a refusal crosses the socket with its code, reason and detail: Expired and Revoked are not ControlFailed", async () => {
  const dir = mkdtempSync(join(tmpdir(), "sbx-control-"));
  const path = join(dir, "control.sock");
  const refusals = [
    new JcpError("Expired", "the grant expired at 1000"),
    new JcpError("Revoked", "the grant is revoked"),
    new WireError("BadSignature", "the signature does not verify"),
    new HostError("RunBusy", "another sbx holds the run"),
    new SandboxAttestError("ManifestRefused", "two members", {
      members: [{ pointer: "/image", code: "ImageInvalid" }],
    }),
  ];
  let next = 0;
  const served = await serveControl(path, () => Promise.reject(refusals[next++]!));
  try {
    for (const sent of refusals)
      await assert.rejects(askSupervisor(path, { op: "resume" }), (e: unknown) => {
        assert.ok(isCodedError(e, sent.code), `${sent.code}: got ${String(e)}`);
        assert.equal(e.reason, sent.reason, sent.code);
        assert.deepEqual(e.detail, sent.detail, sent.code);
        return true;
      });
  } finally {
    served.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test("what is not a coded error crosses as ControlFailed; a malformed answer is ControlFailed, never a crash", async () => {
  const dir = mkdtempSync(join(tmpdir(), "sbx-control-"));
  const path = join(dir, "control.sock");
  const controlFailed = (e: unknown) => isCodedError(e, "ControlFailed");
  try {
    const served = await serveControl(path, () => Promise.reject(new Error("disk on fire")));
    await assert.rejects(askSupervisor(path, { op: "status" }), controlFailed);
    served.close();
    const answers = [
      "not json",
      "null",
      JSON.stringify({ ok: false }),
      JSON.stringify({ ok: "yes", result: 1 }),
      // the form before errors crossed as {code, message, detail}: the code is not taken from it
      JSON.stringify({ ok: false, lib: "other", code: "Expired", message: "Expired: x" }),
      JSON.stringify({ ok: false, error: { code: "Expired", message: "x" } }),
      JSON.stringify({ ok: false, error: { code: "expired", message: "x", detail: {} } }),
    ];
    for (const [i, answer] of answers.entries()) {
      const at = join(dir, `fake-${String(i)}.sock`);
      const fake = await listen(at, (sock) => {
        sock.end(`${answer}\n`);
        fake.close();
      });
      await assert.rejects(askSupervisor(at, { op: "status" }), controlFailed, answer);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("close does not wait for a request still queued; a request whose turn comes after the ending is dropped unanswered", async () => {
  // The supervisor's ending (its last interval exited) and a request asked meanwhile are queued one
  // behind the other: close must not wait for the queued request (before, it waited for every
  // connection to end, and the request for the ending: both for ever). When its turn comes, the
  // request is dropped unanswered: a resume is asked again and then acts on the record, any other
  // is reported as ControlFailed.
  const dir = mkdtempSync(join(tmpdir(), "sbx-control-"));
  const path = join(dir, "control.sock");
  try {
    let turn!: () => void;
    const ended = new Promise<void>((r) => (turn = r));
    let asked = 0;
    let arrived!: () => void;
    const first = new Promise<void>((r) => (arrived = r));
    const served = await serveControl(path, async () => {
      asked++;
      arrived();
      await ended; // queued behind the ending
      throw new Unanswerable("the supervisor is ending");
    });
    const status = askSupervisor(path, { op: "status" });
    await first;
    served.close(); // returns at once, with the request still open
    turn();
    await assert.rejects(status, (e: unknown) => isCodedError(e, "ControlFailed"), "dropped: reported");
    // No longer listening: a resume finds no supervisor and is left to act on the record.
    assert.equal(await askSupervisor(path, { op: "resume" }), undefined);
    assert.equal(asked, 1);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
