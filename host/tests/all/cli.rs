//! The `bardo` binary, as an operator runs it.

use bardo_test_artifacts::{FS_IMPORT, HELLO};
use std::path::Path;
use std::process::{Command, Output};

fn bardo(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_bardo")).current_dir(dir).args(args).output().expect("run bardo")
}

fn setup() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::create_dir(dir.path().join("plugins")).expect("plugins dir");
    std::fs::copy(HELLO, dir.path().join("plugins/hello.wasm")).expect("copy");
    std::fs::write(dir.path().join("bardo.toml"), "profile = \"data\"\nplugins = [\"plugins\"]\n")
        .expect("config");
    dir
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

#[test]
fn tools_lists_the_profile() {
    let dir = setup();
    let o = bardo(dir.path(), &["tools"]);
    assert!(o.status.success(), "{o:?}");
    let out = stdout(&o);
    assert!(out.contains("hello_greet") && out.contains("hello@0.1.0") && out.contains("1000 ms"), "{out}");
    let o = bardo(dir.path(), &["tools", "--json", "--profile", "trader,vault"]);
    let json: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json");
    assert_eq!(json["tools"][0]["tool"]["name"], "hello_greet");
    assert_eq!(json["tools"][0]["tool"]["category"], "data");
    let o = bardo(dir.path(), &["tools", "--profile", "wizard"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("unknown profile `wizard`"));
}

#[test]
fn call_prints_result_and_costs() {
    let dir = setup();
    let o = bardo(dir.path(), &["call", "hello_greet", "--params", r#"{"name":"operator"}"#]);
    assert!(o.status.success(), "{o:?}");
    let json: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json");
    assert_eq!(json["greeting"], "hello, operator");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("fuel ") && err.contains("wall ") && err.contains("peak memory"), "{err}");
    let o = bardo(dir.path(), &["call", "hello_greet", "--params", r#"{"name":""}"#]);
    assert_eq!(o.status.code(), Some(1));
    let json: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json");
    assert_eq!(json["error"]["code"], "invalid-params");
}

#[test]
fn audit_prints_surface_and_exits_1_on_growth() {
    let dir = setup();
    let o = bardo(dir.path(), &["audit", HELLO]);
    assert!(o.status.success(), "{o:?}");
    let out = stdout(&o);
    assert!(
        out.contains("world    Reader")
            && out.contains("bardo:host/chain@0.1.0")
            && out.contains("hello_greet"),
        "{out}"
    );
    assert_eq!(bardo(dir.path(), &["audit", HELLO, HELLO]).status.code(), Some(0));
    let o = bardo(dir.path(), &["audit", HELLO, FS_IMPORT, "--json"]);
    assert_eq!(o.status.code(), Some(1), "{o:?}");
    let json: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json");
    assert_eq!(json["grew"], true);
}
