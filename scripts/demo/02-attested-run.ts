// Demo part 2: a real command run as a unit in the reference sandbox (§5) — metered (§6), journaled
// (§8), attested (§7) with the level the host computed (§9), and linked into the steward's audit
// chain (§7.7); escapes tried from inside fail; the attestation verified, tampered ones refused.
import { mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { addressOf, digestBytes, signPayload, testKey, type Envelope, type Json } from "@sbx/wire";
import { ATTESTATION_PAYLOAD_TYPE, verifyAttestation, verifyInterval } from "@sbx/sandbox-attest/attestation";
import { firstLink, linkAfter, stewardDomain, verifyAuditChain } from "@sbx/sandbox-attest/audit";
import { openReceipt, type EnergyComponent } from "@sbx/sandbox-attest/energy";
import { verifyEventInclusion, verifyJournal } from "@sbx/sandbox-attest/journal";
import { makeUnit, unitId } from "@sbx/sandbox-attest/unit";
import { runUnit, type RunUnitResult } from "@sbx/host/run";
import { sandboxUnavailableReason } from "@sbx/host/sandbox";
import { check, type DemoContext } from "./context.ts";

const host = testKey("host");
const steward = testKey("steward");
const manifest = addressOf({ demo: "no manifest: a plain host environment" });
const policy = addressOf({ demo: "no exec policy" });
const grantsId = addressOf({ demo: "grant set placeholder" });

function describe(c: EnergyComponent): string {
  if (c.provenance === "estimated")
    return `${c.domain}: ${c.uj} µJ estimated by ${c.model.name} from ${c.source} ${JSON.stringify(c.model.inputs)} with ${JSON.stringify(c.model.coefficients)}`;
  if (c.provenance === "attributed")
    return `${c.domain}: ${c.uj} µJ attributed from ${c.source} × ${c.ratio.numerator}/${c.ratio.denominator} (${c.ratio.basis})`;
  return `${c.domain}: ${c.uj} µJ measured from ${c.source}`;
}

function refusedWith(f: () => unknown, code: string): boolean {
  try {
    f();
    return false;
  } catch (e) {
    return (e as { code?: string }).code === code;
  }
}

function tampered(env: Envelope, from: string, to: string): Envelope {
  const text = Buffer.from(env.payload, "base64").toString("utf8");
  check(text.includes(from), `payload contains ${from}`);
  return { ...env, payload: Buffer.from(text.replace(from, to)).toString("base64") };
}

function showRun(ctx: DemoContext, r: RunUnitResult): void {
  const rec = openReceipt(r.receipt.envelope, { hosts: [host.did] }).receipt;
  const p = verifyAttestation(r.attestation).predicate;
  ctx.say(`outcome: ${JSON.stringify(r.outcome)}; stdout ${JSON.stringify(r.stdout.toString().trim())}`);
  ctx.say(
    `energy: ${rec.total_uj} µJ over ${rec.end_ms - rec.start_ms} ms, provenance ${p.energy.provenance}; sources absent here: ${rec.absent.join(", ") || "none"}`,
  );
  for (const c of rec.components) ctx.say(`  ${describe(c)}`);
  for (const e of r.journal.events) {
    const what =
      e.type === "process.start"
        ? `argv ${JSON.stringify(e.argv)}, binary ${e.binary}`
        : e.type === "stdio.chunk"
          ? `${e.stream} chunk ${e.chunk}: ${e.length} bytes, ${e.digest}`
          : e.type === "process.exit"
            ? `code ${String(e.code)}, signal ${String(e.signal)}`
            : e.type === "file.write"
              ? `${e.path}: ${e.size} bytes, ${e.digest}`
              : "";
    ctx.say(`  journal[${e.seq}] ${e.type} ${what}`);
  }
  ctx.say(`journal root ${p.journal.root} (${p.journal.events} events); receipt ${r.receiptAddress}`);
  ctx.say(`attestation ${r.address} (level ${p.level}, audit_seq ${String(p.audit_seq)})`);
}

export default async function attestedRun(ctx: DemoContext): Promise<void> {
  ctx.title("an attested, metered, journaled run of a real command (sandbox-attest §4, §6, §7, §7.7, §8)");
  const script =
    "import hashlib,sys; h=b'x'\nfor i in range(100000): h=hashlib.sha256(h).digest()\nopen(sys.argv[1],'w').write(h.hex()); print(h.hex()[:16]); print('done', file=sys.stderr)";
  const dir = join(ctx.work, "02-attested-run");
  mkdirSync(dir, { recursive: true });
  const argv = ["python3", "-c", script, "out.txt"];
  const why = sandboxUnavailableReason();
  // Without root the host cannot build its sandbox: the demo then runs the command plainly and the
  // level it states is S0, as §9 requires.
  const sandbox = why === null ? { workspace: dir } : undefined;
  const unit = makeUnit({ argv, manifest, level: sandbox ? "S4" : "S0", labels: { demo: "02" } });
  const id = unitId(unit);
  ctx.say(
    sandbox
      ? `unit_id ${id}: python3 hashing 100,000 times in a sandbox (bubblewrap: new namespaces, no network, read-only /usr, the workspace ${dir} the only writable tree, seccomp, cgroup limits, an unprivileged host uid)`
      : `unit_id ${id}: python3 hashing 100,000 times as a plain process (no sandbox here: ${why ?? ""})`,
  );
  const domain = stewardDomain(steward.did);
  const base = {
    hostKey: host,
    unitId: id,
    unit,
    grantsId,
    manifest,
    policy,
    ...(sandbox ? { sandbox } : {}),
  };
  const a = await runUnit({
    ...base,
    argv,
    cwd: dir,
    ...(sandbox ? {} : { watch: dir }),
    audit: firstLink(domain),
    maxLevel: "S7",
  });
  const want = sandbox ? "S4" : "S0";
  check(a.level === want, `the host states the level it provided (${want}), though S7 was asked for`);
  ctx.say(
    `level stated: ${a.level}, computed from what the host set up (sandbox, meter, attestation, journal); asking for S7 cannot raise it (§9)`,
  );
  check(a.outcome.status === "exited" && a.outcome.exit_code === 0, "the command ran and exited 0");
  showRun(ctx, a);
  const written = a.journal.events.find((e) => e.type === "file.write");
  check(
    written?.type === "file.write" &&
      written.path === "out.txt" &&
      written.digest === digestBytes(readFileSync(join(dir, "out.txt"))),
    "the file the command wrote is journaled by its digest",
  );
  const head = a.journal.head();
  const rec = openReceipt(a.receipt.envelope, { hosts: [host.did] }).receipt;
  check(BigInt(rec.total_uj) > 0n, "a run that computed for a while drew energy");
  verifyJournal(a.journal.events as unknown as Json[], head as unknown as Json);
  const last = a.journal.events.length - 1;
  verifyEventInclusion(
    head as unknown as Json,
    a.journal.events[last] as unknown as Json,
    a.journal.prove(last) as unknown as Json,
  );
  const expect = {
    host: host.did,
    unitId: id,
    grantsId,
    manifest,
    policy,
    receipt: a.receiptAddress,
    totalUj: rec.total_uj,
    journalRoot: head.root,
    journalEvents: head.size,
    runHead: null,
  };
  check(
    verifyAttestation(a.attestation, expect).address === a.address,
    "attestation verified with every binding",
  );
  ctx.say(
    "verified: host signature, canonical payload, shape, and bindings (unit, grants, manifest, policy, receipt, total, journal root and size)",
  );
  verifyInterval(
    a.attestation,
    { receipt: a.receipt.envelope, events: a.journal.events as unknown as Json[] },
    expect,
  );
  ctx.say(
    "verified against the objects themselves: the signed receipt (unit, grants, total, interval, weakest provenance) and the journal's events recomputed to the bound root",
  );
  ctx.say(
    `verified: the journal recomputes to its root; the exit event's inclusion proof has ${a.journal.prove(last).path.length} hashes`,
  );

  const escape =
    "echo second interval; cat /etc/shadow 2>&1 | head -1; (echo x > /usr/evil) 2>&1; " +
    "bash -c 'exec 3<>/dev/tcp/192.0.2.1/80' 2>&1; unshare -U true 2>&1; exit 2";
  const b = await runUnit({
    ...base,
    argv: ["sh", "-c", escape],
    audit: linkAfter(a.attestation),
    energyChain: a.receipt.state,
  });
  ctx.say(
    `second run: ${JSON.stringify(b.outcome)}, receipt seq ${b.receipt.receipt.seq}, attestation ${b.address}`,
  );
  if (sandbox) {
    const said = b.stdout.toString();
    for (const l of said.trim().split("\n")) ctx.say(`  from inside: ${l}`);
    check(
      !said.includes("root:") && /Read-only file system|Permission denied/.test(said),
      "no escape: /etc/shadow unreadable, /usr read-only",
    );
    check(/unreachable/.test(said), "no network: 192.0.2.1 unreachable from inside");
  }
  const chain = verifyAuditChain([a.attestation, b.attestation], { domain, hosts: [host.did] });
  check(chain.head === b.address && chain.seq === 2, "audit chain of two verified");
  ctx.say(`audit chain verified: head ${chain.head} at seq ${chain.seq}`);

  check(
    refusedWith(
      () => verifyAttestation(tampered(a.attestation, '"exit_code":0', '"exit_code":1'), expect),
      "BadSignature",
    ),
    "exit code edited after signing: BadSignature",
  );
  ctx.say("refused: exit code edited after signing (BadSignature)");
  check(
    refusedWith(
      () =>
        verifyAttestation(tampered(a.attestation, `"total_uj":"${rec.total_uj}"`, '"total_uj":"1"'), expect),
      "BadSignature",
    ),
    "energy edited: BadSignature",
  );
  ctx.say("refused: energy total edited after signing (BadSignature)");
  const forged = signPayload(
    ATTESTATION_PAYLOAD_TYPE,
    JSON.parse(Buffer.from(a.attestation.payload, "base64").toString()) as Json,
    testKey("mallory"),
  );
  check(
    refusedWith(() => verifyAttestation(forged, expect), "SignerNotHost"),
    "same statement signed by mallory: SignerNotHost",
  );
  ctx.say("refused: the same statement signed by another key (SignerNotHost)");
  check(
    refusedWith(() => verifyAttestation(b.attestation, expect), "ReceiptMismatch"),
    "second attestation where the first is expected",
  );
  ctx.say("refused: the second interval's attestation offered for the first (ReceiptMismatch)");
  check(
    refusedWith(() => verifyAuditChain([b.attestation], { domain }), "AuditGap"),
    "first attestation dropped: AuditGap",
  );
  check(
    refusedWith(() => verifyAuditChain([b.attestation, a.attestation], { domain }), "AuditReorder"),
    "reordered: AuditReorder",
  );
  ctx.say(
    "refused: the audit chain with the first attestation dropped (AuditGap) or the two swapped (AuditReorder)",
  );
}
