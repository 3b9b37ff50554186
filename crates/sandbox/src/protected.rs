//! Unrestricted mode (`restrict_to_workspace: false`): paths resolve from `/`, and the
//! protected system locations are refused, whatever the root. A restricted workspace whose
//! root is a protected location or contains one (a root of `/`) refuses them the same way
//! (`Root::protects`).

use crate::error::{ErrorCode, Result, WsfsError};
use crate::names::display_path;
use crate::root::Root;
use std::path::Path;

/// System locations refused when `restrict_to_workspace` is false, with everything below them.
pub const PROTECTED_LOCATIONS: &[&str] = &[
    "/etc", "/root", "/proc", "/sys", "/dev", "/boot", "/bin", "/sbin", "/lib", "/lib32", "/lib64",
    "/libx32", "/usr", "/var", "/run", "/srv",
];

/// Places below a protected location that are not protected: scratch space for everyone.
pub const UNPROTECTED_INSIDE: &[&str] = &["/var/tmp"];

/// The protected location containing `real`, if any.
pub fn protected_location(real: &Path) -> Option<&'static Path> {
    if UNPROTECTED_INSIDE.iter().any(|p| real.starts_with(p)) {
        return None;
    }
    PROTECTED_LOCATIONS
        .iter()
        .map(Path::new)
        .find(|p| real.starts_with(p))
}

/// Whether a root is a protected location or contains one (`/`, `/usr`): a restricted
/// workspace on it refuses them as unrestricted mode does. A root strictly inside one
/// (`/root/ws`) contains none.
pub fn contains_protected(root: &Path) -> bool {
    PROTECTED_LOCATIONS
        .iter()
        .any(|location| Path::new(location).starts_with(root))
}

/// What unrestricted mode does and does not protect, said when such a workspace is opened.
/// The root itself is never named (messages stay workspace-relative).
pub fn unrestricted_warnings(root: &Path) -> Vec<String> {
    let mut locations: Vec<String> = PROTECTED_LOCATIONS.iter().map(|p| p.to_string()).collect();
    for open in UNPROTECTED_INSIDE {
        if let Some(holder) = locations
            .iter_mut()
            .find(|l| Path::new(open).starts_with(l.as_str()))
        {
            holder.push_str(&format!(" (except {open})"));
        }
    }
    let mut warnings = vec![format!(
        "restrict_to_workspace is false: absolute paths, '..' and symlinks may reach any file \
         this process can. Only system locations are refused: {}. Everything else (your home \
         directory, other projects, /tmp) is open to the agent",
        locations.join(", ")
    )];
    if let Some(location) = protected_location(root) {
        // A root strictly inside a protected location keeps its own contents (see resolve).
        if root == location {
            warnings.push(format!(
                "the workspace root is the protected system location {}: in unrestricted mode \
                 every call on it is refused",
                location.display()
            ));
        }
    }
    warnings
}

impl Root {
    /// Refuses protected system locations in unrestricted mode, whatever the root, and in
    /// restricted mode when the root contains them (`Root::protects`). The one
    /// exception is a workspace root strictly inside a protected location (CI runs as root
    /// with workspaces under `/root`): paths inside that root are allowed. A root that is a
    /// protected location or contains one (`/`, `/etc`) unlocks nothing.
    pub fn check_host_path(&self, real: &Path, display: &str) -> Result<()> {
        let Some(location) = self.protected_refusal(real) else {
            return Ok(());
        };
        let mode = match self.restrict {
            true => "a workspace whose root contains it",
            false => "unrestricted mode",
        };
        Err(WsfsError::new(
            ErrorCode::PermissionDenied,
            format!(
                "{display} resolves to {}, inside {}, a protected system location; \
                 {mode} never reads or writes there",
                display_path(real),
                location.display()
            ),
        ))
    }

    /// The protected location that refuses the real path `real` in unrestricted mode, if any
    /// (the rule of `check_host_path`, also for the entries of a walk).
    pub fn protected_refusal(&self, real: &Path) -> Option<&'static Path> {
        let location = protected_location(real)?;
        let root_strictly_inside = self.path.starts_with(location) && self.path != location;
        if root_strictly_inside && real.starts_with(&self.path) {
            return None;
        }
        Some(location)
    }
}
