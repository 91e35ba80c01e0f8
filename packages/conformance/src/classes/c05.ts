// C5: the audit chain (§7.7). Valid chains from genesis and from a checkpoint; every attestation
// dropped, every adjacent pair swapped, a stray attestation inserted at every position, a duplicate,
// splices from another chain and another domain, a fork. Codes are stated here by construction.
import {
  isDigest,
  payloadOf,
  signPayload,
  type Digest,
  type Envelope,
  type Json,
  type JsonObject,
  type KeyPair,
} from "@sbx/wire";
import { ATTESTATION_PAYLOAD_TYPE, attestationAddress } from "@sbx/sandbox-attest/attestation";
import {
  auditGenesis,
  firstLink,
  linkAfter,
  stewardDomain,
  verifyAuditChain,
  type AuditLink,
} from "@sbx/sandbox-attest/audit";
import { errCase, okCase } from "../generate/build.ts";
import { key } from "../generate/keys.ts";
import type { ConformanceClass, Handler, Vector } from "../types.ts";
import { attest, d, flip, host, predicate, unlinkedPredicate } from "./c03/fixture.ts";
import { optionalStrings } from "./input.ts";

const C = "C5" as const;
const OP = "audit.verify";

function digest(v: Json | undefined, what: string): Digest {
  if (!isDigest(v)) throw new TypeError(`${what} must be a digest`);
  return v;
}

const ops: Record<string, Handler> = {
  [OP]: (i) => {
    const o = i as JsonObject;
    const hosts = optionalStrings(o.hosts);
    const from = o.from as JsonObject | undefined;
    const r = verifyAuditChain(o.attestations as unknown as Envelope[], {
      domain: digest(o.domain, "domain"),
      ...(hosts ? { hosts } : {}),
      ...(from ? { from: { head: digest(from.head, "from.head"), seq: Number(from.seq) } } : {}),
    });
    return { head: r.head, seq: r.seq, count: r.count };
  },
};

const domain = stewardDomain(key("steward").did);
const hosts = [host.did, key("host-2").did];

/** chain builds n attestations linked from `link`, host keys alternating over `keys`. */
function chain(n: number, link: AuditLink, tag: string, keys: readonly KeyPair[] = [host]): Envelope[] {
  const out: Envelope[] = [];
  for (let i = 0; i < n; i++) {
    const l = i === 0 ? link : linkAfter(out[i - 1]!);
    const k = keys[i % keys.length]!;
    const exit =
      i % 3 === 2
        ? { status: "signaled" as const, signal: "SIGTERM" }
        : { status: "exited" as const, exit_code: i % 2 };
    out.push(
      attest(
        { ...predicate({ journal: { root: d(`${tag}-journal-${i}`), events: 3 + i }, outcome: exit }), ...l },
        k,
      ),
    );
  }
  return out;
}

const A = chain(5, firstLink(domain), "a", [host, key("host-2")]);
const input = (list: readonly Envelope[], extra: JsonObject = {}): Json => ({
  domain,
  hosts,
  attestations: list as unknown as Json,
  ...extra,
});
const result = (list: readonly Envelope[]): Json => ({
  head: attestationAddress(list[list.length - 1]!),
  seq: list.length,
  count: list.length,
});

function validVectors(): Vector[] {
  const from = { head: attestationAddress(A[1]!), seq: 2 };
  return [
    okCase(
      C,
      "c5-valid-chain",
      "five attestations by two domain hosts, linked from genesis",
      OP,
      input(A),
      result(A),
    ),
    okCase(
      C,
      "c5-valid-prefix",
      "a prefix of a chain is a chain",
      OP,
      input(A.slice(0, 3)),
      result(A.slice(0, 3)),
    ),
    okCase(
      C,
      "c5-valid-from-checkpoint",
      "the tail verified from a checkpoint head",
      OP,
      input(A.slice(2), { from }),
      { head: attestationAddress(A[4]!), seq: 5, count: 3 },
    ),
    okCase(C, "c5-valid-empty", "no attestations: the genesis head", OP, input([]), {
      head: auditGenesis(domain),
      seq: 0,
      count: 0,
    }),
    okCase(
      C,
      "c5-valid-no-host-list",
      "verified without a host list",
      OP,
      { domain, attestations: A as unknown as Json },
      result(A),
    ),
  ];
}

