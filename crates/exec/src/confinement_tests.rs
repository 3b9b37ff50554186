//! Hostile programs under the runner: each is refused or killed, nothing outside changes, and
//! the result says why. Each test also runs the same program unconfined first (the control),
//! where that is safe, and checks that it does the harm: a test that passes without the
//! sandbox would prove nothing.

// The controls open and close descriptors with raw calls, as the child would.
#![allow(unsafe_code)]

use super::testutil::{landlock_here, processes_with, Fixture, SYSTEM_PATH};
use std::path::Path;
use std::process::Command;
use std::time::Duration;

/// Runs `script` with `sh -c` outside any sandbox, as the control.
fn unconfined(ws: &Path, script: &str) -> std::process::Output {
    Command::new("/bin/sh")
        .arg("-c")
        .arg(script)
        .current_dir(ws)
        .env_clear()
        .env("PATH", SYSTEM_PATH)
        .output()
        .unwrap()
}

fn listing(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[test]
fn writing_outside_the_workspace_is_refused() {
    if !landlock_here() {
        return;
    }
    let f = Fixture::new();
    let target = f.outside.join("pwned");
    let script = format!("echo pwned > '{}'", target.display());
    assert!(unconfined(&f.ws, &script).status.success());
    assert!(target.exists(), "control: the script writes outside");
    std::fs::remove_file(&target).unwrap();

    let out = f.run_sh(&script);
    assert_ne!(out.exit_code, Some(0));
    // Landlock (EACCES) or the read-only mounts (EROFS), whichever the kernel checks first.
    let said = out.stderr.text();
    assert!(
        said.contains("Permission denied") || said.contains("Read-only file system"),
        "{said}"
    );
    assert!(listing(&f.outside).is_empty());
    // Inside, the same write works.
    assert_eq!(
        f.run_sh("echo ok > inside && cat inside").stdout.text(),
        "ok\n"
    );
}

#[test]
fn a_symlink_or_hard_link_in_the_workspace_does_not_lead_outside() {
    if !landlock_here() {
        return;
    }
    let f = Fixture::new();
    std::fs::write(f.outside.join("secret.txt"), "TOPSECRET").unwrap();
    std::os::unix::fs::symlink(&f.outside, f.ws.join("link")).unwrap();
    let script = format!(
        "echo pwned > link/pwned; cat link/secret.txt; ln '{}' stolen; cat stolen",
        f.outside.join("secret.txt").display()
    );
    let control = unconfined(&f.ws, &script);
    assert!(String::from_utf8_lossy(&control.stdout).contains("TOPSECRET"));
    assert!(
        f.outside.join("pwned").exists(),
        "control: the link leads outside"
    );
    std::fs::remove_file(f.outside.join("pwned")).unwrap();
    std::fs::remove_file(f.ws.join("stolen")).unwrap();

    let out = f.run_sh(&script);
    assert!(
        !out.stdout.text().contains("TOPSECRET"),
        "{}",
        out.stdout.text()
    );
    assert_eq!(listing(&f.outside), ["secret.txt"]);
    assert!(!f.ws.join("stolen").exists());
    assert_eq!(
        std::fs::read_to_string(f.outside.join("secret.txt")).unwrap(),
        "TOPSECRET"
    );
}

#[test]
fn secrets_outside_the_readable_places_cannot_be_read() {
    if !landlock_here() {
        return;
    }
    let f = Fixture::new();
    std::fs::write(f.outside.join("secret.txt"), "TOPSECRET").unwrap();
    let script = format!(
        "cat '{}'; ls '{}'; cat /etc/shadow | head -c 20; cat /etc/hostname >/dev/null && echo etc-readable",
        f.outside.join("secret.txt").display(),
        f.outside.display()
    );
    assert!(String::from_utf8_lossy(&unconfined(&f.ws, &script).stdout).contains("TOPSECRET"));

    let out = f.run_sh(&script);
    let text = out.stdout.text();
    assert!(
        !text.contains("TOPSECRET") && !text.contains("secret.txt"),
        "{text}"
    );
    assert!(!text.contains("root:"), "/etc/shadow leaked: {text}");
    assert!(
        text.contains("etc-readable"),
        "the system stays readable: {text}"
    );
}

#[test]
fn the_network_is_closed_tcp_udp_and_socket_files() {
    if !landlock_here() {
        return;
    }
    let f = Fixture::new();
    let tcp = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    tcp.set_nonblocking(true).unwrap();
    let port = tcp.local_addr().unwrap().port();
    let sock_path = f.outside.join("daemon.sock");
    let unix = std::os::unix::net::UnixListener::bind(&sock_path).unwrap();
    unix.set_nonblocking(true).unwrap();
    let udp = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    udp.set_nonblocking(true).unwrap();
    let udp_port = udp.local_addr().unwrap().port();
    let script = format!(
        r#"/usr/bin/python3 - <<'EOF'
import socket
for name, make, addr in [
    ("tcp", lambda: socket.socket(socket.AF_INET, socket.SOCK_STREAM), ("127.0.0.1", {port})),
    ("unix", lambda: socket.socket(socket.AF_UNIX, socket.SOCK_STREAM), "{sock}"),
]:
    try:
        s = make(); s.connect(addr); print(name, "connected")
    except OSError as e:
        print(name, "refused", e.errno)
try:
    u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); u.sendto(b"x", ("127.0.0.1", {udp_port})); print("udp sent")
except OSError as e:
    print("udp refused", e.errno)
EOF"#,
        port = port,
        sock = sock_path.display(),
        udp_port = udp_port
    );
    let control = String::from_utf8_lossy(&unconfined(&f.ws, &script).stdout).into_owned();
    assert!(
        control.contains("tcp connected")
            && control.contains("unix connected")
            && control.contains("udp sent"),
        "control: {control}"
    );
    // Drain what the control left.
    let _ = tcp.accept();
    let _ = unix.accept();
    let mut buf = [0u8; 8];
    let _ = udp.recv(&mut buf);

    let out = f.run_sh(&script);
    let text = out.stdout.text();
    assert!(text.contains("tcp refused"), "{text} {}", out.stderr.text());
    assert!(text.contains("unix refused"), "{text}");
    assert!(text.contains("udp refused"), "{text}");
    assert!(tcp.accept().is_err(), "a TCP connection got through");
    assert!(unix.accept().is_err(), "a UNIX connection got through");
    assert!(udp.recv(&mut buf).is_err(), "a datagram got through");
    assert_eq!(out.sandbox.network, "denied");
}

