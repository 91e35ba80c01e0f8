// `sbx policy new|add|remove|show|sign`: exec policies (sandbox-attest §5.5.2), edited as canonical
// JSON files and signed by the steward into DSSE envelopes.
import { canonicalize, isDigest, type Digest } from "@sbx/wire";
import {
  makePolicy,
  openPolicy,
  parsePolicy,
  policyAddress,
  signPolicy,
  withDigests,
  type ExecPolicy,
} from "@sbx/sandbox-attest/execpolicy";
import { hashFile } from "@sbx/host/gate";
import { EXIT, parseOptions, printJson, UsageError, type Command, type Io } from "../../command.ts";
import { readKey } from "@sbx/host/keys";
import { readJsonInput, writeJsonOutput, writeOutput } from "@sbx/host/files";

/** A policy file as read: the policy, and whether it came signed (and by whom). */
export interface LoadedPolicy {
  readonly policy: ExecPolicy;
  readonly signed: boolean;
  readonly signers: readonly string[];
}

function readJson(path: string): unknown {
  return readJsonInput(path, "policy file");
}

/** loadPolicy reads a plain policy or a signed envelope (verified, and by `steward` when given). */
export function loadPolicy(path: string, steward?: string): LoadedPolicy {
  const v = readJson(path);
  if (typeof v === "object" && v !== null && "payloadType" in v) {
    const o = openPolicy(v, steward === undefined ? {} : { stewards: [steward] });
    return { policy: o.policy, signed: true, signers: o.signers };
  }
  if (steward !== undefined) throw new UsageError(`${path} is not signed; --steward needs a signed policy`);
  return { policy: parsePolicy(v), signed: false, signers: [] };
}

function writePolicy(path: string, p: ExecPolicy): void {
  writeOutput(path, canonicalize(p) + "\n", { what: "policy file" });
}

async function digestsOf(args: readonly string[]): Promise<Digest[]> {
  const out: Digest[] = [];
  for (const a of args)
    if (isDigest(a)) out.push(a);
    else
      try {
        out.push((await hashFile(a)).digest);
      } catch (e) {
        throw new UsageError(`cannot hash ${a}: ${(e as Error).message}`);
      }
  return out;
}

function summary(io: Io, p: ExecPolicy, json: boolean, extra: Record<string, unknown> = {}): void {
  if (json) printJson(io, { address: policyAddress(p), ...extra, policy: p });
  else {
    io.out(`policy ${policyAddress(p)} (${p.mode})`);
    for (const [k, v] of Object.entries(extra))
      io.out(`${k}: ${Array.isArray(v) ? v.join(", ") || "-" : String(v)}`);
    for (const d of p.allow) io.out(`allow ${d}`);
    for (const d of p.deny) io.out(`deny  ${d}`);
  }
}

const newCommand: Command = {
  name: "policy new",
  summary: "write an empty exec policy (allowlist or denylist)",
  help: `usage: sbx policy new --mode allowlist|denylist --out FILE [--json]
  Writes an exec policy (sandbox-attest §5.5.2) with empty lists as canonical JSON.
exit: 0 written, 2 usage error`,
  run(args, io) {
    const { values } = parseOptions(
      args,
      { mode: { type: "string" }, out: { type: "string" }, json: { type: "boolean" } },
      false,
    );
    if (!values.out || !values.mode) throw new UsageError("--mode and --out are required");
    if (values.mode !== "allowlist" && values.mode !== "denylist")
      throw new UsageError("--mode is allowlist or denylist");
    const p = makePolicy(values.mode);
    writePolicy(values.out, p);
    summary(io, p, values.json ?? false);
    return Promise.resolve(EXIT.ok);
  },
};

function editCommand(op: "add" | "remove"): Command {
  return {
    name: `policy ${op}`,
    summary: `${op} digests (given as blake3:… or as files, which are hashed) ${op === "add" ? "to" : "from"} a policy's allow or deny list`,
    help: `usage: sbx policy ${op} --policy FILE (--allow | --deny) [--json] FILE-OR-DIGEST…
  Each argument is a digest (blake3:<64 hex>) or a file whose BLAKE3 digest is taken. The policy
  file (unsigned canonical JSON) is rewritten in canonical form: lists sorted, no repeats.
  Deny is absolute (§5.5.4): a digest on the deny list is refused even if it is also allowed.
exit: 0 written, 1 malformed policy or digest, 2 usage error or unreadable file`,
    async run(args, io) {
      const { values, positionals } = parseOptions(args, {
        policy: { type: "string" },
        allow: { type: "boolean" },
        deny: { type: "boolean" },
        json: { type: "boolean" },
      });
      if (!values.policy || values.allow === values.deny || positionals.length === 0)
        throw new UsageError(
          "--policy, exactly one of --allow/--deny, and at least one file or digest are required",
        );
      const loaded = loadPolicy(values.policy);
      if (loaded.signed)
        throw new UsageError(`${values.policy} is signed; edit the unsigned policy and sign it again`);
      const ds = await digestsOf(positionals);
      const p = withDigests(loaded.policy, values.allow ? "allow" : "deny", op, ds);
      writePolicy(values.policy, p);
      summary(io, p, values.json ?? false, { [op === "add" ? "added" : "removed"]: ds });
      return EXIT.ok;
    },
  };
}

const showCommand: Command = {
  name: "policy show",
  summary: "print an exec policy (plain or signed, verified) and its address",
  help: `usage: sbx policy show --policy FILE [--steward DID] [--json]
  Prints the policy's content address, mode and lists. A signed policy (DSSE envelope) is verified
  first; with --steward it must carry that steward's signature.
exit: 0 shown, 1 invalid or badly signed policy, 2 usage error`,
  run(args, io) {
    const { values } = parseOptions(
      args,
      { policy: { type: "string" }, steward: { type: "string" }, json: { type: "boolean" } },
      false,
    );
    if (!values.policy) throw new UsageError("--policy FILE is required");
    const l = loadPolicy(values.policy, values.steward);
    summary(io, l.policy, values.json ?? false, { signed: l.signed, signers: l.signers });
    return Promise.resolve(EXIT.ok);
  },
};

const signCommand: Command = {
  name: "policy sign",
  summary: "sign an exec policy with the steward's key (DSSE envelope)",
  help: `usage: sbx policy sign --policy FILE --key KEYFILE --out FILE [--json]
  Signs the policy (payload type application/vnd.sandbox-attest.exec-policy+json). The signed
  policy's address is its payload's address, the same as the unsigned policy's.
exit: 0 signed, 1 malformed policy, 2 usage error or unreadable key`,
  run(args, io) {
    const { values } = parseOptions(
      args,
      {
        policy: { type: "string" },
        key: { type: "string" },
        out: { type: "string" },
        json: { type: "boolean" },
      },
      false,
    );
    if (!values.policy || !values.key || !values.out)
      throw new UsageError("--policy, --key and --out are required");
    const l = loadPolicy(values.policy);
    const kp = readKey(values.key);
    writeJsonOutput(values.out, signPolicy(l.policy, kp), { what: "signed policy" });
    summary(io, l.policy, values.json ?? false, { signer: kp.did });
    return Promise.resolve(EXIT.ok);
  },
};

export const commands: Command[] = [
  newCommand,
  editCommand("add"),
  editCommand("remove"),
  showCommand,
  signCommand,
];
