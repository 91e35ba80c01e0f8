// `jcp standing create | mint | verify`: standing grants (jcp §4.6). The issuer of a held grant signs
// a mint policy; its holder mints children on event files into a ledger file; anyone verifies it.
import type { Envelope } from "@sbx/wire";
import { createPolicy, verifyMintLedger, type PolicyPayload, type Trigger } from "@sbx/jcp-grant/standing";
import { resolveChain } from "@sbx/jcp-grant/grant";
import { EXIT, parseOptions, printJson, UsageError, type Command } from "../../command.ts";
import { readKey } from "@sbx/host/keys";
import { TRUST_HELP, TRUST_OPTIONS, trustOf, verdict } from "../../trust.ts";
import { mintOn, readMintLog } from "@sbx/host/ledger";
import {
  amountArg,
  countArg,
  principal,
  readChain,
  readJson,
  rootsOf,
  sortedSet,
  timeArg,
  writeJson,
} from "./lib/files.ts";

const createHelp = `usage: jcp standing create --key FILE --held CHAINFILE --holder DID|KEYFILE --trigger TYPE@SOURCE[@DID]…
                           --resource PATTERN… --action NAME… --uj AMOUNT [--calls N] --lifetime-ms MS
                           [--child-depth N] --max-children N --max-total-uj AMOUNT --rate COUNT/WINDOW_MS
                           [--nbf TIME] --exp TIME --out FILE [--json]
  Signs a mint policy (jcp §4.6) with the key of the held grant's issuer: the held grant's holder may
  mint children to HOLDER on matching events, each inside the template, within the caps and the rate.
  --held CHAINFILE   the held grant's chain (root first); the policy names its leaf
  --trigger T@S[@D]  an event type and source; with @DID the event must be signed by that key
exit: 0 signed, 1 refused (PolicyNotByIssuer, BadPolicy, …), 2 usage error`;

const mintHelp = `usage: jcp standing mint --key FILE --policy FILE --held CHAINFILE --ledger DIR --event FILE
                         [--at TIME] --out CHAINFILE [--json]
  Mints one child of the held grant on the event in FILE (jcp §4.6): verifies the mint ledger DIR (an
  append-only folder, created when missing), checks the trigger, caps, rate and event uniqueness,
  signs the child and the ledger entry with the minter's key, appends {entry, event, child} to the
  ledger on the head it verified (a concurrent minter that wins first makes it verify and check
  again, so racing minters never pass the caps or the rate), and writes the child's chain (held
  chain + child).
exit: 0 minted, 1 refused (RateExceeded, MintCapExceeded, EventReplayed, TriggerMismatch, …), 2 usage error`;

const verifyHelp = `usage: jcp standing verify --policy FILE --held CHAINFILE --ledger DIR
                           (--trust DID|KEYFILE… | --any-signer) [--json]
  Verifies a mint ledger against its policy (jcp §4.6): the held chain to a trusted root, every
  entry, event and child, the caps, the rate in every window, ledger order and continuity, and the
  policy's signer. With --any-signer the held chain is checked from whatever key signed its root
  and the verdict is UNTRUSTED.
${TRUST_HELP}
  --root DID   the same as --trust (older name): a trusted root issuer
exit: 0 valid (or UNTRUSTED with --any-signer), 1 invalid (its code is printed), 2 usage error`;

function trigger(t: string): Trigger {
  const [type, source, signer] = t.split("@");
  if (!type || !source) throw new UsageError(`--trigger ${t.slice(0, 60)} is not TYPE@SOURCE[@DID]`);
  return { type, source, ...(signer ? { signed_by: principal(signer) } : {}) };
}

function req(v: Record<string, unknown>, names: string[]): void {
  const missing = names.filter((n) => v[n] === undefined);
  if (missing.length) throw new UsageError(`missing ${missing.map((n) => `--${n}`).join(", ")}`);
}

function policyOf(
  v: Record<string, string | string[] | boolean | undefined>,
  held: Envelope[],
): PolicyPayload {
  const s = (k: string) => v[k] as string | undefined;
  const leaf = resolveChain(held).at(-1)!;
  const [count, window] = (s("rate") ?? "").split("/").map((x) => countArg(x, "rate"));
  if (!count || !window) throw new UsageError("--rate is COUNT/WINDOW_MS");
  const calls = countArg(s("calls"), "calls");
  return {
    grant: leaf.address,
    issuer: leaf.issuer,
    minter: leaf.holder,
    triggers: (v.trigger as string[]).map(trigger),
    template: {
      holder: principal(s("holder")!),
      resources: sortedSet(v.resource as string[])!,
      actions: sortedSet(v.action as string[])!,
      uj: amountArg(s("uj"), "uj")!,
      ...(calls !== undefined ? { calls } : {}),
      lifetime_ms: countArg(s("lifetime-ms"), "lifetime-ms")!,
      depth: countArg(s("child-depth"), "child-depth") ?? 0,
    },
    max_children: countArg(s("max-children"), "max-children")!,
    max_total_uj: amountArg(s("max-total-uj"), "max-total-uj")!,
    rate: { count, window_ms: window },
    nbf_ms: timeArg(s("nbf"), "nbf"),
    exp_ms: timeArg(s("exp"), "exp"),
  };
}