function brokenVectors(): Vector[] {
  const out: Vector[] = [];
  const without = (i: number) => A.filter((_, j) => j !== i);
  for (let i = 0; i < A.length - 1; i++)
    out.push(errCase(C, `c5-gap-${i}`, `attestation ${i} dropped`, OP, input(without(i)), "AuditGap"));
  out.push(
    errCase(
      C,
      "c5-gap-from-checkpoint",
      "a tail that skips one after the checkpoint",
      OP,
      input(A.slice(3), { from: { head: attestationAddress(A[1]!), seq: 2 } }),
      "AuditGap",
    ),
  );
  for (let i = 0; i < A.length - 1; i++) {
    const s = [...A];
    [s[i], s[i + 1]] = [s[i + 1]!, s[i]!];
    out.push(
      errCase(
        C,
        `c5-reorder-swap-${i}`,
        `attestations ${i} and ${i + 1} swapped`,
        OP,
        input(s),
        "AuditReorder",
      ),
    );
  }
  out.push(
    errCase(
      C,
      "c5-reorder-reversed",
      "the whole chain reversed",
      OP,
      input([...A].reverse()),
      "AuditReorder",
    ),
  );
  out.push(
    errCase(
      C,
      "c5-reorder-rotated",
      "the first attestation moved to the end",
      OP,
      input([...A.slice(1), A[0]!]),
      "AuditReorder",
    ),
  );
  const stray = attest(
    { ...predicate({ journal: { root: d("stray"), events: 1 } }), audit_prev: d("elsewhere"), audit_seq: 2 },
    host,
  );
  for (let i = 0; i <= A.length; i++)
    out.push(
      errCase(
        C,
        `c5-insert-${i}`,
        `a stray attestation inserted at position ${i}`,
        OP,
        input([...A.slice(0, i), stray, ...A.slice(i)]),
        "AuditInsert",
      ),
    );
  out.push(
    errCase(
      C,
      "c5-insert-duplicate",
      "attestation 2 repeated",
      OP,
      input([...A.slice(0, 3), A[2]!, ...A.slice(3)]),
      "AuditInsert",
    ),
  );
  return out;
}

function spliceVectors(): Vector[] {
  const B = chain(5, firstLink(domain), "b");
  const other = chain(3, firstLink(stewardDomain(key("alice").did)), "o");
  const foreign = chain(2, linkAfter(A[2]!), "f", [key("mallory")]);
  const fork = chain(1, linkAfter(A[2]!), "k");
  const bad = A.map((e, i) =>
    i === 2 ? { ...e, signatures: [{ keyid: e.signatures[0]!.keyid, sig: flip(e.signatures[0]!.sig) }] } : e,
  );
  return [
    errCase(
      C,
      "c5-splice-same-domain",
      "a chain's tail replaced by another chain's tail",
      OP,
      input([...A.slice(0, 3), ...B.slice(3)]),
      "AuditSplice",
    ),
    errCase(
      C,
      "c5-splice-other-domain",
      "another domain's chain offered for this domain",
      OP,
      input(other),
      "AuditSplice",
    ),
    errCase(
      C,
      "c5-splice-foreign-host",
      "attestations linked correctly but signed outside the domain",
      OP,
      input([...A.slice(0, 3), ...foreign]),
      "AuditSplice",
    ),
    errCase(C, "c5-fork", "two attestations citing attestation 2", OP, input([...A, ...fork]), "AuditFork"),
    errCase(C, "c5-fork-genesis", "two chains from the same genesis", OP, input([A[0]!, B[0]!]), "AuditFork"),
    errCase(
      C,
      "c5-unlinked",
      "an attestation with no audit link",
      OP,
      input([A[0]!, unlinked()]),
      "AuditUnlinked",
    ),
    errCase(C, "c5-bad-signature", "attestation 2's signature broken", OP, input(bad), "BadSignature"),
    ...orderVectors(bad[2]!, foreign[0]!, fork[0]!),
  ];
}

/**
 * orderVectors pin §7.7 item 4's order: each attestation in turn is verified, linked and by a
 * domain host before the next is looked at; then, in sequence order, each is checked for a repeat
 * and then a shared predecessor; then the walk, where the expected link is both `audit_prev` and
 * `audit_seq`; and a host is the predicate's `host`, not any co-signer.
 */
function orderVectors(bad: Envelope, foreign: Envelope, fork: Envelope): Vector[] {
  const wrongSeq = attest(
    { ...predicate({ journal: { root: d("seq"), events: 1 } }), ...linkAfter(A[0]!), audit_seq: 5 },
    host,
  );
  const cosigned = signPayload(ATTESTATION_PAYLOAD_TYPE, payloadOf(A[0]!), [host, key("mallory")]);
  const cases: [string, string, Json, string][] = [
    [
      "order-splice-before-later-unlinked",
      "a foreign host's attestation, then one with no link: AuditSplice, the earlier attestation first",
      input([A[0]!, foreign, unlinked()]),
      "AuditSplice",
    ],
    [
      "order-unlinked-before-later-bad-signature",
      "an unlinked attestation, then one whose signature is broken: AuditUnlinked",
      input([unlinked(), bad]),
      "AuditUnlinked",
    ],
    [
      "order-fork-before-later-duplicate",
      "a fork, then a repeat of an earlier attestation: AuditFork, found first in sequence order",
      input([A[0]!, A[1]!, A[2]!, fork, A[3]!, A[1]!]),
      "AuditFork",
    ],
    [
      "link-seq-wrong",
      "the right audit_prev with an audit_seq past the expected one: AuditGap (the link is both members)",
      input([A[0]!, wrongSeq]),
      "AuditGap",
    ],
    [
      "splice-cosigned",
      "an attestation by a non-domain host co-signed by a domain host: AuditSplice (the predicate's host is compared)",
      input([cosigned], { hosts: [key("mallory").did] }),
      "AuditSplice",
    ],
  ];
  return cases.map(([id, desc, x, code]) => errCase(C, `c5-${id}`, desc, OP, x, code));
}

/** unlinked returns an attestation of the base predicate with no audit link. */
function unlinked(): Envelope {
  return attest(unlinkedPredicate({ level: "S7" }), host);
}

export const klass: ConformanceClass = {
  id: C,
  title: "audit chain",
  file: "core.json",
  ops,
  generate: () => [...validVectors(), ...brokenVectors(), ...spliceVectors()],
};
