//! Programs change no metadata outside the workspace (issue 30, item 1): mode, owner, times,
//! xattrs, ACLs and `chattr` flags of a file outside stay as they were, whichever system call
//! or program tries, as root and as an unprivileged user, in host and overlay mode; inside
//! the workspace the same calls work. Each test first runs the script unconfined (the
//! control) and checks that it does change the file: a test that passes without the sandbox
//! would prove nothing.

// The snapshot reads xattrs and inode flags with raw calls.
#![allow(unsafe_code)]

use super::testutil::{landlock_here, Fixture, SYSTEM_PATH};
use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::process::Command;

/// Every way to change a file's metadata, each through its own system call, then the
/// programs people use. Prints one line per attempt.
const ATTEMPTS: &str = r#"
import fcntl, os, struct, subprocess, sys
f = sys.argv[1]
def attempt(name, fn):
    try:
        fn()
        print(name, "changed")
    except OSError as e:
        print(name, "refused", e.errno)
def setflags():
    fd = os.open(f, os.O_RDONLY)
    try:
        fcntl.ioctl(fd, 0x40086602, struct.pack("l", 0x40))  # FS_IOC_SETFLAGS: nodump
    finally:
        os.close(fd)
def fchmod():
    fd = os.open(f, os.O_RDONLY)
    try:
        os.fchmod(fd, 0o4777)
    finally:
        os.close(fd)
acl = struct.pack("<I", 2) + b"".join(struct.pack("<HHI", tag, perm, 0xFFFFFFFF)
                                      for tag, perm in ((1, 7), (4, 7), (0x20, 7)))
attempt("chmod", lambda: os.chmod(f, 0o4777))
attempt("fchmod", fchmod)
attempt("chown", lambda: os.chown(f, os.getuid(), os.getgid()))
attempt("utime", lambda: os.utime(f, (978307200, 978307200)))
attempt("setxattr", lambda: os.setxattr(f, "user.x", b"y"))
attempt("removexattr", lambda: os.removexattr(f, "user.old"))
attempt("acl", lambda: os.setxattr(f, "system.posix_acl_access", acl))
attempt("setflags", setflags)
for argv in (["chmod", "0777", f], ["touch", "-d", "2001-01-01", f], ["chattr", "+d", f]):
    ok = subprocess.run(argv, stderr=subprocess.DEVNULL).returncode == 0
    print(argv[0], "changed" if ok else "refused")
"#;

/// What the attempts could change: mode, owner, times, xattrs, inode flags.
#[derive(Debug, PartialEq, Eq)]
struct Snapshot {
    mode: u32,
    owner: (u32, u32),
    times: (i64, i64, i64, i64),
    xattrs: Vec<(Vec<u8>, Vec<u8>)>,
    flags: i64,
}

fn snapshot(path: &Path) -> Snapshot {
    let m = std::fs::metadata(path).unwrap();
    let c = CString::new(path.as_os_str().as_bytes()).unwrap();
    let mut names = vec![0u8; 4096];
    // SAFETY: listxattr writes at most `names.len()` bytes into `names`.
    let n = unsafe { libc::listxattr(c.as_ptr(), names.as_mut_ptr().cast(), names.len()) };
    assert!(n >= 0, "listxattr: {}", std::io::Error::last_os_error());
    let mut xattrs = Vec::new();
    for name in names[..n as usize]
        .split(|b| *b == 0)
        .filter(|n| !n.is_empty())
    {
        let cname = CString::new(name).unwrap();
        let mut value = vec![0u8; 4096];
        // SAFETY: getxattr writes at most `value.len()` bytes into `value`.
        let len = unsafe {
            libc::getxattr(
                c.as_ptr(),
                cname.as_ptr(),
                value.as_mut_ptr().cast(),
                value.len(),
            )
        };
        value.truncate(len.max(0) as usize);
        xattrs.push((name.to_vec(), value));
    }
    let file = std::fs::File::open(path).unwrap();
    let mut flags: libc::c_long = 0;
    // SAFETY: FS_IOC_GETFLAGS writes one long into `flags`.
    let ret = unsafe {
        libc::ioctl(
            std::os::fd::AsRawFd::as_raw_fd(&file),
            0x8008_6601,
            &mut flags,
        )
    };
    Snapshot {
        mode: m.mode(),
        owner: (m.uid(), m.gid()),
        times: (m.mtime(), m.mtime_nsec(), m.atime(), m.atime_nsec()),
        xattrs,
        flags: if ret < 0 { -1 } else { flags as i64 },
    }
}

