//! Schema versioning: an update that breaks a tool's params without a new major version is
//! refused (the active version keeps serving), an honest major version is accepted, and results
//! carry the tool's schema version (`bardo audit OLD NEW` showing both is a CLI test).

use super::registry::pull;
use bardo_core::ErrorCode;
use bardo_runtime::distribution::lock::Lockfile;
use bardo_runtime::distribution::{DistributionError, Outcome};
use bardo_runtime::setup;
use bardo_test_artifacts::{ECHO_V2, ECHO_V2_1, ECHO_V4};
use bardo_test_support::registry::{RegistryServer, workdir};

#[test]
fn a_breaking_params_change_needs_a_major_version() {
    let server = RegistryServer::start();
    let (v2, _, _) = server.publish("bardo/echo", ECHO_V2, "0.2.0");
    let (v2_1, _, _) = server.publish("bardo/echo", ECHO_V2_1, "0.2.1");
    let (v4, _, _) = server.publish("bardo/echo", ECHO_V4, "0.4.0");
    let (dir, config) = workdir(&server, "");
    assert!(matches!(pull(&config, "echo", &v2), Ok(Outcome::Pinned { previous: None, .. })));

    // 0.2.1 retypes `n`: refused, 0.2.0 stays pinned and serving, nothing held.
    let refused = pull(&config, "echo", &v2_1).expect_err("a patch release may not break params");
    assert!(matches!(refused, DistributionError::Incompatible { .. }), "{refused}");
    let message = refused.to_string();
    assert!(
        message.contains("`echo_get_version`'s params change incompatibly (changes the type of `n`)")
            && message.contains("0.2.1 is not a new major version after 0.2.0 (that would be 0.3.0)"),
        "{message}"
    );
    let lock = Lockfile::read(&dir.path().join("bardo.lock")).expect("lock");
    assert_eq!(lock.oci_pin("echo").expect("pin").version, "0.2.0");
    assert!(lock.pending.is_empty());
    let opened = setup::open(&config, Some("dev"), crate::host_runtime()).expect("open");
    let report = opened.host.call("echo_get_version", r#"{"n":7}"#);
    assert_eq!(report.schema_version, 1, "results carry the schema version they follow");
    assert!(report.result.expect("0.2.0 answers").contains("\"0.2.0\""));

    // 0.4.0 makes the same change as a new major version with schema version 2: accepted.
    match pull(&config, "echo", &v4).expect("pull 0.4.0") {
        Outcome::Pinned { diff: Some(d), .. } => {
            assert!(d.incompatible.is_empty(), "{:?}", d.incompatible);
            assert_eq!(d.schema_changes.len(), 1);
            assert_eq!(d.schema_changes[0].schema_version, (1, 2));
            assert_eq!(d.schema_changes[0].changes.breaking, ["changes the type of `n`"]);
        }
        other => panic!("0.4.0 must replace 0.2.0 at once: {other:?}"),
    }
    let opened = setup::open(&config, Some("dev"), crate::host_runtime()).expect("open");
    let report = opened.host.call("echo_get_version", r#"{"n":"seven"}"#);
    assert_eq!(report.schema_version, 2);
    assert!(report.result.expect("0.4.0 answers").contains("\"seven\""));
    let old_caller = opened.host.call("echo_get_version", r#"{"n":7}"#).result.expect_err("old params");
    assert_eq!(old_caller.code, ErrorCode::InvalidParams, "{old_caller}");

    // The operator pins 0.2.0 beside it: its tool is served as `echo_get_version_v1`.
    let path = dir.path().join("bardo.toml");
    let text = std::fs::read_to_string(&path).expect("config");
    let text = format!("{text}\n[oci.echo-v1]\nreference = \"{v2}\"\nside_by_side = true\n");
    std::fs::write(&path, text).expect("config");
    let config = bardo_runtime::config::Config::load(&path, true).expect("config");
    assert!(matches!(pull(&config, "echo-v1", &v2), Ok(Outcome::Pinned { previous: None, .. })));
    let opened = setup::open(&config, Some("dev"), crate::host_runtime()).expect("open");
    assert!(
        opened.refused.is_empty(),
        "{:?}",
        opened.refused.iter().map(ToString::to_string).collect::<Vec<_>>()
    );
    let old = opened.host.call("echo_get_version_v1", r#"{"n":7}"#);
    assert_eq!(old.schema_version, 1);
    assert!(old.result.expect("0.2.0 answers").contains("\"0.2.0\""));
    let new = opened.host.call("echo_get_version", r#"{"n":"seven"}"#);
    assert!(new.result.expect("0.4.0 answers").contains("\"0.4.0\""));
    assert_eq!(opened.host.catalog()["echo_get_version_v1"].plugin.name.as_ref(), "echo@0.2.0");
}
