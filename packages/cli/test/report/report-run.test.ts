// The run report's browser tests (run-suite.ts) in Debian's Chromium.
import { runSuite } from "./run-suite.ts";

runSuite("chromium");
