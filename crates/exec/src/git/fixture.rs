//! A git repository made by the tests, with plain (unhardened, unconfined) git.

use std::path::Path;
use std::process::Command;

/// Runs plain git in `dir` with a fixed identity; panics on failure.
pub fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .args(["-c", "user.name=Test", "-c", "user.email=test@example.com"])
        .args([
            "-c",
            "init.defaultBranch=main",
            "-c",
            "commit.gpgSign=false",
        ])
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A repository in `dir` with one commit: a.txt, b.txt, old.txt.
pub fn repo(dir: &Path) {
    git(dir, &["init", "-q"]);
    for (name, text) in [
        ("a.txt", "one\ntwo\n"),
        ("b.txt", "b\n"),
        ("old.txt", "rename me\n"),
    ] {
        std::fs::write(dir.join(name), text).unwrap();
    }
    git(dir, &["add", "."]);
    git(dir, &["commit", "-q", "-m", "first"]);
}
