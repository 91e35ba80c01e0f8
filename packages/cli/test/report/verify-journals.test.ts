// `sbx verify` reads stored journals (sandbox-attest §13.7.3 item 6): a durable run keeps each
// interval's journal as the nodes of its tree, and a verifier walks every one after its other checks.
// A node changed or taken away in the file store is refused by `sbx verify` (exit 1) with the same
// code the report page gives (checkRun on what `sbx report` embeds): `ObjectMismatch` for a changed
// byte, `ObjectMissing` for a node deleted below the root and, failing closed, for one interval's
// whole journal taken away while the other's is kept. With no journal kept at all the run stays
// VALID (journals were never kept) and the count of journals checked says so.
import { test } from "node:test";
import assert from "node:assert/strict";
import { chmodSync, cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { formatDigest, type Digest } from "@sbx/wire";
import { FileStore } from "@sbx/host/store";
import { runCli } from "../../src/main.ts";
import type { RunBundle } from "../../src/report/bundle.ts";
import { checkRun } from "../../src/report/verify.ts";
import { durableRun, HOST } from "./durable-run.ts";

const DATA_OPEN = '<script type="application/json" id="sbx-data">';

async function sbx(args: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runCli("sbx", args, { out: (l) => out.push(l), err: (l) => err.push(l) });
  return { code, out: out.join("\n"), err: err.join("\n") };
}

interface Verdicts {
  readonly cli: { code: number; valid: boolean; error: string | null; journals: number; events: number };
  readonly page: { valid: boolean; error: string | null };
}

/** verdicts runs `sbx verify RUN --store` and the page's verification of `sbx report RUN`. */
async function verdicts(store: string, id: Digest): Promise<Verdicts> {
  const v = await sbx(["verify", id, "--store", store, "--trust", HOST.did, "--json"]);
  assert.ok(v.code === 0 || v.code === 1, v.err);
  const j = JSON.parse(v.out) as {
    valid: boolean;
    error: { code: string } | null;
    checked: { journals: number; events: number };
  };
  const out = join(store, "..", "report.html");
  const r = await sbx(["report", id, "--store", store, "--trust", HOST.did, "--out", out]);
  assert.equal(r.code, 0, r.err);
  const html = readFileSync(out, "utf8");
  const i = html.indexOf(DATA_OPEN) + DATA_OPEN.length;
  const b = JSON.parse(html.slice(i, html.indexOf("</script>", i))) as RunBundle;
  const page = checkRun(b, [HOST.did]);
  return {
    cli: {
      code: v.code,
      valid: j.valid,
      error: j.error?.code ?? null,
      journals: j.checked.journals,
      events: j.checked.events,
    },
    page: { valid: page.valid, error: page.error?.code ?? null },
  };
}

/** A node of the journal below its root (the root's left child): the journal has 2+ events. */
function childOf(store: FileStore, root: Digest): Digest {
  const bytes = store.getObjectSync(root)!;
  assert.equal(bytes[0], 0x01, "the journal's root is an interior node");
  return formatDigest(bytes.slice(1, 33));
}

test("sbx verify walks every stored journal and gives the page's code for a changed or missing node", async () => {
  const run = await durableRun();
  const work = mkdtempSync(join(run.dir, "cases-"));
  // Each case works on its own copy of the run's store.
  let n = 0;
  const copy = () => {
    const dir = join(work, String(n++));
    cpSync(join(run.dir, "store"), join(dir, "store"), { recursive: true });
    return { root: join(dir, "store"), store: FileStore.open(join(dir, "store")) };
  };
  try {
    const intact = await verdicts(copy().root, run.id);
    assert.equal(intact.cli.code, 0);
    assert.equal(intact.cli.valid, true);
    assert.equal(intact.cli.journals, 2, "both intervals' journals walked");
    assert.ok(intact.cli.events >= 4, `events checked: ${String(intact.cli.events)}`);
    assert.deepEqual(intact.page, { valid: true, error: null });
    const text = await sbx(["verify", run.id, "--store", join(work, "0", "store"), "--trust", HOST.did]);
    assert.match(text.out, /2 journals \(\d+ events\)/);

    const flip = (store: FileStore, a: Digest) => {
      const path = store.objectPath(a);
      const bytes = readFileSync(path);
      bytes[bytes.length - 1] = bytes[bytes.length - 1]! ^ 0x01;
      chmodSync(path, 0o644);
      writeFileSync(path, bytes);
    };
    const cases: [string, (s: FileStore) => void, string][] = [
      ["a byte of interval 2's root node", (s) => flip(s, run.journalRoots[1]!), "ObjectMismatch"],
      [
        "a byte of a node below interval 1's root",
        (s) => flip(s, childOf(s, run.journalRoots[0]!)),
        "ObjectMismatch",
      ],
      [
        "a node below interval 1's root deleted",
        (s) => rmSync(s.objectPath(childOf(s, run.journalRoots[0]!))),
        "ObjectMissing",
      ],
      [
        "interval 2's whole journal root deleted, interval 1's kept",
        (s) => rmSync(s.objectPath(run.journalRoots[1]!)),
        "ObjectMissing",
      ],
    ];
    for (const [what, change, code] of cases) {
      const c = copy();
      change(c.store);
      const got = await verdicts(c.root, run.id);
      assert.equal(got.cli.code, 1, `${what}: sbx verify exit 1`);
      assert.equal(got.cli.error, code, `${what}: sbx verify's code`);
      assert.deepEqual(got.page, { valid: false, error: code }, `${what}: the page gives the same code`);
      // The record-file form of the command gives the same verdict.
      const byFile = await sbx(["verify", c.store.recordPath(run.id), "--trust", HOST.did]);
      assert.equal(byFile.code, 1);
      assert.match(byFile.out, new RegExp(`verdict: INVALID  ${code}`));
    }

    // No journal kept at all (both roots gone): the journals were never kept; the run is VALID and
    // the count says none was checked.
    const none = copy();
    for (const r of run.journalRoots) rmSync(none.store.objectPath(r));
    const got = await verdicts(none.root, run.id);
    assert.equal(got.cli.code, 0);
    assert.equal(got.cli.journals, 0);
    assert.deepEqual(got.page, { valid: true, error: null });
  } finally {
    rmSync(run.dir, { recursive: true, force: true });
  }
});
