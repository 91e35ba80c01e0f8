// `sbx pool …`: warm pools (§15) — create a pool of real pre-provisioned sandboxes from a manifest,
// list them with their accrued energy, claim one into a run (optionally running the run's first
// interval in it), evict, close, and verify the signed ledger.
import { join } from "node:path";
import { mkdirSync } from "node:fs";
import { isDigest, parseStrict, type Digest, type JsonObject } from "@sbx/wire";
import { weakestProvenance } from "@sbx/sandbox-attest/energy";
import {
  ingestManifest,
  parsePinnedImage,
  verifyManifest,
  type Manifest,
} from "@sbx/sandbox-attest/manifest";
import { EVICTION_REASONS, verifyLedger, type EvictionReason } from "@sbx/sandbox-attest/warmpool";
import {
  checkClaimGrant,
  claimAndRun,
  claimPoolItemOn,
  CLAIM_WORKSPACE,
  closePoolOn,
  createPoolDir,
  destroyPoolDir,
  evictPoolItemOn,
  listPoolOn,
  runClaimed,
  type Claimed,
  type ClaimRunResult,
  type ParkOptions,
  type PoolLedger,
} from "@sbx/host/pool";
import type { Limits } from "@sbx/host/sandbox";
import { withManifestImage } from "../../images.ts";
import {
  EXIT,
  parseOptions,
  printJson,
  UsageError,
  writeBytes,
  type Command,
  type Io,
} from "../../command.ts";
import { readKey } from "@sbx/host/keys";
import { byteSizeOpt } from "../../bytesize.ts";
import { poolsDir, poolStoreDir, withPoolLedger } from "@sbx/host/stores";
import { hostKeyOf } from "@sbx/host/durable";
import { GRANT_HELP, GRANT_OPTIONS, prepareGrantRun } from "../../flags/grant.ts";
import { MAX_JSON_BYTES, readInput } from "@sbx/host/files";
import { TRUST_HELP, TRUST_OPTIONS, trustOf, verdict } from "../../trust.ts";

const EXITS = "exit: 0 ok / valid, 1 refused (a §15 code), 2 usage error or unusable input";

/** joules writes microjoules as joules with six decimals. */
function joules(uj: string | bigint): string {
  const n = BigInt(uj);
  return `${n / 1_000_000n}.${(n % 1_000_000n).toString().padStart(6, "0")} J`;
}

/** The pool's manifest: an address (nothing more known), a signed manifest, or a devcontainer.json. */
function manifestOf(arg: string): { address: Digest; manifest: Manifest | null } {
  if (isDigest(arg)) return { address: arg, manifest: null };
  const bytes = readInput(arg, "manifest", MAX_JSON_BYTES);
  let env: unknown = null;
  try {
    env = parseStrict(bytes);
  } catch {
    /* not a signed manifest: read it as devcontainer.json */
  }
  const m =
    typeof env === "object" && env !== null && "payloadType" in env
      ? verifyManifest(env).manifest
      : ingestManifest(bytes);
  return { address: m.address, manifest: m };
}

/**
 * parkedOn (§15.3, §14.9.5): the items' sandbox as `sbx run --manifest` builds it: a manifest that
 * pins an image gives the image's verified rootfs as the system, with its env, user, workspace
 * folder and hostRequirements as limits (flags stay, each at least the requirement).
 */
function parkedOn(
  m: Manifest | null,
  base: { limits: Partial<Limits>; user?: string },
  images: string | undefined,
  store: string | undefined,
): ParkOptions {
  if (m === null || parsePinnedImage(m.environment.image) === null) return base;
  if (base.user !== undefined)
    throw new UsageError("--manifest FILE with an image names the user: no --user");
  const r = withManifestImage({ workspace: "", limits: base.limits }, m, images, store);
  const s = r.sandbox;
  return {
    ...(s.limits ? { limits: s.limits } : {}),
    ...(s.user !== undefined ? { user: s.user } : {}),
    ...(s.env ? { env: s.env } : {}),
    ...(s.workspaceFolder !== undefined ? { workspaceFolder: s.workspaceFolder } : {}),
    ...(s.workspaceBytes !== undefined ? { workspaceBytes: s.workspaceBytes } : {}),
    imageRootfs: { rootfs: r.rootfs.dir, tree: r.rootfs.tree, hex: r.rootfs.manifestHex },
  };
}

