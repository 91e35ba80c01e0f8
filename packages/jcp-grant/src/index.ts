// @sbx/jcp-grant: the main API of jcp §4.1–§4.5, the same as the subpath @sbx/jcp-grant/grant;
// §4.6 standing grants and §4.7 checkpoints live at @sbx/jcp-grant/standing and /checkpoint.
// The one hand-written list of named exports is ./grant/index.ts; the root re-exports exactly that
// list rather than keeping a second copy that could drift (STYLE item 2 forbids `export *` from
// implementation files, which could leak internals; an index of named exports cannot).
export * from "./grant/index.ts";
