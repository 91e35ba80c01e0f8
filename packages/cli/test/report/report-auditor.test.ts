// What an auditor sees (auditor-suite.ts, issue 38) in Debian's Chromium.
import { auditorSuite } from "./auditor-suite.ts";

auditorSuite("chromium");
