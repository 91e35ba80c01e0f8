// The keygen command both tools share.
import { EXIT, parseOptions, printJson, UsageError, type Command } from "./command.ts";
import { publicPathOf, readKey, writeKey, writeNewKey } from "@sbx/host/keys";

/** keygenCommand builds `<tool> keygen --out FILE [--pub FILE] [--from OLDFILE] [--force] [--json]`. */
export function keygenCommand(tool: string, role: string): Command {
  return {
    name: "keygen",
    summary: `write a new Ed25519 ${role} key (PKCS#8 PEM, mode 0600) and print its did:key`,
    help: `usage: ${tool} keygen --out FILE [--pub FILE] [--from KEYFILE] [--force] [--json]
  Writes a new random Ed25519 private key to FILE as PKCS#8 PEM with mode 0600, and its public key
  as SubjectPublicKeyInfo PEM beside it (key.pem → key.pub.pem), then prints the did:key. Both are
  standard forms: \`openssl pkey -in FILE -pubout\` prints the same public key. Give the public key
  file, or the did:key, to verifiers as --trust.
  Key files of earlier versions (JSON {kty, seed, did}) are still read everywhere, with a
  deprecation warning on stderr; --from converts one (or re-writes any private key) to PEM.
  --out FILE      where to write the private key (refuses to overwrite unless --force)
  --pub FILE      where to write the public key (default: FILE with .pem replaced by .pub.pem)
  --from KEYFILE  write this existing private key instead of a new one
  --force         overwrite FILE and the public key file
  --json          print {"did", "path", "public"}
exit: 0 written, 2 usage error, FILE exists, or FILE cannot be written`,
    run(args, io) {
      const { values } = parseOptions(
        args,
        {
          out: { type: "string" },
          pub: { type: "string" },
          from: { type: "string" },
          force: { type: "boolean" },
          json: { type: "boolean" },
        },
        false,
      );
      if (!values.out) throw new UsageError("--out FILE is required");
      const pub = values.pub ?? publicPathOf(values.out);
      const force = values.force ?? false;
      let did: string;
      if (values.from !== undefined) {
        const kp = readKey(values.from);
        writeKey(kp, values.out, pub, force);
        did = kp.did;
      } else did = writeNewKey(values.out, pub, force).did;
      if (values.json) printJson(io, { did, path: values.out, public: pub });
      else io.out(did);
      return Promise.resolve(EXIT.ok);
    },
  };
}
