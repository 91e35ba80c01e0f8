// The reference implementation against the committed JCP vectors (C11–C21: vectors/grants.json and
// vectors/standing.json), in process. `npm run conformance` runs these too; this file lets
// `npm run mutate -- jcp-grant` count a mutant of @sbx/jcp-grant that a vector catches as killed,
// since the unit tests under packages/jcp-grant/test do not restate every vector.
import { test } from "node:test";
import assert from "node:assert/strict";
import { inProcessAdapter } from "../src/adapter/inproc.ts";
import { loadClasses } from "../src/registry.ts";
import { runClass } from "../src/run.ts";

const JCP_FILES = new Set(["grants.json", "standing.json"]);

test("the reference passes every C11–C21 vector, none skipped", async () => {
  const all = await loadClasses();
  const jcp = all.filter((c) => JCP_FILES.has(c.file));
  assert.deepEqual(
    jcp.map((c) => c.id),
    ["C11", "C12", "C13", "C14", "C15", "C16", "C17", "C18", "C19", "C20", "C21"],
  );
  const adapter = inProcessAdapter(all);
  try {
    const caps = await adapter.capabilities();
    for (const c of jcp) {
      const t = await runClass(c, adapter, { live: true, caps });
      assert.deepEqual(t.failures, [], `${c.id}: ${t.failures.slice(0, 5).join("; ")}`);
      assert.equal(t.failed + t.skipped, 0, c.id);
      assert.ok(t.passed > 0, `${c.id} has no cases`);
    }
  } finally {
    await adapter.close();
  }
});
