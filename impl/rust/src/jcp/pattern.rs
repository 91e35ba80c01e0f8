//! JCP §4.2 resource patterns, containment and scopes.

use crate::error::{ensure, R};

/// A parsed pattern: its segments before an optional trailing `/**`, and whether it has one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pattern {
    pub segs: Vec<String>,
    pub rest: bool,
}

fn pchar(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b".-_~:@!$&'()+,;=".contains(&b)
}

/// parse_pattern reads a resource pattern (§4.2 grammar), refusing anything else (`BadPattern`).
/// At most 256 bytes and 32 `/`-separated parts, a trailing `**` counted among them.
pub fn parse_pattern(p: &str) -> R<Pattern> {
    ensure(!p.is_empty() && p.len() <= 256 && p.starts_with('/'), "BadPattern")?;
    if p == "/**" {
        return Ok(Pattern { segs: vec![], rest: true });
    }
    let (body, rest) = match p.strip_suffix("/**") {
        Some(b) => (b, true),
        None => (p, false),
    };
    let mut segs = Vec::new();
    for s in body[1..].split('/') {
        let ok = s == "*" || (!s.is_empty() && s != "." && s != ".." && s.bytes().all(pchar));
        ensure(ok, "BadPattern")?;
        segs.push(s.to_string());
    }
    ensure(segs.len() + usize::from(rest) <= 32, "BadPattern")?;
    Ok(Pattern { segs, rest })
}

/// covers decides whether pattern `p` covers pattern `c` (§4.2 containment), segment by segment.
pub fn covers(p: &Pattern, c: &Pattern) -> bool {
    let k = p.segs.len();
    let seg_ok = |i: usize| p.segs[i] == "*" || p.segs[i] == c.segs[i];
    if !p.rest {
        !c.rest && c.segs.len() == k && (0..k).all(seg_ok)
    } else {
        c.segs.len() >= k && (0..k).all(seg_ok)
    }
}

/// pattern_covers parses both patterns and decides containment.
pub fn pattern_covers(parent: &str, child: &str) -> R<bool> {
    Ok(covers(&parse_pattern(parent)?, &parse_pattern(child)?))
}

/// A scope: resource patterns and action names.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Scope {
    pub resources: Vec<String>,
    pub actions: Vec<String>,
}

/// check_scope checks a scope not already checked, as §4.2 says `scope.covers` must: the
/// resource list's length, order and duplicates (`BadGrant`), each pattern (`BadPattern`), then
/// the action list's length, order, duplicates and names (`BadGrant`).
pub fn check_scope(s: &Scope) -> R<()> {
    let r = &s.resources;
    ensure((1..=64).contains(&r.len()) && sorted_unique(r), "BadGrant")?;
    for p in r {
        parse_pattern(p)?;
    }
    let a = &s.actions;
    ensure((1..=32).contains(&a.len()) && sorted_unique(a) && a.iter().all(|x| is_action(x)), "BadGrant")
}

/// scope_covers checks both scopes, parent then child, and only then decides containment.
pub fn scope_covers(parent: &Scope, child: &Scope) -> R<bool> {
    check_scope(parent)?;
    check_scope(child)?;
    scope_inside(parent, child)
}

/// scope_inside says whether `child` lies inside `parent` (§4.2): each child pattern covered by
/// some parent pattern, each child action one of the parent's. Patterns must parse (`BadPattern`).
pub fn scope_inside(parent: &Scope, child: &Scope) -> R<bool> {
    let ps: Vec<Pattern> = parent.resources.iter().map(|p| parse_pattern(p)).collect::<R<_>>()?;
    for c in &child.resources {
        let c = parse_pattern(c)?;
        if !ps.iter().any(|p| covers(p, &c)) {
            return Ok(false);
        }
    }
    Ok(child.actions.iter().all(|a| parent.actions.contains(a)))
}

/// is_action says whether a name matches `[a-z][a-z0-9._:-]{0,63}`.
pub fn is_action(a: &str) -> bool {
    let b = a.as_bytes();
    !b.is_empty()
        && b.len() <= 64
        && b[0].is_ascii_lowercase()
        && b[1..].iter().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || b"._:-".contains(c))
}

/// sorted_unique says whether a list is strictly ascending by bytes (sorted, no duplicates).
pub fn sorted_unique(list: &[String]) -> bool {
    list.windows(2).all(|w| w[0].as_bytes() < w[1].as_bytes())
}

/// check_lists validates a scope's lists as a grant states them: sizes, order and names
/// (`BadGrant`, with `code` for the caller's own form code), then patterns (`BadPattern`).
pub fn check_lists(resources: Option<&[String]>, actions: Option<&[String]>, code: &'static str) -> R<()> {
    if let Some(r) = resources {
        ensure((1..=64).contains(&r.len()) && sorted_unique(r), code)?;
    }
    if let Some(a) = actions {
        ensure((1..=32).contains(&a.len()) && sorted_unique(a) && a.iter().all(|x| is_action(x)), code)?;
    }
    for p in resources.unwrap_or(&[]) {
        parse_pattern(p)?;
    }
    Ok(())
}

/// allows says whether a scope allows action `a` on the concrete path `r` (§4.2).
pub fn allows(s: &Scope, a: &str, r: &str) -> R<bool> {
    let c = parse_pattern(r)?;
    ensure(!c.rest && !c.segs.iter().any(|x| x == "*"), "BadPattern")?;
    if !s.actions.iter().any(|x| x == a) {
        return Ok(false);
    }
    for p in &s.resources {
        if covers(&parse_pattern(p)?, &c) {
            return Ok(true);
        }
    }
    Ok(false)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A literal restatement: enumerate concrete paths over a small alphabet and compare the
    /// path sets each pattern matches; P covers C iff every path C matches is matched by P.
    fn matches(p: &Pattern, path: &[&str]) -> bool {
        let k = p.segs.len();
        let fits = |n: usize| (0..n).all(|i| p.segs[i] == "*" || p.segs[i] == path[i]);
        if p.rest {
            path.len() >= k && fits(k)
        } else {
            path.len() == k && fits(k)
        }
    }

    fn paths(depth: usize) -> Vec<Vec<&'static str>> {
        let mut out = vec![vec![]];
        let mut layer: Vec<Vec<&'static str>> = vec![vec![]];
        for _ in 0..depth {
            let mut next = Vec::new();
            for p in &layer {
                for s in ["a", "b", "q"] {
                    let mut x = p.clone();
                    x.push(s);
                    next.push(x);
                }
            }
            out.extend(next.iter().cloned());
            layer = next;
        }
        out
    }

    #[test]
    fn containment_agrees_with_enumeration() {
        // "q" stands for a segment no pattern names, so `*` in a child is witnessed by it.
        let pats = ["/**", "/a", "/b", "/a/**", "/*", "/*/**", "/a/*", "/a/b", "/a/*/**", "/*/b", "/a/b/**"];
        let all = paths(4);
        for p in pats {
            for c in pats {
                let (pp, cp) = (parse_pattern(p).unwrap(), parse_pattern(c).unwrap());
                let literal = all.iter().all(|x| !matches(&cp, x) || matches(&pp, x));
                assert_eq!(covers(&pp, &cp), literal, "{p} covers {c}");
            }
        }
    }
}
