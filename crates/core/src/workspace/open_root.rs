//! The first step of opening a workspace: the configured root, checked (and made, only when
//! the host asked for it with `create_root`), so that each way a root can be wrong is refused
//! at open with an error naming the root and the fix, rather than surfacing as a bare
//! `permission_denied: .` at the first call.

use crate::config::Config;
use crate::error::{ErrorCode, Result, WsfsError};
use crate::paths::absolute_root;
use rustix::fs::{Access, AtFlags, CWD};
use std::path::{Path, PathBuf};

/// The configured root (absolute, `~` expanded) and the same with symlinks resolved.
pub(super) fn open_root(config: &Config) -> Result<(PathBuf, PathBuf)> {
    let configured = absolute_root(&config.root)?;
    let shown = configured.display().to_string();
    match std::fs::metadata(&configured) {
        Ok(meta) if !meta.is_dir() => {
            return Err(WsfsError::new(
                ErrorCode::NotADirectory,
                format!("workspace root {shown} exists and is not a directory: choose a directory as the root"),
            ))
        }
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound && !config.create_root => {
            return Err(WsfsError::new(
                ErrorCode::PathNotFound,
                format!(
                    "workspace root {shown} does not exist (resolved from {:?}): check the path \
                     for a typo, create the directory, or set \"create_root\": true in the \
                     workspace configuration to have it made",
                    config.root
                ),
            ))
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            std::fs::create_dir_all(&configured).map_err(|e| {
                let cause = WsfsError::from_io(&e, &shown);
                WsfsError::new(
                    cause.code,
                    format!(
                        "workspace root {shown} does not exist, and making it (create_root) \
                         failed: {}. Create it yourself, or choose a root under a directory \
                         this process ({}) may write",
                        cause.message,
                        user()
                    ),
                )
            })?;
        }
        Err(e) => return Err(unreachable_root(&e, &shown)),
    }
    let root = configured
        .canonicalize()
        .map_err(|e| unreachable_root(&e, &shown))?;
    check_access(&root, &shown)?;
    Ok((configured, root))
}

/// The root exists but cannot be reached (a parent without search permission, ...).
fn unreachable_root(e: &std::io::Error, shown: &str) -> WsfsError {
    let cause = WsfsError::from_io(e, shown);
    let fix = if cause.code == ErrorCode::PermissionDenied {
        format!(
            ": a directory on the way to it denies this process ({}) search (x) permission; \
             grant it, or choose another root",
            user()
        )
    } else {
        String::new()
    };
    WsfsError::new(
        cause.code,
        format!(
            "workspace root {shown} cannot be opened: {}{fix}",
            cause.message
        ),
    )
}

/// Refuses a root this process may not list (r) or enter (x): every tool would fail on it.
/// The kernel's answer for the effective IDs, so ACLs, read-only mounts and root's rights count.
fn check_access(root: &Path, shown: &str) -> Result<()> {
    for (access, what, why) in [
        (Access::READ_OK, "read (r)", "its entries cannot be listed"),
        (Access::EXEC_OK, "search (x)", "nothing in it can be opened"),
    ] {
        match rustix::fs::accessat(CWD, root, access, AtFlags::EACCESS) {
            Ok(()) | Err(rustix::io::Errno::NOSYS) => {}
            Err(_) => {
                return Err(WsfsError::new(
                    ErrorCode::PermissionDenied,
                    format!(
                        "workspace root {shown} lacks {what} permission for this process ({}), \
                         so {why}: grant it (chmod u+rx {shown}), or choose another root",
                        user()
                    ),
                ))
            }
        }
    }
    Ok(())
}

fn user() -> String {
    format!("uid {}", rustix::process::geteuid().as_raw())
}

#[cfg(test)]
mod tests {
    use crate::config::Config;
    use crate::error::ErrorCode;
    use crate::workspace::Workspace;
    use std::os::unix::fs::PermissionsExt;
    use std::path::Path;