#[test]
fn the_network_is_open_when_the_host_allows_it() {
    if !landlock_here() {
        return;
    }
    let f = Fixture::with(|p| p.network = true);
    let tcp = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = tcp.local_addr().unwrap().port();
    // bash, for its /dev/tcp.
    let out = f
        .run(
            &super::runner::ExecRequest::new("bash", &f.ws)
                .arg("-c")
                .arg(format!(
                    "exec 3<>/dev/tcp/127.0.0.1/{port} && echo connected"
                ))
                .env("PATH", SYSTEM_PATH),
        )
        .unwrap();
    assert_eq!(out.stdout.text(), "connected\n", "{}", out.stderr.text());
    assert_eq!(out.sandbox.network, "allowed");
}

#[test]
fn forking_without_bound_is_capped_and_killed() {
    let f = Fixture::with(|p| p.limits.processes = 40);
    let marker = format!("{}.25", 900 + std::process::id() % 97);
    let out = f
        .run(
            &f.sh(&format!("while :; do sleep {marker} & done"))
                .timeout(Duration::from_secs(2)),
        )
        .unwrap();
    std::thread::sleep(Duration::from_millis(200));
    let left = processes_with(&format!("sleep {marker}"));
    if out.sandbox.processes != "cgroup" {
        for pid in &left {
            let _ = rustix::process::kill_process(
                rustix::process::Pid::from_raw(*pid).unwrap(),
                rustix::process::Signal::KILL,
            );
        }
        eprintln!("SKIPPED: no pids cgroup here ({:?})", out.sandbox.notes);
        return;
    }
    // sh gives up when a fork fails ("Cannot fork"); a shell that retries is killed at the
    // wall clock. Either way the limit refused forks and nothing is left.
    assert!(out.refused_forks > 0, "the limit never refused a fork");
    assert!(
        out.stopped.is_some() || out.stderr.text().contains("fork"),
        "{:?} {}",
        out.stopped,
        out.stderr.text()
    );
    assert!(left.is_empty(), "left running: {}", left.len());
}

