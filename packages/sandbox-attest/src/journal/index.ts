// @sbx/sandbox-attest/journal — the replay journal of one active interval (sandbox-attest §8).
//
// Appending (host runner, exec gate):
//   const j = new Journal();
//   j.append(execDecisionEvent(decision, policyAddress)); // from @sbx/sandbox-attest/execpolicy
//   j.append({ type: "process.start", pid, argv, binary });
//   j.append({ type: "stdio.chunk", stream: "stdout", digest, length: "4096" }); // seq and chunk are assigned
//   j.append({ type: "file.write", path: "out.txt", digest, size: "12" });
//   j.append({ type: "process.exit", pid, code: 0, signal: null });
//   const head = j.head();            // {size, root}: what the attestation binds (§7)
//   const proof = j.prove(3);         // {index, path}
// Checking (auditor): verifyJournal(events, head), verifyEventInclusion(head, event, proof),
// verifyJournalConsistency(older, newer, path). Every refusal is a SandboxAttestError code.
export { EVENT_TYPES, parseEvent } from "./events.ts";
export type {
  JournalEvent,
  ProcessStart,
  ExecDecision,
  ExecRoute,
  ExecRuleName,
  StdioChunk,
  StdioStream,
  FileWrite,
  ProcessExit,
} from "./events.ts";
export { Journal, eventLeaf } from "./journal.ts";
export { journalNodes, readStoredJournal, MAX_STORED_JOURNAL_EVENTS } from "./nodes.ts";
export type { JournalNode } from "./nodes.ts";
export type { EventInput, EventProof } from "./journal.ts";
export { verifyJournal, verifyEventInclusion, verifyJournalConsistency } from "./verify.ts";
