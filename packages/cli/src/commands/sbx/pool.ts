// `sbx pool …`: warm pools (§15) — create a pool of real pre-provisioned sandboxes from a manifest,
// list them with their accrued energy, claim one into a run (optionally running the run's first
// interval in it), evict, close, and verify the signed ledger.
import { isDigest, parseStrict, type Digest, type JsonObject } from "@sbx/wire";
import { ingestManifest, verifyManifest } from "@sbx/sandbox-attest/manifest";
import { EVICTION_REASONS, verifyLedger, type EvictionReason } from "@sbx/sandbox-attest/warmpool";
import {
  claimPoolItem,
  closePoolDir,
  createPoolDir,
  evictPoolItem,
  listPool,
  openPoolDir,
  poolPaths,
  runClaimed,
} from "@sbx/host/pool";
import { EXIT, parseOptions, printJson, UsageError, type Command, type Io } from "../../command.ts";
import { readKey } from "../../keyfile.ts";
import { MAX_JSON_BYTES, readInput } from "../../files.ts";
import { TRUST_HELP, TRUST_OPTIONS, trustOf, verdict } from "../../trust.ts";

const EXITS = "exit: 0 ok / valid, 1 refused (a §15 code), 2 usage error or unusable input";

/** joules writes microjoules as joules with six decimals. */
function joules(uj: string | bigint): string {
  const n = BigInt(uj);
  return `${n / 1_000_000n}.${(n % 1_000_000n).toString().padStart(6, "0")} J`;
}

function manifestAddress(arg: string): Digest {
  if (isDigest(arg)) return arg;
  const bytes = readInput(arg, "manifest", MAX_JSON_BYTES);
  let env: unknown = null;
  try {
    env = parseStrict(bytes);
  } catch {
    /* not a signed manifest: read it as devcontainer.json */
  }
  if (typeof env === "object" && env !== null && "payloadType" in env)
    return verifyManifest(env).manifest.address;
  return ingestManifest(bytes).address;
}

function dirArg(positionals: readonly string[]): string {
  const d = positionals[0];
  if (d === undefined) throw new UsageError("the pool directory is required");
  return d;
}

function digestOpt(v: string | undefined, name: string): Digest {
  if (!isDigest(v)) throw new UsageError(`--${name} must be a blake3:<hex> digest`);
  return v;
}

const create: Command = {
  name: "pool create",
  summary: "create a warm pool of N real sandboxes (workspaces, stopped idle processes) from a manifest",
  help: `usage: sbx pool create DIR --manifest ADDR|FILE --size N --key KEYFILE [--name NAME] [--no-idle] [--json]
  Creates a pool in DIR: a signed descriptor, then N items, each a pre-created workspace and (unless
  --no-idle) a pre-started idle process stopped with SIGSTOP, each recorded in the signed ledger with
  the energy its provisioning took (§15.3).
  --manifest   a manifest address, a devcontainer.json, or a signed manifest envelope (§14)
  --size N     how many items to provision
  --key        the host key file that signs the ledger
${EXITS}`,
  async run(args, io) {
    const { values, positionals } = parseOptions(args, {
      manifest: { type: "string" },
      size: { type: "string" },
      key: { type: "string" },
      name: { type: "string" },
      "no-idle": { type: "boolean" },
      json: { type: "boolean" },
    });
    const size = Number(values.size);
    if (!values.manifest || !values.key || !Number.isSafeInteger(size) || size < 0)
      throw new UsageError("--manifest, --key and --size N are required");
    const dir = dirArg(positionals);
    const s = await createPoolDir(dir, {
      name: values.name ?? "pool",
      manifest: manifestAddress(values.manifest),
      size,
      key: readKey(values.key),
      idleProcess: !values["no-idle"],
    });
    if (values.json)
      printJson(io, { pool_id: s.pool_id, dir, items: size, drawn_uj: s.account.drawn.toString() });
    else
      io.out(
        `pool ${s.pool_id} in ${dir}: ${size} items provisioned, ${joules(s.account.drawn)} drawn so far`,
      );
    return EXIT.ok;
  },
};

const list: Command = {
  name: "pool list",
  summary: "list a pool's items with the energy each has accrued so far",
  help: `usage: sbx pool list DIR [--json]
  Lists every item: state, provisioning plus residency accounted in the ledger, and for resident
  items the residency measured since, up to now (estimated: §6.3 models over /proc and disk blocks).
${EXITS}`,
  run(args, io) {
    const { values, positionals } = parseOptions(args, { json: { type: "boolean" } });
    const { state, items } = listPool(dirArg(positionals));
    if (values.json) printJson(io, { pool_id: state.pool_id, items });
    else {
      io.out(`pool ${state.pool_id} (${state.descriptor.name}), manifest ${state.descriptor.manifest}`);
      for (const it of items)
        io.out(
          `  ${it.item}  ${it.state.padEnd(8)}  ${joules(it.accrued_now_uj).padStart(16)}${it.idle_pid === null ? "" : `  idle pid ${it.idle_pid}`}`,
        );
    }
    return Promise.resolve(EXIT.ok);
  },
};

/** What running the first interval in a claimed workspace produced. */
interface Ran {
  readonly exit_code: number | null;
  readonly receipt: JsonObject;
  readonly total_uj: string;
}

