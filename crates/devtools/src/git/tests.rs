//! git under the runner: the tools' cores against a real repository, and the hardening
//! against repositories whose config runs code.

use super::commit::{git_commit, GitCommitArgs};
use super::diff::{git_diff, GitDiffArgs};
use super::fixture::{git, repo};
use super::status::git_status;
use crate::error::ErrorCode;
use crate::exec::testutil::{Fixture, SYSTEM_PATH};
use crate::exec::Control;

fn fixture() -> Fixture {
    let f = Fixture::new();
    repo(&f.ws);
    f
}

#[test]
fn status_reports_every_kind_of_change() {
    let f = fixture();
    std::fs::write(f.ws.join("a.txt"), "one\nTWO\n").unwrap();
    std::fs::write(f.ws.join("b.txt"), "b2\n").unwrap();
    git(&f.ws, &["add", "b.txt"]);
    git(&f.ws, &["mv", "old.txt", "new.txt"]);
    std::fs::write(f.ws.join("fresh.txt"), "x").unwrap();
    let st = git_status(&f.runner, &f.ws, &Control::default()).unwrap();
    assert_eq!(st.branch.as_deref(), Some("main"));
    assert!(st.commit.is_some());
    let staged: Vec<_> = st
        .staged
        .iter()
        .map(|c| (c.path.as_str(), c.change))
        .collect();
    assert_eq!(staged, [("b.txt", "modified"), ("new.txt", "renamed")]);
    assert_eq!(st.staged[1].from.as_deref(), Some("old.txt"));
    let unstaged: Vec<_> = st.unstaged.iter().map(|c| c.path.as_str()).collect();
    assert_eq!(unstaged, ["a.txt"]);
    assert_eq!(st.untracked, ["fresh.txt"]);
    assert!(!st.clean);
}

#[test]
fn status_outside_a_repository_says_so() {
    let f = Fixture::new();
    let err = git_status(&f.runner, &f.ws, &Control::default()).unwrap_err();
    assert_eq!(err.code, ErrorCode::InvalidArguments, "{}", err.message);
    assert!(err.message.contains("not inside a git repository"));
}

#[test]
fn diff_unstaged_staged_and_between_refs() {
    let f = fixture();
    std::fs::write(f.ws.join("a.txt"), "one\nTWO\nthree\n").unwrap();
    std::fs::write(f.ws.join("b.txt"), "b2\n").unwrap();
    git(&f.ws, &["add", "b.txt"]);
    let ctl = Control::default();
    let work = git_diff(&f.runner, &f.ws, &GitDiffArgs::default(), &ctl).unwrap();
    assert_eq!(work.files_changed.len(), 1);
    assert_eq!(work.files_changed[0].path, "a.txt");
    assert_eq!(
        (
            work.files_changed[0].additions,
            work.files_changed[0].deletions
        ),
        (2, 1)
    );
    let staged = git_diff(
        &f.runner,
        &f.ws,
        &GitDiffArgs {
            staged: true,
            ..Default::default()
        },
        &ctl,
    )
    .unwrap();
    assert_eq!(staged.files_changed[0].path, "b.txt");
    git(&f.ws, &["commit", "-q", "-am", "second"]);
    let refs = git_diff(
        &f.runner,
        &f.ws,
        &GitDiffArgs {
            base_ref: "HEAD~1".into(),
            target_ref: "HEAD".into(),
            pathspec: vec!["b.txt".into()],
            ..Default::default()
        },
        &ctl,
    )
    .unwrap();
    let names: Vec<_> = refs.files_changed.iter().map(|f| f.path.as_str()).collect();
    assert_eq!(names, ["b.txt"]);
}

#[test]
fn a_ref_that_looks_like_an_option_is_refused() {
    let f = fixture();
    for bad in ["--output=/tmp/x", "-p", "a b"] {
        let args = GitDiffArgs {
            base_ref: bad.into(),
            ..Default::default()
        };
        let err = git_diff(&f.runner, &f.ws, &args, &Control::default()).unwrap_err();
        assert_eq!(err.code, ErrorCode::InvalidArguments, "{bad}");
    }
    let err = git_diff(
        &f.runner,
        &f.ws,
        &GitDiffArgs {
            target_ref: "HEAD".into(),
            ..Default::default()
        },
        &Control::default(),
    )
    .unwrap_err();
    assert_eq!(err.code, ErrorCode::InvalidArguments);
}

#[test]
fn commit_needs_confirmation_and_something_to_commit() {
    let f = fixture();
    let ctl = Control::default();
    let args = |paths: Vec<String>, confirmed| GitCommitArgs {
        message: "change".into(),
        paths,
        signoff: false,
        confirmed,
    };
    std::fs::write(f.ws.join("a.txt"), "changed\n").unwrap();
    let err = git_commit(&f.runner, &f.ws, &args(vec!["a.txt".into()], false), &ctl).unwrap_err();
    assert_eq!(err.code, ErrorCode::ConfirmationRequired);
    assert!(
        git(&f.ws, &["diff", "--cached", "--name-only"]).is_empty(),
        "nothing was staged"
    );
    let err = git_commit(&f.runner, &f.ws, &args(vec![], true), &ctl).unwrap_err();
    assert_eq!(err.code, ErrorCode::NothingToCommit);

    std::fs::remove_file(f.ws.join("b.txt")).unwrap();
    let done = git_commit(
        &f.runner,
        &f.ws,
        &GitCommitArgs {
            signoff: true,
            ..args(vec!["a.txt".into(), "b.txt".into()], true)
        },
        &ctl,
    )
    .unwrap();
    assert_eq!(done.files_committed, ["a.txt", "b.txt"]);
    assert_eq!(done.commit_hash, git(&f.ws, &["rev-parse", "HEAD"]).trim());
    let log = git(&f.ws, &["log", "-1", "--format=%an <%ae>%n%B"]);
    assert!(log.starts_with("wsfs agent <agent@wsfs.invalid>"), "{log}");
    assert!(log.contains("Signed-off-by: wsfs agent"), "{log}");
    let err = git_commit(&f.runner, &f.ws, &args(vec!["a.txt".into()], true), &ctl).unwrap_err();
    assert_eq!(err.code, ErrorCode::NothingToCommit);
}

