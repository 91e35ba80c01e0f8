// §13.8 limits enforced at snapshot time, before any segment can cite the snapshot: a tree nested
// deeper than MAX_TREE_DEPTH is TreeTooDeep (a resume could never walk it).
import { test } from "node:test";
import assert from "node:assert/strict";
import { closeSync, existsSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { MAX_TREE_DEPTH } from "@sbx/sandbox-attest/runrecord";
import { isHostError } from "../../src/errors.ts";
import { FileStore } from "../../src/store/index.ts";
import { snapshotDir } from "../../src/snapshot/index.ts";
import { mkdirAt, openRoot } from "../../src/fsat/index.ts";

const scratch = existsSync("/dev/shm") ? "/dev/shm" : tmpdir();

test("a tree one level deeper than MAX_TREE_DEPTH is refused at snapshot time (TreeTooDeep)", () => {
  const ws = mkdtempSync(join(scratch, "sbx-toodeep-"));
  const fds = [openRoot(ws)];
  for (let i = 0; i <= MAX_TREE_DEPTH; i++) fds.push(mkdirAt(fds.at(-1)!, "d", 0o755));
  for (const fd of fds) closeSync(fd);
  const store = FileStore.open(mkdtempSync(join(scratch, "sbx-st-")), { create: true });
  assert.throws(
    () => snapshotDir(store, ws),
    (e) => isHostError(e, "TreeTooDeep"),
  );
});
