// Test driver for failclosed.test.ts: starts a gated sandbox that runs `sleep 60`, prints its
// sandbox pid, then waits to be killed (its death must take the sandbox with it).
import { makePolicy } from "@sbx/sandbox-attest/execpolicy";
import { startGate } from "@sbx/host/gate";

const s = await startGate({
  policy: makePolicy("denylist"),
  command: ["/bin/sh", "-c", "sleep 60"],
  workspace: process.argv[2] ?? "/tmp",
});
console.log(`sandbox ${s.sandboxPid} helper ${s.helperPid}`);
await s.done;
