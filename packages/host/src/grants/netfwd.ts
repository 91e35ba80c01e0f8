// jcp §4.2 network resources onto the sandbox (sandbox-attest §5.2, §5.6): a grant for one loopback
// port, `/net/127.0.0.1/<port>` with action `connect`, makes exactly that host port reachable from
// the sandbox's own network namespace, and nothing else. The host listens on a Unix socket per
// port in a folder bound read-only into the sandbox (/run/sbx-net) and relays each connection to
// 127.0.0.1:<port> on the host; inside, a relay (python3, from the read-only system) listens on
// 127.0.0.1:<port> in the sandbox's namespace and relays to that socket. The unit's command starts
// only once the relay listens. The sandbox keeps its loopback-only namespace: any other address
// or port reaches nothing. The relay runs as the unit (it can stop it, which only cuts itself off).
import { chmodSync, mkdtempSync, rmSync } from "node:fs";
import { connect, createServer, type Server, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Scope } from "@sbx/jcp-grant/grant";
import type { ExtraBind } from "../sandbox/bwrap.ts";

/** Where the relay sockets appear inside the sandbox. */
export const NET_DIR = "/run/sbx-net";

const PORT = /^\/net\/127\.0\.0\.1\/([1-9][0-9]{0,4})$/;

/** loopbackPorts returns the host loopback ports a scope grants `connect` to (exact resources only). */
export function loopbackPorts(scope: Scope): number[] {
  if (!scope.actions.includes("connect")) return [];
  return scope.resources
    .map((r) => PORT.exec(r)?.[1])
    .filter((p): p is string => p !== undefined)
    .map(Number)
    .filter((p) => p <= 65535);
}

// The relay inside: listens on each port of argv[1] (comma-separated), relays to NET_DIR/<port>.sock,
// says "up" once every listener is bound. Python from the read-only system, one thread: node cannot
// start inside (its threads need clone3, which the sandbox's filter refuses with EPERM).
const RELAY = `import asyncio, socket, sys
ports = sys.argv[1].split(",")
async def pipe(r, w):
    try:
        while True:
            d = await r.read(65536)
            if not d:
                break
            w.write(d)
            await w.drain()
    except Exception:
        pass
    finally:
        w.close()
def handler(p):
    async def h(r, w):
        try:
            ur, uw = await asyncio.open_unix_connection("${NET_DIR}/%s.sock" % p)
        except Exception:
            w.close()
            return
        await asyncio.gather(pipe(r, uw), pipe(ur, w))
    return h
async def main():
    for p in ports:
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.bind(("127.0.0.1", int(p)))
        await asyncio.start_server(handler(p), sock=s)
    sys.stdout.write("up\\n")
    sys.stdout.flush()
    await asyncio.Event().wait()
asyncio.run(main())
`;

/** A running set of forwarders: the bind and argv prefix the sandbox takes, and stop(). */
export interface Forwarders {
  readonly bind: ExtraBind;
  /** Prefix of the sandbox's argv: starts the relay, waits until it listens, execs the command. */
  readonly wrap: readonly string[];
  stop(): Promise<void>;
}

function relay(c: Socket, port: number): void {
  const h = connect(port, "127.0.0.1");
  c.on("error", () => h.destroy());
  h.on("error", () => c.destroy());
  c.pipe(h);
  h.pipe(c);
}

/** startForwarders listens on a Unix socket per port (host side) and returns what the sandbox needs. */
export async function startForwarders(ports: readonly number[]): Promise<Forwarders> {
  const dir = mkdtempSync(join(tmpdir(), "sbx-net-"));
  chmodSync(dir, 0o755);
  const servers: Server[] = [];
  const open = new Set<Socket>();
  try {
    for (const port of ports) {
      const s = createServer((c) => {
        open.add(c);
        c.on("close", () => open.delete(c));
        relay(c, port);
      });
      servers.push(s);
      const path = join(dir, `${String(port)}.sock`);
      await new Promise<void>((resolve, reject) => {
        s.once("error", reject);
        s.listen(path, () => {
          resolve();
        });
      });
      chmodSync(path, 0o666);
    }
  } catch (e) {
    for (const s of servers) s.close();
    rmSync(dir, { recursive: true, force: true });
    throw e;
  }
  const stage = `exec 3< <(exec /usr/bin/python3 -c "$0" "$1"); read -r up <&3 && [ "$up" = up ] || exit 125; shift; exec "$@"`;
  return {
    bind: { host: dir, inside: NET_DIR, writable: false },
    wrap: ["/usr/bin/bash", "-c", stage, RELAY, ports.join(",")],
    async stop() {
      // A connection the run left open (its peer on the host still talking) must not hold the
      // run's end: every one is ended with the listeners.
      const closed = Promise.all(servers.map((s) => new Promise<void>((r) => s.close(() => r()))));
      for (const c of open) c.destroy();
      await closed;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