/// Plain git, unconfined: the control that shows the repository's config runs code.
fn plain_git(dir: &std::path::Path, args: &[&str]) {
    let _ = std::process::Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("PATH", SYSTEM_PATH)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .output()
        .unwrap();
}

fn hook(f: &Fixture, name: &str) -> std::path::PathBuf {
    let marker = f.ws.join(format!("{name}-ran"));
    let script = f.ws.join(format!("{name}.sh"));
    std::fs::write(
        &script,
        format!("#!/bin/sh\ntouch '{}'\ncat\n", marker.display()),
    )
    .unwrap();
    std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    marker
}

#[test]
fn repository_config_cannot_turn_git_status_or_diff_into_code() {
    let f = fixture();
    let fsmonitor = hook(&f, "fsmonitor");
    let filter = hook(&f, "filter");
    let external = hook(&f, "external");
    let textconv = hook(&f, "textconv");
    for (key, value) in [
        ("core.fsmonitor", f.ws.join("fsmonitor.sh")),
        ("filter.evil.clean", f.ws.join("filter.sh")),
        ("diff.external", f.ws.join("external.sh")),
        ("diff.evil.textconv", f.ws.join("textconv.sh")),
    ] {
        git(&f.ws, &["config", key, value.to_str().unwrap()]);
    }
    std::fs::write(f.ws.join(".gitattributes"), "*.txt filter=evil diff=evil\n").unwrap();
    std::fs::write(f.ws.join("a.txt"), "changed\n").unwrap();
    git(&f.ws, &["add", ".gitattributes"]);
    for marker in [&fsmonitor, &filter, &external, &textconv] {
        let _ = std::fs::remove_file(marker);
    }
    // The control: plain git status and diff run all four.
    plain_git(&f.ws, &["status"]);
    plain_git(&f.ws, &["diff"]);
    plain_git(&f.ws, &["diff", "--no-ext-diff"]);
    for marker in [&fsmonitor, &filter, &external, &textconv] {
        assert!(marker.exists(), "control: {} did not run", marker.display());
        std::fs::remove_file(marker).unwrap();
    }
    // Touch the file again so git has to look at its content.
    std::fs::write(f.ws.join("a.txt"), "changed again\n").unwrap();

    let ctl = Control::default();
    let st = git_status(&f.runner, &f.ws, &ctl).unwrap();
    assert!(st.unstaged.iter().any(|c| c.path == "a.txt"));
    let d = git_diff(&f.runner, &f.ws, &GitDiffArgs::default(), &ctl).unwrap();
    assert!(d.diff_text.contains("+changed again"));
    for marker in [&fsmonitor, &filter, &external, &textconv] {
        assert!(
            !marker.exists(),
            "{} ran under hardened git",
            marker.display()
        );
    }
}

#[test]
fn repository_hooks_and_signing_do_not_run_on_commit() {
    let f = fixture();
    let marker = hook(&f, "pre-commit");
    let hooks = f.ws.join(".git/hooks");
    std::fs::copy(f.ws.join("pre-commit.sh"), hooks.join("pre-commit")).unwrap();
    std::fs::copy(f.ws.join("pre-commit.sh"), hooks.join("post-commit")).unwrap();
    git(&f.ws, &["config", "commit.gpgSign", "true"]);
    git(
        &f.ws,
        &[
            "config",
            "gpg.program",
            f.ws.join("pre-commit.sh").to_str().unwrap(),
        ],
    );
    std::fs::write(f.ws.join("a.txt"), "changed\n").unwrap();
    let done = git_commit(
        &f.runner,
        &f.ws,
        &GitCommitArgs {
            message: "no hooks".into(),
            paths: vec!["a.txt".into()],
            signoff: false,
            confirmed: true,
        },
        &Control::default(),
    )
    .unwrap();
    assert_eq!(done.files_committed, ["a.txt"]);
    assert!(!marker.exists(), "a hook or gpg.program ran");
}

#[test]
fn an_fsmonitor_that_slips_through_still_cannot_write_outside() {
    // Defense in depth: plain `git status` under the runner (as the shell tool would run it)
    // does run the repository's fsmonitor, but only inside the sandbox.
    let f = fixture();
    let inside = f.ws.join("fsmonitor-ran");
    let outside = f.outside.join("fsmonitor-escaped");
    let script = f.ws.join("fsmonitor.sh");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\ntouch '{}'\ntouch '{}'\n",
            inside.display(),
            outside.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    git(
        &f.ws,
        &["config", "core.fsmonitor", script.to_str().unwrap()],
    );
    let out = f.run_sh("git status --short");
    if !crate::exec::testutil::landlock_here() {
        return;
    }
    assert!(inside.exists(), "the fsmonitor ran: {}", out.stderr.text());
    assert!(!outside.exists(), "its write outside was refused");
}
