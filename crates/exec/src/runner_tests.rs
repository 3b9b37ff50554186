//! The runner's behaviour: output, limits, cancellation, cleanup. The hostile cases are in
//! `confinement_tests.rs`.

use super::supervise::Stopped;
use super::testutil::{is_empty_dir, landlock_here, processes_with, Fixture};
use crate::error::ErrorCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

#[test]
fn a_program_runs_and_its_output_and_status_come_back() {
    if !landlock_here() {
        return;
    }
    let f = Fixture::new();
    let out = f.run_sh("echo out; echo err >&2; exit 3");
    assert_eq!(out.exit_code, Some(3));
    assert_eq!(out.stdout.text(), "out\n");
    assert_eq!(out.stderr.text(), "err\n");
    assert!(
        out.sandbox.sandbox.starts_with("landlock-v"),
        "{:?}",
        out.sandbox
    );
    assert_eq!(out.sandbox.network, "denied");
}

#[test]
fn the_environment_is_rebuilt_and_the_cwd_is_the_workspace() {
    let f = Fixture::new();
    let out = f.run_sh("pwd; env | sort");
    let text = out.stdout.text();
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some(f.ws.to_str().unwrap()));
    let names: Vec<&str> = lines.filter_map(|l| l.split('=').next()).collect();
    // sh adds PWD; nothing of the test process's environment reaches the program.
    assert_eq!(names, ["HOME", "LANG", "PATH", "PWD", "TMPDIR"], "{text}");
    assert!(text.contains(&format!("HOME={}", f.state.join("home").display())));
}

#[test]
fn long_output_keeps_its_head_and_tail() {
    let f = Fixture::with(|p| p.limits.output_bytes = 1000);
    let out = f.run_sh("seq 1 100000");
    assert_eq!(out.exit_code, Some(0));
    assert!(out.stdout.total_bytes > 500_000);
    let text = out.stdout.text();
    assert!(text.starts_with("1\n2\n3\n"), "{}", &text[..50]);
    assert!(text.ends_with("99999\n100000\n"));
    assert!(text.contains("bytes cut from the middle"));
    assert!(out.stdout.complete().is_none());
}

#[test]
fn a_program_past_its_wall_clock_is_killed_and_reported_as_timeout() {
    let f = Fixture::new();
    let started = Instant::now();
    let out = f
        .run(
            &f.sh("echo begun; sleep 30")
                .timeout(Duration::from_millis(700)),
        )
        .unwrap();
    assert!(started.elapsed() < Duration::from_secs(5));
    assert_eq!(out.stopped, Some(Stopped::Timeout));
    let err = out.stop_error("the tests").unwrap();
    assert_eq!(err.code, ErrorCode::Timeout);
    assert!(err.message.contains("begun"), "{}", err.message);
}

#[test]
fn timeout_sec_can_only_shorten_the_hosts_limit() {
    let f = Fixture::with(|p| p.limits.wall_clock = Duration::from_secs(1));
    let out = f
        .run(&f.sh("sleep 20").timeout(Duration::from_secs(600)))
        .unwrap();
    assert_eq!(out.stopped, Some(Stopped::Timeout));
    assert_eq!(out.limit, Duration::from_secs(1));
}

#[test]
fn a_cancelled_call_kills_the_program() {
    let f = Fixture::new();
    let flag = Arc::new(AtomicBool::new(false));
    let setter = flag.clone();
    let t = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(300));
        setter.store(true, Ordering::Release);
    });
    let started = Instant::now();
    let out = f.run(&f.sh("sleep 30").control(None, Some(flag))).unwrap();
    t.join().unwrap();
    assert!(started.elapsed() < Duration::from_secs(5));
    assert_eq!(out.stopped, Some(Stopped::Cancelled));
    assert_eq!(out.stop_error("x").unwrap().code, ErrorCode::Cancelled);
}

