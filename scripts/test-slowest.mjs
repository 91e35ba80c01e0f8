// A node:test reporter that scripts/test.mjs runs beside the TAP reporter, its destination a file:
// one JSON object at the end of the run, {files: {path: wall ms}, passed, failed, skipped}, from which
// test.mjs prints the slowest files and one total over every group of files it ran. A file's time is
// the sum of its top-level tests' (a file runs its tests one after another).
export default async function* summary(source) {
  const files = {};
  let passed = 0;
  let failed = 0;
  let skipped = 0;
  for await (const event of source) {
    if (event.type !== "test:pass" && event.type !== "test:fail") continue;
    const d = event.data;
    if (d.nesting === 0) {
      const file = d.file ?? d.name;
      files[file] = (files[file] ?? 0) + (d.details?.duration_ms ?? 0);
    }
    if (d.details?.type === "suite") continue;
    if (d.skip !== undefined || d.todo !== undefined) skipped++;
    else if (event.type === "test:pass") passed++;
    else failed++;
  }
  yield JSON.stringify({ files, passed, failed, skipped });
}
