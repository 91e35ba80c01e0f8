// A StrykerJS ignorer for `npm run mutate`: the message of a thrown error is not mutated.
// What a caller may rely on is an error's class and its code (STYLE.md item 4; tests assert the
// code, never the message), so a mutant that only changes the words of a message is one no test
// of this project may kill. Ignored: every argument of `new SomethingError(...)`, except the first
// of two or more, which is the code of a coded error (`new WireError("BadEnvelope", "...")`).
import { declareValuePlugin, PluginKind } from "@stryker-mutator/api/plugin";

/** isErrorMessage reports whether `path` is a message argument of `new …Error(…)`. */
function isErrorMessage(path) {
  const parent = path.parentPath;
  if (parent === null || !parent.isNewExpression() || path.listKey !== "arguments") return false;
  const callee = parent.node.callee;
  if (callee.type !== "Identifier" || !callee.name.endsWith("Error")) return false;
  return !(parent.node.arguments.length >= 2 && path.key === 0);
}

export const strykerPlugins = [
  declareValuePlugin(PluginKind.Ignore, "error-message", {
    shouldIgnore(path) {
      return isErrorMessage(path)
        ? "an error's message is not part of its contract (its code is)"
        : undefined;
    },
  }),
];
