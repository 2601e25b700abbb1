//! `bardo --version` names the commit it was built from (`0.1.0 (commit 6c3bee4, 2026-12-02)`),
//! so a bug report says which build it is; built without git (a packaged source), the version
//! alone.
use std::path::Path;
use std::process::Command;

fn main() {
    let git = |args: &[&str]| {
        Command::new("git")
            .args(args)
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
            .filter(|s| !s.is_empty())
    };
    let commit = git(&["log", "-1", "--format=%h %cs"]);
    let suffix = match commit.as_deref().and_then(|c| c.split_once(' ')) {
        Some((hash, date)) => format!(" (commit {hash}, {date})"),
        None => String::new(),
    };
    println!("cargo:rustc-env=BARDO_BUILD_COMMIT={suffix}");
    // Run again when HEAD moves (a commit, a checkout); only files that exist, since a missing
    // one would run this every build.
    println!("cargo:rerun-if-changed=build.rs");
    if let Some(dir) = git(&["rev-parse", "--absolute-git-dir"]) {
        let branch = git(&["symbolic-ref", "-q", "HEAD"]);
        for file in ["HEAD".to_owned(), "packed-refs".to_owned()].into_iter().chain(branch) {
            let path = Path::new(&dir).join(file);
            if path.exists() {
                println!("cargo:rerun-if-changed={}", path.display());
            }
        }
    }
}
