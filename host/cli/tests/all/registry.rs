//! `bardo plugin` against a real OCI registry (Debian's `docker-registry` on a loopback port):
//! keys, signed publishing, pulls that hold a grown update until `approve`, `bardo run` reloading,
//! and logins from the environment or Docker's config. The library's distribution is tested in
//! `bardo-runtime`.

use bardo_test_artifacts::{ECHO_V1, ECHO_V2, ECHO_V3};
use bardo_test_support::registry::{RegistryServer, workdir};
use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn bardo(dir: &Path, args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_bardo")).current_dir(dir).args(args).output().expect("run bardo")
}

#[test]
fn cli_publishes_signed_pulls_holds_approves_and_bardo_run_reloads() {
    let server = RegistryServer::start();
    let (dir, _) = workdir(&server, "");
    let d = dir.path();
    let o = bardo(d, &["plugin", "keygen", "publisher.pem"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(
        !bardo(d, &["plugin", "keygen", "publisher.pem"]).status.success(),
        "keygen must not overwrite a key"
    );
    let trust = format!(
        "\n[[registry.trust]]\nprefix = \"{}/bardo/\"\nkeys = [\"publisher.pem.pub\"]\n",
        server.addr
    );
    let config = std::fs::read_to_string(d.join("bardo.toml")).expect("read");
    std::fs::write(d.join("bardo.toml"), format!("{config}{trust}")).expect("write");
    let repo = format!("{}/bardo/echo", server.addr);

    // Publish without a tag: tagged with the plugin's version, and signed.
    let o = bardo(d, &["plugin", "publish", ECHO_V1, &repo, "--sign", "publisher.pem"]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(out.contains(&format!("published {repo}:0.1.0 sha256:")) && out.contains(".sig"), "{out}");
    // A tag that is not the plugin's version is refused.
    let o = bardo(d, &["plugin", "publish", ECHO_V2, &format!("{repo}:9.9.9")]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("differs from the plugin's version 0.2.0"));
    let o = bardo(d, &["plugin", "publish", ECHO_V3, &repo, "--sign", "publisher.pem"]);
    assert!(o.status.success());

    let o = bardo(d, &["plugin", "pull", &format!("{repo}:0.1.0")]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(String::from_utf8_lossy(&o.stdout).contains("pinned echo 0.1.0"));

    // `bardo run` serves v1.
    let mut run = Command::new(env!("CARGO_BIN_EXE_bardo"))
        .current_dir(d)
        .args(["run", "--profile", "dev", "--watch-ms", "50"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("bardo run");
    let mut stdin = run.stdin.take().expect("stdin");
    let mut lines = std::io::BufReader::new(run.stdout.take().expect("stdout"));
    let mut ask = |n: u64| -> serde_json::Value {
        writeln!(stdin, r#"{{"id":{n},"tool":"echo_get_version","params":{{"n":{n}}}}}"#).expect("send");
        let mut line = String::new();
        std::io::BufRead::read_line(&mut lines, &mut line).expect("answer");
        serde_json::from_str(&line).expect("json answer")
    };
    let a = ask(1);
    assert_eq!((a["id"].as_u64(), a["ok"]["version"].as_str()), (Some(1), Some("0.1.0")), "{a}");
    // Each call is journaled, for a `bardo tui` elsewhere.
    let deadline = Instant::now() + Duration::from_secs(10);
    while !std::fs::read_to_string(d.join(".bardo/events.jsonl"))
        .is_ok_and(|j| j.contains("ToolExecutionEnd") && j.contains("echo_get_version"))
    {
        assert!(Instant::now() < deadline, "bardo run's call is not in the events journal");
        std::thread::sleep(Duration::from_millis(50));
    }

    // v3 grew: held, exit 3, the diff shown; v1 keeps serving.
    let o = bardo(d, &["plugin", "pull", &format!("{repo}:0.3.0")]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(3), "{out}");
    assert!(out.contains("+ tool   echo_plan_nothing") && out.contains("HELD"), "{out}");
    let list = String::from_utf8_lossy(&bardo(d, &["plugin", "list"]).stdout).into_owned();
    assert!(list.contains("active   echo") && list.contains("0.1.0"), "{list}");
    assert!(list.contains("HELD     echo") && list.contains("0.3.0"), "{list}");
    let listed: serde_json::Value =
        serde_json::from_slice(&bardo(d, &["plugin", "list", "--json"]).stdout).expect("json");
    assert_eq!(
        (listed["active"][0]["version"].as_str(), listed["held"][0]["version"].as_str()),
        (Some("0.1.0"), Some("0.3.0"))
    );
    assert_eq!(ask(2)["ok"]["version"], "0.1.0");

    // Approved: the running host picks it up.
    let o = bardo(d, &["plugin", "approve", "echo"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let deadline = Instant::now() + Duration::from_secs(15);
    let mut n = 3;
    while ask(n)["ok"]["version"] != "0.3.0" {
        assert!(Instant::now() < deadline, "bardo run did not load the approved version");
        std::thread::sleep(Duration::from_millis(50));
        n += 1;
    }
    let bad = ask(0);
    assert_eq!(bad["ok"]["version"], "0.3.0");
    // One error shape everywhere: code, message, retryable.
    writeln!(stdin, r#"{{"id":9,"tool":"echo_no_such_tool"}}"#).expect("send");
    let mut line = String::new();
    std::io::BufRead::read_line(&mut lines, &mut line).expect("answer");
    let e: serde_json::Value = serde_json::from_str(&line).expect("json");
    assert_eq!((e["id"].as_u64(), e["error"]["code"].as_str()), (Some(9), Some("not-found")), "{e}");
    assert_eq!(e["error"]["retryable"], false, "{e}");
    drop(stdin);
    assert!(run.wait().expect("exit").success());

    let o = bardo(d, &["plugin", "list", "--remote", &repo]);
    assert_eq!(String::from_utf8_lossy(&o.stdout), "0.1.0\n0.3.0\n");
    let o = bardo(d, &["plugin", "list", "--remote", &repo, "--json"]);
    assert_eq!(
        serde_json::from_slice::<serde_json::Value>(&o.stdout).expect("json"),
        serde_json::json!({"versions": ["0.1.0", "0.3.0"]})
    );
}

#[test]
fn cli_logs_in_from_the_environment_or_docker_config_and_says_when_it_cannot() {
    let server = RegistryServer::start_with_login("ann", "pw-123");
    let login = format!(
        "\n[[registry.auth]]\nregistry = \"{}\"\nusername = \"ann\"\npassword_env = \"BARDO_TEST_REGISTRY_PASSWORD\"\n",
        server.addr
    );
    let (dir, _) = workdir(&server, &login);
    let no_docker = tempfile::tempdir().expect("tempdir");
    let bardo_env = |d: &Path, args: &[&str], password: Option<&str>, docker: &Path| {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_bardo"));
        cmd.current_dir(d).args(args).env("DOCKER_CONFIG", docker).env_remove("BARDO_TEST_REGISTRY_PASSWORD");
        if let Some(p) = password {
            cmd.env("BARDO_TEST_REGISTRY_PASSWORD", p);
        }
        cmd.output().expect("run bardo")
    };
    let repo = format!("{}/bardo/echo", server.addr);
    // The password variable unset: refused before anything is sent, naming the variable.
    let o = bardo_env(dir.path(), &["plugin", "publish", ECHO_V1, &repo], None, no_docker.path());
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("$BARDO_TEST_REGISTRY_PASSWORD, which is not set") && err.contains("refused access"),
        "{err}"
    );
    let o = bardo_env(dir.path(), &["plugin", "publish", ECHO_V1, &repo], Some("pw-123"), no_docker.path());
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));

    // No [[registry.auth]]: the login `docker login` left in config.json is used.
    let (plain, _) = workdir(&server, "");
    let o = bardo_env(plain.path(), &["plugin", "pull", &format!("{repo}:0.1.0")], None, no_docker.path());
    assert_eq!(o.status.code(), Some(2), "anonymous pull must fail");
    assert!(String::from_utf8_lossy(&o.stderr).contains("docker login"));
    let docker = tempfile::tempdir().expect("tempdir");
    let auth = "YW5uOnB3LTEyMw=="; // base64 of `ann:pw-123`, as `docker login` writes it
    std::fs::write(
        docker.path().join("config.json"),
        format!(r#"{{"auths":{{"{}":{{"auth":"{auth}"}}}}}}"#, server.addr),
    )
    .expect("docker config");
    let o = bardo_env(plain.path(), &["plugin", "pull", &format!("{repo}:0.1.0")], None, docker.path());
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(String::from_utf8_lossy(&o.stdout).contains("pinned echo 0.1.0"));
}
