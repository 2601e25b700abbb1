//! The one-pass params validator against `jsonschema`, on every tool schema of the repo's
//! plugins: it reads each of them (else every call of that tool builds a document), and of
//! thousands of documents made from each schema — valid ones and ones broken in one place —
//! it accepts none that `jsonschema` refuses. (It may refuse what `jsonschema` accepts: those
//! go to `jsonschema`, which decides.)

use super::Rng;
use bardo_core::profile::Profile;
use bardo_core::tool::RequiredCapability;
use bardo_runtime::engine::Limits;
use bardo_runtime::plugin::{Host, ParamsSchema, WasiPolicy};
use bardo_test_artifacts::{BENCH, BRIDGE};
use serde_json::{Map, Value, json};

/// Documents made from each schema.
const PER_SCHEMA: usize = 600;

/// Values that break a document in one place (or happen to fit it).
fn odd(rng: &mut Rng) -> Value {
    let pool = [
        json!(null),
        json!(true),
        json!(0),
        json!(-1),
        json!(1.0),
        json!(2.5),
        json!(9007199254740993u64),
        json!(u64::MAX),
        json!(-9007199254740993i64),
        json!(1e300),
        json!(""),
        json!("USDC"),
        json!("0x0000000000000000000000000000000000000001"),
        json!("\u{e9}\u{e9}"),
        json!([]),
        json!([1, "a"]),
        json!({}),
        json!({"x": 1}),
    ];
    pool[rng.below(pool.len())].clone()
}

/// A document for `schema` (within `root`), usually valid, broken now and then.
fn make(schema: &Value, root: &Value, rng: &mut Rng, depth: usize) -> Value {
    if depth > 6 || rng.one_in(25) {
        return odd(rng);
    }
    let Some(keywords) = schema.as_object() else { return odd(rng) };
    if let Some(pointer) = keywords.get("$ref").and_then(Value::as_str) {
        let target = root.pointer(pointer.trim_start_matches('#')).unwrap_or(&Value::Null);
        return make(target, root, rng, depth + 1);
    }
    for combinator in ["oneOf", "anyOf", "allOf"] {
        if let Some(branches) = keywords.get(combinator).and_then(Value::as_array)
            && !branches.is_empty()
        {
            let mut made = make(&branches[rng.below(branches.len())], root, rng, depth + 1);
            // The node's own properties beside the branch's, as a flattened struct has them.
            if let (Some(own), Some(fields)) = (keywords.get("properties"), made.as_object_mut())
                && let Value::Object(more) = object(keywords, own, root, rng, depth)
            {
                fields.extend(more);
            }
            return made;
        }
    }
    if let Some(values) = keywords.get("enum").and_then(Value::as_array) {
        return values[rng.below(values.len())].clone();
    }
    if let Some(value) = keywords.get("const") {
        return value.clone();
    }
    let ty = match keywords.get("type") {
        Some(Value::String(t)) => t.clone(),
        Some(Value::Array(ts)) if !ts.is_empty() => {
            ts[rng.below(ts.len())].as_str().unwrap_or("null").to_owned()
        }
        _ => ["string", "integer", "object"][rng.below(3)].to_owned(),
    };
    let bound = |k: &str| keywords.get(k).and_then(Value::as_f64);
    match ty.as_str() {
        "null" => Value::Null,
        "boolean" => json!(rng.one_in(2)),
        "integer" => {
            let (lo, hi) = (bound("minimum").unwrap_or(-5.0), bound("maximum").unwrap_or(1e6));
            let pick = [lo, hi, lo - 1.0, hi + 1.0, (lo + hi).floor() / 2.0][rng.below(5)];
            if rng.one_in(6) { json!(pick) } else { json!(pick as i64) }
        }
        "number" => json!([bound("minimum").unwrap_or(0.0), 1.5, -0.25, 1e6][rng.below(4)]),
        "string" => {
            let min = keywords.get("minLength").and_then(Value::as_u64).unwrap_or(0) as usize;
            json!(
                ["1000", "USDC", "0x0000000000000000000000000000000000000001", "", &"é".repeat(min)]
                    [rng.below(5)]
            )
        }
        "array" => {
            let n = rng.below(4);
            let items = keywords.get("items").cloned().unwrap_or(json!({}));
            Value::Array((0..n).map(|_| make(&items, root, rng, depth + 1)).collect())
        }
        _ => {
            let own = keywords.get("properties").cloned().unwrap_or(json!({}));
            object(keywords, &own, root, rng, depth)
        }
    }
}

fn object(
    keywords: &Map<String, Value>,
    properties: &Value,
    root: &Value,
    rng: &mut Rng,
    depth: usize,
) -> Value {
    let required: Vec<&str> = keywords
        .get("required")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    let mut fields = Map::new();
    for (name, sub) in properties.as_object().into_iter().flatten() {
        let wanted = required.contains(&name.as_str()) || rng.one_in(2);
        // Now and then a required field is missing, or given as null.
        if wanted && !rng.one_in(30) {
            let value = if rng.one_in(40) { Value::Null } else { make(sub, root, rng, depth + 1) };
            fields.insert(name.clone(), value);
        }
    }
    if rng.one_in(20) {
        fields.insert(["extra", "amout", "chainId"][rng.below(3)].to_owned(), odd(rng));
    }
    Value::Object(fields)
}

