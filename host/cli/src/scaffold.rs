//! `bardo plugin new NAME [--write | --stream]`: a plugin crate that builds on its own, outside
//! any workspace — explicit dependency versions, `bardo-sdk` by version with a `[patch]` that
//! takes it from a Bardo checkout's `sdk/` (it is not on crates.io), this checkout's
//! `Cargo.lock` so the versions are the ones the SDK is tested with — with one working tool of
//! the chosen kind, a README that says how to build, load and publish it, and the naming rules.

use anyhow::{Context, Result, bail};
use std::path::{Path, PathBuf};

/// Which world the new plugin starts in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// One read tool (`<prefix>_get_block`).
    Read,
    /// One write tool (`<prefix>_wrap_eth`, action kind `<prefix>_wrap`).
    Write,
    /// One stream tool (`<prefix>_watch_balance`).
    Stream,
}

/// The version of the `bardo-sdk` package `manifest` declares, if it is that package's.
fn sdk_version(manifest: &str) -> Option<String> {
    let package = manifest.parse::<toml::Table>().ok()?.remove("package")?;
    (package.get("name")?.as_str()? == "bardo-sdk").then_some(())?;
    Some(package.get("version")?.as_str()?.to_owned())
}

/// Fill `{{key}}` placeholders.
fn fill(template: &str, vars: &[(&str, &str)]) -> String {
    vars.iter().fold(template.to_owned(), |text, (k, v)| text.replace(&format!("{{{{{k}}}}}"), v))
}

/// Create the crate `dir/name`; returns its directory.
pub(crate) fn create(name: &str, kind: Kind, dir: &Path, sdk: Option<&Path>) -> Result<PathBuf> {
    if let Err(rule) = bardo_core::names::plugin_name(name) {
        bail!("{rule}; its tools are then named `<name with '_' for '-'>_<action>`");
    }
    let sdk = sdk.map(Path::to_path_buf).unwrap_or_else(|| crate::built_from("sdk"));
    let manifest = std::fs::read_to_string(sdk.join("Cargo.toml")).unwrap_or_default();
    let Some(sdk_version) = sdk_version(&manifest) else {
        bail!("no bardo-sdk at {}; pass --sdk PATH to the sdk/ directory of a Bardo checkout", sdk.display());
    };
    let sdk = sdk.canonicalize().with_context(|| format!("resolving {}", sdk.display()))?;
    let root = dir.join(name);
    if root.exists() {
        bail!("{} already exists; choose another name or --dir", root.display());
    }
    let prefix = name.replace('-', "_");
    let sdk_text = sdk.display().to_string().replace('\\', "/");
    let notes = match kind {
        Kind::Write => format!(
            "\nIt reads WETH's address from its settings: add `{name} = \".bardo/settings/{name}.json\"` under \
             `[settings]` in bardo.toml, that file holding `{{\"chains\": {{\"31337\": {{\"weth\": \"0x…\"}}}}}}` \
             (the devnet's WETH is in `.bardo/deployments.json`); the host's `[safety]` allowlist must \
             name WETH for the plan to pass.\n"
        ),
        Kind::Read | Kind::Stream => String::new(),
    };
    let (source, extra_deps, profile, try_it) = match kind {
        Kind::Read => (
            include_str!("../templates/read.rs.tmpl"),
            "",
            "data",
            format!("bardo call {prefix}_get_block --params '{{\"chain_id\":31337}}'"),
        ),
        Kind::Write => (
            include_str!("../templates/write.rs.tmpl"),
            "alloy-primitives = { version = \"1\", default-features = false, features = [\"std\"] }\n\
             alloy-sol-types = { version = \"1\", default-features = false, features = [\"std\"] }\n",
            "active",
            format!(
                "bardo preview {prefix}_wrap --profile active --params '{{\"chain_id\":31337,\"amount\":\"0.1\"}}'"
            ),
        ),
        Kind::Stream => (
            include_str!("../templates/stream.rs.tmpl"),
            "",
            "data",
            format!(
                "bardo stream {prefix}_watch_balance --params '{{\"chain_id\":31337,\"account\":\"0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266\"}}'"
            ),
        ),
    };
    let vars = [
        ("name", name),
        ("prefix", prefix.as_str()),
        ("stem", prefix.as_str()),
        ("sdk", sdk_text.as_str()),
        ("sdk_version", sdk_version.as_str()),
        ("extra_deps", extra_deps),
        ("profile", profile),
        ("try", try_it.as_str()),
        ("notes", notes.as_str()),
    ];
    let src = root.join("src");
    std::fs::create_dir_all(&src).with_context(|| format!("creating {}", src.display()))?;
    let files = [
        (root.join("Cargo.toml"), fill(include_str!("../templates/Cargo.toml.tmpl"), &vars)),
        (src.join("lib.rs"), fill(source, &vars)),
        (root.join("README.md"), fill(include_str!("../templates/README.md.tmpl"), &vars)),
        (root.join(".gitignore"), "/target\n".to_owned()),
    ];
    for (path, text) in files {
        std::fs::write(&path, text).with_context(|| format!("writing {}", path.display()))?;
    }
    // In rustfmt's default style, whatever the name's length (best effort: rustfmt may be absent).
    let _ = std::process::Command::new("cargo")
        .args(["fmt", "--quiet"])
        .current_dir(&root)
        .stderr(std::process::Stdio::null())
        .status();
    // The versions the SDK is built and tested with (cargo drops what the crate does not use).
    if let Some(lock) = sdk.parent().map(|p| p.join("Cargo.lock")).filter(|l| l.is_file()) {
        std::fs::copy(&lock, root.join("Cargo.lock"))
            .with_context(|| format!("copying {}", lock.display()))?;
    }
    Ok(root)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sdk_version_is_read_from_its_own_manifest() {
        let ours = std::fs::read_to_string(crate::built_from("sdk/Cargo.toml")).expect("sdk manifest");
        let version = sdk_version(&ours).expect("bardo-sdk's version");
        assert!(
            version.split('.').all(|n| n.parse::<u32>().is_ok()) && version.split('.').count() == 3,
            "{version}"
        );
        assert_eq!(sdk_version("[package]\nname = \"other\"\nversion = \"1.0.0\"\n"), None);
        assert_eq!(sdk_version("not toml ["), None);
    }

    #[test]
    fn placeholders_are_filled() {
        assert_eq!(fill("{{name}}_x {{name}} {{other}}", &[("name", "a")]), "a_x a {{other}}");
    }

    #[test]
    fn it_refuses_a_bad_name_an_existing_directory_and_a_missing_sdk() {
        let dir = tempfile::tempdir().expect("tempdir");
        let e = create("My_Tools", Kind::Read, dir.path(), None).expect_err("bad name");
        assert!(e.to_string().contains("lowercase"), "{e}");
        let e = create("ok", Kind::Read, dir.path(), Some(dir.path())).expect_err("no sdk");
        assert!(e.to_string().contains("--sdk"), "{e}");
        create("ok", Kind::Stream, dir.path(), None).expect("created");
        let again = create("ok", Kind::Read, dir.path(), None).expect_err("exists");
        assert!(again.to_string().contains("already exists"), "{again}");
        let lib = std::fs::read_to_string(dir.path().join("ok/src/lib.rs")).expect("lib.rs");
        assert!(lib.contains("\"ok_watch_balance\"") && !lib.contains("{{"), "{lib}");
    }
}