function dirArg(positionals: readonly string[]): string {
  const d = positionals[0];
  if (d === undefined) throw new UsageError("the pool directory is required");
  return d;
}

/** The flags that name a pool in the run store (`--pool NAME [--store DIR]`) instead of a DIR. */
const WHERE = { pool: { type: "string" }, store: { type: "string" } } as const;
const WHERE_HELP = `  DIR | --pool NAME   the pool's folder, or pool NAME in the run store (<store>/pools/NAME)
  --store DIR|URL     the run store (default ~/.local/share/sbx, or $SBX_STORE). With a PostgreSQL
                      store (postgres://…) the pool's ledger is the log pool/<pool_id> in that
                      database (§15.7.1), and its folder stays on this host: --pool NAME is then
                      <local>/pools/NAME, <local> being $SBX_LOCAL_DIR, else ~/.local/share/sbx
                      (or $XDG_DATA_HOME/sbx). A pool whose ledger is in the other kind of store is
                      refused (PoolLedgerElsewhere).`;

/** poolWhere: the pool folder (DIR, else <store>/pools/NAME), and the folder its default key lives in. */
function poolWhere(
  values: { pool?: string | undefined; store?: string | undefined },
  positionals: readonly string[],
): { dir: string; store: string; given: string | undefined; rest: string[] } {
  const store = poolStoreDir(values.store);
  const given = values.store;
  if (values.pool !== undefined) {
    if (!/^[A-Za-z0-9._-]{1,64}$/.test(values.pool) || values.pool.startsWith("."))
      throw new UsageError("--pool NAME: letters, digits, . _ - (at most 64)");
    return { dir: join(poolsDir(values.store), values.pool), store, given, rest: [...positionals] };
  }
  return { dir: dirArg(positionals), store, given, rest: positionals.slice(1) };
}

function limitInt(v: string | undefined, name: string, min: number): number | undefined {
  if (v === undefined) return undefined;
  const n = Number(v);
  if (!/^\d{1,15}$/.test(v) || !Number.isSafeInteger(n) || n < min)
    throw new UsageError(`--${name} must be an integer ≥ ${String(min)}`);
  return n;
}

function digestOpt(v: string | undefined, name: string): Digest {
  if (!isDigest(v)) throw new UsageError(`--${name} must be a blake3:<hex> digest`);
  return v;
}

