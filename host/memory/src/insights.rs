//! Insights distilled from episodes, after ExpeL: compare the successes and failures of one kind
//! of episode and keep what tells them apart. Where ExpeL asks a model to compare pairs, the
//! host compares counts: a feature (a tag, or a `key=value` of the episode's context) present in
//! most failures of a kind and in few of its successes is a rule to avoid it, and the converse
//! a rule to prefer it. Deterministic, and each rule names the episodes behind it.

use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};

/// One episode as the distiller sees it.
#[derive(Debug, Clone)]
pub struct Case {
    /// The episode.
    pub id: i64,
    /// Its kind (`swap`, `write.blocked`, …): only cases of one kind are compared.
    pub kind: String,
    /// Whether it succeeded; cases with no known outcome are not compared.
    pub success: bool,
    /// Its tags and `key=value` context.
    pub features: BTreeSet<String>,
}

/// Avoid or prefer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, PartialOrd, Ord)]
#[serde(rename_all = "lowercase")]
pub enum Polarity {
    /// The feature goes with failure.
    Avoid,
    /// The feature goes with success.
    Prefer,
}

/// A distilled rule.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Rule {
    /// The kind of episode it is about.
    pub kind: String,
    /// The feature.
    pub feature: String,
    /// Avoid or prefer it.
    pub polarity: Polarity,
    /// The rule in words.
    pub text: String,
    /// How strongly the counts support it, 0..1.
    pub confidence: f64,
    /// Successes and failures with the feature, and without it.
    pub with: (u32, u32),
    /// Successes and failures without the feature.
    pub without: (u32, u32),
    /// The episodes with the feature.
    pub evidence: Vec<i64>,
}

/// Cases of a feature needed before a rule is drawn.
const MIN_SUPPORT: u32 = 2;
/// How one-sided the cases with the feature must be.
const MIN_SHARE: f64 = 0.75;

/// The rules `cases` support, strongest first.
pub fn distill(cases: &[Case]) -> Vec<Rule> {
    let mut by_kind: BTreeMap<&str, Vec<&Case>> = BTreeMap::new();
    for c in cases {
        by_kind.entry(&c.kind).or_default().push(c);
    }
    let mut rules = Vec::new();
    for (kind, cases) in by_kind {
        let features: BTreeSet<&String> = cases.iter().flat_map(|c| &c.features).collect();
        for feature in features {
            let (with, without): (Vec<&&Case>, Vec<&&Case>) =
                cases.iter().partition(|c| c.features.contains(feature));
            let count = |v: &[&&Case]| {
                let s = v.iter().filter(|c| c.success).count() as u32;
                (s, v.len() as u32 - s)
            };
            let (w, wo) = (count(&with), count(&without));
            if wo.0 + wo.1 == 0 {
                continue; // every case has it: it tells nothing apart
            }
            let rate = |(s, f): (u32, u32)| f64::from(s) / f64::from(s + f);
            let n = f64::from(w.0 + w.1);
            let (polarity, support, share) = if w.1 >= w.0 {
                (Polarity::Avoid, w.1, 1.0 - rate(w))
            } else {
                (Polarity::Prefer, w.0, rate(w))
            };
            let other_side = match polarity {
                Polarity::Avoid => rate(wo),
                Polarity::Prefer => 1.0 - rate(wo),
            };
            if support < MIN_SUPPORT || share < MIN_SHARE || other_side < 0.5 {
                continue;
            }
            let confidence = (rate(w) - rate(wo)).abs() * n / (n + 2.0);
            let verb = match polarity {
                Polarity::Avoid => "avoid",
                Polarity::Prefer => "prefer",
            };
            let text = format!(
                "{kind}: {verb} `{feature}` — with it {} of {} failed; without it {} of {} succeeded",
                w.1,
                w.0 + w.1,
                wo.0,
                wo.0 + wo.1
            );
            rules.push(Rule {
                kind: kind.to_owned(),
                feature: feature.clone(),
                polarity,
                text,
                confidence,
                with: w,
                without: wo,
                evidence: with.iter().map(|c| c.id).collect(),
            });
        }
    }
    rules.sort_by(|a, b| b.confidence.total_cmp(&a.confidence).then(a.text.cmp(&b.text)));
    rules
}

#[cfg(test)]
mod tests {
    use super::*;

    fn case(id: i64, success: bool, features: &[&str]) -> Case {
        Case { id, kind: "swap".into(), success, features: features.iter().map(|s| s.to_string()).collect() }
    }

    #[test]
    fn failures_with_a_feature_become_a_rule_to_avoid_it() {
        let cases = [
            case(1, false, &["venue=v2", "pair=usdc/weth"]),
            case(2, false, &["venue=v2", "pair=usdc/dai"]),
            case(3, false, &["venue=v2", "pair=usdc/weth"]),
            case(4, true, &["venue=v3", "pair=usdc/weth"]),
            case(5, true, &["venue=v3", "pair=usdc/dai"]),
            case(6, true, &["venue=v3", "pair=usdc/weth"]),
        ];
        let rules = distill(&cases);
        let avoid = rules.iter().find(|r| r.feature == "venue=v2").expect("a rule about v2");
        assert_eq!(avoid.polarity, Polarity::Avoid);
        assert_eq!((avoid.with, avoid.without), ((0, 3), (3, 0)));
        assert_eq!(avoid.evidence, vec![1, 2, 3]);
        assert!(avoid.text.contains("with it 3 of 3 failed"), "{}", avoid.text);
        let prefer = rules.iter().find(|r| r.feature == "venue=v3").expect("a rule about v3");
        assert_eq!(prefer.polarity, Polarity::Prefer);
        // The pair splits successes and failures evenly: no rule.
        assert!(rules.iter().all(|r| !r.feature.starts_with("pair=")), "{rules:?}");
    }

    #[test]
    fn one_case_or_a_feature_every_case_has_is_no_rule() {
        let cases = [case(1, false, &["a", "all"]), case(2, true, &["all"]), case(3, true, &["all"])];
        assert!(distill(&cases).is_empty());
        let mut other = case(4, false, &["a"]);
        other.kind = "lend".into();
        assert!(distill(&[case(1, false, &["a"]), other, case(2, true, &[])]).is_empty());
    }
}
