// Helpers of the id-rule tests (issue 29): a run store holding runs two of which share their first hex
// digit (an ambiguous prefix), and the refusals `sbx show` gives, which every command taking RUN must
// give word for word.
import assert from "node:assert/strict";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Digest } from "@sbx/wire";
import { runCli } from "../src/main.ts";

/** sbx runs the command line in this process. */
export async function sbx(argv: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runCli("sbx", argv, { out: (l) => out.push(l), err: (l) => err.push(l) });
  return { code, out: out.join("\n"), err: err.join("\n") };
}

/** A file run store with `ids`; `shared` is a first hex digit two of them begin with. */
export interface Runs {
  readonly store: string;
  readonly ids: Digest[];
  readonly shared: string;
  /** An 8-digit prefix no run begins with. */
  readonly unknown: string;
}

/** runsSharingADigit makes quick runs until two ids share their first hex digit (at most 17). */
export async function runsSharingADigit(): Promise<Runs> {
  const store = mkdtempSync(join(tmpdir(), "sbx-idrule-"));
  const ids: Digest[] = [];
  for (;;) {
    const r = await sbx(["run", "--store", store, "--", "true"]);
    assert.equal(r.code, 0, r.err);
    const id = /run (blake3:[0-9a-f]{64})/.exec(r.out)?.[1] as Digest | undefined;
    assert.ok(id !== undefined, r.out);
    const shared = ids.find((x) => x[7] === id[7]);
    ids.push(id);
    if (shared !== undefined) {
      let n = 0;
      while (ids.some((x) => x.startsWith(`blake3:${n.toString(16).padStart(8, "0")}`))) n++;
      return { store, ids, shared: id[7]!, unknown: `blake3:${n.toString(16).padStart(8, "0")}` };
    }
  }
}

/** The refusals of `sbx show` on store `store` (a folder or a postgres:// URL) for these runs. */
export async function showRefusals(runs: Runs, store: string) {
  const ambiguous = await sbx(["show", `blake3:${runs.shared}`, "--store", store]);
  const unknown = await sbx(["show", runs.unknown, "--store", store]);
  assert.equal(ambiguous.code, 2, ambiguous.err);
  assert.match(
    ambiguous.err,
    /^sbx show: RunAmbiguous: blake3:[0-9a-f] names [0-9]+ runs: give more of the id$/,
  );
  assert.equal(unknown.code, 2, unknown.err);
  assert.match(unknown.err, /^sbx show: RunNotFound: no run blake3:[0-9a-f]{8} in /);
  return { ambiguous, unknown };
}

/**
 * assertLikeShow checks that `cmd` (its further arguments `more`) takes a unique prefix of a run
 * and refuses an ambiguous and an unknown one as `sbx show` does: the same line, code and exit.
 */
export async function assertLikeShow(cmd: string, more: string[], runs: Runs, store: string): Promise<void> {
  const like = await showRefusals(runs, store);
  const id = runs.ids[0]!;
  for (const prefix of [id.slice(0, 19), id.slice(7, 15)]) {
    const ok = await sbx([cmd, prefix, "--store", store, ...more]);
    assert.equal(ok.code, 0, `${cmd} ${prefix}: ${ok.err}`);
  }
  for (const [ref, shown] of [
    [`blake3:${runs.shared}`, like.ambiguous],
    [runs.unknown, like.unknown],
  ] as const) {
    const r = await sbx([cmd, ref, "--store", store, ...more]);
    assert.equal(r.code, shown.code, `${cmd} ${ref}: ${r.err}`);
    assert.equal(r.err, shown.err.replace(/^sbx show: /, `sbx ${cmd}: `), `${cmd} ${ref}`);
    assert.equal(r.out, "", `${cmd} ${ref}`);
  }
}
