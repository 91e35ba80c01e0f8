// The fleet report's browser tests (fleet-suite.ts) in Debian's Firefox ESR, over WebDriver BiDi.
import { fleetSuite } from "./fleet-suite.ts";

fleetSuite("firefox");
