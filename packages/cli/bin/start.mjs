// Shared start of the `sbx` and `jcp` bins: loads the compiled dispatcher and runs one invocation.
// Without a build it says how to make one (exit 2) instead of a module-not-found trace.
import { fileURLToPath } from "node:url";

const compiled = new URL("../dist/main.js", import.meta.url);

/** start runs `tool` with the process's arguments and sets the exit code. */
export async function start(tool) {
  let mod;
  try {
    mod = await import(compiled.href);
  } catch (e) {
    const path = fileURLToPath(compiled);
    if (e?.code !== "ERR_MODULE_NOT_FOUND" || !String(e.message).includes(path)) throw e;
    process.stderr.write(`${tool}: not built (no ${path}); run \`npm run build\` in the checkout\n`);
    process.exitCode = 2;
    return;
  }
  process.exitCode = await mod.runCli(tool, process.argv.slice(2));
}
