// §13.13 Hostile run archives, one test per class: a signed member whose bytes are JSON null or not
// an envelope (`BadEnvelope`), an envelope's payload smuggled in as an extra plain object
// (`UnexpectedMember`), a refused import never creating the store, a `RecordExists` decided against
// the store before anything is written, and a 1 GiB archive read member by member (the importing
// process's max RSS asserted far below the input). Every input is generated here.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import {
  closeSync,
  existsSync,
  ftruncateSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
  statfsSync,
  writeFileSync,
  writeSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  addressOf,
  canonicalBytes,
  digestBytes,
  envelopeAddress,
  parseCanonical,
  testKey,
  utf8,
} from "@sbx/wire";
import type { Envelope } from "@sbx/wire";
import { openRunArchive, readArchive, writeArchive, type ArchiveMember } from "@sbx/host/archive";
import { FileStore } from "@sbx/host/store";
import { runCli } from "../src/main.ts";
import { fixtureRun } from "../../host/test/store/fixture-run.ts";
import { SBX } from "./lifecycle-helpers.ts";

const HOST = testKey("host").did;
const tmp = () => mkdtempSync(join(tmpdir(), "sbx-arh-"));

async function sbx(args: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runCli("sbx", args, { out: (l) => out.push(l), err: (l) => err.push(l) });
  return { code, out: out.join("\n"), err: err.join("\n") };
}

function codeOf(fn: () => unknown): string {
  try {
    fn();
  } catch (e) {
    const c = (e as { code?: unknown }).code;
    assert.equal(typeof c, "string", `not a coded refusal: ${String(e)}`);
    return c as string;
  }
  return "ok";
}

async function exported(): Promise<{ members: ArchiveMember[]; bytes: Buffer; id: string }> {
  const run = await fixtureRun();
  const id = run.store.recordIds()[0]!;
  const archive = join(tmp(), "run.tar");
  assert.equal((await sbx(["export", id, "--store", run.store.root, "--out", archive])).code, 0);
  const bytes = readFileSync(archive);
  return { members: readArchive(bytes, { maxMembers: 1000, maxMemberBytes: 1 << 24 }), bytes, id };
}

test("hostile archive: a signed member that is JSON null, a list, or an envelope with extra members is BadEnvelope", async () => {
  const { members } = await exported();
  const i = members.findIndex((m) => m.name.startsWith("signed/"));
  const env = parseCanonical(members[i]!.data) as unknown as Envelope;
  for (const data of [utf8("null"), utf8("[]"), canonicalBytes({ ...env, extra: { smuggled: true } })]) {
    const changed = members.map((m, k) => (k === i ? { name: m.name, data } : m));
    assert.equal(
      codeOf(() => openRunArchive(writeArchive(changed), [HOST])),
      "BadEnvelope",
    );
  }
  // And through the CLI: a coded refusal, exit 1, never a crash.
  const d = tmp();
  writeFileSync(
    join(d, "a.tar"),
    writeArchive(members.map((m, k) => (k === i ? { name: m.name, data: utf8("null") } : m))),
  );
  const r = await sbx(["import", join(d, "a.tar"), "--store", join(d, "s"), "--any-signer"]);
  assert.equal(r.code, 1, r.err);
  assert.match(r.err, /BadEnvelope/);
});

test("hostile archive: an envelope's payload smuggled in as an extra plain object is UnexpectedMember", async () => {
  const { members } = await exported();
  const signed = members.find((m) => m.name.startsWith("signed/"))!;
  const env = parseCanonical(signed.data) as unknown as Envelope;
  const payload = Buffer.from(env.payload, "base64");
  const address = envelopeAddress(env);
  assert.equal(digestBytes(payload), address, "the payload's address is the envelope's");
  const smuggled = { name: `objects/${address.slice("blake3:".length)}`, data: new Uint8Array(payload) };
  const at = members.findIndex((m) => m.name.startsWith("signed/"));
  const withExtra = [...members.slice(0, at), smuggled, ...members.slice(at)];
  assert.equal(
    codeOf(() => openRunArchive(writeArchive(withExtra), [HOST])),
    "UnexpectedMember",
  );
});

test("hostile archive: a refused import into a store that does not exist creates nothing", async () => {
  const { members } = await exported();
  const d = tmp();
  const bad = members.map((m) => (m.name.startsWith("record/") ? { name: m.name, data: utf8("x") } : m));
  writeFileSync(join(d, "bad.tar"), writeArchive(bad));
  const store = join(d, "new-store");
  const r = await sbx(["import", join(d, "bad.tar"), "--store", store, "--any-signer"]);
  assert.equal(r.code, 1, r.err);
  assert.equal(existsSync(store), false, "the store was created");
  const r2 = await sbx(["import", join(d, "bad.tar"), "--store", store, "--trust", testKey("other").did]);
  assert.notEqual(r2.code, 0);
  assert.equal(existsSync(store), false);
});