    fn open_err(root: &Path, create_root: bool) -> crate::error::WsfsError {
        let json = serde_json::json!({"root": root, "create_root": create_root}).to_string();
        let config = Config::from_json(&json).unwrap();
        Workspace::open(&config).unwrap_err()
    }

    #[test]
    fn a_missing_root_is_refused_naming_it_and_create_root() {
        let tmp = tempfile::tempdir().unwrap();
        let typo = tmp.path().join("projcet/ws");
        let e = open_err(&typo, false);
        assert_eq!(e.code, ErrorCode::PathNotFound, "{}", e.message);
        assert!(
            e.message.contains(&typo.display().to_string()),
            "{}",
            e.message
        );
        assert!(e.message.contains("\"create_root\": true"), "{}", e.message);
        assert!(
            !tmp.path().join("projcet").exists(),
            "a refused root was made"
        );
    }

    #[test]
    fn create_root_makes_the_root_and_its_parents() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("a/b/ws");
        let json = serde_json::json!({"root": root, "create_root": true,
            "state_dir": tmp.path().join("state")})
        .to_string();
        let (ws, _) = Workspace::open(&Config::from_json(&json).unwrap()).unwrap();
        assert!(root.is_dir());
        assert_eq!(ws.root(), root.canonicalize().unwrap());
    }

    /// Runs `check` where permission bits apply: here when this process is not root, else (root
    /// passes them all) in this test binary run again as nobody, on the test `name` alone.
    fn without_root_rights(name: &str, check: impl FnOnce()) {
        use std::os::unix::process::CommandExt;
        if !rustix::process::geteuid().is_root() {
            return check();
        }
        let test = format!("workspace::open_root::tests::{name}");
        let out = std::process::Command::new(std::env::current_exe().unwrap())
            .args([test.as_str(), "--exact", "--nocapture", "--test-threads=1"])
            .env("XDG_STATE_HOME", "/tmp")
            .uid(65534)
            .gid(65534)
            .output()
            .unwrap();
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(out.status.success(), "as nobody: {text}");
        assert!(
            text.contains("1 passed"),
            "as nobody the test did not run: {text}"
        );
    }

    #[test]
    fn an_unreadable_root_is_refused_naming_the_permission() {
        without_root_rights(
            "an_unreadable_root_is_refused_naming_the_permission",
            || {
                let tmp = tempfile::tempdir().unwrap();
                for (mode, lacks) in [(0o300, "read (r)"), (0o600, "search (x)")] {
                    let root = tmp.path().join(format!("ws{mode:o}"));
                    std::fs::create_dir(&root).unwrap();
                    std::fs::set_permissions(&root, std::fs::Permissions::from_mode(mode)).unwrap();
                    let e = open_err(&root, false);
                    assert_eq!(e.code, ErrorCode::PermissionDenied, "{}", e.message);
                    assert!(
                        e.message.contains(&root.display().to_string()),
                        "{}",
                        e.message
                    );
                    assert!(e.message.contains(lacks), "{mode:o}: {}", e.message);
                    std::fs::set_permissions(&root, std::fs::Permissions::from_mode(0o700))
                        .unwrap();
                }
            },
        );
    }

    #[test]
    fn a_root_under_a_read_only_parent_says_it_tried_to_make_it() {
        without_root_rights(
            "a_root_under_a_read_only_parent_says_it_tried_to_make_it",
            || {
                let tmp = tempfile::tempdir().unwrap();
                let parent = tmp.path().join("locked");
                std::fs::create_dir(&parent).unwrap();
                std::fs::set_permissions(&parent, std::fs::Permissions::from_mode(0o555)).unwrap();
                let e = open_err(&parent.join("ws"), true);
                assert_eq!(e.code, ErrorCode::PermissionDenied, "{}", e.message);
                assert!(
                    e.message.contains("making it (create_root) failed"),
                    "{}",
                    e.message
                );
                assert!(e.message.contains(&parent.join("ws").display().to_string()));
                std::fs::set_permissions(&parent, std::fs::Permissions::from_mode(0o755)).unwrap();
            },
        );
    }
}
