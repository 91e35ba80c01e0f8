// `sbx run` limit flags as a user writes them (issue 29): --memory 512m, 1G, 1GiB (powers of 1024,
// as the manifest's 512mb), and --cpus above this host's CPU count refused with that count.
import { test } from "node:test";
import assert from "node:assert/strict";
import { availableParallelism } from "node:os";
import { runCli } from "../src/main.ts";
import { byteSizeOpt } from "../src/bytesize.ts";

async function sbx(argv: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runCli("sbx", argv, { out: (l) => out.push(l), err: (l) => err.push(l) });
  return { code, out: out.join("\n"), err: err.join("\n") };
}

test("byte sizes: plain bytes, k/m/g/t with b, ib or nothing, any case; anything else names the flag", () => {
  const cases: [string, number][] = [
    ["536870912", 536870912],
    ["512m", 512 * 2 ** 20],
    ["512mb", 512 * 2 ** 20],
    ["512MiB", 512 * 2 ** 20],
    ["1G", 2 ** 30],
    ["1GiB", 2 ** 30],
    ["2gb", 2 ** 31],
    ["64k", 65536],
  ];
  for (const [i, [v, want]] of cases.entries()) assert.equal(byteSizeOpt(v, "memory", 1), want, `#${i} ${v}`);
  for (const v of ["1.5G", "1 G", "G", "-1", "1GG", "1x", "", "0x10"])
    assert.throws(() => byteSizeOpt(v, "memory", 1), /--memory must be a size/, v);
  assert.throws(() => byteSizeOpt("1k", "memory", 1 << 20), /at least 1048576 bytes/);
});

test("sbx run --memory 512m is the limit the sandbox states", async () => {
  const r = await sbx(["run", "--memory", "512m", "--json", "--", "true"]);
  assert.equal(r.code, 0, r.err);
  const s = JSON.parse(r.out) as { sandbox: { limits: { memoryBytes: number } } };
  assert.equal(s.sandbox.limits.memoryBytes, 536870912);
});

test("sbx run --cpus above this host's CPUs is a usage error naming the host's count", async () => {
  const r = await sbx(["run", "--cpus", String(availableParallelism() + 1), "--", "true"]);
  assert.equal(r.code, 2, r.err);
  assert.match(r.err, new RegExp(`more than this host's ${String(availableParallelism())} CPUs`));
});