#[test]
fn the_process_limit_holds_as_root() {
    // A bounded version of the fork bomb, safe to run unconfined as the control: 60 forks.
    // The marker names this run's sleepers alone for the control's pkill: a make test running
    // beside this one runs the same script, and must not lose its processes to ours.
    let marker = format!(
        "wsfs-fork-control-{}-{:?}",
        std::process::id(),
        std::time::SystemTime::now()
    )
    .replace(|c: char| !c.is_ascii_alphanumeric() && c != '-', "");
    let script = r#"/usr/bin/python3 -c '
# MARKER
import os, time
n = 0
for i in range(60):
    try:
        pid = os.fork()
    except OSError:
        break
    if pid == 0:
        time.sleep(30); os._exit(0)
    n += 1
print(n)
'"#
    .replace("MARKER", &marker);
    let script = script.as_str();
    let f = Fixture::with(|p| p.limits.processes = 20);
    let control = unconfined(&f.ws, &format!("{script}; pkill -f '{marker}' || true"));
    let control_n: u32 = String::from_utf8_lossy(&control.stdout)
        .trim()
        .parse()
        .unwrap();
    assert_eq!(control_n, 60, "control: nothing limits forks unconfined");

    let out = f.run_sh(script);
    if out.sandbox.processes == "unbounded" {
        eprintln!("SKIPPED: no process limit here ({:?})", out.sandbox.notes);
        return;
    }
    let n: u32 = out.stdout.text().trim().parse().unwrap();
    assert!(n < 20, "{n} forks succeeded under a limit of 20");
}

#[test]
fn ld_preload_code_runs_confined() {
    if !landlock_here() || Command::new("cc").arg("--version").output().is_err() {
        eprintln!("SKIPPED: needs Landlock and cc");
        return;
    }
    let f = Fixture::new();
    let escaped = f.outside.join("preloaded");
    let src = format!(
        r#"#include <stdio.h>
__attribute__((constructor)) static void evil(void) {{
    FILE *f = fopen("{}", "w"); if (f) {{ fputs("pwned", f); fclose(f); }}
    f = fopen("ran-in-sandbox", "w"); if (f) fclose(f);
}}"#,
        escaped.display()
    );
    std::fs::write(f.ws.join("evil.c"), src).unwrap();
    let build = Command::new("cc")
        .args(["-shared", "-fPIC", "-o", "evil.so", "evil.c"])
        .current_dir(&f.ws)
        .status()
        .unwrap();
    assert!(build.success());
    let script = "LD_PRELOAD=$PWD/evil.so /bin/true";
    unconfined(&f.ws, script);
    assert!(
        escaped.exists(),
        "control: the preloaded constructor writes outside"
    );
    std::fs::remove_file(&escaped).unwrap();
    std::fs::remove_file(f.ws.join("ran-in-sandbox")).unwrap();

    f.run_sh(script);
    assert!(f.ws.join("ran-in-sandbox").exists(), "the preload did run");
    assert!(!escaped.exists(), "but its write outside was refused");
}

