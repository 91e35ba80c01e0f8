// The page's Ed25519 (issue 19): the verification code is synchronous and asks its equations of the
// wire layer's Ed25519Backend; a browser's WebCrypto Ed25519 is native but asynchronous. So the
// verification runs once with a backend that records each equation asked and provisionally answers
// "holds"; then WebCrypto checks every recorded equation; when all hold, the provisional run asked
// nothing but true equations and its result stands. When any fails, the verification runs again
// with a backend that answers from WebCrypto's results (and @noble/curves for anything new), so
// every refusal is the one the CLI gives. The §2.4 checks (canonical encodings, small order, S < L)
// run in ed25519Refusal before any backend is asked, in every pass. Without WebCrypto Ed25519, or
// when it fails a self-test of one good and one bad signature, @noble/curves answers throughout.
import {
  bytesEqual,
  nobleBackend,
  testKey,
  toHex,
  useEd25519Backend,
  utf8,
  type Ed25519Backend,
} from "@sbx/wire";

interface Asked {
  readonly pk: Uint8Array<ArrayBuffer>;
  readonly msg: Uint8Array<ArrayBuffer>;
  readonly sig: Uint8Array<ArrayBuffer>;
  ok: boolean | null;
}

/** own copies bytes into a fresh ArrayBuffer (what WebCrypto takes). */
function own(b: Uint8Array): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(b.length);
  out.set(b);
  return out;
}

/** Which Ed25519 answered: the browser's WebCrypto, or @noble/curves in plain JavaScript. */
export type Engine = "webcrypto" | "@noble/curves";

function withBackend<T>(b: Ed25519Backend, fn: () => T): T {
  const before = useEd25519Backend(b);
  try {
    return fn();
  } finally {
    useEd25519Backend(before);
  }
}

type Subtle = SubtleCrypto;

async function webVerify(subtle: Subtle, keys: Map<string, Promise<CryptoKey>>, a: Asked): Promise<boolean> {
  const hex = toHex(a.pk);
  let k = keys.get(hex);
  if (k === undefined) {
    k = subtle.importKey("raw", a.pk, { name: "Ed25519" }, false, ["verify"]);
    keys.set(hex, k);
  }
  return subtle.verify({ name: "Ed25519" }, await k, a.sig, a.msg);
}

/** selfTest checks that WebCrypto accepts a good signature and refuses the same one on another message. */
async function selfTest(subtle: Subtle): Promise<boolean> {
  try {
    const key = testKey("report page self-test");
    const msg = utf8("sandbox-attest report page");
    const sig = nobleBackend.sign(key.seed, msg);
    const keys = new Map<string, Promise<CryptoKey>>();
    const pk = own(key.publicKey);
    const good = await webVerify(subtle, keys, { pk, msg: own(msg), sig: own(sig), ok: null });
    const other = own(utf8("another message"));
    const bad = await webVerify(subtle, keys, { pk, msg: other, sig: own(sig), ok: null });
    return good && !bad;
  } catch {
    return false;
  }
}

async function checkAll(subtle: Subtle, asked: Iterable<Asked>): Promise<void> {
  const keys = new Map<string, Promise<CryptoKey>>();
  await Promise.all(
    [...asked].map(async (a) => {
      try {
        a.ok = await webVerify(subtle, keys, a);
      } catch {
        a.ok = nobleBackend.verify(a.pk, a.msg, a.sig);
      }
    }),
  );
}

/**
 * verifyWithWebCrypto runs the synchronous verification `fn` with every Ed25519 equation answered by
 * WebCrypto (see above); returns its result and the engine that answered.
 */
export async function verifyWithWebCrypto<T>(fn: () => T): Promise<{ result: T; engine: Engine }> {
  const subtle = (globalThis as { crypto?: { subtle?: Subtle } }).crypto?.subtle;
  if (subtle === undefined || !(await selfTest(subtle)))
    return { result: withBackend(nobleBackend, fn), engine: "@noble/curves" };
  const asked = new Map<string, Asked>();
  const id = (pk: Uint8Array, sig: Uint8Array) => toHex(pk) + toHex(sig);
  const recording: Ed25519Backend = {
    ...nobleBackend,
    name: "recording",
    verify(pk, msg, sig) {
      const a = asked.get(id(pk, sig));
      if (a === undefined) {
        asked.set(id(pk, sig), { pk: own(pk), msg: own(msg), sig: own(sig), ok: null });
        return true;
      }
      return bytesEqual(a.msg, msg) ? true : nobleBackend.verify(pk, msg, sig);
    },
  };
  const first = withBackend(recording, fn);
  await checkAll(subtle, asked.values());
  if ([...asked.values()].every((a) => a.ok === true)) return { result: first, engine: "webcrypto" };
  const answered: Ed25519Backend = {
    ...nobleBackend,
    name: "webcrypto",
    verify(pk, msg, sig) {
      const a = asked.get(id(pk, sig));
      return a !== undefined && a.ok !== null && bytesEqual(a.msg, msg)
        ? a.ok
        : nobleBackend.verify(pk, msg, sig);
    },
  };
  return { result: withBackend(answered, fn), engine: "webcrypto" };
}
