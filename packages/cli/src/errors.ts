// The one error class of @sbx/cli: a stable `code` for what made an invocation unusable (exit 2), a
// one-line message that names the path or option at fault, and an optional cause. Refusals by the
// libraries keep their own classes (WireError, JcpError, SandboxAttestError, HostError: exit 1).
import { CodedError, type WireErrorCode } from "@sbx/wire";

/** Codes a command-line failure carries; every one exits 2 (usage error or unusable input). */
export type CliErrorCode =
  // the command line itself
  | "Usage"
  | "NoTrust"
  // input files
  | "Unreadable"
  | "NotAFile"
  | "NotADirectory"
  | "BadKeyFile"
  // a key file that holds another key than the one a run signs with on this host (issue 38)
  | "KeyMismatch"
  // output files
  | "Unwritable"
  | "OutputExists"
  // a jcp ledger that is not an append-only log of {grants, receipt} entries
  | "BadLedger"
  // an input file refused by the §2.1/§2.9 strict parser before any check of its content
  | WireErrorCode;

/** The CLI's error class: `code` from CliErrorCode, a one-line message, an optional cause. */
export class CliError extends CodedError<CliErrorCode> {
  override readonly name = "CliError";
}

/** isCliError reports whether `e` is a CliError, optionally with `code`. */
export function isCliError(e: unknown, code?: CliErrorCode): e is CliError {
  return e instanceof CliError && (code === undefined || e.code === code);
}
