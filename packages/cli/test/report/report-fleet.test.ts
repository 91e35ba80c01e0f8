// The fleet report's browser tests (fleet-suite.ts) in Debian's Chromium.
import { fleetSuite } from "./fleet-suite.ts";

fleetSuite("chromium");