const create: Command = {
  name: "pool create",
  summary: "create a warm pool of N real S1 sandboxes, parked frozen, from a manifest",
  help: `usage: sbx pool create (DIR | --pool NAME) --manifest ADDR|FILE (-n N | --size N) [--key KEYFILE]
                       [--user NAME] [--memory BYTES] [--cpus N] [--pids N] [--name NAME]
                       [--no-sandbox [--no-idle]] [--json]
  Creates a pool: a signed descriptor, then N items. Each item is the sandbox \`sbx run\` builds
  (bubblewrap via the launcher, its cgroup with limits, seccomp, the generated /etc, the workspace
  mounted), started with a small waiter as its command and parked frozen by the cgroup freezer once
  the waiter waits at its hand-off; the kernel's report that it is frozen is checked. Each item is
  recorded in the signed ledger with the energy its provisioning took (§15.3).
${WHERE_HELP}
  --manifest   a manifest address, a devcontainer.json, or a signed manifest envelope (§14); one
               that pins an image (sbx manifest pin) builds every item on the image's verified
               rootfs with its env, user and workspace folder, exactly as sbx run --manifest does
  --images DIR the image store (default: images/ in the run store)
  -n, --size N how many items to provision
  --key        the host key file that signs the ledger (default: the store's host key)
  --user, --memory, --cpus, --pids   the sandboxes' user inside and limits, as for sbx run
  --no-sandbox items are a workspace and a stopped idle process (the older, cold kind);
               --no-idle then leaves out the process too
${EXITS}`,
  async run(args, io) {
    const { values, positionals } = parseOptions(args, {
      manifest: { type: "string" },
      size: { type: "string", short: "n" },
      key: { type: "string" },
      name: { type: "string" },
      user: { type: "string" },
      memory: { type: "string" },
      cpus: { type: "string" },
      pids: { type: "string" },
      "no-sandbox": { type: "boolean" },
      "no-idle": { type: "boolean" },
      images: { type: "string" },
      json: { type: "boolean" },
      ...GRANT_OPTIONS,
      ...WHERE,
    });
    const size = Number(values.size);
    if (!values.manifest || values.size === undefined || !Number.isSafeInteger(size) || size < 0)
      throw new UsageError("--manifest and -n N are required");
    const where = poolWhere(values, positionals);
    const cpus = values.cpus;
    if (cpus !== undefined && (!/^\d{1,4}(\.\d{1,3})?$/.test(cpus) || Number(cpus) < 0.01))
      throw new UsageError("--cpus must be a number such as 1 or 0.5 (at least 0.01)");
    const memory = byteSizeOpt(values.memory, "memory", 1 << 20);
    const pids = limitInt(values.pids, "pids", 1);
    const limits = {
      ...(memory !== undefined ? { memoryBytes: memory } : {}),
      ...(cpus !== undefined ? { cpuMillis: Math.round(Number(cpus) * 1000) } : {}),
      ...(pids !== undefined ? { pids } : {}),
    };
    const sandboxed = values["no-sandbox"] !== true;
    if (sandboxed && values["no-idle"] === true) throw new UsageError("--no-idle needs --no-sandbox");
    const { address: manifest, manifest: m } = manifestOf(values.manifest);
    const parked = sandboxed
      ? parkedOn(
          m,
          { limits, ...(values.user !== undefined ? { user: values.user } : {}) },
          values.images,
          values.store,
        )
      : null;
    const key = hostKeyOf(where.store, values.key, (l) => io.err(`sbx: ${l}`));
    mkdirSync(where.dir, { recursive: true });
    const s = await withPoolLedger(where.dir, where.given, (ledger) =>
      createPoolDir(where.dir, {
        name: values.name ?? values.pool ?? "pool",
        manifest,
        size,
        key,
        idleProcess: !values["no-idle"],
        ledger,
        ...(m !== null ? { environment: m.environment } : {}),
        ...(parked !== null ? { parked } : {}),
      }),
    );
    if (values.json)
      printJson(io, {
        pool_id: s.pool_id,
        dir: where.dir,
        items: size,
        sandboxed,
        drawn_uj: s.account.drawn.toString(),
      });
    else
      io.out(
        `pool ${s.pool_id} in ${where.dir}: ${size} ${sandboxed ? "sandboxes parked frozen" : "items provisioned"}, ${joules(s.account.drawn)} drawn so far`,
      );
    return EXIT.ok;
  },
};

const list: Command = {
  name: "pool list",
  summary: "list a pool's items with the energy each has accrued so far",
  help: `usage: sbx pool list (DIR | --pool NAME) [--store DIR|URL] [--json]
  Lists every item: state, provisioning plus residency accounted in the ledger, and for resident
  items the residency measured since, up to now (estimated: §6.3 models over cgroup counters, /proc
  and disk blocks); for a parked sandbox, whether the kernel reports it frozen now.
${WHERE_HELP}
${EXITS}`,
  async run(args, io) {
    const { values, positionals } = parseOptions(args, { json: { type: "boolean" }, ...WHERE });
    const where = poolWhere(values, positionals);
    const { state, items } = await withPoolLedger(where.dir, where.given, (ledger) =>
      listPoolOn(ledger, where.dir),
    );
    if (values.json) printJson(io, { pool_id: state.pool_id, items });
    else {
      io.out(`pool ${state.pool_id} (${state.descriptor.name}), manifest ${state.descriptor.manifest}`);
      for (const it of items)
        io.out(
          `  ${it.item}  ${it.state.padEnd(8)}  ${joules(it.accrued_now_uj).padStart(16)}${it.idle_pid === null ? "" : `  idle pid ${it.idle_pid}`}${it.frozen === null ? "" : it.frozen ? "  sandbox frozen" : "  sandbox NOT frozen"}`,
        );
    }
    return EXIT.ok;
  },
};

