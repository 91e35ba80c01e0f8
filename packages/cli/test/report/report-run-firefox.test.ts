// The run report's browser tests (run-suite.ts) in Debian's Firefox ESR, over WebDriver BiDi.
import { runSuite } from "./run-suite.ts";

runSuite("firefox");
