// Lint: typescript-eslint strict type-checked rules, zero warnings (STYLE.md item 3).
// Two deliberate adjustments, both where TypeScript already gives the guarantee the rule wants:
// - no-non-null-assertion is off: with noUncheckedIndexedAccess every indexed read is `T | undefined`,
//   and `xs[i]!` after a bounds check is the idiom that states the checked invariant.
// - node:test's `test()` returns a promise the runner itself awaits, so it is a known-safe call.
// One rule of our own (scripts/lint/): `sbx/no-code-from-text`, no error code recovered from text.
import js from "@eslint/js";
import tseslint from "typescript-eslint";
import { plugin as sbx } from "./scripts/lint/no-code-from-text.mjs";

export default tseslint.config(
  { ignores: ["node_modules/**", "**/dist/**", "packages/host/native/**", "vectors/**"] },
  js.configs.recommended,
  ...tseslint.configs.strictTypeChecked,
  {
    languageOptions: {
      parserOptions: { project: "./tsconfig.json", tsconfigRootDir: import.meta.dirname },
    },
    plugins: { sbx },
    rules: {
      "sbx/no-code-from-text": "error",
      "@typescript-eslint/restrict-template-expressions": [
        "error",
        { allowNumber: true, allowBoolean: true, allowNullish: true },
      ],
      "@typescript-eslint/no-unnecessary-condition": ["error", { allowConstantLoopConditions: true }],
      "@typescript-eslint/no-non-null-assertion": "off",
      "@typescript-eslint/no-confusing-void-expression": ["error", { ignoreArrowShorthand: true }],
      "@typescript-eslint/no-floating-promises": [
        "error",
        {
          allowForKnownSafeCalls: [
            { from: "package", name: ["test", "describe", "it", "suite"], package: "node:test" },
          ],
        },
      ],
    },
  },
  {
    files: ["**/*.js", "**/*.mjs"],
    ...tseslint.configs.disableTypeChecked,
    languageOptions: {
      ...tseslint.configs.disableTypeChecked.languageOptions,
      globals: { process: "readonly", console: "readonly", URL: "readonly" },
    },
  },
);