async function runInClaim(
  io: Io,
  c: ReturnType<typeof claimPoolItem>,
  argv: string[],
  key: ReturnType<typeof readKey>,
): Promise<Ran> {
  const r = await runClaimed(c, argv, key);
  io.err(r.stdout.trimEnd());
  return { exit_code: r.code, receipt: r.envelope as unknown as JsonObject, total_uj: r.receipt.total_uj };
}

const claim: Command = {
  name: "pool claim",
  summary: "claim a pooled sandbox into a run; its accrued energy becomes the run's warmpool charge",
  help: `usage: sbx pool claim DIR --unit ID --grants ID --key KEYFILE [--item ITEM] [--json] [-- COMMAND…]
  Accounts the item's residency up to now and appends the claim for the run of (unit, grants): the
  claim carries all the energy the item drew, provisioning plus residency (§15.4). Prints the
  warmpool components the run's first energy receipt must carry. With a COMMAND after --, runs it
  in the claimed workspace as the run's first interval, metered, and prints its first receipt.
${EXITS}`,
  async run(args, io) {
    const { values, positionals } = parseOptions(args, {
      unit: { type: "string" },
      grants: { type: "string" },
      key: { type: "string" },
      item: { type: "string" },
      json: { type: "boolean" },
    });
    if (!values.key) throw new UsageError("--key is required");
    const key = readKey(values.key);
    const c = claimPoolItem(dirArg(positionals), {
      unit: digestOpt(values.unit, "unit"),
      grants: digestOpt(values.grants, "grants"),
      key,
      ...(values.item ? { item: values.item } : {}),
    });
    const argv = positionals.slice(1);
    const ran = argv.length > 0 ? await runInClaim(io, c, argv, key) : null;
    if (values.json)
      printJson(io, {
        claim: c.claim as unknown as JsonObject,
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

const evict: Command = {
  name: "pool evict",
  summary: "evict a pooled sandbox; its provisioning and residency are recorded as overhead",
  help: `usage: sbx pool evict DIR ITEM --key KEYFILE [--reason ${EVICTION_REASONS.join("|")}] [--json]
  Accounts the item's residency up to now, records the eviction with provisioning plus residency
  as overhead (never zero, §15.5), ends its idle process and removes its folder.
${EXITS}`,
  run(args, io) {
    const { values, positionals } = parseOptions(args, {
      key: { type: "string" },
      reason: { type: "string" },
      json: { type: "boolean" },
    });
    const item = positionals[1];
    const reason = (values.reason ?? "operator") as EvictionReason;
    if (!values.key || item === undefined || !EVICTION_REASONS.includes(reason))
      throw new UsageError("DIR ITEM, --key and a known --reason are required");
    const s = evictPoolItem(dirArg(positionals), item, reason, readKey(values.key));
    const e = s.payloads[s.payloads.length - 1];
    const overhead = e?.kind === "evicted" ? e.overhead_uj : "0";
    if (values.json) printJson(io, { eviction: e as unknown as JsonObject });
    else io.out(`evicted ${item} (${reason}): overhead ${joules(overhead)}`);
    return Promise.resolve(EXIT.ok);
  },
};

const close: Command = {
  name: "pool close",
  summary: "evict every resident sandbox and close the pool's ledger",
  help: `usage: sbx pool close DIR --key KEYFILE [--json]
  Evicts every resident item (host-shutdown) and appends the close with the pool's totals (§15.6).
${EXITS}`,
  run(args, io) {
    const { values, positionals } = parseOptions(args, {
      key: { type: "string" },
      json: { type: "boolean" },
    });
    if (!values.key) throw new UsageError("--key is required");
    const s = closePoolDir(dirArg(positionals), readKey(values.key));
    if (values.json) printJson(io, { pool_id: s.pool_id, drawn_uj: s.account.drawn.toString() });
    else
      io.out(
        `closed: drawn ${joules(s.account.drawn)} = claimed ${joules(s.account.claimed)} + evicted ${joules(s.account.evicted)}`,
      );
    return Promise.resolve(EXIT.ok);
  },
};

const verify: Command = {
  name: "pool verify",
  summary: "verify a pool's signed ledger: chain, signatures, and energy conservation",
  help: `usage: sbx pool verify DIR (--trust FILE|DID… | --any-signer) [--closed] [--json]
  Verifies the ledger from its files (§15.7): every signature, by the pool's host (a trusted host),
  the hash chain, every entry's accounting, and conservation: drawn = claimed + evicted +
  outstanding. --closed also requires every microjoule attributed (a closed ledger).
${TRUST_HELP}
  --host DID        the same as --trust (older name)
${EXITS}; 0 also for UNTRUSTED with --any-signer`,
  run(args, io) {
    const { values, positionals } = parseOptions(args, {
      host: { type: "string", multiple: true },
      closed: { type: "boolean" },
      json: { type: "boolean" },
      ...TRUST_OPTIONS,
    });
    const dir = dirArg(positionals);
    const trust = trustOf(values, values.host);
    const s = openPoolDir(dir);
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
        ledger: poolPaths(dir).ledger,
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
    return Promise.resolve(EXIT.ok);
  },
};

export const commands: Command[] = [create, list, claim, evict, close, verify];
