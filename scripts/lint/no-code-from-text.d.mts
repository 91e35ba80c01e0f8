// Types of no-code-from-text.mjs, for the test that imports it.
import type { ESLint, Rule } from "eslint";

/** A word run, an optional group close, then a colon and a space or the end: the shape of a code in a message. */
export declare const CODE_SHAPE: RegExp;
/** The rule `sbx/no-code-from-text`. */
export declare const noCodeFromText: Rule.RuleModule;
/** The plugin eslint.config.js registers as `sbx`. */
export declare const plugin: ESLint.Plugin;