/** What running the first interval in a claimed workspace produced. */
interface Ran {
  readonly exit_code: number | null;
  readonly receipt: JsonObject;
  readonly total_uj: string;
}

async function runInClaim(io: Io, c: Claimed, argv: string[], key: ReturnType<typeof readKey>): Promise<Ran> {
  const r = await runClaimed(c, argv, key);
  io.err(r.stdout.trimEnd());
  return { exit_code: r.code, receipt: r.envelope as unknown as JsonObject, total_uj: r.receipt.total_uj };
}

/**
 * claimIntoRun (§15.4): the flags of a claim into a run read, its grant judged before anything is
 * claimed, then the host's claimAndRun, and its record printed.
 */
async function claimIntoRun(
  io: Io,
  ledger: PoolLedger,
  where: { dir: string; store: string },
  argv: string[],
  v: {
    key?: string | undefined;
    grants?: string | undefined;
    item?: string | undefined;
    out?: string | undefined;
    json?: boolean | undefined;
    "timeout-ms"?: string | undefined;
    grant?: string | undefined;
  },
): Promise<number> {
  const key = hostKeyOf(where.store, v.key, (l) => io.err(`sbx: ${l}`));
  // --grant: verified and judged before anything is claimed (checkClaimGrant).
  if (v.grant !== undefined && v.grants !== undefined)
    throw new UsageError("--grant computes grants_id: drop --grants");
  const grant = prepareGrantRun(v, key, true, { workspace: CLAIM_WORKSPACE });
  if (grant) await checkClaimGrant(grant);
  const grantsId = v.grants === undefined ? undefined : digestOpt(v.grants, "grants");
  const timeoutMs = limitInt(v["timeout-ms"], "timeout-ms", 1);
  const abort = new AbortController();
  const stop = () => {
    abort.abort();
  };
  process.on("SIGINT", stop).on("SIGTERM", stop);
  let ran: ClaimRunResult;
  try {
    ran = await claimAndRun(ledger, where.dir, {
      argv,
      hostKey: key,
      grant,
      ...(grantsId !== undefined ? { grantsId } : {}),
      ...(v.item ? { item: v.item } : {}),
      ...(timeoutMs !== undefined ? { timeoutMs } : {}),
      ...(v.out ? { outputDir: v.out } : {}),
      abort: abort.signal,
      onOutput: (stream, data) => {
        writeBytes(io, stream === "stdout" && !v.json ? "out" : "err", data);
      },
    });
  } finally {
    process.off("SIGINT", stop).off("SIGTERM", stop);
  }
  const { claimed: c, result: r, debit } = ran;
  const rec = r.receipt.receipt;
  const summary = {
    item: c.claim.item,
    retries: c.retries,
    unit_id: ran.unitId,
    outcome: r.outcome,
    interval: r.interval,
    claim: c.claim as unknown as JsonObject,
    residency: {
      provision_uj: c.claim.provision_uj,
      residency_uj: c.claim.residency_uj,
      accrued_uj: c.claim.accrued_uj,
      components: c.components as unknown as JsonObject[],
    },
    energy: {
      total_uj: rec.total_uj,
      provenance: weakestProvenance(rec.components),
      components: rec.components as unknown as JsonObject[],
    },
    journal: { root: r.journal.head().root, events: r.journal.size },
    receipt: r.receiptAddress,
    attestation: r.address,
    level: r.level,
    workspace: c.workspace,
    ...(debit ? { grant: debit as unknown as JsonObject } : {}),
  };
  if (v.json) printJson(io, summary);
  else {
    io.out(`claimed      ${c.claim.item} of pool ${c.state.pool_id}: a parked sandbox, thawed for this unit`);
    io.out(
      `residency    ${joules(c.claim.accrued_uj)} (provisioning ${joules(c.claim.provision_uj)} + residency ${joules(c.claim.residency_uj)}), estimated, in the first receipt`,
    );
    const o = r.outcome;
    io.out(
      `outcome      ${o.status === "exited" ? `exited ${String(o.exit_code)}` : o.status === "signaled" ? `killed by ${o.signal}` : `did not start (${o.reason})`}`,
    );
    io.out(`energy       ${rec.total_uj} µJ, ${summary.energy.provenance}`);
    io.out(`journal      ${summary.journal.root} (${String(summary.journal.events)} events)`);
    io.out(`receipt      ${r.receiptAddress}`);
    io.out(`attestation  ${r.address} (level ${r.level}, host ${key.did})`);
    io.out(`workspace    ${c.workspace}`);
    if (debit)
      io.out(
        `grant        debited ${debit.spent_uj} µJ (the claim's residency included) on ${debit.ledger}; ${debit.remaining_uj} µJ remain`,
      );
  }
  return r.outcome.status === "exited" && r.outcome.exit_code === 0 ? EXIT.ok : EXIT.invalid;
}