fn fresh_file(path: &Path) {
    let _ = std::fs::remove_file(path);
    std::fs::write(path, "outside\n").unwrap();
    let c = CString::new(path.as_os_str().as_bytes()).unwrap();
    // SAFETY: setxattr reads the NUL-terminated name and the 1-byte value.
    let ret =
        unsafe { libc::setxattr(c.as_ptr(), c"user.old".as_ptr(), c"v".as_ptr().cast(), 1, 0) };
    assert_eq!(ret, 0, "setxattr: {}", std::io::Error::last_os_error());
}

fn lines_saying<'a>(output: &'a str, word: &str) -> Vec<&'a str> {
    output
        .lines()
        .filter(|l| l.split_whitespace().nth(1) == Some(word))
        .collect()
}

/// The control, the confined run outside, and the confined run inside.
fn check_metadata_outside_is_kept(f: &Fixture) {
    let target = f.outside.join("f");
    fresh_file(&target);
    let before = snapshot(&target);
    let control = Command::new("/usr/bin/python3")
        .args(["-c", ATTEMPTS])
        .arg(&target)
        .env_clear()
        .env("PATH", SYSTEM_PATH)
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&control.stdout).into_owned();
    assert_ne!(
        snapshot(&target),
        before,
        "control: the attempts change the file\n{said}"
    );
    assert!(
        lines_saying(&said, "changed").len() >= 8,
        "control:\n{said}"
    );

    fresh_file(&target);
    let before = snapshot(&target);
    let script = format!(
        "/usr/bin/python3 -c '{}' '{}'",
        ATTEMPTS.replace('\'', "'\\''"),
        target.display()
    );
    let out = f.run_sh(&script);
    let said = out.stdout.text();
    assert_eq!(snapshot(&target), before, "{said}\n{}", out.stderr.text());
    assert_eq!(lines_saying(&said, "changed"), Vec::<&str>::new(), "{said}");
    assert_eq!(lines_saying(&said, "refused").len(), 11, "{said}");

    // Inside the workspace the same calls work (the ACL and flags need support the test's
    // file system may lack: mode, owner, times and xattrs are enough).
    let inside = f.ws.join("inside");
    fresh_file(&inside);
    let out = f.run_sh(&format!(
        "/usr/bin/python3 -c '{}' inside",
        ATTEMPTS.replace('\'', "'\\''")
    ));
    let said = out.stdout.text();
    for op in [
        "chmod",
        "fchmod",
        "chown",
        "utime",
        "setxattr",
        "removexattr",
        "touch",
    ] {
        assert!(
            said.lines().any(|l| l == format!("{op} changed")),
            "{op} inside the workspace:\n{said}\n{}",
            out.stderr.text()
        );
    }
}

#[test]
fn no_program_changes_metadata_outside() {
    if !landlock_here() {
        return;
    }
    let f = Fixture::new();
    let out = f.run_sh("true");
    assert_eq!(out.sandbox.outside, "read-only-mounts", "{:?}", out.sandbox);
    check_metadata_outside_is_kept(&f);
}