#[test]
fn the_hosts_open_descriptors_do_not_reach_the_program() {
    let f = Fixture::new();
    let secret = f.outside.join("secret.txt");
    std::fs::write(&secret, "TOPSECRET").unwrap();
    let path = std::ffi::CString::new(secret.to_str().unwrap()).unwrap();
    // SAFETY: open of a NUL-terminated path; the descriptor is closed below. Deliberately
    // without O_CLOEXEC, like a careless host's.
    let fd = unsafe { libc::open(path.as_ptr(), libc::O_RDONLY) };
    assert!(fd > 2);
    // bash, not sh: dash reads `<&12` as `<&1 2`, and with other tests running beside this
    // one the descriptor's number is often above 9.
    let script = format!("bash -c 'cat <&{fd}'");
    let control = unconfined(&f.ws, &script);
    let leaked = String::from_utf8_lossy(&control.stdout).contains("TOPSECRET");
    let out = f.run_sh(&script);
    // SAFETY: closes the descriptor opened above.
    unsafe { libc::close(fd) };
    assert!(leaked, "control: an inherited descriptor reads the file");
    assert!(!out.stdout.text().contains("TOPSECRET"));
}

#[test]
fn root_keeps_no_capability_and_cannot_raise_its_limits() {
    if !rustix::process::geteuid().is_root() {
        eprintln!("SKIPPED: not root");
        return;
    }
    let f = Fixture::new();
    let script =
        "grep -E '^Cap(Eff|Prm|Bnd|Amb)' /proc/self/status; ulimit -f unlimited && echo raised";
    let control = String::from_utf8_lossy(&unconfined(&f.ws, script).stdout).into_owned();
    assert!(control.contains("raised"), "control: {control}");
    let out = f.run_sh(script);
    let text = out.stdout.text();
    for line in text.lines().filter(|l| l.starts_with("Cap")) {
        assert!(line.ends_with("0000000000000000"), "{line}");
    }
    assert_eq!(
        text.lines().filter(|l| l.starts_with("Cap")).count(),
        4,
        "{text}"
    );
    assert!(!text.contains("raised"), "{text}");
}

#[test]
fn signals_do_not_reach_processes_outside() {
    if landlock_rules_abi() < 6 {
        eprintln!("SKIPPED: Landlock signal scoping needs ABI 6");
        return;
    }
    let f = Fixture::new();
    let mut victim = Command::new("sleep").arg("30").spawn().unwrap();
    let script = format!("kill -TERM {} && echo sent", victim.id());
    let out = f.run_sh(&script);
    assert!(!out.stdout.text().contains("sent"), "{}", out.stdout.text());
    assert!(victim.try_wait().unwrap().is_none(), "the victim died");
    victim.kill().unwrap();
    victim.wait().unwrap();
}

fn landlock_rules_abi() -> i32 {
    super::landlock_rules::kernel_abi()
}

#[test]
fn without_landlock_and_required_the_call_is_refused() {
    // The refusal path itself, exercised through the sandbox's planning with a kernel that
    // has no Landlock: sandbox::prepare says why.
    let req = super::confinement::Request {
        writable: &[],
        readable: &[],
        network: false,
        require_landlock: true,
        namespaces: None,
        simulate_no_namespaces: false,
        bounds: super::confinement::Bounds {
            wall_clock: Duration::from_secs(1),
            processes: 10,
            address_space_bytes: 0,
            file_size_bytes: 1 << 20,
        },
    };
    if landlock_rules_abi() >= 1 {
        // Here Landlock exists: preparing succeeds and names its ABI.
        let prepared = super::confinement::prepare(&req).unwrap_or_else(|e| panic!("{}", e.0));
        assert!(prepared.report.sandbox.starts_with("landlock-v"));
    } else {
        let err = super::confinement::prepare(&req).err().unwrap();
        assert!(err.0.contains("exec_require_sandbox"));
    }
}
