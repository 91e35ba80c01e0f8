// Test helper for bwrap.test.ts: a stand-in for the process that supervises a sandbox. It starts
// one whose unit leaves two background sleeps, prints the sandbox's cgroup directories and the
// unit's pid as one JSON line once the unit has started, and then waits to be killed. With a second
// argument "outlives", the sandbox is a durable run's, which outlives its supervisor.
import { startSandbox } from "../../src/sandbox/index.ts";

const sb = startSandbox(
  ["/bin/sh", "-c", "sleep 600 & sleep 600 & echo started; wait"],
  { workspace: process.argv[2]!, ...(process.argv[3] === "outlives" ? { outlivesSupervisor: true } : {}) },
  "pipe",
);
sb.child.stdout?.once("data", () => {
  void sb.unitPid.then((pid) => {
    process.stdout.write(`${JSON.stringify({ dirs: sb.cgroup.dirs, unit: pid, launcher: sb.child.pid })}\n`);
  });
});
setInterval(() => undefined, 60_000);
