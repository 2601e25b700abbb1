//! `bardo tools` (the profile's tools, with the action kinds each write tool serves) and
//! `bardo tools describe TOOL` (one tool's params, kinds, tier, risk and budget, and how to
//! call it): what a newcomer needs without reading `--json`.

use anyhow::Result;
use bardo_core::Runtime;
use bardo_core::tool::{CapabilityTier, ToolDef};
use bardo_runtime::{Config, setup};
use serde_json::{Value, json};
use std::process::ExitCode;

/// `bardo tools`: one line per tool of the profile.
pub(crate) fn list(config: &Config, profile: Option<&str>, json: bool, rt: &Runtime) -> Result<ExitCode> {
    let opened = setup::open(config, profile, rt)?;
    crate::report_refused(&opened.refused);
    let host = &opened.host;
    if json {
        let tools: Vec<_> = host
            .catalog()
            .values()
            .map(|e| json!({"plugin": &*e.plugin.name, "version": e.plugin.manifest.version, "tool": e.def}))
            .collect();
        println!("{}", serde_json::to_string_pretty(&json!({"tools": tools, "skipped": host.skipped()}))?);
        return Ok(refused_exit(&opened.refused));
    }
    println!(
        "{:<32} {:<20} {:<10} {:<12} {:<7} {:<9} kinds",
        "tool", "plugin", "tier", "category", "risk", "budget"
    );
    for (name, e) in host.catalog() {
        let d = &e.def;
        println!(
            "{:<32} {:<20} {:<10} {:<12} {:<7} {:<9} {}",
            name,
            format!("{}@{}", e.plugin.name, e.plugin.manifest.version),
            tier(d),
            d.category.name(),
            format!("{:?}", d.risk_tier).to_lowercase(),
            format!("{} ms", d.tick_budget.millis()),
            kinds(d),
        );
    }
    // One line per reason: ten memory tools waiting for the `learning` profile are one fact.
    let mut skipped: std::collections::BTreeMap<&str, Vec<&str>> = Default::default();
    for s in host.skipped() {
        skipped.entry(s.reason.as_str()).or_default().push(s.tool.as_str());
    }
    for (reason, tools) in skipped {
        let n = tools.len();
        println!("skipped {n} tool{}: {} — {reason}", if n == 1 { "" } else { "s" }, tools.join(", "));
    }
    let name = profile.unwrap_or(&config.profile);
    println!(
        "{} tools in profile `{name}`; `bardo tools describe TOOL` shows one's params",
        host.catalog().len()
    );
    if let Some(delegations) = crate::archetypes_cli::delegations(config, name)? {
        println!("{delegations}");
    }
    Ok(refused_exit(&opened.refused))
}

/// Exit 1 when a configured plugin was refused (its tools are missing from what was listed),
/// so a script sees it; the refusals were printed.
fn refused_exit(refused: &[setup::Refused]) -> ExitCode {
    if refused.is_empty() { ExitCode::SUCCESS } else { ExitCode::from(1) }
}

/// `bardo tools describe TOOL`: exit 1 with the profiles that run it, or the closest name, when
/// the profile does not serve it.
pub(crate) fn describe(
    config: &Config,
    tool: &str,
    profile: Option<&str>,
    json: bool,
    rt: &Runtime,
) -> Result<ExitCode> {
    let opened = setup::open(config, profile, rt)?;
    crate::report_refused(&opened.refused);
    let host = &opened.host;
    let served = host.catalog().get(tool).map(|e| (&e.plugin, &e.def));
    // A write tool without a wallet is not served, but what it takes is still worth knowing.
    let unserved = || {
        host.skipped().iter().find(|s| s.tool == tool && s.needs_wallet)?;
        host.plugins().iter().find_map(|p| p.manifest.tools.iter().find(|d| d.name == tool).map(|d| (p, d)))
    };
    let Some((plugin, d)) = served.or_else(unserved) else {
        println!("{}", json!({ "error": host.not_found(tool) }));
        return Ok(ExitCode::from(1));
    };
    let callable = served.is_some();
    let params = params(&d.input_schema);
    // The profile it was asked under when that serves it, else the first that runs it.
    let running = bardo_core::profile::profiles_running(d);
    let asked = profile.unwrap_or(&config.profile);
    let example_profile = match running.first() {
        Some(first) if !callable && !running.contains(&asked) => first.to_string(),
        _ => asked.to_owned(),
    };
    let example = example_command(d, &params, &example_profile);
    if json {
        let out = json!({
            "tool": d.name,
            "plugin": &*plugin.name,
            "version": plugin.manifest.version,
            "callable": callable,
            "description": d.description,
            "tier": tier(d),
            "category": d.category.name(),
            "risk": format!("{:?}", d.risk_tier).to_lowercase(),
            "budget_ms": d.tick_budget.millis(),
            "action_kinds": d.action_kinds,
            "profiles": bardo_core::profile::profiles_running(d),
            "params": params,
            "example": example,
        });
        println!("{}", serde_json::to_string_pretty(&out)?);
        return Ok(ExitCode::SUCCESS);
    }
    println!("{} — {}@{}", d.name, plugin.name, plugin.manifest.version);
    if !callable {
        println!("  (not callable now: {})", host.not_found(tool).message);
    }
    println!("{}", bardo_core::text::block(&d.description, "  "));
    println!(
        "tier {} · category {} · risk {} · budget {} ms",
        tier(d),
        d.category.name(),
        format!("{:?}", d.risk_tier).to_lowercase(),
        d.tick_budget.millis()
    );
    if !d.action_kinds.is_empty() {
        let kinds: Vec<_> = d.action_kinds.iter().map(|k| bardo_core::text::one_line(k)).collect();
        println!("action kinds: {} (bardo preview KIND)", kinds.join(", "));
    }
    println!("profiles: {}", bardo_core::profile::profiles_running(d).join(", "));
    println!("params (* required):");
    let widest = |key: &str| params.iter().filter_map(|p| p[key].as_str()).map(str::len).max().unwrap_or(0);
    let (width, type_width) = (widest("name") + 1, widest("type"));
    for p in &params {
        let name =
            format!("{}{}", p["name"].as_str().unwrap_or(""), if p["required"] == true { "*" } else { "" });
        let mut line = format!(
            "  {name:<width$}  {:<type_width$}  {}",
            p["type"].as_str().unwrap_or(""),
            p["description"].as_str().unwrap_or("")
        );
        if !p["default"].is_null() {
            line.push_str(&format!(" (default {})", p["default"]));
        }
        println!("{line}");
    }
    println!("example:\n  {example}");
    Ok(ExitCode::SUCCESS)
}

