// `sbx exec --policy P -- CMD…`: runs a command under the kernel exec gate (sandbox-attest §5.5.5).
import { policyAddress } from "@sbx/sandbox-attest/execpolicy";
import { gateUnavailableReason, runGated } from "@sbx/host/gate";
import { EXIT, parseOptions, printJson, UsageError, type Command } from "../../command.ts";
import { writeJsonOutput } from "@sbx/host/files";
import { loadPolicy } from "./policy.ts";

export const command: Command = {
  name: "exec",
  summary: "run a command with every exec decided by content (fanotify gate, Linux, root)",
  help: `usage: sbx exec --policy FILE [--steward DID] [--workspace DIR] [--journal FILE] [--timeout-ms N] [--json] -- CMD [ARGS…]
  Runs CMD in a sandbox (own pid and mount namespaces, vm.memfd_noexec=2) where the kernel asks the
  gate before any file is executed, by any route: directly, as an interpreter, or through the
  dynamic loader. Deny is absolute. FILE is a signed policy (verified; with --steward, signed by
  that steward) or an unsigned one. The command's output is printed when it ends.
  --workspace DIR   the sandbox's working directory, made a dedicated mount (default: current)
  --journal FILE    write the §8 journal (its head and one exec.decision event per decision) as JSON
  --timeout-ms N    how long a decision may take before it is DENY (default 5000)
  --json            print the summary as JSON, and nothing else, on stdout (the command's output
                    goes to stderr)
exit: 0 the command succeeded and nothing was refused, 1 it failed or an exec was refused,
      2 usage error, unusable policy file, or the gate cannot run here (not Linux/root, not built)`,
  async run(args, io) {
    const { values, positionals } = parseOptions(args, {
      policy: { type: "string" },
      steward: { type: "string" },
      workspace: { type: "string" },
      journal: { type: "string" },
      "timeout-ms": { type: "string" },
      json: { type: "boolean" },
    });
    if (!values.policy || positionals.length === 0)
      throw new UsageError("--policy FILE and a command after -- are required");
    const why = gateUnavailableReason();
    if (why !== null) throw new UsageError(why);
    const l = loadPolicy(values.policy, values.steward);
    const timeoutMs = values["timeout-ms"] === undefined ? 5000 : Number(values["timeout-ms"]);
    if (!Number.isInteger(timeoutMs) || timeoutMs < 1)
      throw new UsageError("--timeout-ms must be a positive integer");
    const r = await runGated({
      policy: l.policy,
      command: positionals,
      workspace: values.workspace ?? process.cwd(),
      timeoutMs,
    });
    // With --json, stdout carries the JSON alone: the command's own output goes to stderr.
    if (r.stdout) io[values.json ? "err" : "out"](r.stdout.replace(/\n$/, ""));
    if (r.stderr) io.err(r.stderr.replace(/\n$/, ""));
    const refused = r.decisions.filter((d) => !d.allowed);
    const address = policyAddress(l.policy);
    if (values.journal)
      writeJsonOutput(
        values.journal,
        { policy: address, head: r.journal.head(), events: r.journal.events },
        { what: "journal file" },
      );
    const sum = {
      policy: address,
      signed: l.signed,
      code: r.code,
      signal: r.signal,
      decisions: r.decisions.length,
      refused: refused.length,
      stats: r.stats,
    };
    if (values.json) printJson(io, sum);
    else {
      io.err(
        `sbx exec: policy ${address}${l.signed ? "" : " (unsigned)"}: ${r.decisions.length} exec decisions, ${refused.length} refused; exit ${r.code ?? `signal ${r.signal}`}`,
      );
      for (const d of refused)
        io.err(`  refused ${d.path} (${d.route}, ${d.rule}) ${d.digest ?? "no digest"}`);
    }
    return r.code === 0 && refused.length === 0 ? EXIT.ok : EXIT.invalid;
  },
};
