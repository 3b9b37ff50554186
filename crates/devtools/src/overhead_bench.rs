//! The runner's overhead against a plain `std::process::Command` of the same `true`
//! (issue 21: at most +5 ms). Ignored by default; run with
//! `cargo test --release --lib exec::overhead_bench -- --ignored --nocapture`.
//! `make bench` measures the same through the tool once it is wired (phase 2).

use crate::exec::testutil::{Fixture, SYSTEM_PATH};
use std::process::Command;
use std::time::{Duration, Instant};

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

#[test]
#[ignore]
fn runner_overhead_on_true() {
    let f = Fixture::new();
    let req = crate::exec::runner::ExecRequest::new("true", &f.ws).env("PATH", SYSTEM_PATH);
    let (mut plain, mut confined, mut deltas) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..10 {
        f.run(&req).unwrap();
    }
    for _ in 0..300 {
        let t = Instant::now();
        let status = Command::new("/usr/bin/true")
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .output()
            .unwrap();
        assert!(status.status.success());
        let p = t.elapsed();
        let t = Instant::now();
        let out = f.run(&req).unwrap();
        assert!(out.success());
        let c = t.elapsed();
        plain.push(p);
        confined.push(c);
        deltas.push(c.saturating_sub(p));
    }
    let (p, c, d) = (median(plain), median(confined), median(deltas));
    println!("plain Command: {p:?}  runner: {c:?}  median paired overhead: {d:?}");
    assert!(
        d < Duration::from_millis(5),
        "overhead {d:?} over the 5 ms budget"
    );
}

/// git_status on a 100,000-file repository against `git status --porcelain=v2` run directly
/// (issue 21: at most 1.2x). The repository is made once in target/bench-git-100k.
#[test]
#[ignore]
fn git_status_on_100k_files() {
    use crate::exec::git::fixture::git;
    let repo = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/bench-git-100k");
    if !repo.join(".git").exists() {
        std::fs::create_dir_all(&repo).unwrap();
        for d in 0..1000 {
            let dir = repo.join(format!("d{d:03}"));
            std::fs::create_dir_all(&dir).unwrap();
            for f in 0..100 {
                std::fs::write(dir.join(format!("f{f:02}.txt")), format!("{d} {f}\n")).unwrap();
            }
        }
        git(&repo, &["init", "-q"]);
        git(&repo, &["add", "."]);
        git(&repo, &["commit", "-q", "-m", "100k"]);
    }
    std::fs::write(repo.join("d000/f00.txt"), "changed\n").unwrap();
    let state = tempfile::tempdir().unwrap();
    let runner = crate::exec::Runner::new(
        crate::exec::ExecPlaces {
            view_root: repo.clone(),
            overlay: None,
            view_writable: true,
            home: None,
            scratch_parent: state.path().join("tmp"),
        },
        crate::exec::ExecSettings::default(),
    );
    let ctl = crate::exec::Control::default();
    let direct = || {
        let t = Instant::now();
        let out = Command::new("git")
            .args(["status", "--porcelain=v2", "--branch", "-z"])
            .current_dir(&repo)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .output()
            .unwrap();
        assert!(out.status.success());
        t.elapsed()
    };
    let ours = || {
        let t = Instant::now();
        let st = crate::git::status::git_status(&runner, &repo, &ctl).unwrap();
        assert_eq!(st.unstaged.len(), 1);
        t.elapsed()
    };
    for _ in 0..3 {
        direct();
        ours();
    }
    let (mut d, mut o, mut ratios) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..15 {
        let a = direct();
        let b = ours();
        ratios.push(b.as_secs_f64() / a.as_secs_f64());
        d.push(a);
        o.push(b);
    }
    ratios.sort_by(f64::total_cmp);
    let ratio = ratios[ratios.len() / 2];
    println!(
        "git status direct {:?}, git_status {:?}, median paired ratio {ratio:.2}",
        median(d),
        median(o)
    );
    assert!(ratio <= 1.2, "git_status is {ratio:.2}x git status");
}