test("hostile archive: RecordExists against what the store holds writes nothing into it", async () => {
  const { bytes } = await exported();
  const d = tmp();
  // A store holding another record of the same id (same unit and grants: the same genesis).
  const s2 = join(d, "s2");
  const store = FileStore.open(s2, { create: true });
  const id = await store.createRecord(addressOf({ fixture: "unit" }), digestBytes(utf8("fixture-grants")));
  await store.appendSegment(id, id, { kind: "closed", at_ms: 5, outcome: "completed" });
  const list = (sub: string) =>
    existsSync(join(s2, sub)) ? readdirSync(join(s2, sub), { recursive: true }).sort() : [];
  const before = {
    signed: list("signed"),
    objects: list("objects"),
    records: readFileSync(store.recordPath(id)),
  };
  writeFileSync(join(d, "a.tar"), bytes);
  const r = await sbx(["import", join(d, "a.tar"), "--store", s2, "--trust", HOST]);
  assert.equal(r.code, 1, r.err);
  assert.match(r.err, /RecordExists/);
  assert.deepEqual(list("signed"), before.signed, "signed/ changed");
  assert.deepEqual(list("objects"), before.objects, "objects/ changed");
  assert.deepEqual(readFileSync(store.recordPath(id)), before.records);
});

test("hostile archive: a 1 GiB archive is read member by member: refused early, max RSS far below it", async () => {
  const { members } = await exported();
  const d = tmp();
  // The format member, then a member whose name is a path, 500 MiB long, in a sparse 1 GiB file.
  const head = writeArchive([members[0]!, { name: "../escape", data: new Uint8Array(0) }]);
  const hdr = Buffer.from(head.subarray(512, 1024));
  const size = 500 * 1024 * 1024;
  hdr.write(`${size.toString(8).padStart(11, "0")}\0`, 124, "latin1");
  hdr.fill(0x20, 148, 156);
  let sum = 0;
  for (const b of hdr) sum += b;
  hdr.write(`${sum.toString(8).padStart(6, "0")}\0 `, 148, "latin1");
  const path = join(d, "big.tar");
  const fd = openSync(path, "w");
  writeSync(fd, head.subarray(0, 512));
  writeSync(fd, hdr);
  ftruncateSync(fd, 1024 * 1024 * 1024);
  closeSync(fd);
  const r = spawnSync(
    "/usr/bin/time",
    ["-f", "%M", process.execPath, SBX, "import", path, "--store", join(d, "s"), "--any-signer"],
    {
      encoding: "utf8",
    },
  );
  assert.equal(r.status, 1, r.stderr);
  assert.match(r.stderr, /UnexpectedMember/);
  const lines = r.stderr.trim().split("\n");
  const maxRssKiB = Number(lines[lines.length - 1]);
  assert.ok(Number.isFinite(maxRssKiB) && maxRssKiB > 0, r.stderr);
  assert.ok(maxRssKiB < 256 * 1024, `max RSS ${maxRssKiB} KiB for a 1 GiB archive`);
  assert.equal(existsSync(join(d, "s")), false);
});

test("hostile archive: a record and signed members over 64 MiB in all are BadArchive, from the header", () => {
  const format = { name: "sandbox.runarchive/1", data: new Uint8Array(0) };
  const big = { name: `signed/${"a".repeat(64)}.json`, data: new Uint8Array(65 << 20) };
  const bytes = writeArchive([format, big]);
  let read = 0;
  const reader = (buf: Uint8Array): number => {
    const n = Math.min(buf.length, bytes.length - read);
    buf.set(bytes.subarray(read, read + n));
    read += n;
    return n;
  };
  assert.equal(
    codeOf(() => openRunArchive(reader, [HOST])),
    "BadArchive",
  );
  assert.equal(read, 1024, "refused before the member's content was read");
});

test("hostile archive: 384 MiB of objects that hash to their names is staged on disk, not held: max RSS bounded, nothing left", () => {
  const d = mkdtempSync(join("/var/tmp", "sbx-arh-"));
  try {
    // The format member, then four 96 MiB objects, each its own address, and no record: every
    // member is admitted and read before the archive is refused (ArchiveIncomplete) at its end.
    const path = join(d, "objects.tar");
    const fd = openSync(path, "w");
    writeSync(fd, writeArchive([{ name: "sandbox.runarchive/1", data: new Uint8Array(0) }]).subarray(0, 512));
    for (let i = 0; i < 4; i++) {
      const data = new Uint8Array(96 << 20).fill(i + 1);
      const one = writeArchive([{ name: `objects/${digestBytes(data).slice(7)}`, data }]);
      writeSync(fd, one.subarray(0, one.length - 1024));
    }
    writeSync(fd, new Uint8Array(1024));
    closeSync(fd);
    const staging = join(d, "tmp");
    mkdirSync(staging);
    const before = statfsSync(staging);
    const r = spawnSync(
      "/usr/bin/time",
      ["-f", "%M", process.execPath, SBX, "import", path, "--store", join(d, "s"), "--any-signer"],
      { encoding: "utf8", env: { ...process.env, TMPDIR: staging } },
    );
    assert.equal(r.status, 1, r.stderr);
    assert.match(r.stderr, /ArchiveIncomplete/);
    const maxRssKiB = Number(r.stderr.trim().split("\n").at(-1));
    assert.ok(Number.isFinite(maxRssKiB) && maxRssKiB > 0, r.stderr);
    assert.ok(maxRssKiB < 256 * 1024, `max RSS ${maxRssKiB} KiB for 384 MiB of objects`);
    // What was staged (a nameless file in $TMPDIR) is gone with the import.
    assert.deepEqual(readdirSync(staging), []);
    assert.equal(existsSync(join(d, "s")), false);
    const after = statfsSync(staging);
    assert.ok(before.bfree * before.bsize - after.bfree * after.bsize < 64 << 20, "the staging was freed");
    console.log(`384 MiB of objects: ArchiveIncomplete, max RSS ${maxRssKiB} KiB`);
  } finally {
    rmSync(d, { recursive: true, force: true });
  }
});
