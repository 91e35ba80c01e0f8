import { test } from "node:test";
import assert from "node:assert/strict";
import { testKey, type Envelope, type KeyPair } from "@sbx/wire";
import { attestationAddress } from "../../src/attestation/sign.ts";
import {
  auditGenesis,
  firstLink,
  linkAfter,
  stewardDomain,
  verifyAuditChain,
  type AuditLink,
} from "../../src/audit/index.ts";
import { attest, d, fixturePredicate, host } from "../attestation/fixture.ts";

const domain = stewardDomain(testKey("steward").did);
const code = (c: string) => (e: unknown) => (e as { code?: string }).code === c;

/** chain builds n linked attestations from `link`, the i-th with distinct content. */
function chain(n: number, link: AuditLink, tag = "a", key: KeyPair = host): Envelope[] {
  const out: Envelope[] = [];
  for (let i = 0; i < n; i++) {
    const l = i === 0 ? link : linkAfter(out[i - 1]!);
    out.push(attest(fixturePredicate({ unit_id: d(`${tag}${i}`), ...l }), key));
  }
  return out;
}

const A = chain(5, firstLink(domain));

test("a linked chain verifies from genesis and from a checkpoint", () => {
  const r = verifyAuditChain(A, { domain, hosts: [host.did] });
  assert.deepEqual(r, { head: attestationAddress(A[4]!), seq: 5, count: 5 });
  const r2 = verifyAuditChain(A.slice(2), { domain, from: { head: attestationAddress(A[1]!), seq: 2 } });
  assert.equal(r2.head, r.head);
  assert.deepEqual(verifyAuditChain([], { domain }), { head: auditGenesis(domain), seq: 0, count: 0 });
});

test("a dropped attestation is a gap, at the start, middle or end-adjacent", () => {
  assert.throws(() => verifyAuditChain([A[0]!, A[2]!, A[3]!], { domain }), code("AuditGap"));
  assert.throws(() => verifyAuditChain(A.slice(1), { domain }), code("AuditGap"));
  assert.throws(() => verifyAuditChain([A[0]!, A[1]!, A[2]!, A[4]!], { domain }), code("AuditGap"));
});

test("reordered attestations are detected", () => {
  assert.throws(() => verifyAuditChain([A[0]!, A[2]!, A[1]!, A[3]!], { domain }), code("AuditReorder"));
  assert.throws(() => verifyAuditChain([A[1]!, A[0]!, A[2]!], { domain }), code("AuditReorder"));
  assert.throws(
    () => verifyAuditChain([A[0]!, A[3]!, A[2]!, A[1]!, A[4]!], { domain }),
    code("AuditReorder"),
  );
});

test("an inserted attestation is detected, including a duplicate", () => {
  const stray = attest(
    fixturePredicate({ unit_id: d("stray"), audit_prev: d("elsewhere"), audit_seq: 2 }),
    host,
  );
  assert.throws(() => verifyAuditChain([A[0]!, stray, A[1]!, A[2]!], { domain }), code("AuditInsert"));
  assert.throws(() => verifyAuditChain([A[0]!, A[1]!, A[1]!], { domain }), code("AuditInsert"));
  const stale = attest(fixturePredicate({ unit_id: d("stale"), audit_prev: d("old"), audit_seq: 1 }), host);
  assert.throws(() => verifyAuditChain([A[0]!, A[1]!, stale], { domain }), code("AuditInsert"));
});

test("a splice from another chain or another domain is detected", () => {
  const B = chain(5, firstLink(stewardDomain(testKey("alice").did)), "b");
  assert.throws(() => verifyAuditChain([A[0]!, A[1]!, B[2]!, B[3]!], { domain }), code("AuditSplice"));
  assert.throws(() => verifyAuditChain(B.slice(0, 2), { domain }), code("AuditSplice"));
  const other = chain(2, linkAfter(A[1]!), "o", testKey("host-2"));
  assert.throws(
    () => verifyAuditChain([A[0]!, A[1]!, ...other], { domain, hosts: [host.did] }),
    code("AuditSplice"),
  );
});

test("two attestations citing the same predecessor are a fork", () => {
  const fork = chain(1, linkAfter(A[1]!), "f");
  assert.throws(() => verifyAuditChain([A[0]!, A[1]!, A[2]!, ...fork], { domain }), code("AuditFork"));
});

test("an attestation without a link is refused", () => {
  const bare = attest(fixturePredicate(), host);
  assert.throws(() => verifyAuditChain([bare], { domain }), code("AuditUnlinked"));
  assert.throws(() => linkAfter(bare), code("AuditUnlinked"));
});
