// What an auditor sees (auditor-suite.ts, issue 38) in Debian's Firefox ESR, over WebDriver BiDi.
import { auditorSuite } from "./auditor-suite.ts";

auditorSuite("firefox");
