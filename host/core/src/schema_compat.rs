//! Schema versioning (golem-tools-architecture, "Schema versioning"): whether a tool's params
//! schema changed compatibly between two versions of its plugin.
//!
//! A caller written against the old schema must keep working against the new one. So removing
//! or retyping a param, making one required, adding a required one, or refusing unknown fields
//! where they were accepted is **breaking**: it must ship in a new major version of the plugin
//! (pre-1.0, a new minor), and the operator can keep serving the old version beside it. Adding an
//! optional param or making a required one optional is **additive**. Either kind of change must
//! increment the tool's `schema_version`. Descriptions, titles, defaults and examples are
//! documentation: changing them changes nothing.

use serde_json::Value;
use std::collections::BTreeSet;

/// How one tool's params schema changed.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct SchemaChanges {
    /// Changes that break a caller of the old schema, each named.
    pub breaking: Vec<String>,
    /// Changes an old caller does not notice, each named.
    pub additive: Vec<String>,
}

impl SchemaChanges {
    /// Whether nothing but documentation changed.
    pub fn is_empty(&self) -> bool {
        self.breaking.is_empty() && self.additive.is_empty()
    }
}

/// `v` without its documentation keywords, recursively.
fn strip(v: &Value) -> Value {
    const DOCS: [&str; 5] = ["description", "title", "default", "examples", "$comment"];
    match v {
        Value::Object(map) => Value::Object(
            map.iter()
                .filter(|(k, _)| !DOCS.contains(&k.as_str()))
                .map(|(k, v)| (k.clone(), strip(v)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(strip).collect()),
        other => other.clone(),
    }
}

fn required(schema: &Value) -> BTreeSet<&str> {
    schema["required"].as_array().map(|r| r.iter().filter_map(Value::as_str).collect()).unwrap_or_default()
}

/// Whether an object schema accepts fields it does not list (JSON Schema's default: yes).
fn open(schema: &Value) -> bool {
    schema.get("additionalProperties") != Some(&Value::Bool(false))
}

/// Compare the params schema `old` with `new` (JSON Schema objects as schemars writes them:
/// `properties`, `required`, `additionalProperties`, shared types under `$defs`).
pub fn compare(old: &Value, new: &Value) -> SchemaChanges {
    let mut c = SchemaChanges::default();
    let empty = serde_json::Map::new();
    let props = |s: &Value| s["properties"].as_object().cloned().unwrap_or_else(|| empty.clone());
    let (old_props, new_props) = (props(old), props(new));
    let (old_required, new_required) = (required(old), required(new));
    if strip(&old["type"]) != strip(&new["type"]) {
        c.breaking.push(format!("the params are {} instead of {}", new["type"], old["type"]));
    }
    for (name, was) in &old_props {
        match new_props.get(name) {
            None => c.breaking.push(format!("removes `{name}`")),
            Some(now) if strip(was) != strip(now) => c.breaking.push(format!("changes the type of `{name}`")),
            Some(_) => {}
        }
        match (old_required.contains(name.as_str()), new_required.contains(name.as_str())) {
            (false, true) if new_props.contains_key(name) => {
                c.breaking.push(format!("makes `{name}` required"))
            }
            (true, false) if new_props.contains_key(name) => {
                c.additive.push(format!("makes `{name}` optional"))
            }
            _ => {}
        }
    }
    for name in new_props.keys().filter(|n| !old_props.contains_key(*n)) {
        if new_required.contains(name.as_str()) {
            c.breaking.push(format!("adds required `{name}`"));
        } else {
            c.additive.push(format!("adds optional `{name}`"));
        }
    }
    if open(old) && !open(new) {
        c.breaking.push("refuses unknown fields it accepted".into());
    } else if !open(old) && open(new) {
        c.additive.push("accepts unknown fields".into());
    }
    // Shared types: a changed one may be anywhere in the params (conservatively breaking).
    for key in ["$defs", "definitions"] {
        let (Some(was), now) = (old[key].as_object(), new[key].as_object()) else { continue };
        for (name, schema) in was {
            match now.and_then(|n| n.get(name)) {
                Some(s) if strip(s) == strip(schema) => {}
                // Renamed or changed: only a reference to it can tell, so it counts.
                _ => c.breaking.push(format!("changes the shared type `{name}`")),
            }
        }
    }
    c
}

/// Whether `new` is a new major version after `old` (pre-1.0: a new minor; 0.0.x: a new patch):
/// the only kind of release allowed to break a tool's params. Unparseable versions are not.
pub fn major_bump(old: &str, new: &str) -> bool {
    let (Ok(o), Ok(n)) = (semver::Version::parse(old), semver::Version::parse(new)) else {
        return false;
    };
    match (o.major, o.minor) {
        (0, 0) => n.major > 0 || n.minor > 0 || n.patch > o.patch,
        (0, _) => n.major > 0 || n.minor > o.minor,
        _ => n.major > o.major,
    }
}

/// The next major version after `v`, for messages (`0.2.1` → `0.3.0`).
pub fn next_major(v: &str) -> String {
    match semver::Version::parse(v) {
        Ok(o) if o.major == 0 && o.minor == 0 => format!("0.0.{}", o.patch + 1),
        Ok(o) if o.major == 0 => format!("0.{}.0", o.minor + 1),
        Ok(o) => format!("{}.0.0", o.major + 1),
        Err(_) => "a new major version".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema(props: Value, required: &[&str]) -> Value {
        json!({"type": "object", "properties": props, "required": required, "additionalProperties": false})
    }

    #[test]
    fn breaking_and_additive_changes_are_named() {
        let old = schema(
            json!({"n": {"type": "integer", "description": "a number"}, "label": {"type": "string"}}),
            &["n"],
        );
        let docs = schema(
            json!({"n": {"type": "integer", "description": "the number"}, "label": {"type": "string"}}),
            &["n"],
        );
        assert!(compare(&old, &docs).is_empty(), "descriptions are documentation");
        let retyped = schema(json!({"n": {"type": "string"}, "label": {"type": "string"}}), &["n"]);
        assert_eq!(compare(&old, &retyped).breaking, ["changes the type of `n`"]);
        let removed = schema(json!({"n": {"type": "integer"}}), &["n"]);
        assert_eq!(compare(&old, &removed).breaking, ["removes `label`"]);
        let required =
            schema(json!({"n": {"type": "integer"}, "label": {"type": "string"}}), &["n", "label"]);
        assert_eq!(compare(&old, &required).breaking, ["makes `label` required"]);
        let added = schema(
            json!({"n": {"type": "integer"}, "label": {"type": "string"}, "memo": {"type": "string"}}),
            &["n"],
        );
        let c = compare(&old, &added);
        assert!(c.breaking.is_empty() && c.additive == ["adds optional `memo`"], "{c:?}");
        let added_required = schema(
            json!({"n": {"type": "integer"}, "label": {"type": "string"}, "memo": {"type": "string"}}),
            &["n", "memo"],
        );
        assert_eq!(compare(&old, &added_required).breaking, ["adds required `memo`"]);
        let optional = schema(json!({"n": {"type": "integer"}, "label": {"type": "string"}}), &[]);
        assert_eq!(compare(&old, &optional).additive, ["makes `n` optional"]);
        let mut closed = old.clone();
        closed["additionalProperties"] = json!(true);
        assert_eq!(compare(&closed, &old).breaking, ["refuses unknown fields it accepted"]);
        let mut defs = old.clone();
        defs["$defs"] = json!({"Side": {"enum": ["buy", "sell"]}});
        let mut narrowed = old.clone();
        narrowed["$defs"] = json!({"Side": {"enum": ["buy"]}});
        assert_eq!(compare(&defs, &narrowed).breaking, ["changes the shared type `Side`"]);
    }

    #[test]
    fn only_a_major_version_may_break() {
        assert!(major_bump("0.2.0", "0.3.0") && major_bump("1.4.2", "2.0.0") && major_bump("0.0.1", "0.0.2"));
        assert!(
            !major_bump("0.2.0", "0.2.1") && !major_bump("1.4.2", "1.5.0") && !major_bump("0.2.0", "0.1.9")
        );
        assert!(!major_bump("x", "0.3.0"));
        assert_eq!(next_major("0.2.1"), "0.3.0");
        assert_eq!(next_major("1.4.2"), "2.0.0");
    }
}
