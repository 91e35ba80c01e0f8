// §13.7 A host's view of the PostgreSQL store shared by many hosts, as the lifecycle commands use it:
// run records, signed objects and objects live in PostgreSQL (every append is the database's
// compare-and-append, so of several hosts exactly one extends a head); what is host-local — the
// run's lock and live state, the host key, the free space offered — lives under `root`, and a
// host-local file store (`local`, under root/pg/<database tag>) is the staging area snapshots are
// taken into and restored from.
//
// Snapshots: a workspace is snapshotted into `local` by the hardened walk (../snapshot), then every
// object of the tree the database lacks is streamed up (pushTree: one lookup for the whole tree,
// children before their directory, each upload refused unless its bytes hash to the address it was
// sent for, `ObjectMismatch`). A resume on another host streams the tree down (pullTree: every chunk
// and every object verified on the way out of the database, and again by address when it lands in
// `local`), then restores it from `local` with the same object-by-object check as the file store.
//
// `sbx export` mirrors a run into `local` (mirrorRun; `runs`, `show`, `verify RUN` and `report RUN`
// read the database directly, runview.ts): the
// record's bytes, verified from genesis by the database reader, and every object verification asks
// for; then the file store's own verification runs on the mirror, so nothing is trusted because it
// came from the database.
import { createReadStream, existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { open } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  bytesEqual,
  digestBytes,
  envelopeAddress,
  formatDigest,
  parseDigest,
  toHex,
  utf8,
  type Digest,
  type Envelope,
} from "@sbx/wire";
import { decodeRecord, parseFsDir, SandboxAttestError, type Segment } from "@sbx/sandbox-attest/runrecord";
import { verifyRun, type RunObjects, type Store } from "@sbx/sandbox-attest/store";
import { unitCitesOf } from "../durable/cited.ts";
import { FileStore } from "../store/filestore.ts";
import { recordPaths } from "../store/records.ts";
import { CHUNK_BYTES } from "./objects.ts";
import { redactUrl, withRetry, type PgOptions } from "./conn.ts";
import { PgStore } from "./pgstore.ts";

/** What a tree transfer moved. */
export interface TreeTransfer {
  /** Objects of the tree (directories, files, link targets, each address once). */
  readonly objects: number;
  /** Objects sent or fetched (the others were there already). */
  readonly moved: number;
  /** Bytes of the objects moved. */
  readonly bytes: number;
}

interface TreeNode {
  readonly address: Digest;
  readonly dir: boolean;
}

/** How many passes mirrorRun makes: each fetches what the previous verification found missing. */
const MIRROR_PASSES = 8;

/** The tag of a database in local paths: the connection string without its password, hashed. */
function databaseTag(url: string): string {
  return toHex(parseDigest(digestBytes(utf8(redactUrl(url))))).slice(0, 16);
}

/** SharedRunStore: see the file comment. Open with SharedRunStore.open; close when done. */
export class SharedRunStore implements Store {
  readonly pg: PgStore;
  readonly local: FileStore;
  /** The host-local folder: live state, host key, free space offered. */
  readonly root: string;

  private constructor(pg: PgStore, local: FileStore, root: string) {
    this.pg = pg;
    this.local = local;
    this.root = root;
  }

  /** open connects to `url` (see PgStore.open for its codes) with host-local state under `root`. */
  static async open(url: string, root: string, opts: PgOptions = {}): Promise<SharedRunStore> {
    mkdirSync(root, { recursive: true, mode: 0o700 });
    const local = FileStore.open(join(root, "pg", databaseTag(url)), { create: true });
    return new SharedRunStore(await PgStore.open(url, opts), local, root);
  }

  /** The connection string (with its password). */
  get url(): string {
    return this.pg.url;
  }

  close(): Promise<void> {
    return this.pg.close();
  }

  // ---- Store, all in the database

  putObject(bytes: Uint8Array): Promise<Digest> {
    return this.pg.putObject(bytes);
  }
  getObject(address: Digest): Promise<Uint8Array | null> {
    return this.pg.getObject(address);
  }
  hasObject(address: Digest): Promise<boolean> {
    return this.pg.hasObject(address);
  }
  putSigned(env: Envelope): Promise<Digest> {
    return this.pg.putSigned(env);
  }
  getSigned(address: Digest): Promise<unknown> {
    return this.pg.getSigned(address);
  }
  createRecord(unitId: Digest, grantsId: Digest): Promise<Digest> {
    return this.pg.createRecord(unitId, grantsId);
  }
  readRecordBytes(id: Digest): Promise<Uint8Array | null> {
    return this.pg.readRecordBytes(id);
  }
  appendSegment(id: Digest, expectedHead: Digest, segment: Segment): Promise<Digest> {
    return this.pg.appendSegment(id, expectedHead, segment);
  }
  /** recordIds lists the id of every record in the database, sorted. */
  recordIds(): Promise<Digest[]> {
    return this.pg.listRecords();
  }