const claim: Command = {
  name: "pool claim",
  summary: "claim a parked sandbox: thaw it and run the unit in it; the first receipt carries its residency",
  help: `usage: sbx pool claim (DIR | --pool NAME) [--store DIR|URL] [--key KEYFILE] [--grants ID] [--item ITEM]
                      [--timeout-ms N] [--out DIR] [--json] -- CMD [ARGS…]
       sbx pool claim DIR --unit ID --grants ID --key KEYFILE [--item ITEM] [--json] [-- CMD…]
  Claims one resident item (the oldest, or ITEM) in order: (1) its residency is accounted up to now
  and the claim is appended to the signed ledger's log on the head just verified, and synced (one
  item, one claim: a claimant that loses the head reads again and takes the next item; a second
  claimant, or a claimant killed at any step, never takes it again); (2) CMD's argv is
  written to the parked sandbox's hand-off FIFO, which only the host can write; (3) the meter and
  journal start and the sandbox is thawed: its waiter execs CMD in place; (4) when CMD ends, the
  interval is attested as \`sbx run\` does (level S4) and its first energy receipt carries the claim's
  warmpool components: the item's provisioning and residency (§15.4), estimated, with their basis;
  (5) the sandbox is destroyed (an item is used once). The workspace stays in the item's folder
  until \`sbx pool destroy\`. Refuses PoolEmpty, DoubleClaim, UnknownItem, PoolItemLost. --json
  reports \`retries\`: how many times the claim lost the ledger's head to another writer.
  Exit: CMD's success → 0; CMD failed → 1.
  With --grant CHAIN --trust … --ledger DIR: the unit runs governed as under sbx run --grant (chain
  verified before the claim, grants_id bound, budget enforced live) and its interval is debited once
  on the ledger, citing its attestation and first receipt, whose total includes the claim's
  residency. A grant needing host binds, ports, a read-only workspace or an exec allowlist is
  refused before the claim (a parked sandbox has none of them).
${GRANT_HELP}
  With --unit: the older claim that only accounts the claim for a run of (unit, grants) and, with a
  COMMAND, runs it as a plain metered process in the workspace (items of a --no-sandbox pool).
${WHERE_HELP}
${EXITS}`,
  async run(args, io) {
    const { values, positionals } = parseOptions(args, {
      unit: { type: "string" },
      grants: { type: "string" },
      key: { type: "string" },
      item: { type: "string" },
      out: { type: "string" },
      "timeout-ms": { type: "string" },
      json: { type: "boolean" },
      ...GRANT_OPTIONS,
      ...WHERE,
    });
    const where = poolWhere(values, positionals);
    if (values.grant !== undefined && values.unit !== undefined)
      throw new UsageError("--grant runs the claimed unit: it does not take --unit");
    if (values.unit === undefined) {
      if (where.rest.length === 0) throw new UsageError("a command after -- is required (or --unit)");
      return withPoolLedger(where.dir, where.given, (ledger) =>
        claimIntoRun(io, ledger, where, where.rest, values),
      );
    }
    const key = hostKeyOf(where.store, values.key, (l) => io.err(`sbx: ${l}`));
    const unit = digestOpt(values.unit, "unit");
    const grants = digestOpt(values.grants, "grants");
    const c = await withPoolLedger(where.dir, where.given, (ledger) =>
      claimPoolItemOn(ledger, where.dir, {
        unit,
        grants,
        key,
        ...(values.item ? { item: values.item } : {}),
      }),
    );
    const argv = where.rest;
    const ran = argv.length > 0 ? await runInClaim(io, c, argv, key) : null;
    if (values.json)
      printJson(io, {
        claim: c.claim as unknown as JsonObject,
        retries: c.retries,
        workspace: c.workspace,
        components: c.components as unknown as JsonObject[],
        ...(ran ? { run: { ...ran } } : {}),
      });
    else {
      io.out(`claimed ${c.claim.item} → workspace ${c.workspace}`);
      io.out(
        `joule price of this fast start: ${joules(c.claim.accrued_uj)} (provisioning ${joules(c.claim.provision_uj)} + residency ${joules(c.claim.residency_uj)})`,
      );
      if (ran)
        io.out(
          `first receipt: ${joules(ran.total_uj)} in total, warmpool components included; exit ${String(ran.exit_code)}`,
        );
    }
    return EXIT.ok;
  },
};

