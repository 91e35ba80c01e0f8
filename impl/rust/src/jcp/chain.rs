//! JCP §4.4 attenuation and chain verification.

use super::grant::{open_grant, Budget, Effective, Grant};
use super::pattern::scope_inside;
use super::revoke::Revocation;
use crate::error::{ensure, fail, R};
use crate::json::Value;

/// §4.4 step 1: at most 16 grants.
pub const MAX_CHAIN: usize = 16;

/// The effective-grant hook of §4.4: from a grant's resolved form to the grant in force.
pub type Hook<'a> = &'a dyn Fn(&Effective) -> R<Effective>;

/// budget_within is §4.3 "Containment of limits" in every dimension: an unlimited parent limit
/// bounds nothing; a finite one bounds only a finite child limit not above it.
pub fn budget_within(pb: &Budget, cb: &Budget) -> bool {
    let within = |pl: Option<u64>, cl: Option<u64>| match (pl, cl) {
        (None, _) => true,
        (Some(a), Some(b)) => b <= a,
        (Some(_), None) => false,
    };
    within(pb.uj, cb.uj) && within(pb.calls, cb.calls) && within(pb.wall_ms, cb.wall_ms)
}

/// narrows checks that `c` lies inside `p` in scope, budget and window (§4.4, after the link and
/// depth checks): `ScopeWidens`, `BudgetExceeds`, `WindowWidens`.
pub fn narrows(p: &Effective, c: &Effective) -> R<()> {
    ensure(scope_inside(&p.scope, &c.scope)?, "ScopeWidens")?;
    ensure(budget_within(&p.budget, &c.budget), "BudgetExceeds")?;
    ensure(p.nbf_ms <= c.nbf_ms && c.exp_ms <= p.exp_ms, "WindowWidens")
}

/// child_of applies the attenuation rule of §4.4 to child `c` of parent `p`, in its order.
pub fn child_of(p: &Effective, c: &Effective) -> R<()> {
    ensure(c.parent == Some(p.address) && c.issuer == p.holder, "BrokenChain")?;
    ensure(p.depth > 0 && c.depth < p.depth, "DepthExhausted")?;
    narrows(p, c)?;
    ensure(c.nbf_ms < c.exp_ms, "BadGrant")
}

/// in_force applies the hook to a resolved grant and checks that it only tightened (§4.4).
pub fn in_force(e: Effective, hook: Option<Hook>) -> R<Effective> {
    let h = match hook {
        Some(h) => h,
        None => return Ok(e),
    };
    let f = h(&e)?;
    ensure(
        f.address == e.address && f.parent == e.parent && f.issuer == e.issuer && f.holder == e.holder,
        "BrokenChain",
    )?;
    ensure(f.depth <= e.depth, "DepthExhausted")?;
    narrows(&e, &f)?;
    Ok(f)
}

/// resolve opens a chain and checks its links (§4.4 steps 1–2), returning the opened grants and
/// their grants in force. Time and revocation are not checked.
pub fn resolve(chain: &[Value], roots: &[String], hook: Option<Hook>) -> R<Vec<(Grant, Effective)>> {
    if chain.is_empty() {
        return fail("BrokenChain");
    }
    ensure(chain.len() <= MAX_CHAIN, "ChainTooLong")?;
    let mut out: Vec<(Grant, Effective)> = Vec::new();
    for env in chain {
        let g = open_grant(env)?;
        let e = match out.last() {
            None => {
                ensure(g.parent.is_none(), "BrokenChain")?;
                ensure(roots.contains(&g.issuer), "UntrustedRoot")?;
                // §4.4 step 2: the root's effective window (nbf_ms default 0) is not empty.
                let e = in_force(g.effective(None), hook)?;
                ensure(e.nbf_ms < e.exp_ms, "BadGrant")?;
                e
            }
            Some((_, p)) => {
                ensure(g.parent.is_some(), "BrokenChain")?;
                let e = in_force(g.effective(Some(p)), hook)?;
                child_of(p, &e)?;
                e
            }
        };
        out.push((g, e));
    }
    Ok(out)
}

/// check_time refuses a chain at `t` outside any grant's window (§4.4 step 4), root first.
pub fn check_time(grants: &[Effective], t: u64) -> R<()> {
    for e in grants {
        ensure(t >= e.nbf_ms, "NotYetValid")?;
        ensure(t < e.exp_ms, "Expired")?;
    }
    Ok(())
}

/// check_revoked refuses a chain containing a grant revoked at or before `t` by its issuer or the
/// issuer of a grant above it (§4.4 step 3, §4.5).
pub fn check_revoked(grants: &[Effective], revs: &[Revocation], t: u64) -> R<()> {
    for (i, g) in grants.iter().enumerate() {
        let entitled = |by: &str| grants[..=i].iter().any(|a| a.issuer == by);
        ensure(!revs.iter().any(|r| r.grant == g.address && r.at_ms <= t && entitled(&r.by)), "Revoked")?;
    }
    Ok(())
}

/// verify_chain verifies a chain to `roots` at `t` (§4.4 steps 1–4) and returns its grants in force.
pub fn verify_chain(
    chain: &[Value],
    roots: &[String],
    t: u64,
    revs: &[Revocation],
    hook: Option<Hook>,
) -> R<Vec<Effective>> {
    let grants: Vec<Effective> = resolve(chain, roots, hook)?.into_iter().map(|(_, e)| e).collect();
    check_revoked(&grants, revs, t)?;
    check_time(&grants, t)?;
    Ok(grants)
}
