// `npm run conformance [-- --adapter CMD] [--class C1,C6] [--no-live] [--json]`
// Runs every class module against the reference implementation in process, or against any
// implementation speaking the JSON-lines protocol (§11.2). Prints `N passed, N failed, N skipped`
// per class and exits 1 if anything failed or was skipped, or a claimed class has no cases. Before
// any vector the adapter declares its capabilities (op `adapter.capabilities`); classes and live
// cases it does not claim are printed as out of scope and count as neither passed nor skipped.
import { parseArgs } from "node:util";
import { inProcessAdapter } from "./adapter/inproc.ts";
import { subprocessAdapter } from "./adapter/subprocess.ts";
import { loadClasses } from "./registry.ts";
import { runClass, type ClassTally } from "./run.ts";

const HELP = `usage: npm run conformance -- [options]
  --adapter CMD   test the implementation started by CMD over the JSON-lines protocol (§11.2)
  --class LIST    only these classes, e.g. C1,C6
  --no-live       leave out live cases (they then count as skipped, and the run fails)
  --json          print the tallies as JSON
The adapter declares the classes it implements (op adapter.capabilities, §11.2); the rest are
printed as out of scope and count for nothing.
exit: 0 all claimed classes passed with none skipped; 1 otherwise; 2 usage error`;

const { values } = parseArgs({
  options: {
    adapter: { type: "string" },
    class: { type: "string" },
    "no-live": { type: "boolean", default: false },
    json: { type: "boolean", default: false },
    help: { type: "boolean", short: "h", default: false },
  },
  strict: true,
});
if (values.help) {
  console.log(HELP);
  process.exit(0);
}
const all = await loadClasses();
const wanted = values.class?.split(",").map((s) => s.trim().toUpperCase());
const classes = wanted ? all.filter((c) => wanted.includes(c.id)) : all;
if (wanted && classes.length !== wanted.length) {
  console.error(`unknown class in ${values.class}; have ${all.map((c) => c.id).join(",")}`);
  process.exit(2);
}
const adapter = values.adapter ? subprocessAdapter(values.adapter) : inProcessAdapter(all);
const caps = await adapter.capabilities();
const tallies: ClassTally[] = [];
for (const c of classes) {
  const t = await runClass(c, adapter, { live: !values["no-live"], caps });
  const whole = t.outOfScope.includes("class");
  if (!whole && t.passed + t.failed + t.skipped === 0) t.failures.push("class has no cases");
  tallies.push(t);
  if (whole) {
    if (!values.json)
      console.log(`${t.id.padEnd(4)} ${t.title.padEnd(34)} out of scope (declared by the adapter)`);
    continue;
  }
  if (!values.json) {
    console.log(
      `${t.id.padEnd(4)} ${t.title.padEnd(34)} ${t.passed} passed, ${t.failed} failed, ${t.skipped} skipped`,
    );
    for (const f of t.failures.slice(0, 20)) console.log(`     FAIL ${f}`);
    if (t.outOfScope.length > 0)
      console.log(`     out of scope (declared by the adapter): ${t.outOfScope.join(", ")}`);
  }
}
const outOfScope = tallies.flatMap((t) =>
  t.outOfScope.map((what) => (what === "class" ? t.id : `${t.id} ${what}`)),
);
await adapter.close();
const sum = (k: "passed" | "failed" | "skipped") => tallies.reduce((n, t) => n + t[k], 0);
const bad = tallies.some((t) => t.failed > 0 || t.skipped > 0 || t.failures.length > 0);
if (values.json)
  console.log(JSON.stringify({ adapter: adapter.name, capabilities: caps, outOfScope, tallies }, null, 2));
else {
  console.log(
    `conformance (${adapter.name}): ${sum("passed")} passed, ${sum("failed")} failed, ${sum("skipped")} skipped`,
  );
  console.log(
    `out of scope (declared by the adapter): ${outOfScope.length > 0 ? outOfScope.join(", ") : "none"}`,
  );
}
process.exit(bad ? 1 : 0);
