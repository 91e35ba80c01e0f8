#!/usr/bin/env node
// `jcp`: the grant protocol commands, run from the JavaScript that `npm run build` compiles into
// ../dist (scripts/build.mjs); `npm ci` and `npm install` build it through `prepare`.
import { start } from "./start.mjs";
await start("jcp");