fn tier(d: &ToolDef) -> String {
    format!("{:?}", d.capability_tier).to_lowercase()
}

fn kinds(d: &ToolDef) -> String {
    if d.action_kinds.is_empty() { "—".into() } else { d.action_kinds.join(",") }
}

/// The top-level params of an input schema: name, type, required, description, default, example.
fn params(schema: &Value) -> Vec<Value> {
    let required: Vec<&str> =
        schema["required"].as_array().into_iter().flatten().filter_map(Value::as_str).collect();
    let Some(properties) = schema["properties"].as_object() else { return Vec::new() };
    let mut out: Vec<Value> = properties
        .iter()
        .map(|(name, p)| {
            let description = p["description"].as_str().unwrap_or("").split("\n\n").next().unwrap_or("");
            json!({
                "name": name,
                "type": type_of(schema, p),
                "required": required.contains(&name.as_str()),
                "description": description.replace('\n', " "),
                "default": p.get("default").cloned().unwrap_or(Value::Null),
                "example": p["examples"].get(0).cloned().unwrap_or(Value::Null),
            })
        })
        .collect();
    // Required first, each group in the schema's (alphabetical) order.
    out.sort_by_key(|p| p["required"] != true);
    out
}

/// A param's type as a person reads it: `string`, `integer?` (may be null), `exact_in|exact_out`.
fn type_of(root: &Value, p: &Value) -> String {
    let resolve = |p: &Value| -> Value {
        match p["$ref"].as_str().and_then(|r| r.strip_prefix("#/")) {
            Some(path) => path.split('/').fold(root.clone(), |v, key| v[key].clone()),
            None => p.clone(),
        }
    };
    let p = resolve(p);
    let variants: Vec<Value> = match (p["anyOf"].as_array(), p["oneOf"].as_array()) {
        (Some(v), _) | (None, Some(v)) => v.iter().map(&resolve).collect(),
        _ => vec![p.clone()],
    };
    let mut nullable = false;
    let mut names = Vec::new();
    for v in &variants {
        if let Some(c) = v["const"].as_str() {
            names.push(c.to_owned());
        } else if let Some(values) = v["enum"].as_array() {
            names.extend(values.iter().map(|e| e.as_str().map_or_else(|| e.to_string(), str::to_owned)));
        } else if let Some(nested) = v.get("anyOf").or(v.get("oneOf")).filter(|_| v != &p) {
            names.push(type_of(root, &json!({ "anyOf": nested })));
        } else {
            let types: Vec<&str> = match &v["type"] {
                Value::String(t) => vec![t.as_str()],
                Value::Array(ts) => ts.iter().filter_map(Value::as_str).collect(),
                _ => vec!["any"],
            };
            for t in types {
                if t == "null" {
                    nullable = true;
                } else {
                    names.push(t.to_owned());
                }
            }
        }
    }
    names.dedup();
    format!("{}{}", names.join("|"), if nullable { "?" } else { "" })
}