fn host() -> Host {
    let profile = Profile::parse("dev,learning")
        .expect("profile")
        .with_capabilities([RequiredCapability::Wallet, RequiredCapability::Memory]);
    let mut host =
        Host::new(super::engine(), super::no_services(), profile, Limits::default(), WasiPolicy::default())
            .expect("host");
    for plugin in super::catalog::PLUGINS.into_iter().chain([BRIDGE, BENCH]) {
        host.load_file(std::path::Path::new(plugin)).unwrap_or_else(|e| panic!("{plugin}: {e}"));
    }
    host
}

#[test]
fn the_one_pass_validator_reads_every_plugin_schema_and_accepts_nothing_jsonschema_refuses() {
    let host = host();
    let (mut accepted, mut refused, mut tools, mut in_one_pass) = (0usize, 0usize, 0usize, 0usize);
    for (tool, entry) in host.catalog() {
        let schema = &entry.def.input_schema;
        let checker = ParamsSchema::compile(schema).expect("every plugin schema compiles");
        assert!(checker.is_streamed(), "`{tool}`'s schema is not read in one pass: {schema}");
        tools += 1;
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15 ^ tools as u64);
        for _ in 0..PER_SCHEMA {
            let text = make(schema, schema, &mut rng, 0).to_string();
            let reference = checker.check_document(tool, &text).is_ok();
            let one_pass = checker.accepted_in_one_pass(&text) == Some(true);
            assert!(!one_pass || reference, "`{tool}`: accepted in one pass, refused by jsonschema: {text}");
            in_one_pass += usize::from(one_pass);
            assert_eq!(checker.check(tool, &text).is_ok(), reference, "`{tool}`: {text}");
            if reference { accepted += 1 } else { refused += 1 }
        }
    }
    // Both sides exercised: a generator that only made refused documents would prove nothing.
    assert!(tools >= 100, "{tools} tools");
    assert!(
        accepted > tools * PER_SCHEMA / 4 && refused > tools * PER_SCHEMA / 10,
        "{accepted} accepted, {refused} refused"
    );
    // And the one pass does the work: what it leaves to jsonschema costs a document each.
    assert!(
        in_one_pass * 100 >= accepted * 95,
        "{in_one_pass} of {accepted} valid documents accepted in one pass"
    );
    println!(
        "{tools} schemas: {accepted} documents valid ({in_one_pass} accepted in one pass), {refused} refused"
    );
}

#[test]
fn the_one_pass_validator_agrees_on_hostile_text() {
    let host = host();
    let checker = &host.catalog()["bench_eth_call"];
    let checker = ParamsSchema::compile(&checker.def.input_schema).expect("compiles");
    let order = r#"{"token":"0x0000000000000000000000000000000000000001","amount":"1","price":1.5}"#;
    for text in [
        format!(r#"{{"owner":"0x01","orders":[{order}]}}"#),
        format!(r#"{{"owner":"0x01","orders":[{order}],"owner":5}}"#),
        // A name given twice is its last value to serde_json: here `null`, so left out.
        format!(r#"{{"owner":"0x01","orders":[{order}],"owner":null}}"#),
        format!(r#"{{"owner":null,"orders":[{order}],"owner":"0x01"}}"#),
        // Numbers serde_json cannot read, where no schema looks at them: not JSON to it.
        format!(r#"{{"owner":"0x01","orders":[{}]}}"#, order.replace("}", r#","x":1e400}"#)),
        format!(r#"{{"owner":"0x01","orders":[{}]}}"#, order.replace("}", r#","x":[{"y":-1e999}]}"#)),
        format!(r#"{{"owner":"0x01","orders":[{order}],"x":{{"y":1e400}}}}"#),
        // A lone surrogate, which serde_json's skip lets through and its reader refuses.
        format!(r#"{{"owner":"0x01","orders":[{}]}}"#, order.replace("}", r#","x":["\ud800"]}"#)),
        format!(r#"{{"owner":"0x01","orders":[{order}],"x":{{"y":"\udc00"}}}}"#),
        format!(r#"{{"owner":"0x01","orders":[{order}]}} {{}}"#),
        format!(r#"{{"owner":"0x01","orders":[{order},]}}"#),
        format!(r#"{{"own\u0065r":"0x01","orders":[{order}]}}"#),
        format!(r#"{{"owner":"0x01","orders":[{order}], "extra": null}}"#),
        format!(r#"{{"owner":null,"orders":[{order}]}}"#),
        format!(r#"{{"owner":"0x01","orders":[{}]}}"#, order.replace("1.5", "1e400")),
        format!(r#"{{"owner":"0x01","orders":{}}}"#, "[".repeat(200) + &"]".repeat(200)),
        r#"{"owner":"0x01","orders":[]}"#.to_owned(),
        "[]".to_owned(),
        "\"x\"".to_owned(),
        String::new(),
    ] {
        let reference = checker.check_document("t", &text).is_ok();
        assert!(checker.accepted_in_one_pass(&text) != Some(true) || reference, "{text}");
        assert_eq!(checker.check("t", &text).is_ok(), reference, "{text}");
    }
}
