//! Paths as the host configures them: `~` and relative paths made absolute, and the roots that
//! hold far more than a project (`/`, the home directory).

use crate::error::{ErrorCode, Result, WsfsError};
use std::path::{Path, PathBuf};

/// Turns the configured root into an absolute path: trimmed, `~` expanded, joined to the
/// current directory when relative. Symlinks are resolved later, once the directory exists.
pub fn absolute_root(raw: &str) -> Result<PathBuf> {
    absolute_path(raw, "workspace root")
}

/// `absolute_root` for any configured path; `what` names it in errors.
pub fn absolute_path(raw: &str, what: &str) -> Result<PathBuf> {
    let trimmed = raw.trim();
    if trimmed.is_empty() {
        return Err(WsfsError::new(
            ErrorCode::InvalidPath,
            format!("{what} is empty; give a path"),
        ));
    }
    if trimmed.contains('\0') {
        return Err(WsfsError::new(
            ErrorCode::InvalidPath,
            format!("{what} contains a NUL byte"),
        ));
    }
    let expanded = expand_tilde(trimmed, what)?;
    if expanded.is_absolute() {
        return Ok(expanded);
    }
    let cwd = std::env::current_dir().map_err(|e| WsfsError::from_io(&e, "current directory"))?;
    Ok(cwd.join(expanded))
}

fn expand_tilde(path: &str, what: &str) -> Result<PathBuf> {
    let rest = if path == "~" {
        ""
    } else if let Some(rest) = path.strip_prefix("~/") {
        rest
    } else {
        return Ok(PathBuf::from(path));
    };
    let home = home_dir().ok_or_else(|| {
        WsfsError::new(
            ErrorCode::InvalidPath,
            format!("{what} starts with '~' but $HOME is not set"),
        )
    })?;
    Ok(home.join(rest))
}

pub fn home_dir() -> Option<PathBuf> {
    std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(PathBuf::from)
}

/// Whether the root is `/` or the home directory, which hold far more than a project.
pub fn is_broad_root(root: &Path) -> bool {
    root == Path::new("/")
        || home_dir().and_then(|h| h.canonicalize().ok()).as_deref() == Some(root)
}

/// Warnings for roots that give an agent far more than a project directory.
pub fn broad_root_warning(root: &Path) -> Option<String> {
    if root == Path::new("/") {
        return Some("workspace root is '/': the agent can reach the whole filesystem".into());
    }
    let home = home_dir().and_then(|h| h.canonicalize().ok());
    if home.as_deref() == Some(root) {
        return Some("workspace root is your home directory: the agent can reach all of it".into());
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tilde_and_relative_roots() {
        let home = home_dir().unwrap();
        assert_eq!(absolute_root(" ~/ws ").unwrap(), home.join("ws"));
        assert_eq!(absolute_root("~").unwrap(), home);
        let rel = absolute_root("rel/ws").unwrap();
        assert!(rel.is_absolute() && rel.ends_with("rel/ws"));
        assert_eq!(
            absolute_root("  ").unwrap_err().code,
            ErrorCode::InvalidPath
        );
        let cwd = std::env::current_dir().unwrap();
        assert_eq!(absolute_root("~user/x").unwrap(), cwd.join("~user/x"));
    }
}