#[test]
fn what_a_program_leaves_running_is_killed_when_it_exits() {
    let f = Fixture::new();
    let marker = format!("{}.{}", 300 + std::process::id() % 100, 17);
    let started = Instant::now();
    // Background, and a new session too: the group kill misses that one, the cgroup does not.
    let out = f.run_sh(&format!(
        "sleep {marker} & setsid sleep {marker}1 & echo started"
    ));
    assert_eq!(out.stdout.text(), "started\n");
    assert!(started.elapsed() < Duration::from_secs(5));
    std::thread::sleep(Duration::from_millis(100));
    let left = processes_with(&format!("sleep {marker}"));
    if out.sandbox.processes == "cgroup" {
        assert!(left.is_empty(), "left running: {left:?}");
    } else {
        eprintln!("no cgroup: the setsid sleep may survive ({left:?})");
        for pid in left {
            let _ = rustix::process::kill_process(
                rustix::process::Pid::from_raw(pid).unwrap(),
                rustix::process::Signal::KILL,
            );
        }
    }
}

#[test]
fn the_private_temp_directory_is_gone_after_the_call() {
    let f = Fixture::new();
    let out = f.run_sh(
        "echo junk > \"$TMPDIR/junk\" && mkdir -p \"$TMPDIR/d/e\" && chmod 000 \"$TMPDIR/d\" && echo ok",
    );
    assert_eq!(out.stdout.text(), "ok\n", "{}", out.stderr.text());
    assert!(is_empty_dir(&f.state.join("tmp")));
}

#[test]
fn a_missing_program_is_a_clear_error() {
    let f = Fixture::new();
    let err = f
        .run(&super::runner::ExecRequest::new("no-such-tool-here", &f.ws))
        .unwrap_err();
    assert_eq!(err.code, ErrorCode::InvalidArguments);
    assert!(err.message.contains("workspace_info"), "{}", err.message);
}

#[test]
fn a_program_outside_the_readable_places_may_not_run() {
    if !landlock_here() {
        return;
    }
    let f = Fixture::new();
    let tool = f.outside.join("tool.sh");
    std::fs::write(&tool, "#!/bin/sh\necho ran\n").unwrap();
    std::fs::set_permissions(&tool, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let err = f
        .run(&super::runner::ExecRequest::new(tool.as_os_str(), &f.ws))
        .unwrap_err();
    assert_eq!(err.code, ErrorCode::PermissionDenied, "{}", err.message);
    assert!(err.message.contains("exec_read_paths"), "{}", err.message);
    // The host can allow it.
    let allowed = Fixture::with(|p| p.read_paths = vec![tool.parent().unwrap().to_path_buf()]);
    let out = allowed
        .run(&super::runner::ExecRequest::new(
            tool.as_os_str(),
            &allowed.ws,
        ))
        .unwrap();
    assert_eq!(out.stdout.text(), "ran\n");
}

#[test]
fn a_read_only_view_is_read_only_to_programs() {
    if !landlock_here() {
        return;
    }
    let f = Fixture::read_only();
    std::fs::write(f.ws.join("in.txt"), "kept\n").unwrap();
    let out = f.run_sh("cat in.txt; echo changed > in.txt; echo new > new.txt; echo tmp > \"$TMPDIR/t\" && echo tmp-ok");
    assert_eq!(out.stdout.text(), "kept\ntmp-ok\n", "{}", out.stderr.text());
    assert_eq!(
        std::fs::read_to_string(f.ws.join("in.txt")).unwrap(),
        "kept\n"
    );
    assert!(!f.ws.join("new.txt").exists());
    // The control: the same script in a writable view changes both.
    let f = Fixture::new();
    std::fs::write(f.ws.join("in.txt"), "kept\n").unwrap();
    f.run_sh("echo changed > in.txt; echo new > new.txt");
    assert_eq!(
        std::fs::read_to_string(f.ws.join("in.txt")).unwrap(),
        "changed\n"
    );
}
