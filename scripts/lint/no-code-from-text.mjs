// ESLint rule `sbx/no-code-from-text`, part of `npm run lint`: an error's code is read from its
// `code` (CodedError, errorFromJson across a process boundary), never recovered from its text
// (issue 30, defect 6). A message is for people: the code it leads with is there to be read, not
// parsed. The rule reports, in every source file:
//   - a regular expression (a literal, or `RegExp("…")` / `new RegExp("…")` of a literal string)
//     that takes a run of word characters followed by a colon, as `^\w+: `, `^[A-Z]\w*: ` and
//     `: ([A-Z][A-Za-z]+):` do: the shape of a code at the head of a message or an error line;
//   - a call that cuts or searches the text of an error's `message` (`x.message.replace(…)`,
//     `.slice`, `.split`, `.startsWith`, `.match`, …) or runs a pattern over it (`re.exec(x.message)`).
// A regex a file does need in that shape (a protocol's `name: value` header, say) says why on the
// line before it, with an eslint-disable-next-line comment naming this rule.

/** A word run (`\w+`, `[A-Z]\w*`, `[A-Za-z]{1,64}`, …), an optional group close, then a colon and a space or the end. */
export const CODE_SHAPE = /(?:\\w|\[[^\]]*(?:A-Z|\\w)[^\]]*\])(?:[+*]|\{\d*,?\d*\})\??\)?:(?: |\\s|$)/;

/** Methods of a string that cut it or search it, where the string is an error's message. */
const CUTS = new Set([
  "replace",
  "replaceAll",
  "match",
  "matchAll",
  "split",
  "slice",
  "substring",
  "substr",
  "startsWith",
  "search",
  "indexOf",
  "lastIndexOf",
]);

/** isMessage: is `node` an expression `….message`? */
function isMessage(node) {
  return (
    node?.type === "MemberExpression" &&
    !node.computed &&
    node.property.type === "Identifier" &&
    node.property.name === "message"
  );
}

/** patternOf: the source of a regex literal or of a literal string given to RegExp, else null. */
function patternOf(node) {
  if (node.type === "Literal" && node.regex) return node.regex.pattern;
  if (
    (node.type === "NewExpression" || node.type === "CallExpression") &&
    node.callee.type === "Identifier"
  ) {
    const first = node.arguments[0];
    if (node.callee.name !== "RegExp" || first === undefined) return null;
    if (first.type === "Literal" && typeof first.value === "string") return first.value;
    if (first.type === "TemplateLiteral" && first.expressions.length === 0)
      return first.quasis[0].value.cooked;
  }
  return null;
}

/** @type {import("eslint").Rule.RuleModule} */
export const noCodeFromText = {
  meta: {
    type: "problem",
    docs: { description: "an error's code is read from its `code`, never recovered from its message" },
    schema: [],
    messages: {
      regex:
        "this pattern takes a word followed by a colon, the shape of an error code in a message: read the error's `code` (isCodedError, errorFromJson) instead",
      cut: "`.message.{{method}}(…)` reads an error's text: use its `code`, `reason` and `detail` (CodedError)",
      exec: "a pattern run over an error's message recovers what its `code` already says",
    },
  },
  create(context) {
    const checkPattern = (node) => {
      const p = patternOf(node);
      if (p !== null && CODE_SHAPE.test(p)) context.report({ node, messageId: "regex" });
    };
    return {
      Literal: checkPattern,
      NewExpression: checkPattern,
      CallExpression(node) {
        checkPattern(node);
        const callee = node.callee;
        if (callee.type !== "MemberExpression" || callee.computed || callee.property.type !== "Identifier")
          return;
        const method = callee.property.name;
        if (CUTS.has(method) && isMessage(callee.object))
          context.report({ node, messageId: "cut", data: { method } });
        else if (method === "exec" && isMessage(node.arguments[0]))
          context.report({ node, messageId: "exec" });
      },
    };
  },
};

/** The plugin eslint.config.js registers as `sbx`. */
export const plugin = { rules: { "no-code-from-text": noCodeFromText } };
