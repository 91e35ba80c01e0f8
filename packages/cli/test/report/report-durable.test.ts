// Journals of a durable run made from the command line (issue 19, sandbox-attest §13.7.3): `sbx run
// --store` keeps each interval's journal in the store as the nodes of its tree, so `sbx report RUN`
// (no --journal) embeds every interval's events and the page's verification (checkRun, as the page
// runs it) finds and checks each one from the root the attestation signs. A node changed in the
// store is refused.
import { test } from "node:test";
import assert from "node:assert/strict";
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Digest } from "@sbx/wire";
import { FileStore } from "@sbx/host/store";
import { readStoredJournal } from "@sbx/sandbox-attest/journal";
import { unb64, type RunBundle } from "../../src/report/bundle.ts";
import { checkRun } from "../../src/report/verify.ts";
import { FINISH_AGENT, sbx, startAgentRun, workspaceWithAgent } from "../lifecycle-helpers.ts";

const DATA_OPEN = '<script type="application/json" id="sbx-data">';

function bundleOf(html: string): RunBundle {
  const i = html.indexOf(DATA_OPEN) + DATA_OPEN.length;
  return JSON.parse(html.slice(i, html.indexOf("</script>", i))) as RunBundle;
}

test("sbx run --store keeps every interval's journal; sbx report RUN shows and checks them without --journal", async () => {
  const dir = mkdtempSync(join("/var/tmp", "sbx-report-durable-"));
  try {
    const store = join(dir, "store");
    const ws = workspaceWithAgent(join(dir, "ws"));
    const id = await startAgentRun({ store, ws });
    const s = await sbx(["suspend", id, "--release", "--store", store]);
    assert.equal(s.code, 0, s.err);
    const ok = await sbx(["resume", id, "--store", store, ...FINISH_AGENT]);
    assert.equal(ok.code, 0, ok.err);
    const c = await sbx(["close", id, "--store", store]);
    assert.equal(c.code, 0, c.err);
    const host = FileStore.open(store).root;
    const key = join(host, "host-key.pem");
    const out = join(dir, "report.html");
    const rep = await sbx(["report", id, "--store", store, "--trust", key, "--out", out]);
    assert.equal(rep.code, 0, rep.err);
    const b = bundleOf(readFileSync(out, "utf8"));
    assert.deepEqual(b.journals, [], "no --journal given");
    const trust = b.trust;
    assert.equal(trust.length, 1);
    const check = checkRun(b, trust);
    assert.equal(check.valid && check.trusted, true, JSON.stringify(check.error));
    const intervals = [...check.intervals.values()];
    assert.equal(intervals.length, 2, "two executed intervals");
    const roots: Digest[] = [];
    for (const iv of intervals) {
      assert.ok(iv.events !== null && iv.predicate !== null, `interval ${iv.n} has its journal`);
      assert.equal(iv.events.length, iv.predicate.journal.events);
      assert.ok(iv.events.some((e) => e.type === "process.start"));
      assert.ok(
        iv.events.some((e) => e.type === "file.write"),
        "the agent's writes are journaled",
      );
      roots.push(iv.predicate.journal.root);
      const o = check.objects.find((x) => x.kind === "journal" && x.address === iv.predicate!.journal.root);
      assert.equal(o?.state, "valid");
      // The store alone gives the same events back.
      const fs = FileStore.open(store, { readOnly: true });
      const head = { size: iv.predicate.journal.events, root: iv.predicate.journal.root };
      assert.deepEqual(
        readStoredJournal(head, (a) => fs.getObjectSync(a)),
        iv.events,
      );
    }
    // A byte of a stored node changed: the report of the run refuses that journal with the code.
    const fs = FileStore.open(store);
    const path = fs.objectPath(roots[1]!);
    const bytes = readFileSync(path);
    bytes[0] = bytes[0]! ^ 0x01;
    chmodSync(path, 0o644);
    writeFileSync(path, bytes);
    const out2 = join(dir, "report2.html");
    assert.equal((await sbx(["report", id, "--store", store, "--trust", key, "--out", out2])).code, 0);
    const bad = checkRun(bundleOf(readFileSync(out2, "utf8")), trust);
    assert.equal(bad.valid, false);
    assert.equal(bad.error?.code, "ObjectMismatch");
    assert.equal(bad.objects.find((x) => x.address === roots[1])?.state, "invalid");
    assert.notEqual(unb64(bundleOf(readFileSync(out2, "utf8")).objects[roots[1]!]), null);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
