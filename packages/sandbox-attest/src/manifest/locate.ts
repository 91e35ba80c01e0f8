// §14.2 Where a syntax error sits, as the JSON path of the member being read there: computed for all
// errors in one pass over the text. (Asking jsonc-parser's getLocation once per error re-scans the
// text from the start each time, quadratic in the input: minutes for a few hundred KB of errors.)
// The segments follow getLocation's rules exactly, so pointers are the same as one call per error.
import { visit } from "jsonc-parser";

type Segments = (string | number)[];

/**
 * pathsAt returns, for each offset in `offsets`, the path getLocation(text, offset) would give, in one
 * visit of `text`: each pending offset is settled by the first event at or past it.
 */
export function pathsAt(text: string, offsets: readonly number[]): Segments[] {
  const order = offsets.map((o, i) => ({ o, i })).sort((a, b) => a.o - b.o);
  const out: Segments[] = offsets.map(() => []);
  const segs: Segments = [];
  let next = 0;
  // settle every pending offset for which `stops(offset)` holds, with the path as it is now
  const settle = (stops: (position: number) => boolean): void => {
    while (next < order.length && stops(order[next]!.o)) out[order[next++]!.i] = [...segs];
  };
  visit(text, {
    onObjectBegin: (offset) => {
      settle((p) => p <= offset);
      segs.push("");
    },
    onObjectProperty: (name, offset, length) => {
      settle((p) => p < offset);
      segs[segs.length - 1] = name;
      settle((p) => p <= offset + length);
    },
    onObjectEnd: (offset) => {
      settle((p) => p <= offset);
      segs.pop();
    },
    onArrayBegin: (offset) => {
      settle((p) => p <= offset);
      segs.push(0);
    },
    onArrayEnd: (offset) => {
      settle((p) => p <= offset);
      segs.pop();
    },
    onLiteralValue: (_value, offset, length) => {
      settle((p) => p < offset);
      settle((p) => p <= offset + length);
    },
    onSeparator: (sep, offset) => {
      settle((p) => p <= offset);
      if (sep !== ",") return;
      const last = segs[segs.length - 1];
      if (typeof last === "number") segs[segs.length - 1] = last + 1;
      else if (segs.length > 0) segs[segs.length - 1] = "";
    },
  });
  settle(() => true);
  return out;
}
