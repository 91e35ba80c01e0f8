#!/usr/bin/env node
// `sbx`: the sandbox-attest host commands, run from the JavaScript that `npm run build` compiles
// into ../dist (scripts/build.mjs); `npm ci` and `npm install` build it through `prepare`.
import { start } from "./start.mjs";
await start("sbx");