const create: Command = {
  name: "standing create",
  summary: "sign a mint policy for a grant you issued (§4.6)",
  help: createHelp,
  run(args, io) {
    const { values: v } = parseOptions(
      args,
      {
        key: { type: "string" },
        held: { type: "string" },
        holder: { type: "string" },
        trigger: { type: "string", multiple: true },
        resource: { type: "string", multiple: true },
        action: { type: "string", multiple: true },
        uj: { type: "string" },
        calls: { type: "string" },
        "lifetime-ms": { type: "string" },
        "child-depth": { type: "string" },
        "max-children": { type: "string" },
        "max-total-uj": { type: "string" },
        rate: { type: "string" },
        nbf: { type: "string" },
        exp: { type: "string" },
        out: { type: "string" },
        json: { type: "boolean" },
      },
      false,
    );
    const need = ["key", "held", "holder", "trigger", "resource", "action", "uj", "lifetime-ms"];
    req(v, [...need, "max-children", "max-total-uj", "rate", "exp", "out"]);
    const p = policyOf(v, readChain(v.held!));
    const env = createPolicy(readKey(v.key!), p);
    writeJson(v.out!, env);
    if (v.json) printJson(io, { out: v.out, policy: p });
    else io.out(`signed mint policy for ${p.grant}\n  minter ${p.minter}\n  written to ${v.out}`);
    return Promise.resolve(EXIT.ok);
  },
};

const mint: Command = {
  name: "standing mint",
  summary: "mint a child of a standing grant on an event (§4.6)",
  help: mintHelp,
  run(args, io) {
    const { values: v } = parseOptions(
      args,
      {
        key: { type: "string" },
        policy: { type: "string" },
        held: { type: "string" },
        ledger: { type: "string" },
        event: { type: "string" },
        at: { type: "string" },
        out: { type: "string" },
        json: { type: "boolean" },
      },
      false,
    );
    req(v, ["key", "policy", "held", "ledger", "event", "out"]);
    const s = { policy: readJson(v.policy!), held: readChain(v.held!) };
    const event = readJson(v.event!);
    const at = v.at === undefined ? undefined : timeArg(v.at, "at");
    // Without --at, the time is taken again after each lost head, so it never precedes the last entry.
    const r = mintOn(v.ledger!, s, readKey(v.key!), event, () => at ?? Date.now());
    writeJson(v.out!, r.chain);
    const summary = {
      seq: r.seq,
      head: r.head,
      total_uj: r.total_uj.toString(),
      retries: r.retries,
      out: v.out,
    };
    if (v.json) printJson(io, summary);
    else io.out(`minted child ${summary.seq} (ledger head ${summary.head}); chain written to ${v.out}`);
    return Promise.resolve(EXIT.ok);
  },
};

const verify: Command = {
  name: "standing verify",
  summary: "verify a mint ledger against its policy (§4.6)",
  help: verifyHelp,
  run(args, io) {
    const { values: v } = parseOptions(
      args,
      {
        policy: { type: "string" },
        held: { type: "string" },
        ledger: { type: "string" },
        root: { type: "string", multiple: true },
        json: { type: "boolean" },
        ...TRUST_OPTIONS,
      },
      false,
    );
    req(v, ["policy", "held", "ledger"]);
    const trust = trustOf(v, v.root);
    const held = readChain(v.held!);
    const roots = rootsOf(trust, held);
    const s = verifyMintLedger({
      policy: readJson(v.policy!, "mint policy"),
      held,
      ...readMintLog(v.ledger!),
      roots,
    });
    const trusted = trust.keys !== null;
    const out = { valid: true, trusted, root: roots[0] ?? null, ...s, total_uj: s.total_uj.toString() };
    if (v.json) printJson(io, out);
    else
      io.out(
        `${trusted ? "valid" : `${verdict(trust)} (root issuer ${roots[0] ?? "?"} not checked against a trust set)`} mint ledger: ${s.length} children, ${out.total_uj} µJ in all, head ${s.head}`,
      );
    return Promise.resolve(EXIT.ok);
  },
};

export const commands: Command[] = [create, mint, verify];
