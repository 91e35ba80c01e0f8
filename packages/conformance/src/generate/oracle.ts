// Vector generation checks every vector an oracle can answer three ways: the expectation the
// generator states, the independent oracle's answer (oracle/*.ts, a literal restatement of the
// spec), and the implementation's answer (the class handlers). Any disagreement fails generation,
// so a vector can never freeze a behaviour that only the implementation under test vouches for.
import { canonicalize, type Json } from "@sbx/wire";
import { durableOutputOracle } from "../oracle/durable.ts";
import { execPolicyOracle } from "../oracle/execpolicy.ts";
import { fleetOracle } from "../oracle/fleet.ts";
import { fsTreeOutputOracle } from "../oracle/fstree.ts";
import { jcpOracle, jcpOutputOracle, type OracleResult } from "../oracle/jcp.ts";
import { manifestOutputOracle } from "../oracle/manifest.ts";
import { recordOutputOracle } from "../oracle/records.ts";
import type { Handler, Vector } from "../types.ts";

/**
 * The oracles by op; an op without one is not cross-checked here. The JCP oracle answers every case
 * (refusals included); the durable output oracles only say what a valid case must output, so a
 * vector expecting a refusal of one of their ops is left to the generator's stated code.
 */
function oracle(v: Vector): OracleResult | undefined {
  const full = jcpOracle(v.op, v.input) ?? fleetOracle(v.op, v.input) ?? execPolicyOracle(v.op, v.input);
  if (full !== undefined || v.expect !== "ok") return full;
  const out =
    durableOutputOracle(v.op, v.input) ??
    recordOutputOracle(v.op, v.input) ??
    manifestOutputOracle(v.op, v.input) ??
    fsTreeOutputOracle(v.op, v.input);
  return out === undefined ? jcpOutputOracle(v.op, v.input) : { ok: true, output: out };
}

function describe(r: OracleResult): string {
  return r.ok ? `ok ${canonicalize(r.output)}` : `error ${r.error}`;
}

/** agrees reports whether a result is what the vector expects (its exact output when it states one). */
function agrees(v: Vector, r: OracleResult): boolean {
  if (v.expect === "ok")
    return r.ok && (v.output === undefined || canonicalize(v.output) === canonicalize(r.output));
  return !r.ok && r.error === v.expect.error;
}

async function implementation(h: Handler | undefined, input: Json): Promise<OracleResult> {
  if (h === undefined) return { ok: false, error: "UnknownOp" };
  try {
    return { ok: true, output: await h(input) };
  } catch (e) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === "string") return { ok: false, error: code };
    throw e;
  }
}

/**
 * checkOracles compares each vector with its oracle and with the implementation's handler for its
 * op. Returns one line per disagreement; an empty list means all three agree on every vector.
 */
export async function checkOracles(
  vectors: readonly Vector[],
  handlers: Readonly<Record<string, Handler>>,
): Promise<string[]> {
  const out: string[] = [];
  for (const v of vectors) {
    const o = oracle(v);
    if (o === undefined) continue;
    const want =
      v.expect === "ok"
        ? `ok ${v.output === undefined ? "" : canonicalize(v.output)}`
        : `error ${v.expect.error}`;
    if (!agrees(v, o)) out.push(`${v.id}: the generator states ${want}, the oracle answers ${describe(o)}`);
    const i = await implementation(handlers[v.op], v.input);
    if (!agrees(v, i))
      out.push(`${v.id}: the generator states ${want}, the implementation answers ${describe(i)}`);
  }
  return out;
}
