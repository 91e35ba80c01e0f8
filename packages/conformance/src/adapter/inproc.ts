// The in-process adapter: the reference implementation's handlers, called directly.
import type { Json } from "@sbx/wire";
import type { Adapter, Capabilities, ConformanceClass, Handler, OpResult } from "../types.ts";

/** The reference implementation claims every class and runs the live cases (§11.2). */
export const ALL_CAPABILITIES: Capabilities = { classes: "all", live: true };

/** errorCode extracts the spec code an error carries, or "Internal" when it carries none. */
export function errorCode(e: unknown): string {
  const code = (e as { code?: unknown } | null)?.code;
  return typeof code === "string" && /^[A-Z][A-Za-z0-9]+$/.test(code) ? code : "Internal";
}

/** handlerTable merges the ops of every class; an op defined twice is a programming error. */
export function handlerTable(classes: readonly ConformanceClass[]): Map<string, Handler> {
  const table = new Map<string, Handler>();
  for (const c of classes)
    for (const [op, h] of Object.entries(c.ops)) {
      if (table.has(op)) throw new Error(`op ${op} defined twice (second by ${c.id})`);
      table.set(op, h);
    }
  return table;
}

/** runHandler calls one handler and turns its result or coded error into an OpResult. */
export async function runHandler(
  table: ReadonlyMap<string, Handler>,
  op: string,
  input: Json,
): Promise<OpResult> {
  const h = table.get(op);
  if (!h) return { ok: false, error: "UnknownOp" };
  try {
    return { ok: true, output: await h(input) };
  } catch (e) {
    return { ok: false, error: errorCode(e) };
  }
}

/** inProcessAdapter drives the reference implementation in this process. */
export function inProcessAdapter(classes: readonly ConformanceClass[]): Adapter {
  const table = handlerTable(classes);
  return {
    name: "reference (in-process)",
    capabilities: () => Promise.resolve(ALL_CAPABILITIES),
    call: (op, input) => runHandler(table, op, input),
    close: () => Promise.resolve(),
  };
}
