//! The runner's overhead against a plain `std::process::Command` of the same `true`
//! (issue 21: at most +5 ms). Ignored by default; run with
//! `cargo test --release --lib exec::overhead_bench -- --ignored --nocapture`.
//! `make bench` measures the same through the tool once it is wired (phase 2).

use super::testutil::{Fixture, SYSTEM_PATH};
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
    let req = super::ExecRequest::new("true", &f.ws).env("PATH", SYSTEM_PATH);
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
