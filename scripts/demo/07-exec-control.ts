// Demo part 7: content-addressed process control (sandbox-attest §5.5). A steward signs a policy
// that denies one binary by digest; the kernel gate refuses it under another name, through the
// loader, and as a script's interpreter, and every decision lands in the journal.
import { spawnSync } from "node:child_process";
import { copyFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { testKey } from "@sbx/wire";
import { decide, makePolicy, openPolicy, policyAddress, signPolicy } from "@sbx/sandbox-attest/execpolicy";
import { gateUnavailableReason, hashFile, runGated } from "@sbx/host/gate";
import { check, type DemoContext } from "./context.ts";

function compile(dir: string): string {
  writeFileSync(join(dir, "tool.c"), '#include <stdio.h>\nint main(void){puts("TOOL-RAN");return 0;}\n');
  const r = spawnSync("cc", ["-o", join(dir, "tool"), join(dir, "tool.c")], { encoding: "utf8" });
  check(r.status === 0, `cc builds the demo tool (${r.stderr})`);
  return join(dir, "tool");
}

export default async function execControl(ctx: DemoContext): Promise<void> {
  ctx.title("content-addressed process control: exec deny by BLAKE3, enforced by the kernel (§5.5)");
  const tool = compile(ctx.work);
  const digest = (await hashFile(tool)).digest;
  const steward = testKey("steward");
  const env = signPolicy(makePolicy("denylist", [], [digest]), steward);
  const opened = openPolicy(env, { stewards: [steward.did] });
  ctx.say(`policy ${opened.address} signed by the steward: deny ${digest.slice(0, 23)}…`);
  check(opened.address === policyAddress(opened.policy), "the signed policy's address is its payload's");
  check(!decide(makePolicy("allowlist", [digest], [digest]), digest).allowed, "deny is absolute over allow");
  ctx.say("deny is absolute: a digest both allowed and denied is refused (pure decision)");
  const why = gateUnavailableReason();
  if (why !== null) {
    ctx.say(`SKIPPED kernel enforcement: ${why}`);
    return;
  }
  copyFileSync(tool, join(ctx.work, "innocent-name"));
  writeFileSync(join(ctx.work, "wrapper.sh"), `#!${tool}\n`, { mode: 0o755 });
  const script =
    "chmod +x innocent-name; ./tool; ./innocent-name; /lib64/ld-linux-x86-64.so.2 ./tool; ./wrapper.sh; echo done";
  const r = await runGated({
    policy: opened.policy,
    command: ["/bin/sh", "-c", script],
    workspace: ctx.work,
  });
  check(!r.stdout.includes("TOOL-RAN"), "the denied binary never ran");
  const refused = r.decisions.filter((d) => d.digest === digest && !d.allowed);
  for (const d of refused) ctx.say(`refused ${d.route.padEnd(11)} ${d.path} (rule ${d.rule})`);
  check(new Set(refused.map((d) => d.route)).size === 3, "refused directly, by interpreter and by loader");
  ctx.say(
    `journal: ${r.decisions.length} exec decisions (${refused.length} refused); helper cache ${r.stats?.hits ?? 0} hits, ${r.stats?.misses ?? 0} misses; ${r.stats?.kernelHits ?? 0} let through by the kernel unasked (ignore masks), each journaled`,
  );
}