const destroy: Command = {
  name: "pool destroy",
  summary: "destroy a pool: evict what is resident, close the ledger, end every sandbox, remove the items",
  help: `usage: sbx pool destroy (DIR | --pool NAME) [--store DIR|URL] [--key KEYFILE] [--json]
  Evicts every resident item (host-shutdown) and closes the ledger unless it is closed, then ends
  every sandbox still there (also a claimed one whose claimant was killed) and removes the items'
  folders, workspaces included. pool.json and the ledger stay: \`sbx pool verify\` still works.
${WHERE_HELP}
${EXITS}`,
  async run(args, io) {
    const { values, positionals } = parseOptions(args, {
      key: { type: "string" },
      json: { type: "boolean" },
      ...GRANT_OPTIONS,
      ...WHERE,
    });
    const where = poolWhere(values, positionals);
    const key = hostKeyOf(where.store, values.key, (l) => io.err(`sbx: ${l}`));
    const s = await withPoolLedger(where.dir, where.given, (ledger) =>
      destroyPoolDir(where.dir, key, Date.now, ledger),
    );
    if (values.json)
      printJson(io, { pool_id: s.pool_id, destroyed: true, drawn_uj: s.account.drawn.toString() });
    else
      io.out(
        `destroyed pool ${s.pool_id}: drawn ${joules(s.account.drawn)} = claimed ${joules(s.account.claimed)} + evicted ${joules(s.account.evicted)}`,
      );
    return EXIT.ok;
  },
};

const evict: Command = {
  name: "pool evict",
  summary: "evict a pooled sandbox; its provisioning and residency are recorded as overhead",
  help: `usage: sbx pool evict (DIR | --pool NAME) ITEM --key KEYFILE [--store DIR|URL]
                      [--reason ${EVICTION_REASONS.join("|")}] [--json]
  Accounts the item's residency up to now, records the eviction with provisioning plus residency
  as overhead (never zero, §15.5), ends its idle process and removes its folder.
${WHERE_HELP}
${EXITS}`,
  async run(args, io) {
    const { values, positionals } = parseOptions(args, {
      key: { type: "string" },
      reason: { type: "string" },
      json: { type: "boolean" },
      ...WHERE,
    });
    const where = poolWhere(values, positionals);
    const item = where.rest[0];
    const reason = (values.reason ?? "operator") as EvictionReason;
    if (!values.key || item === undefined || !EVICTION_REASONS.includes(reason))
      throw new UsageError("DIR ITEM, --key and a known --reason are required");
    const key = readKey(values.key);
    const s = await withPoolLedger(where.dir, where.given, (ledger) =>
      evictPoolItemOn(ledger, where.dir, item, reason, key),
    );
    const e = s.payloads[s.payloads.length - 1];
    const overhead = e?.kind === "evicted" ? e.overhead_uj : "0";
    if (values.json) printJson(io, { eviction: e as unknown as JsonObject });
    else io.out(`evicted ${item} (${reason}): overhead ${joules(overhead)}`);
    return EXIT.ok;
  },
};

