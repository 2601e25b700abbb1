//! An agent's registration file, when its agentURI holds it, and the services it names.

use base64::Engine;
use serde::Serialize;
use serde_json::Value;

/// The ERC's `type` for a registration file.
pub const REGISTRATION_V1: &str = "https://eips.ethereum.org/EIPS/eip-8004#registration-v1";
/// The largest registration file decoded from a data: URI.
const MAX_BYTES: usize = 256 * 1024;

/// What the agentURI gives.
#[derive(Serialize)]
pub struct Registration {
    /// The file, when the URI holds it; none for a URI to fetch.
    pub file: Option<Value>,
    /// Why there is no file, or what is wrong with it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// Read the registration file `uri` holds (a base64 JSON data: URI), or say why not.
pub fn read(uri: &str) -> Registration {
    let none = |note: String| Registration { file: None, note: Some(note) };
    if uri.is_empty() {
        return none("the agent has no agentURI yet".into());
    }
    let Some(rest) = uri.strip_prefix("data:") else {
        return none(format!(
            "the registration file is at {uri}: plugins have no network, so it is not fetched here"
        ));
    };
    let Some((meta, body)) = rest.split_once(',') else {
        return none("a data: URI without a comma".into());
    };
    if !meta.starts_with("application/json") {
        return none(format!("a data: URI of {meta}, not application/json"));
    }
    let bytes = if meta.ends_with(";base64") {
        match base64::engine::general_purpose::STANDARD.decode(body) {
            Ok(b) => b,
            Err(e) => return none(format!("its base64 does not decode: {e}")),
        }
    } else {
        body.as_bytes().to_vec()
    };
    if bytes.len() > MAX_BYTES {
        return none(format!("{} bytes, over the {MAX_BYTES} read", bytes.len()));
    }
    match serde_json::from_slice::<Value>(&bytes) {
        Ok(file) if file.is_object() => {
            let note = (file["type"] != REGISTRATION_V1)
                .then(|| format!("its `type` is {}, not {REGISTRATION_V1}", file["type"]));
            Registration { file: Some(file), note }
        }
        Ok(_) => none("its JSON is not an object".into()),
        Err(e) => none(format!("its JSON does not parse: {e}")),
    }
}

/// One service (the ERC's `services`, or `endpoints` in its earlier drafts).
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Service {
    pub name: String,
    pub endpoint: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
}

/// The services a registration file names.
pub fn services(file: &Value) -> Vec<Service> {
    let list = file.get("services").or_else(|| file.get("endpoints")).and_then(Value::as_array);
    list.into_iter()
        .flatten()
        .filter_map(|s| {
            Some(Service {
                name: s.get("name")?.as_str()?.to_owned(),
                endpoint: s.get("endpoint")?.as_str()?.to_owned(),
                version: s.get("version").and_then(Value::as_str).map(str::to_owned),
            })
        })
        .collect()
}

/// What a registration file says about an agent, as a write tool's params give it.
#[derive(Debug, Default, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Describe {
    /// The agent's name.
    pub name: String,
    /// What it does, how it works, how to reach it.
    pub description: String,
    /// Its A2A agent card URL (`https://…/.well-known/agent-card.json`).
    #[serde(default)]
    pub a2a_card: Option<String>,
    /// Its MCP endpoint.
    #[serde(default)]
    pub mcp: Option<String>,
    /// An image URL.
    #[serde(default)]
    pub image: Option<String>,
    /// Its role among agents (`infrastructure` for a host serving tools).
    #[serde(default)]
    pub role: Option<String>,
}

/// The ERC's registration file for `d`, naming `registration` (agentId, agentRegistry) when the
/// agent exists already, as a `data:application/json;base64,…` URI: the file on-chain.
pub fn build(d: &Describe, registration: Option<(u64, &str)>) -> Result<String, bardo_sdk::Error> {
    if d.name.trim().is_empty() || d.description.trim().is_empty() {
        return Err(bardo_sdk::errors::invalid_params("a registration needs a `name` and a `description`"));
    }
    let mut services = Vec::new();
    if let Some(card) = &d.a2a_card {
        services.push(serde_json::json!({"name": "A2A", "endpoint": card, "version": "0.3.0"}));
    }
    if let Some(mcp) = &d.mcp {
        services.push(serde_json::json!({"name": "MCP", "endpoint": mcp, "version": "2025-06-18"}));
    }
    let registrations: Vec<Value> = registration
        .map(|(id, registry)| serde_json::json!({"agentId": id, "agentRegistry": registry}))
        .into_iter()
        .collect();
    let mut file = serde_json::json!({
        "type": REGISTRATION_V1,
        "name": d.name,
        "description": d.description,
        "services": services,
        "active": true,
        "registrations": registrations,
        "supportedTrust": ["reputation"],
    });
    if let Some(image) = &d.image {
        file["image"] = image.clone().into();
    }
    if let Some(role) = &d.role {
        file["role"] = role.clone().into();
    }
    let text = serde_json::to_string(&file).map_err(|e| bardo_sdk::errors::internal(e.to_string()))?;
    Ok(format!("data:application/json;base64,{}", base64::engine::general_purpose::STANDARD.encode(text)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn data_uri(json: &str) -> String {
        format!("data:application/json;base64,{}", base64::engine::general_purpose::STANDARD.encode(json))
    }

    #[test]
    fn a_data_uri_is_read_and_its_services_named() {
        let uri = data_uri(
            r#"{"type":"https://eips.ethereum.org/EIPS/eip-8004#registration-v1","name":"a",
                "services":[{"name":"A2A","endpoint":"http://x/.well-known/agent-card.json","version":"0.3.0"},
                {"name":"web"}]}"#,
        );
        let r = read(&uri);
        assert!(r.note.is_none(), "{:?}", r.note);
        let s = services(r.file.as_ref().expect("file"));
        assert_eq!(s.len(), 1, "a service without an endpoint is skipped");
        assert_eq!((s[0].name.as_str(), s[0].version.as_deref()), ("A2A", Some("0.3.0")));
    }

    #[test]
    fn a_built_file_reads_back() {
        let d = Describe {
            name: "bardo".into(),
            description: "tools".into(),
            a2a_card: Some("http://h/.well-known/agent-card.json".into()),
            ..Describe::default()
        };
        let r = read(&build(&d, Some((7, "eip155:1:0xabc"))).expect("built"));
        assert!(r.note.is_none(), "{:?}", r.note);
        let file = r.file.expect("file");
        assert_eq!(file["registrations"][0]["agentId"], 7);
        assert_eq!(services(&file)[0].endpoint, "http://h/.well-known/agent-card.json");
        assert!(build(&Describe::default(), None).is_err(), "a name and a description are required");
    }

    #[test]
    fn what_is_not_read_says_why() {
        assert!(read("https://a.example/agent.json").note.expect("note").contains("not fetched"));
        assert!(read("").note.expect("note").contains("no agentURI"));
        assert!(read("data:text/plain,hi").note.expect("note").contains("text/plain"));
        assert!(read("data:application/json;base64,!!").note.expect("note").contains("base64"));
        assert!(read(&data_uri("[1]")).note.expect("note").contains("not an object"));
        let old = read(&data_uri(r#"{"type":"x","endpoints":[{"name":"MCP","endpoint":"m"}]}"#));
        assert!(old.note.expect("note").contains("`type`"));
        assert_eq!(services(old.file.as_ref().expect("file"))[0].name, "MCP", "earlier drafts' endpoints");
    }
}
