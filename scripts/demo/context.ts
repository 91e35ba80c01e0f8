// What every demo part receives.
export interface DemoContext {
  /** A scratch folder removed when the demo ends. */
  readonly work: string;
  /** Prints a part's heading. */
  title(text: string): void;
  /** Prints one indented line. */
  say(line: string): void;
}

/** check throws when a demo claim does not hold, so the demo fails loudly instead of printing a lie. */
export function check(cond: boolean, what: string): asserts cond {
  if (!cond) throw new Error(`demo check failed: ${what}`);
}
