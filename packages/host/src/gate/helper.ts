// §5.5.5 Where the native helper is, and whether this host can run the gate at all.
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { HostError } from "../errors.ts";

/** The helper binary built by `npm run build` (packages/host/native/build.sh). */
export const HELPER_PATH = fileURLToPath(new URL("../../native/build/execgate", import.meta.url));
/**
 * The test build of the helper (AddressSanitizer, UBSan and fault hooks, packages/host/native/build.sh);
 * never used to guard a run.
 */
export const ASAN_HELPER_PATH = fileURLToPath(new URL("../../native/build/execgate-asan", import.meta.url));
/** The execveat probe the gate tests use (built beside the helper). */
export const EXECVEAT_PROBE_PATH = fileURLToPath(
  new URL("../../native/build/execveat-probe", import.meta.url),
);

/** gateUnavailableReason says why the gate cannot run here, or null when it can (§5.5.5). */
export function gateUnavailableReason(): string | null {
  if (process.platform !== "linux") return "the exec gate needs Linux (fanotify)";
  if (process.getuid?.() !== 0) return "the exec gate needs root (fanotify permission events, namespaces)";
  if (!existsSync(HELPER_PATH))
    return `the exec gate helper is not built (${HELPER_PATH}); run npm run build`;
  return null;
}

/** assertGateAvailable throws `GateUnavailable` with the reason when the gate cannot run. */
export function assertGateAvailable(): void {
  const why = gateUnavailableReason();
  if (why !== null) throw new HostError("GateUnavailable", why);
}