/// How to run the tool with its required params: examples where the schema gives them, else a
/// placeholder naming the type.
/// A command that runs the tool under `profile`, its required params filled from the schema's
/// examples, else a placeholder of the param's JSON type (a number stays a number: the schema
/// refuses a quoted one).
fn example_command(d: &ToolDef, params: &[Value], profile: &str) -> String {
    let mut args = serde_json::Map::new();
    for p in params.iter().filter(|p| p["required"] == true) {
        let kind = p["type"].as_str().unwrap_or("value");
        let value = match &p["example"] {
            Value::Null if kind.starts_with("integer") || kind.starts_with("number") => json!(0),
            Value::Null if kind.starts_with("boolean") => json!(false),
            Value::Null => json!(format!("<{kind}>")),
            example => example.clone(),
        };
        args.insert(p["name"].as_str().unwrap_or("").to_owned(), value);
    }
    let params = Value::Object(args).to_string();
    match (d.capability_tier, d.action_kinds.first()) {
        (CapabilityTier::Write, Some(kind)) => {
            format!("bardo preview {kind} --profile {profile} --params '{params}'")
        }
        (CapabilityTier::Write, None) => {
            format!("bardo plan {} --profile {profile} --params '{params}'", d.name)
        }
        _ => format!("bardo call {} --profile {profile} --params '{params}'", d.name),
    }
}

/// What `bardo complete-values` lists.
#[derive(Clone, Copy, clap::ValueEnum)]
pub(crate) enum Completed {
    /// Every tool of the loaded plugins.
    Tools,
    /// Every action kind their write tools serve.
    Kinds,
    /// The profiles (`bardo tools --profiles`).
    Profiles,
}

/// `bardo complete-values WHAT`: names, sorted, one per line (nothing when the configuration
/// does not load: a shell's completion stays quiet).
pub(crate) fn complete_values(config: &Config, what: Completed, rt: &Runtime) -> Result<ExitCode> {
    let mut names: Vec<String> = match what {
        Completed::Profiles => bardo_core::profile::PROFILES.iter().map(|p| p.name.to_owned()).collect(),
        Completed::Tools | Completed::Kinds => {
            let opened = setup::open(config, None, rt)?;
            let tools =
                opened.host.plugins().iter().flat_map(|p| p.manifest.tools.clone()).collect::<Vec<_>>();
            match what {
                Completed::Tools => tools.into_iter().map(|t| t.name).collect(),
                _ => tools.into_iter().flat_map(|t| t.action_kinds).collect(),
            }
        }
    };
    names.sort();
    names.dedup();
    println!("{}", names.join("\n"));
    Ok(ExitCode::SUCCESS)
}

/// Appended to clap's bash script: the values clap cannot know (the configuration's tools and
/// kinds, the profiles) from `bardo complete-values`, everything else from clap's `_bardo`.
pub(crate) const BASH_DYNAMIC: &str = r#"
_bardo_dynamic() {
    local cur="${COMP_WORDS[COMP_CWORD]}" prev="${COMP_WORDS[COMP_CWORD-1]}" what=""
    if [ "$prev" = "--profile" ]; then
        what=profiles
    elif [ "$COMP_CWORD" -eq 2 ]; then
        case "${COMP_WORDS[1]}" in
            call | plan | stream) what=tools ;;
            preview) what=kinds ;;
        esac
    elif [ "$COMP_CWORD" -eq 3 ] && [ "${COMP_WORDS[1]}" = tools ] && [ "${COMP_WORDS[2]}" = describe ]; then
        what=tools
    fi
    if [ -n "$what" ]; then
        COMPREPLY=($(compgen -W "$(bardo complete-values "$what" 2>/dev/null)" -- "$cur"))
        return 0
    fi
    _bardo "$@"
}
complete -F _bardo_dynamic -o nosort -o bashdefault -o default bardo
"#;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_schemars_schema_reads_as_types_a_person_knows() {
        let schema = json!({
            "$defs": {"Side": {"oneOf": [{"const": "exact_in", "type": "string"}, {"const": "exact_out", "type": "string"}]},
                      "Version": {"oneOf": [{"const": "v2"}, {"const": "v3"}]}},
            "properties": {
                "amount": {"type": "string", "description": "Amount in token units.\n\nMore detail."},
                "chain_id": {"type": "integer", "examples": [31337]},
                "fee": {"type": ["integer", "null"], "default": null},
                "side": {"$ref": "#/$defs/Side", "default": "exact_in"},
                "version": {"anyOf": [{"$ref": "#/$defs/Version"}, {"type": "null"}]}
            },
            "required": ["chain_id", "amount"]
        });
        let ps = params(&schema);
        let by = |n: &str| ps.iter().find(|p| p["name"] == n).expect(n).clone();
        assert_eq!((ps[0]["name"].as_str(), ps[1]["name"].as_str()), (Some("amount"), Some("chain_id")));
        assert_eq!(by("amount")["description"], "Amount in token units.");
        assert_eq!(by("fee")["type"], "integer?");
        assert_eq!(by("side")["type"], "exact_in|exact_out");
        assert_eq!(by("side")["default"], "exact_in");
        assert_eq!(by("version")["type"], "v2|v3?");
        assert_eq!(by("chain_id")["example"], 31337);
    }
}
