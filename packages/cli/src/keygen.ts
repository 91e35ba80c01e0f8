// The keygen command both tools share.
import { EXIT, parseOptions, printJson, UsageError, type Command } from "./command.ts";
import { writeNewKey } from "./keyfile.ts";

/** keygenCommand builds `<tool> keygen --out FILE [--force] [--json]`. */
export function keygenCommand(tool: string, role: string): Command {
  return {
    name: "keygen",
    summary: `write a new Ed25519 ${role} key file (mode 0600) and print its did:key`,
    help: `usage: ${tool} keygen --out FILE [--force] [--json]
  Writes a new random Ed25519 key to FILE with mode 0600 and prints its did:key.
  --out FILE   where to write the key (refuses to overwrite unless --force)
  --force      overwrite FILE
  --json       print {"did", "path"}
exit: 0 written, 2 usage error or FILE exists`,
    run(args, io) {
      const { values } = parseOptions(
        args,
        { out: { type: "string" }, force: { type: "boolean" }, json: { type: "boolean" } },
        false,
      );
      if (!values.out) throw new UsageError("--out FILE is required");
      const kp = writeNewKey(values.out, values.force ?? false);
      if (values.json) printJson(io, { did: kp.did, path: values.out });
      else io.out(kp.did);
      return Promise.resolve(EXIT.ok);
    },
  };
}