/// The same as an unprivileged user: this test binary runs itself again as `nobody` (when it
/// runs as root; otherwise the test above already is the unprivileged case).
#[test]
fn no_program_changes_metadata_outside_as_an_unprivileged_user() {
    if !landlock_here() {
        return;
    }
    if std::env::var_os("WSFS_TEST_AS_NOBODY").is_some() {
        assert_ne!(rustix::process::geteuid().as_raw(), 0);
        let f = Fixture::new();
        check_metadata_outside_is_kept(&f);
        return;
    }
    if !rustix::process::geteuid().is_root() {
        eprintln!("SKIPPED: not root, so the test above ran unprivileged");
        return;
    }
    // A copy nobody can run: the checkout's own directories may be closed to other users.
    let copy_dir = tempfile::tempdir_in("/tmp").unwrap();
    let exe = copy_dir.path().join("tests-as-nobody");
    std::fs::copy(std::env::current_exe().unwrap(), &exe).unwrap();
    for dir in [copy_dir.path(), exe.as_path()] {
        std::fs::set_permissions(dir, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    }
    let mut cmd = Command::new(&exe);
    cmd.args([
        "--exact",
        "metadata_tests::no_program_changes_metadata_outside_as_an_unprivileged_user",
        "--nocapture",
        "--test-threads=1",
    ])
    .env("WSFS_TEST_AS_NOBODY", "1")
    .env("TMPDIR", "/tmp");
    // SAFETY: setgroups, setgid and setuid in the forked child, before exec: raw calls only.
    unsafe {
        std::os::unix::process::CommandExt::pre_exec(&mut cmd, || {
            if libc::setgroups(0, std::ptr::null()) != 0
                || libc::setgid(65534) != 0
                || libc::setuid(65534) != 0
            {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    // Another test's fork may still hold the copy's write descriptor for a moment (ETXTBSY
    // until that child execs): retry within a bound.
    let started = std::time::Instant::now();
    let out = loop {
        match cmd.output() {
            Err(e)
                if e.raw_os_error() == Some(libc::ETXTBSY)
                    && started.elapsed() < std::time::Duration::from_secs(30) =>
            {
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            other => break other.unwrap(),
        }
    };
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "as nobody:\n{text}");
    assert!(text.contains("1 passed"), "as nobody:\n{text}");
}

/// Where no mount namespace can be made, seccomp refuses every metadata call, inside too.
#[test]
fn without_namespaces_metadata_calls_are_refused_everywhere() {
    if !landlock_here() {
        return;
    }
    let mut f = Fixture::new();
    f.runner = f.runner.clone().without_namespaces();
    let target = f.outside.join("f");
    fresh_file(&target);
    let before = snapshot(&target);
    let out = f.run_sh(&format!(
        "/usr/bin/python3 -c '{}' '{}'",
        ATTEMPTS.replace('\'', "'\\''"),
        target.display()
    ));
    let said = out.stdout.text();
    assert_eq!(out.sandbox.outside, "metadata-calls-denied");
    assert!(
        out.sandbox
            .notes
            .iter()
            .any(|n| n.contains("refused everywhere")),
        "{:?}",
        out.sandbox.notes
    );
    assert_eq!(snapshot(&target), before, "{said}");
    assert_eq!(lines_saying(&said, "changed"), Vec::<&str>::new(), "{said}");
    let out = f.run_sh("echo x > inside && chmod 600 inside; echo $?");
    assert_eq!(out.stdout.text().trim(), "1", "{}", out.stderr.text());
}

/// A read-only workspace is a read-only mount: a program can read it and change nothing in
/// it, metadata included, while its temp directory stays writable.
#[test]
fn a_read_only_workspace_is_a_read_only_mount() {
    if !landlock_here() {
        return;
    }
    let f = Fixture::read_only();
    std::fs::write(f.ws.join("README.md"), "hello\n").unwrap();
    let before = snapshot(&f.ws.join("README.md"));
    let out = f.run_sh(
        "cat README.md; chmod 777 README.md || echo chmod=refused; \
         touch -d 2001-01-01 README.md || echo touch=refused; \
         (echo x > new) 2>/dev/null || echo write=refused; echo t > \"$TMPDIR/t\" && echo tmp=ok",
    );
    let said = out.stdout.text();
    assert!(said.starts_with("hello\n"), "{said}");
    for line in ["chmod=refused", "touch=refused", "write=refused", "tmp=ok"] {
        assert!(said.lines().any(|l| l == line), "{line}:\n{said}");
    }
    assert!(
        out.stderr.text().contains("Read-only file system"),
        "{}",
        out.stderr.text()
    );
    assert_eq!(snapshot(&f.ws.join("README.md")), before);
    assert!(!f.ws.join("new").exists());
}

/// `..` from the working directory climbs this namespace's mounts, never the host's: the child
/// enters the workspace again after making its mounts (a descriptor the parent opened would
/// lead to the host's writable mounts).
#[test]
fn dot_dot_from_the_working_directory_meets_read_only_mounts() {
    if !landlock_here() {
        return;
    }
    let f = Fixture::new();
    std::fs::create_dir(f.ws.join("sub")).unwrap();
    let target = f.outside.join("f");
    fresh_file(&target);
    let before = snapshot(&target);
    let req = super::runner::ExecRequest::new("sh", f.ws.join("sub"))
        .arg("-c")
        .arg("chmod 777 ../../outside/f; touch -d 2001-01-01 ../../outside/f; cd /proc/self/cwd/../.. && chmod 777 outside/f; echo done")
        .env("PATH", SYSTEM_PATH);
    let out = f.run(&req).unwrap();
    assert_eq!(out.stdout.text(), "done\n", "{}", out.stderr.text());
    assert_eq!(snapshot(&target), before, "{}", out.stderr.text());
}
