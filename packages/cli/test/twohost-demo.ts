// scripts/demo-twohost.sh: the two-host scenario (twohost-scenario.ts) with every step printed; the
// namespaces, links and cluster are removed at the end, also on failure or Ctrl-C. Run as root.
import { leftovers, newTwoHosts, setUp, tearDown, tearDownOnSignal } from "./twohost.ts";
import { runScenario } from "./twohost-scenario.ts";

const t = newTwoHosts();
tearDownOnSignal(t);
let code = 0;
try {
  await setUp(t, (l) => console.log(l));
  console.log(`host A: SBX_STORE=${t.a.url.replace(/:[^:@/]*@/, ":***@")} SBX_LOCAL_DIR=${t.a.local}`);
  console.log(`host B: SBX_STORE=${t.b.url.replace(/:[^:@/]*@/, ":***@")} SBX_LOCAL_DIR=${t.b.local}`);
  const r = await runScenario(t, (l) => console.log(l));
  console.log(`run ${r.lifecycle.id}: ${r.lifecycle.kinds.join(", ")}`);
  process.stdout.write(r.lifecycle.verifyB.out);
  const ok =
    r.lifecycle.verifyA.code === 0 &&
    r.lifecycle.verifyB.code === 0 &&
    r.resume.tally["ok"] === 1 &&
    r.resume.tally["StaleHead"] === 999 &&
    r.spend.spentUj <= r.spend.budgetUj;
  console.log(ok ? "two hosts: OK" : "two hosts: FAILED");
  code = ok ? 0 : 1;
} catch (e) {
  console.error(e);
  code = 1;
} finally {
  tearDown(t);
  const left = leftovers(t.tag);
  if (left.length > 0) {
    console.error(`left behind: ${left.join("; ")}`);
    code = 1;
  }
}
process.exitCode = code;
