//! The speculation engine's model (golem-tools-architecture, "Speculation engine"): how often
//! one read follows another, learned from the calls the host serves, and with which params.
//!
//! A prefetch needs the next call's params, not just its tool, so a transition is counted with a
//! *template* that builds the next params from the previous call's: each field of the next
//! params is a field of the previous ones (`token` ← `token_a`) or a constant. A template whose
//! constants vary between sessions never repeats, so it never reaches the threshold: the model
//! only predicts calls it has seen made the same way, from the same kind of call, often.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::collections::BTreeMap;

/// Where a field of the next call's params comes from.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Source {
    /// The previous call's field of this name.
    Field(String),
    /// This value, always (its JSON text).
    Constant(String),
}

/// How the next call's params are built from the previous call's, field by field.
pub type Template = BTreeMap<String, Source>;

/// The template that builds `next` from `prev`: a field equal to the same-named field of `prev`
/// comes from it, else from the first field of `prev` with that value, else it is a constant.
pub fn template(prev: &Map<String, Value>, next: &Map<String, Value>) -> Template {
    next.iter()
        .map(|(k, v)| {
            let source = if prev.get(k) == Some(v) {
                Source::Field(k.clone())
            } else if let Some((from, _)) = prev.iter().find(|(_, pv)| *pv == v) {
                Source::Field(from.clone())
            } else {
                Source::Constant(v.to_string())
            };
            (k.clone(), source)
        })
        .collect()
}

/// `template` applied to `prev`; none when `prev` lacks a field it needs.
pub fn apply(template: &Template, prev: &Map<String, Value>) -> Option<Map<String, Value>> {
    template
        .iter()
        .map(|(k, source)| {
            let v = match source {
                Source::Field(from) => prev.get(from)?.clone(),
                Source::Constant(text) => serde_json::from_str(text).ok()?,
            };
            Some((k.clone(), v))
        })
        .collect()
}

/// One learned transition: after `from`, `to` with params built by `template`, `count` times.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Transition {
    /// The tool called first.
    pub from: String,
    /// The tool called next.
    pub to: String,
    /// How its params were built from the first call's.
    pub template: Template,
    /// How often.
    pub count: u64,
}

/// A predicted next call.
#[derive(Debug, Clone, PartialEq)]
pub struct Prediction {
    /// The tool.
    pub tool: String,
    /// Its params.
    pub params: Map<String, Value>,
    /// How often this call followed, of the calls of the previous tool.
    pub probability: f64,
}

/// Co-occurrence counts of read calls: persisted as JSON between runs.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Model {
    /// Calls of each tool that had a chance to be followed.
    pub calls: BTreeMap<String, u64>,
    /// Transitions seen.
    pub transitions: Vec<Transition>,
}

/// Calls of a tool before its transitions are trusted: 1 of 1 is not a probability.
pub const MIN_CALLS: u64 = 5;

impl Model {
    /// A call of `tool` (a transition from it may follow).
    pub fn called(&mut self, tool: &str) {
        *self.calls.entry(tool.to_owned()).or_default() += 1;
    }

    /// `to` with `next` params followed `from` with `prev` params, with nothing in between.
    pub fn followed(&mut self, from: &str, prev: &Map<String, Value>, to: &str, next: &Map<String, Value>) {
        let template = template(prev, next);
        match self.transitions.iter_mut().find(|t| t.from == from && t.to == to && t.template == template) {
            Some(t) => t.count += 1,
            None => {
                self.transitions.push(Transition { from: from.into(), to: to.into(), template, count: 1 })
            }
        }
    }

    /// The calls likely to follow `tool` with `params`: probability at least `threshold`.
    pub fn predict(&self, tool: &str, params: &Map<String, Value>, threshold: f64) -> Vec<Prediction> {
        let calls = self.calls.get(tool).copied().unwrap_or(0);
        if calls < MIN_CALLS {
            return Vec::new();
        }
        self.transitions
            .iter()
            .filter(|t| t.from == tool)
            .filter_map(|t| {
                let probability = t.count as f64 / calls as f64;
                (probability >= threshold).then_some(())?;
                Some(Prediction { tool: t.to.clone(), params: apply(&t.template, params)?, probability })
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn obj(v: Value) -> Map<String, Value> {
        v.as_object().cloned().expect("object")
    }

    #[test]
    fn templates_carry_fields_by_name_by_value_or_as_constants() {
        let pool = obj(json!({"chain_id": 1, "token_a": "WETH", "token_b": "USDC"}));
        let price = obj(json!({"chain_id": 1, "token": "WETH", "quote": "USD"}));
        let t = template(&pool, &price);
        assert_eq!(t["chain_id"], Source::Field("chain_id".into()));
        assert_eq!(t["token"], Source::Field("token_a".into()));
        assert_eq!(t["quote"], Source::Constant("\"USD\"".into()));
        let other_pool = obj(json!({"chain_id": 8453, "token_a": "DAI", "token_b": "USDC"}));
        assert_eq!(
            apply(&t, &other_pool),
            Some(obj(json!({"chain_id": 8453, "token": "DAI", "quote": "USD"})))
        );
        assert_eq!(apply(&t, &obj(json!({"chain_id": 1}))), None, "a field it needs is missing");
    }

    #[test]
    fn predictions_need_the_threshold_and_enough_calls() {
        let mut m = Model::default();
        let pool = |a: &str| obj(json!({"chain_id": 1, "token_a": a, "token_b": "USDC"}));
        let price = |t: &str| obj(json!({"chain_id": 1, "token": t}));
        for i in 0..10 {
            m.called("pool");
            let a = if i % 2 == 0 { "WETH" } else { "WBTC" };
            if i < 8 {
                m.followed("pool", &pool(a), "price", &price(a));
            } else {
                m.followed("pool", &pool(a), "quote", &obj(json!({"amount": i})));
            }
        }
        let p = m.predict("pool", &pool("DAI"), 0.7);
        assert_eq!(p.len(), 1, "{p:?}");
        assert_eq!((p[0].tool.as_str(), p[0].probability), ("price", 0.8));
        assert_eq!(p[0].params, price("DAI"));
        assert!(m.predict("pool", &pool("DAI"), 0.9).is_empty(), "below the threshold");
        let mut young = Model::default();
        young.called("pool");
        young.followed("pool", &pool("WETH"), "price", &price("WETH"));
        assert!(young.predict("pool", &pool("WETH"), 0.7).is_empty(), "1 of 1 is not enough");
        let text = serde_json::to_string(&m).expect("json");
        assert_eq!(serde_json::from_str::<Model>(&text).expect("parse"), m, "persists");
    }
}
