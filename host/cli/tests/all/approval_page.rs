//! The approval page of `bardo serve` in headless Chromium (playwright-core): the operator opens
//! the one-time link `bardo confirm --open` prints, reads the held permits in words, sees a new
//! one appear live, approves one (the agent's commit then goes through) and declines another with
//! a reason (cancelled, nothing sent) — each on the audit record with its channel. The agent's
//! token, no token and a used link get nothing.

use super::free_port;
use super::mcp::{HttpServer, Workspace, balanceOfCall, clients, view};
use alloy::primitives::U256;
use bardo_devnet::CHAIN_ID;
use bardo_test_support::devnet;
use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Command, Stdio};

/// Status of `GET path` at `addr` with `headers`, by hand (no client follows or retries).
fn get(addr: &str, path: &str, headers: &[(&str, &str)]) -> u16 {
    request(addr, "GET", path, headers)
}

/// Status of `method path` (no body) at `addr` with `headers`.
fn request(addr: &str, method: &str, path: &str, headers: &[(&str, &str)]) -> u16 {
    let mut tcp = std::net::TcpStream::connect(addr).expect("connect");
    let extra: String = headers.iter().map(|(k, v)| format!("{k}: {v}\r\n")).collect();
    write!(
        tcp,
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\n{extra}Content-Length: 0\r\nConnection: close\r\n\r\n"
    )
    .expect("write");
    let mut answer = String::new();
    tcp.read_to_string(&mut answer).expect("read");
    answer.split_whitespace().nth(1).and_then(|s| s.parse().ok()).unwrap_or(0)
}

#[test]
fn the_operator_approves_and_declines_in_the_browser_and_an_agent_cannot_reach_the_page() {
    let (node, d) = devnet();
    let w = Workspace::trader_with(&node, &d, "confirm = \"always\"");
    let addr = format!("127.0.0.1:{}", free_port());
    let _server = HttpServer::spawn(&w, &addr, &[], &["serve", "--listen", &addr]);
    let base = format!("http://{addr}");
    let usdc = || view(&node.url(), d.tokens["USDC"].address, balanceOfCall { account: d.deployer });
    let preview = |amount: &str| -> String {
        let params = json!({"chain_id": CHAIN_ID, "token_in": "USDC", "token_out": "WETH", "amount": amount});
        let o = w.bardo(&["preview", "swap", "--params", &params.to_string()]);
        assert!(o.status.success(), "{o:?}");
        let permit: Value = serde_json::from_slice(&o.stdout).expect("permit");
        permit["permit_id"].as_str().expect("id").to_owned()
    };
    let (first, second) = (preview("100"), preview("900"));

    // No token, the agent's token: nothing.
    assert_eq!(get(&addr, "/operator", &[]), 401);
    let agent = std::fs::read_to_string(w.path().join(".bardo/http.token")).expect("the agent's token");
    assert_eq!(get(&addr, "/operator", &[("Authorization", &format!("Bearer {}", agent.trim()))]), 401);
    let operator = std::fs::read_to_string(w.path().join(".bardo/operator.token")).expect("operator token");
    let bearer = format!("Bearer {}", operator.trim());
    assert_eq!(get(&addr, "/operator", &[("Authorization", &bearer)]), 200);
    // A form posted from another local origin (a page an agent serves on another port), even
    // with the operator's credentials, is refused: nothing is confirmed.
    let approve = format!("/operator/permits/{first}/approve");
    let other_port = format!("http://127.0.0.1:{}", free_port());
    assert_eq!(request(&addr, "POST", &approve, &[("Authorization", &bearer), ("Origin", &other_port)]), 401);
    // A Host the door does not serve (DNS rebinding) gets nothing either.
    let mut tcp = std::net::TcpStream::connect(&addr).expect("connect");
    write!(
        tcp,
        "GET /operator HTTP/1.1\r\nHost: evil.example\r\nAuthorization: {bearer}\r\nConnection: close\r\n\r\n"
    )
    .expect("write");
    let mut answer = String::new();
    tcp.read_to_string(&mut answer).expect("read");
    assert!(answer.starts_with("HTTP/1.1 401"), "{answer}");

    let o = w.bardo(&["confirm", "--open", "--url", &base]);
    assert!(o.status.success(), "{o:?}");
    let link = String::from_utf8_lossy(&o.stdout).trim().to_owned();
    assert!(link.starts_with(&format!("{base}/operator/login?")), "{link}");

    let shot = w.path().join("approval-page.png");
    let mut browser = Command::new("node")
        .arg(clients().join("page_client.mjs"))
        .args([link.as_str(), shot.to_str().expect("path")])
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("node (scripts/setup.sh installs playwright-core and chromium)");
    let mut lines = BufReader::new(browser.stdout.take().expect("stdout")).lines();
    let mut next = || -> Value {
        let line = lines.next().expect("a line from the browser").expect("read");
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"))
    };
    let loaded = next();
    assert_eq!(loaded["step"], "loaded", "{loaded}");
    assert!(
        loaded["url"].as_str().is_some_and(|u| u.ends_with("/operator")),
        "the link became a session: {loaded}"
    );
    let shown: Vec<&str> =
        loaded["permits"].as_array().expect("permits").iter().filter_map(|p| p["id"].as_str()).collect();
    assert_eq!(shown, [first.as_str(), second.as_str()], "{loaded}");
    let text = loaded["permits"][0]["text"].as_str().expect("text");
    // In words: the symbol and whole units, USD, the policy, the contracts, the expiry.
    for said in [
        "swap",
        "-100 USDC",
        "USD",
        "spends",
        "confirm = \"always\"",
        "waits for a person",
        "expires in",
        "calls 0x",
    ] {
        assert!(text.contains(said), "{said:?} in {text}");
    }
    assert!(loaded["audit"].as_str().is_some_and(|a| a.contains("PermitCreated")), "{loaded}");

    let ready = next();
    assert_eq!(ready["step"], "ready");
    let third = preview("10");
    let live = next();
    assert_eq!(live["step"], "live", "{live}");
    assert!(
        live["permits"].as_array().is_some_and(|p| p.iter().any(|p| p["id"] == third.as_str())),
        "{live}"
    );

    let acted = next();
    assert_eq!(acted["step"], "acted", "{acted}");
    assert!(
        acted["approved"].as_str().is_some_and(|s| s.contains("confirmed by operator (approval page)")),
        "{acted}"
    );
    let left: Vec<&str> = acted["left"].as_array().expect("left").iter().filter_map(Value::as_str).collect();
    assert_eq!(left, [first.as_str(), third.as_str()], "the declined permit left the page: {acted}");
    assert!(browser.wait().expect("node").success());
    assert!(std::fs::metadata(&shot).is_ok_and(|m| m.len() > 10_000), "a screenshot was taken");
    if let Ok(dir) = std::env::var("BARDO_SCREENSHOT_DIR") {
        std::fs::copy(&shot, std::path::Path::new(&dir).join("approval-page.png"))
            .expect("copy the screenshot");
    }

    // On record with the channel; the approved permit commits, the declined one is gone.
    let events = w.audit();
    assert!(events.iter().any(|e| e["type"] == "PermitConfirmed"
        && e["permit_id"] == first.as_str()
        && e["channel"] == "page"
        && e["by"] == "operator (approval page)"));
    assert!(events.iter().any(|e| e["type"] == "ConfirmationDeclined"
        && e["permit_id"] == second.as_str()
        && e["reason"] == "too large for today"));
    assert!(events.iter().any(|e| e["type"] == "PermitCancelled" && e["permit_id"] == second.as_str()));
    let before = usdc();
    let o = w.bardo(&["commit", &first]);
    assert!(o.status.success(), "the approved permit commits: {o:?}");
    assert_eq!(before - usdc(), U256::from(100_000_000u64));
    let o = w.bardo(&["commit", &second]);
    assert!(!o.status.success(), "the declined permit is cancelled");
    assert_eq!(before - usdc(), U256::from(100_000_000u64), "nothing more was sent");
    // The link was used once.
    let path = link.strip_prefix(&base).expect("path");
    assert_eq!(get(&addr, path, &[]), 401);
}