  // ---- snapshot trees

  /** The tree under `fsRoot` as `local` holds it, children before their directory (`ObjectMissing`). */
  #localTree(fsRoot: Digest): TreeNode[] {
    const out: TreeNode[] = [];
    const seen = new Set<Digest>();
    const visit = (a: Digest) => {
      if (seen.has(a)) return;
      seen.add(a);
      const bytes = this.local.getObjectSync(a);
      if (bytes === null)
        throw new SandboxAttestError("ObjectMissing", `directory ${a} is not in the local store`);
      for (const e of parseFsDir(bytes).entries) {
        if (e.kind === "dir") visit(e.digest);
        else if (!seen.has(e.digest)) {
          seen.add(e.digest);
          out.push({ address: e.digest, dir: false });
        }
      }
      out.push({ address: a, dir: true });
    };
    visit(fsRoot);
    return out;
  }

  async #present(addresses: readonly Digest[]): Promise<Set<Digest>> {
    const have = new Set<Digest>();
    for (let i = 0; i < addresses.length; i += 5000) {
      const batch = addresses.slice(i, i + 5000).map((a) => Buffer.from(parseDigest(a)));
      const r = await withRetry("object lookup", this.pg.retryMs, () =>
        this.pg.pool.query<{ a: Buffer }>("SELECT address AS a FROM sbx_objects WHERE address = ANY($1)", [
          batch,
        ]),
      );
      for (const row of r.rows) have.add(formatDigest(new Uint8Array(row.a)));
    }
    return have;
  }

  /**
   * pushTree streams every object of the snapshot `fsRoot` (taken into `local`) that the database
   * lacks, children before their directory; each upload must hash to its address (`ObjectMismatch`).
   */
  async pushTree(fsRoot: Digest): Promise<TreeTransfer> {
    const nodes = this.#localTree(fsRoot);
    const have = await this.#present(nodes.map((n) => n.address));
    let moved = 0;
    let bytes = 0;
    for (const n of nodes) {
      if (have.has(n.address)) continue;
      const src = createReadStream(this.local.objectPath(n.address), { highWaterMark: CHUNK_BYTES });
      bytes += (await this.pg.putObjectStream(src, n.address)).size;
      moved++;
    }
    return { objects: nodes.length, moved, bytes };
  }

  /** #fetch streams object `a` from the database into `local`, verified both ways; its size. */
  async #fetch(a: Digest, what: string, size?: bigint): Promise<number> {
    const src = await this.pg.getObjectStream(a, size);
    if (src === null)
      throw new SandboxAttestError("ObjectMissing", `object ${a} (${what}) is not in the store`);
    const tmp = mkdtempSync(join(tmpdir(), "sbx-pull-"));
    try {
      const fh = await open(join(tmp, "o"), "wx", 0o600);
      try {
        for await (const c of src) await fh.write(c);
        await fh.sync();
      } finally {
        await fh.close();
      }
      const { address, size } = this.local.putFileSync(join(tmp, "o"), true);
      if (address !== a) throw new SandboxAttestError("ObjectMismatch", `object ${a} arrived as ${address}`);
      return size;
    } finally {
      rmSync(tmp, { recursive: true, force: true });
    }
  }

  /**
   * pullTree streams the snapshot `fsRoot` from the database into `local` (what `local` holds
   * already is kept: a restore checks every object against its entry again). `ObjectMissing` when
   * the database lacks an object of it, `ObjectMismatch`/`StoreCorrupt` when one does not verify,
   * `BadFsTree` for a malformed directory.
   */
  async pullTree(fsRoot: Digest): Promise<TreeTransfer> {
    const seen = new Set<Digest>();
    let moved = 0;
    let bytes = 0;
    const visit = async (a: Digest, path: string): Promise<void> => {
      seen.add(a);
      let dir = this.local.getObjectSync(a);
      if (dir === null) {
        bytes += await this.#fetch(a, path || "/");
        moved++;
        dir = this.local.getObjectSync(a);
        if (dir === null) throw new SandboxAttestError("ObjectMissing", `directory ${a} vanished locally`);
      }
      for (const e of parseFsDir(dir).entries) {
        if (seen.has(e.digest)) continue;
        if (e.kind === "dir") await visit(e.digest, `${path}/${e.name}`);
        else {
          seen.add(e.digest);
          if (existsSync(this.local.objectPath(e.digest))) continue;
          bytes += await this.#fetch(e.digest, `${path}/${e.name}`, BigInt(e.size)); // its verified size
          moved++;
        }
      }
    };
    try {
      await visit(fsRoot, "");
    } finally {
      this.local.syncPending();
    }
    return { objects: seen.size, moved, bytes };
  }

  // ---- readers

  /**
   * mirrorRun copies run `id` into `local`: the record's bytes as the database reader verified them
   * (`RecordMissing` when there is none) and every object its verification asks for that the
   * database holds. Returns the record's bytes. What the database lacks stays missing, for the
   * verification that follows to report.
   */
  async mirrorRun(id: Digest): Promise<Uint8Array> {
    const bytes = await this.pg.readRecordBytes(id);
    if (bytes === null) throw new SandboxAttestError("RecordMissing", `no record ${id} in the store`);
    const tried = new Set<Digest>();
    for (let pass = 0; pass < MIRROR_PASSES; pass++) {
      const want = new Set<Digest>();
      const wantSigned = new Set<Digest>();
      const objs: RunObjects = {
        getObject: (a) => {
          const b = this.local.getObjectSync(a);
          if (b === null) want.add(a);
          return b;
        },
        getSigned: (a) => {
          const s = this.local.getSignedSync(a);
          if (s === null) wantSigned.add(a);
          return s;
        },
        checkLeaf: (a) => {
          if (!existsSync(this.local.objectPath(a))) want.add(a);
        },
      };
      verifyRun(bytes, objs, { expectId: id });
      let got = 0;
      for (const a of wantSigned) {
        if (tried.has(a)) continue;
        tried.add(a);
        const env = (await this.pg.getSigned(a)) as Envelope | null;
        if (env === null) continue;
        if (envelopeAddress(env) !== a)
          throw new SandboxAttestError("ObjectMismatch", `signed object ${a} has another payload address`);
        await this.local.putSigned(env);
        got++;
      }
      for (const a of want) {
        if (tried.has(a)) continue;
        tried.add(a);
        if (!(await this.pg.hasObject(a))) continue;
        await this.#fetch(a, "referenced by the run");
        got++;
        got += await this.#fetchBelow(a, tried);
      }
      this.local.syncPending();
      if (got === 0) break;
    }
    await this.#mirrorUnit(bytes, tried);
    this.#publishMirror(id, bytes);
    return bytes;
  }

  // The unit descriptor (the record's unit id) and what its labels name (durable/cited.ts), which an
  // archive carries beside the run for a host that resumes it (§13.13); each fetched only when held.
  async #mirrorUnit(bytes: Uint8Array, tried: Set<Digest>): Promise<void> {
    const unit = decodeRecord(bytes).record.unitId;
    for (const a of [unit, ...unitCitesOf(await this.pg.getObject(unit))]) {
      if (tried.has(a) || this.local.getObjectSync(a) !== null || !(await this.pg.hasObject(a))) continue;
      tried.add(a);
      await this.#fetch(a, "named by the run's unit");
    }
    this.local.syncPending();
  }

  // What a fetched object names that the next verification would ask for one at a time: a journal's
  // interior node (§13.7.3: 65 bytes, 0x01 ‖ left ‖ right) names two nodes, a snapshot directory its
  // subdirectories (verifyRun stops at the first absent one, so one pass per node or directory would
  // be needed, and MIRROR_PASSES ran out on a workspace of ten directories). They are fetched in the
  // same pass; only a hint: every object is checked by the next pass.
  async #fetchBelow(a: Digest, tried: Set<Digest>): Promise<number> {
    let got = 0;
    const queue = [a];
    for (let x = queue.pop(); x !== undefined; x = queue.pop()) {
      const b = this.local.getObjectSync(x);
      if (b === null) continue;
      const below: Digest[] = [];
      if (b.length === 65 && b[0] === 0x01)
        below.push(formatDigest(b.slice(1, 33)), formatDigest(b.slice(33, 65)));
      else if (b[0] === 0x7b)
        try {
          for (const e of parseFsDir(b).entries) if (e.kind === "dir") below.push(e.digest);
        } catch {
          // not a directory: names nothing
        }
      for (const c of below) {
        if (tried.has(c) || existsSync(this.local.objectPath(c))) continue;
        tried.add(c);
        if (!(await this.pg.hasObject(c))) continue;
        await this.#fetch(c, "named by a fetched object");
        got++;
        queue.push(c);
      }
    }
    return got;
  }

  // The mirror's record file is replaced by the database's bytes when they differ (the mirror is a
  // cache this host alone writes; the database is where the record lives).
  #publishMirror(id: Digest, bytes: Uint8Array): void {
    const { file, claims } = recordPaths(this.local.root, id);
    if (existsSync(file)) {
      let held: Uint8Array | null = null;
      try {
        held = this.local.readRunSync(id).bytes;
      } catch {
        // a damaged cache copy: replaced below
      }
      if (held !== null && bytesEqual(held, bytes)) return;
      rmSync(file, { force: true });
      rmSync(claims, { recursive: true, force: true });
    }
    this.local.importRecordSync(id, bytes);
  }
}
