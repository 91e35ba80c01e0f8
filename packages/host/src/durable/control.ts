// The supervisor's control channel: a unix socket in the run's runtime directory (mode 0700, so
// only this host's root reaches it). One request per connection, one JSON line each way. A refusal
// crosses as a structured value, `{code, message, detail}` (errorToJson), and is rebuilt with its
// code (errorFromJson), so `sbx suspend` and `sbx resume` exit exactly as they would had they acted
// themselves; no code is read back out of a message.
import { createConnection, createServer } from "node:net";
import { chmodSync, unlinkSync } from "node:fs";
import { errorFromJson, errorToJson, isCodedError, type ErrorJson } from "@sbx/wire";
import { HostError } from "../errors.ts";

/** A request to a supervisor. */
export type ControlRequest =
  | { readonly op: "suspend"; readonly release: boolean }
  | { readonly op: "resume" }
  | { readonly op: "close"; readonly outcome: string | null }
  | { readonly op: "status" };

/** The supervisor's answer: its result, or its refusal as a coded error's JSON form. */
type Reply =
  { readonly ok: true; readonly result: unknown } | { readonly ok: false; readonly error: ErrorJson };

const MAX_LINE = 64 * 1024;

/** replyOf is the refusal `e` as it crosses: a coded error keeps its code; anything else is ControlFailed. */
function replyOf(e: unknown): Reply {
  if (isCodedError(e)) return { ok: false, error: errorToJson(e) };
  const msg = e instanceof Error ? e.message : String(e);
  return { ok: false, error: errorToJson(new HostError("ControlFailed", `the supervisor failed: ${msg}`)) };
}

/** answerOf reads the supervisor's answer line: its result, or its refusal rebuilt with its code. */
function answerOf(line: string): { result: unknown } | Error {
  let r: { ok?: unknown; result?: unknown; error?: unknown } | null;
  try {
    r = JSON.parse(line) as typeof r;
  } catch (e) {
    return new HostError("ControlFailed", "the supervisor's answer is not JSON", { cause: e });
  }
  if (r?.ok === true) return { result: r.result };
  return refusalOf(r?.ok === false ? r.error : undefined);
}

/** refusalOf rebuilds a refusal that crossed (errorFromJson); ControlFailed when it is not one. */
function refusalOf(error: unknown): Error {
  try {
    return errorFromJson(error);
  } catch (e) {
    return new HostError("ControlFailed", "the supervisor's answer is neither a result nor a coded error", {
      cause: e,
    });
  }
}

/**
 * Thrown by a handler for a request it will not answer: its connection is ended unanswered, as a
 * departing supervisor's would be, so the asker asks again or acts on the record (askSupervisor).
 * A supervisor that has begun to end drops every request whose turn comes after that.
 */
export class Unanswerable extends Error {}

/** A listening control channel. */
export interface ControlServer {
  /**
   * close stops taking connections, without waiting for those still open: each is answered, or
   * dropped, by its own request's turn. Waiting for them here let a request queued behind the
   * supervisor's ending hold that ending (and the run's lock) for as long as its asker waited,
   * and the asker for as long as the ending: both for ever.
   */
  close(): void;
}

/** serveControl listens on `path` (a stale socket file is replaced) and answers each request with `handle`. */
export async function serveControl(
  path: string,
  handle: (req: ControlRequest) => Promise<unknown>,
): Promise<ControlServer> {
  try {
    unlinkSync(path);
  } catch {
    // none
  }
  const server = createServer((sock) => {
    let buf = "";
    sock.setEncoding("utf8");
    sock.on("error", () => undefined);
    sock.on("data", (d: string) => {
      buf += d;
      if (buf.length > MAX_LINE) sock.destroy();
      const nl = buf.indexOf("\n");
      if (nl < 0) return;
      let req: ControlRequest;
      try {
        req = JSON.parse(buf.slice(0, nl)) as ControlRequest;
      } catch (e) {
        sock.end(JSON.stringify(replyOf(e)) + "\n");
        return;
      }
      handle(req).then(
        (result) => sock.end(JSON.stringify({ ok: true, result: result ?? null }) + "\n"),
        (e: unknown) => {
          if (e instanceof Unanswerable) sock.destroy();
          else sock.end(JSON.stringify(replyOf(e)) + "\n");
        },
      );
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(path, () => resolve());
  });
  chmodSync(path, 0o600);
  return {
    close: () => {
      server.close();
    },
  };
}

/** Raised inside askOnce when the channel broke before any answer: the supervisor was going away. */
class Unanswered extends Error {}

/**
 * askSupervisor sends `req` to the supervisor listening on `path`: resolves its result, rejects with
 * its refusal, or resolves undefined when no supervisor listens there (no socket, or refused). A
 * `resume` that a supervisor accepts and then goes away from unanswered (it was ending, e.g. after
 * `suspend --release`, while resumes race) is asked again, a few times, a moment later: by then
 * another supervisor answers, or none listens and the caller resumes from the record itself, whose
 * head decides (a resume the departed supervisor did carry out is refused by the record's phase,
 * never done twice). Any other request, or a resume that keeps breaking, is `ControlFailed`: a
 * suspend or close whose supervisor died mid-way is reported, not silently finished from here.
 */
export async function askSupervisor(
  path: string,
  req: ControlRequest,
): Promise<{ result: unknown } | undefined> {
  for (let attempt = 1; ; attempt++)
    try {
      return await askOnce(path, req);
    } catch (e) {
      if (!(e instanceof Unanswered)) throw e;
      if (req.op !== "resume" || attempt >= 5) throw new HostError("ControlFailed", e.message);
      await new Promise((r) => setTimeout(r, 50 * attempt));
    }
}

function askOnce(path: string, req: ControlRequest): Promise<{ result: unknown } | undefined> {
  return new Promise((resolve, reject) => {
    const sock = createConnection(path);
    let buf = "";
    let connected = false;
    sock.setEncoding("utf8");
    sock.on("connect", () => {
      connected = true;
      sock.write(JSON.stringify(req) + "\n");
    });
    sock.on("data", (d: string) => (buf += d));
    sock.on("error", (e: NodeJS.ErrnoException) => {
      if (!connected) resolve(undefined);
      else if (buf === "") reject(new Unanswered(`the supervisor's channel broke: ${e.code ?? e.message}`));
      else reject(new HostError("ControlFailed", `the supervisor's channel broke: ${e.code ?? e.message}`));
    });
    sock.on("close", () => {
      if (!connected) return;
      const line = buf.split("\n")[0] ?? "";
      if (line === "") {
        reject(new Unanswered("the supervisor ended without answering"));
        return;
      }
      const answer = answerOf(line);
      if (answer instanceof Error) reject(answer);
      else resolve(answer);
    });
  });
}