/// The operator's token lives apart from the agent's: given in `$BARDO_OPERATOR_TOKEN` (the
/// environment of the operator's `bardo serve`) no file is made and that token opens the page;
/// a token file others can read, or an operator token that is also an agent's, and `bardo
/// serve` refuses to start.
#[test]
fn the_operators_token_is_never_where_the_agent_reads_its_own() {
    let (node, d) = devnet();
    let w = Workspace::trader(&node, &d);
    let operator = "0f1e2d3c4b5a69788796a5b4c3d2e1f0";
    let addr = format!("127.0.0.1:{}", free_port());
    let env = [("BARDO_OPERATOR_TOKEN", operator)];
    let server = HttpServer::spawn(&w, &addr, &env, &["serve", "--listen", &addr]);
    assert_eq!(get(&addr, "/operator", &[("Authorization", &format!("Bearer {operator}"))]), 200);
    let agent = std::fs::read_to_string(w.path().join(".bardo/http.token")).expect("the agent's token");
    assert_eq!(get(&addr, "/operator", &[("Authorization", &format!("Bearer {}", agent.trim()))]), 401);
    assert!(!w.path().join(".bardo/operator.token").exists(), "no file holds the operator's token");
    drop(server);

    // The operator's token as an agent's too: refused.
    let config = std::fs::read_to_string(w.path().join("bardo.toml")).expect("config");
    std::fs::write(w.path().join("agents.tokens"), format!("{operator}\n")).expect("tokens");
    std::fs::write(w.path().join("bardo.toml"), format!("{config}\n[mcp]\ntoken_file = \"agents.tokens\"\n"))
        .expect("config");
    let said = HttpServer::refused(&w, &env, &["serve", "--listen", &addr]);
    assert!(said.contains("also an agent's token"), "{said}");
    std::fs::write(w.path().join("bardo.toml"), &config).expect("config");

    // A token file the agent's user could read: refused, with the fix.
    drop(HttpServer::spawn(&w, &addr, &[], &["serve", "--listen", &addr]));
    let file = w.path().join(".bardo/operator.token");
    assert!(file.exists(), "made on the first start without the variable");
    std::fs::set_permissions(&file, std::os::unix::fs::PermissionsExt::from_mode(0o644)).expect("chmod");
    let said = HttpServer::refused(&w, &[], &["serve", "--listen", &addr]);
    assert!(said.contains("readable by others") && said.contains("chmod 600"), "{said}");
}
