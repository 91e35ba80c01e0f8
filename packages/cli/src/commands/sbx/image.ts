// `sbx image import`, `sbx image list` and `sbx manifest pin` (sandbox-attest §14.9): OCI images into
// the local content-addressed image store, and a devcontainer.json pinned to what the store holds.
import { existsSync, rmSync, statSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import {
  applyEdits,
  findNodeAtLocation,
  modify,
  parseTree,
  printParseErrorCode,
  type ParseError,
} from "jsonc-parser";
import { isSandboxAttestError, ingestManifest, parsePinnedImage } from "@sbx/sandbox-attest/manifest";
import { isHostError } from "@sbx/host";
import {
  checkPinnedImage,
  ensureRootfs,
  importImage,
  parseRef,
  verifyRootfs,
  type ImageStore,
  type UnpackStats,
} from "@sbx/host/image";
import { EXIT, parseOptions, printJson, UsageError, type Command } from "../../command.ts";
import { MAX_JSON_BYTES, readInput, writeOutput } from "@sbx/host/files";
import { imagesDir, openImages } from "../../images.ts";

const IMAGES_HELP = `  --images DIR   the image store (default: images/ in the run store: --store, SBX_STORE, XDG)`;

/** firstMissing is the topmost folder on the way to `dir` that does not exist yet (null: `dir` exists). */
function firstMissing(dir: string): string | null {
  let missing: string | null = null;
  for (let d = resolve(dir); !existsSync(d); d = dirname(d)) {
    missing = d;
    if (dirname(d) === d) break;
  }
  return missing;
}

const importCmd: Command = {
  name: "image import",
  summary: "import an OCI image (layout dir, OCI archive, docker-save archive) into the image store",
  help: `usage: sbx image import <oci-layout-dir | oci-archive.tar | docker-save.tar> [--name NAME[:TAG]]
                        [--images DIR] [--json]
  Copies every image of the input into the local image store (§14.9), hashing each blob on the way in:
  a blob whose bytes are not its sha256 digest is refused (ImageDigestMismatch) and nothing is named.
  A classic docker-save archive's layers are checked against its config's rootfs.diff_ids, and the
  store records an OCI manifest built from them. Each image's layers are then unpacked into its
  verified rootfs (§14.9.3), so a layer the host refuses is named here, not at the first run; device
  nodes are skipped and listed, setuid and setgid bits stripped (said on stderr).
  Prints one line per image: name@sha256:<manifest>.
  --name REF     name the image REF (NAME[:TAG]) instead of the input's name; a NAME without a tag
                 takes the tag the OCI index names (org.opencontainers.image.ref.name), else latest
${IMAGES_HELP}
  --json         print [{name, tag, digest, reference, skipped_devices, stripped}]
exit: 0 imported, 1 refused (digest mismatch, malformed image or name, a refused layer, over a size
  bound: ImageTooLarge), 2 usage error,
  unreadable input, or no name (ImageUnnamed: the flag to give is named)`,
  run(args, io) {
    const { values, positionals } = parseOptions(args, {
      name: { type: "string" },
      images: { type: "string" },
      json: { type: "boolean" },
    });
    if (positionals.length !== 1) throw new UsageError("exactly one image input is required");
    const input = positionals[0] ?? "";
    try {
      statSync(input);
    } catch {
      throw new UsageError(`cannot read ${input}`);
    }
    // A name that is not NAME[:TAG] is ImageInvalid (exit 1), before the store is opened.
    if (values.name !== undefined) parseRef(values.name);
    // A refused import into a store that did not exist leaves no store: what it made is removed.
    const fresh = firstMissing(imagesDir(values.images));
    const store = openImages(values.images, true);
    // Every image is unpacked (and so every layer checked) before any is named.
    const unpacked = new Map<string, UnpackStats | null>();
    let got;
    try {
      got = importImage(store, input, values.name, {
        verify: (hex) => void unpacked.set(hex, ensureRootfs(store, hex).unpacked),
      });
    } catch (e) {
      if (fresh !== null) rmSync(fresh, { recursive: true, force: true });
      throw e;
    }
    const rows = got.map((i) => {
      const reference = `${i.name}@sha256:${i.hex}`;
      const u = unpacked.get(i.hex) ?? null;
      const skipped = u?.skipped ?? [];
      if (skipped.length > 0)
        io.err(
          `sbx image import: ${reference}: skipped ${skipped.length} device node${skipped.length === 1 ? "" : "s"} (the sandbox's /dev is its own): ${skipped.join(", ")}`,
        );
      if ((u?.stripped ?? 0) > 0)
        io.err(`sbx image import: ${reference}: stripped setuid/setgid bits from ${u?.stripped ?? 0} files`);
      return {
        name: i.name,
        tag: i.tag,
        digest: `sha256:${i.hex}`,
        reference,
        skipped_devices: skipped,
        stripped: u?.stripped ?? 0,
      };
    });
    if (values.json) printJson(io, rows);
    else for (const r of rows) io.out(r.reference);
    return Promise.resolve(EXIT.ok);
  },
};

const listCmd: Command = {
  name: "image list",
  summary: "list the images in the image store by name:tag and digest",
  help: `usage: sbx image list [--images DIR] [--json]
  Lists every named image of the store (§14.9): name:tag and the sha256 of its manifest.
${IMAGES_HELP}
  --json         print [{name, tag, digest}]
exit: 0 listed, 1 no image store there, 2 usage error`,
  run(args, io) {
    const { values } = parseOptions(args, { images: { type: "string" }, json: { type: "boolean" } }, false);
    const store = openImages(values.images, false);
    const rows = store.images().map((i) => ({ name: i.name, tag: i.tag, digest: `sha256:${i.hex}` }));
    if (values.json) printJson(io, rows);
    else for (const r of rows) io.out(`${r.name}:${r.tag}\t${r.digest}`);
    return Promise.resolve(EXIT.ok);
  },
};

/**
 * jsoncTree parses a devcontainer.json (JSONC: comments and trailing commas) for `sbx manifest pin`;
 * a syntax error is a usage error naming FILE:LINE:COLUMN, before anything is looked up or written.
 */
function jsoncTree(src: string, text: string): ReturnType<typeof parseTree> {
  const errors: ParseError[] = [];
  const tree = parseTree(text, errors, { allowTrailingComma: true, disallowComments: false });
  const e = errors[0];
  if (e === undefined) return tree;
  const before = text.slice(0, e.offset).split("\n");
  const line = before.length;
  const col = (before[before.length - 1] ?? "").length + 1;
  throw new UsageError(
    `${src}:${String(line)}:${String(col)}: ${printParseErrorCode(e.error)}: nothing written`,
  );
}

const pinCmd: Command = {
  name: "manifest pin",
  summary: "write a copy of a devcontainer.json whose image is pinned to the digest in the image store",
  help: `usage: sbx manifest pin <devcontainer.json> [--out FILE] [--image NAME[:TAG]] [--images DIR] [--json]
  Looks up the file's image (name[:tag], tag latest by default; an @sha256 already there is replaced)
  in the image store (§14.9) and writes a copy, comments and all, whose "image" is name@sha256:<digest>
  of what the store holds under that name. Then says whether the pinned copy is in the declarative
  subset (§14.3): a refusal lists every other offending member, as sbx manifest ingest does.
  --out FILE     where to write (default: the input's name with .pinned.json)
  --image REF    pin to the store's image REF instead of the one the file names
${IMAGES_HELP}
  --json         print {out, image, accepted, address | code, members}
exit: 0 written, 1 the image is not in the store, 2 usage error or unreadable file`,
  run(args, io) {
    const { values, positionals } = parseOptions(args, {
      out: { type: "string" },
      image: { type: "string" },
      images: { type: "string" },
      json: { type: "boolean" },
    });
    if (positionals.length !== 1) throw new UsageError("exactly one devcontainer.json is required");
    const src = positionals[0] ?? "";
    const text = readInput(src, "devcontainer.json", MAX_JSON_BYTES)
      .toString("utf8")
      .replace(/^\uFEFF/, "");
    const node = findNodeAtLocation(
      jsoncTree(src, text) ?? ({ type: "null", offset: 0, length: 0 } as never),
      ["image"],
    );
    const named = values.image ?? (typeof node?.value === "string" ? node.value : undefined);
    if (named === undefined) throw new UsageError(`${src} names no image: give one with --image NAME[:TAG]`);
    let ref;
    try {
      ref = parseRef(named);
    } catch {
      throw new UsageError(`image ${JSON.stringify(named)} is not NAME[:TAG]; give one with --image`);
    }
    const store = openImages(values.images, false);
    const hex = store.resolve(`${ref.name}:${ref.tag}`);
    if (hex === null) {
      io.err(
        `sbx manifest pin: ImageNotInStore: ${ref.name}:${ref.tag} is not in the image store ${imagesDir(values.images)}`,
      );
      return Promise.resolve(EXIT.invalid);
    }
    const image = `${ref.name}@sha256:${hex}`;
    const pinned = applyEdits(
      text,
      modify(text, ["image"], image, { formattingOptions: { insertSpaces: true, tabSize: 2 } }),
    );
    const out = values.out ?? src.replace(/(\.jsonc?)?$/, ".pinned.json");
    writeOutput(out, Buffer.from(pinned, "utf8"), { what: "pinned devcontainer.json" });
    let verdict: Record<string, unknown>;
    try {
      verdict = { accepted: true, address: ingestManifest(pinned).address };
    } catch (e) {
      if (!isSandboxAttestError(e)) throw e;
      verdict = {
        accepted: false,
        code: e.code,
        members: e.members.map((m) => ({ pointer: m.pointer, code: m.code })),
      };
    }
    if (values.json) printJson(io, { out, image, ...verdict });
    else {
      io.out(image);
      if (verdict.accepted !== true) {
        const members = verdict.members as { pointer: string; code: string }[];
        io.err(`note: the pinned copy is still refused (${String(verdict.code)}):`);
        for (const m of members) io.err(`  ${m.pointer.padEnd(40)} ${m.code}`);
      }
    }
    return Promise.resolve(EXIT.ok);
  },
};

/** One image's verdict: its blobs, and its cached rootfs (none, ok, or discarded). */
interface Verified {
  readonly image: string;
  readonly ok: boolean;
  readonly blobs: string;
  readonly rootfs: string;
}

function verifyOne(store: ImageStore, image: string, hex: string): Verified {
  const c = checkPinnedImage(store, `${image.split("@")[0] ?? image}@sha256:${hex}`);
  let rootfs: string;
  let ok = c.ok;
  try {
    rootfs = verifyRootfs(store, hex, { full: true }) === null ? "none cached" : "ok";
  } catch (e) {
    if (!isHostError(e)) throw e;
    // A tree that is not what its record says is never used again: the next run unpacks afresh.
    rmSync(join(store.dir, "rootfs", hex), { recursive: true, force: true });
    rootfs = `${e.code}: discarded`;
    ok = false;
  }
  return { image, ok, blobs: c.ok ? "ok" : `${c.code}: ${c.message}`, rootfs };
}

const verifyCmd: Command = {
  name: "image verify",
  summary: "hash an image's blobs and its cached rootfs again, whole; discard a rootfs that differs",
  help: `usage: sbx image verify [IMAGE…] [--images DIR] [--json]
  Checks each IMAGE (name[:tag], or name@sha256:<hex>; default: every named image of the store) in
  full (§14.9.4): its manifest, config and every layer are hashed again (ImageNotInStore,
  ImageDigestMismatch), and its cached rootfs, if any, is hashed whole and compared with its record,
  not only by the stat index a run uses. A rootfs that differs (RootfsMismatch) is discarded, so the
  next run unpacks it afresh from the blobs; one that matches gets a fresh stat index.
${IMAGES_HELP}
  --json         print [{image, ok, blobs, rootfs}]
exit: 0 every image and rootfs verified, 1 any refused (or a rootfs discarded), 2 usage error`,
  run(args, io) {
    const { values, positionals } = parseOptions(
      args,
      { images: { type: "string" }, json: { type: "boolean" } },
      true,
    );
    const store = openImages(values.images, false);
    const wanted: { image: string; hex: string | null }[] =
      positionals.length === 0
        ? store.images().map((i) => ({ image: `${i.name}:${i.tag}`, hex: i.hex }))
        : positionals.map((p) => {
            const pinned = parsePinnedImage(p);
            if (pinned !== null) return { image: p, hex: pinned.sha256 };
            try {
              return { image: p, hex: store.resolve(p) };
            } catch {
              throw new UsageError(`${p} is neither NAME[:TAG] nor NAME@sha256:<hex>`);
            }
          });
    const rows = wanted.map((w) =>
      w.hex === null
        ? { image: w.image, ok: false, blobs: "ImageNotInStore: no such name in the store", rootfs: "none" }
        : verifyOne(store, w.image, w.hex),
    );
    if (values.json) printJson(io, rows);
    else
      for (const r of rows)
        io.out(`${r.ok ? "ok" : "REFUSED"}\t${r.image}\tblobs ${r.blobs}\trootfs ${r.rootfs}`);
    return Promise.resolve(rows.every((r) => r.ok) ? EXIT.ok : EXIT.invalid);
  },
};

export const commands: Command[] = [importCmd, listCmd, pinCmd, verifyCmd];