const close: Command = {
  name: "pool close",
  summary: "evict every resident sandbox and close the pool's ledger",
  help: `usage: sbx pool close (DIR | --pool NAME) --key KEYFILE [--store DIR|URL] [--json]
  Evicts every resident item (host-shutdown) and appends the close with the pool's totals (§15.6).
${WHERE_HELP}
${EXITS}`,
  async run(args, io) {
    const { values, positionals } = parseOptions(args, {
      key: { type: "string" },
      json: { type: "boolean" },
      ...WHERE,
    });
    if (!values.key) throw new UsageError("--key is required");
    const where = poolWhere(values, positionals);
    const key = readKey(values.key);
    const s = await withPoolLedger(where.dir, where.given, (ledger) => closePoolOn(ledger, where.dir, key));
    if (values.json) printJson(io, { pool_id: s.pool_id, drawn_uj: s.account.drawn.toString() });
    else
      io.out(
        `closed: drawn ${joules(s.account.drawn)} = claimed ${joules(s.account.claimed)} + evicted ${joules(s.account.evicted)}`,
      );
    return EXIT.ok;
  },
};

const verify: Command = {
  name: "pool verify",
  summary: "verify a pool's signed ledger: chain, signatures, and energy conservation",
  help: `usage: sbx pool verify (DIR | --pool NAME) [--store DIR|URL] (--trust FILE|DID… | --any-signer)
                       [--closed] [--json]
  Verifies the ledger where the store keeps it (§15.7, §15.7.1): its log folder, or its log in the
  PostgreSQL store (every link checked there): every signature, by the pool's host (a trusted host),
  the hash chain, every entry's accounting, and conservation: drawn = claimed + evicted +
  outstanding. --closed also requires every microjoule attributed (a closed ledger).
${TRUST_HELP}
  --host DID        the same as --trust (older name)
${WHERE_HELP}
${EXITS}; 0 also for UNTRUSTED with --any-signer`,
  async run(args, io) {
    const { values, positionals } = parseOptions(args, {
      host: { type: "string", multiple: true },
      closed: { type: "boolean" },
      json: { type: "boolean" },
      ...TRUST_OPTIONS,
      ...WHERE,
    });
    const where = poolWhere(values, positionals);
    const trust = trustOf(values, values.host);
    const { s, ledgerAt } = await withPoolLedger(where.dir, where.given, async (ledger) => ({
      s: await ledger.open(),
      ledgerAt: ledger.where,
    }));
    const sum = verifyLedger(
      { pool: s.pool, entries: s.entries },
      { requireClosed: values.closed ?? false, ...(trust.keys ? { hosts: trust.keys } : {}) },
    );
    if (values.json)
      printJson(io, {
        valid: true,
        trusted: trust.keys !== null,
        signers: [sum.host],
        ...sum,
        claims: sum.claims.length,
        ledger: ledgerAt,
      });
    else {
      io.out(
        `${verdict(trust)}: pool ${sum.pool_id}, ${sum.entries} entries, head ${sum.head}, signed by ${sum.host}`,
      );
      io.out(
        `items: ${sum.items.provisioned} provisioned, ${sum.items.claimed} claimed, ${sum.items.evicted} evicted, ${sum.items.resident} resident`,
      );
      io.out(
        `energy: drawn ${joules(sum.drawn_uj)} = claimed ${joules(sum.claimed_uj)} + evicted ${joules(sum.evicted_uj)} + outstanding ${joules(sum.outstanding_uj)}`,
      );
    }
    return EXIT.ok;
  },
};

export const commands: Command[] = [create, list, claim, evict, close, destroy, verify];
