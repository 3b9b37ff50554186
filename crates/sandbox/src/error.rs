//! Error categories shared by every tool and their stable wire codes.

use std::io;

/// The stable error categories of the C ABI. Their `code()` strings never change.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorCode {
    InvalidPath,
    OutsideWorkspace,
    PathNotFound,
    PermissionDenied,
    IoError,
    AmbiguousEdit,
    EditNotFound,
    NotAFile,
    NotADirectory,
    TooLarge,
    NoSpace,
    InvalidArguments,
    UnknownTool,
    InvalidWorkspace,
    Cancelled,
    Timeout,
    LineOutOfRange,
    InvalidRegex,
    WritesDisabled,
    PolicyDenied,
    FileExists,
    RecursiveRequired,
    CapabilityDenied,
    FuelExhausted,
    MemoryLimit,
    ToolTrap,
    ManifestInvalid,
    ModuleMismatch,
    GatewayError,
    ExecDisabled,
    SandboxUnavailable,
    CommandRequired,
    ConfirmationRequired,
    /// The host's approval handler denied a call that needs approval (or failed, or did not
    /// answer in time); nothing ran.
    ApprovalDenied,
    NothingToCommit,
    OverlayUnavailable,
    NoSession,
    /// The configuration asks for a part this library was built without (a cargo feature:
    /// `overlay`, `exec`, `wasm`, `wasmtime`); the message names it.
    FeatureNotBuilt,
}

impl ErrorCode {
    /// Every code, in declaration order (a new code goes here too: the test
    /// `every_code_is_listed_once` fails otherwise).
    pub const ALL: &'static [ErrorCode] = &[
        ErrorCode::InvalidPath,
        ErrorCode::OutsideWorkspace,
        ErrorCode::PathNotFound,
        ErrorCode::PermissionDenied,
        ErrorCode::IoError,
        ErrorCode::AmbiguousEdit,
        ErrorCode::EditNotFound,
        ErrorCode::NotAFile,
        ErrorCode::NotADirectory,
        ErrorCode::TooLarge,
        ErrorCode::NoSpace,
        ErrorCode::InvalidArguments,
        ErrorCode::UnknownTool,
        ErrorCode::InvalidWorkspace,
        ErrorCode::Cancelled,
        ErrorCode::Timeout,
        ErrorCode::LineOutOfRange,
        ErrorCode::InvalidRegex,
        ErrorCode::WritesDisabled,
        ErrorCode::PolicyDenied,
        ErrorCode::FileExists,
        ErrorCode::RecursiveRequired,
        ErrorCode::CapabilityDenied,
        ErrorCode::FuelExhausted,
        ErrorCode::MemoryLimit,
        ErrorCode::ToolTrap,
        ErrorCode::ManifestInvalid,
        ErrorCode::ModuleMismatch,
        ErrorCode::GatewayError,
        ErrorCode::ExecDisabled,
        ErrorCode::SandboxUnavailable,
        ErrorCode::CommandRequired,
        ErrorCode::ConfirmationRequired,
        ErrorCode::ApprovalDenied,
        ErrorCode::NothingToCommit,
        ErrorCode::OverlayUnavailable,
        ErrorCode::NoSession,
        ErrorCode::FeatureNotBuilt,
    ];

    /// The code whose wire string is `code` (the inverse of [`ErrorCode::as_str`]).
    pub fn from_wire(code: &str) -> Option<ErrorCode> {
        ErrorCode::ALL.iter().copied().find(|c| c.as_str() == code)
    }

    /// The wire string for this code, as documented in `include/wsfs.h`.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCode::InvalidPath => "invalid_path",
            ErrorCode::OutsideWorkspace => "outside_workspace",
            ErrorCode::PathNotFound => "path_not_found",
            ErrorCode::PermissionDenied => "permission_denied",
            ErrorCode::IoError => "io_error",
            ErrorCode::AmbiguousEdit => "ambiguous_edit",
            ErrorCode::EditNotFound => "edit_not_found",
            ErrorCode::NotAFile => "not_a_file",
            ErrorCode::NotADirectory => "not_a_directory",
            ErrorCode::TooLarge => "too_large",
            ErrorCode::NoSpace => "no_space",
            ErrorCode::InvalidArguments => "invalid_arguments",
            ErrorCode::UnknownTool => "unknown_tool",
            ErrorCode::InvalidWorkspace => "invalid_workspace",
            ErrorCode::Cancelled => "cancelled",
            ErrorCode::Timeout => "timeout",
            ErrorCode::LineOutOfRange => "line_out_of_range",
            ErrorCode::InvalidRegex => "invalid_regex",
            ErrorCode::WritesDisabled => "writes_disabled",
            ErrorCode::PolicyDenied => "policy_denied",
            ErrorCode::FileExists => "file_exists",
            ErrorCode::RecursiveRequired => "recursive_required",
            ErrorCode::CapabilityDenied => "capability_denied",
            ErrorCode::FuelExhausted => "fuel_exhausted",
            ErrorCode::MemoryLimit => "memory_limit",
            ErrorCode::ToolTrap => "tool_trap",
            ErrorCode::ManifestInvalid => "manifest_invalid",
            ErrorCode::ModuleMismatch => "module_mismatch",
            ErrorCode::GatewayError => "gateway_error",
            ErrorCode::ExecDisabled => "exec_disabled",
            ErrorCode::SandboxUnavailable => "sandbox_unavailable",
            ErrorCode::CommandRequired => "command_required",
            ErrorCode::ConfirmationRequired => "confirmation_required",
            ErrorCode::ApprovalDenied => "approval_denied",
            ErrorCode::NothingToCommit => "nothing_to_commit",
            ErrorCode::OverlayUnavailable => "overlay_unavailable",
            ErrorCode::NoSession => "no_session",
            ErrorCode::FeatureNotBuilt => "feature_not_built",
        }
    }
}

/// What a model should know about `no_space`: unlike `too_large`, smaller content is no cure.
pub const NO_SPACE_HINT: &str = "Retrying will not help: free some space or raise the quota first";

/// A failed call: a stable category plus a message written for the model.
#[derive(Debug, Clone)]
pub struct WsfsError {
    pub code: ErrorCode,
    pub message: String,
}

/// `<code>: <message>`, the envelope's `text`.
impl std::fmt::Display for WsfsError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.code.as_str(), self.message)
    }
}

impl std::error::Error for WsfsError {}

pub type Result<T> = std::result::Result<T, WsfsError>;

impl WsfsError {
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        WsfsError {
            code,
            message: message.into(),
        }
    }

    /// Classifies an OS error met while working on `path` (workspace-relative, for the message).
    pub fn from_io(err: &io::Error, path: &str) -> Self {
        let (code, what) = classify_io(err);
        let message = match code {
            ErrorCode::OutsideWorkspace => format!(
                "{path} leads outside the workspace (through '..', an absolute path or a symlink); \
                 use a path inside the workspace"
            ),
            ErrorCode::PathNotFound => {
                format!("{path} does not exist (or a parent directory is missing); use list_dir to see what exists")
            }
            ErrorCode::NotADirectory => {
                format!("a component of {path} is not a directory")
            }
            ErrorCode::NotAFile => format!("{path} is a directory, not a file; use list_dir"),
            ErrorCode::InvalidPath => format!("{path}: {what}"),
            _ => format!("{path}: {what}"),
        };
        WsfsError::new(code, message)
    }
}

/// Maps an `io::Error` to its category. cap-std reports an escape attempt as a
/// `PermissionDenied` error that carries no OS error number; real EACCES/EPERM carry one.
fn classify_io(err: &io::Error) -> (ErrorCode, String) {
    let text = err.to_string();
    if let Some(errno) = err.raw_os_error() {
        let code = match errno {
            libc::ENOENT => ErrorCode::PathNotFound,
            libc::EACCES | libc::EPERM | libc::EROFS => ErrorCode::PermissionDenied,
            libc::ENOTDIR => ErrorCode::NotADirectory,
            libc::EISDIR => ErrorCode::NotAFile,
            libc::EXDEV => ErrorCode::OutsideWorkspace,
            libc::ELOOP => ErrorCode::InvalidPath,
            libc::ENAMETOOLONG => ErrorCode::InvalidPath,
            libc::EFBIG | libc::ENOSPC | libc::EDQUOT => ErrorCode::NoSpace,
            _ => ErrorCode::IoError,
        };
        let what = match errno {
            libc::ELOOP => "too many levels of symbolic links (a symlink loop?)".to_string(),
            libc::ENAMETOOLONG => "a path component is too long".to_string(),
            libc::ENOSPC => format!("no space left on the device ({text}). {NO_SPACE_HINT}"),
            libc::EDQUOT => format!("the disk quota is exceeded ({text}). {NO_SPACE_HINT}"),
            libc::EFBIG => format!(
                "the file would exceed the largest size the file system or this process \
                 allows ({text}). Retrying will not help: write a smaller file, or raise the limit"
            ),
            libc::EMFILE | libc::ENFILE => format!(
                "this process has no file descriptor left ({text}). Retry once the host has \
                 fewer files open, or have it raise its descriptor limit (RLIMIT_NOFILE)"
            ),
            _ => text,
        };
        return (code, what);
    }
    match err.kind() {
        io::ErrorKind::PermissionDenied => (ErrorCode::OutsideWorkspace, text),
        io::ErrorKind::NotFound => (ErrorCode::PathNotFound, text),
        io::ErrorKind::InvalidInput => (ErrorCode::InvalidPath, text),
        _ => (ErrorCode::IoError, text),
    }
}

/// The error for a configuration that needs the cargo feature `feature`, which this library
/// was built without; `asked` says what in the configuration needs it.
pub fn feature_not_built(feature: &str, asked: &str) -> WsfsError {
    WsfsError::new(
        ErrorCode::FeatureNotBuilt,
        format!(
            "{asked} needs the cargo feature {feature}, and this wsfs library was built without \
             it: use a build with it (cargo build --features {feature}; the Go module and the \
             Python wheel ship with every feature) or leave it out of the configuration"
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_code_is_listed_once() {
        // Exhaustive: a new variant fails to compile here until it is named, and the
        // assertion below then fails until ALL lists it.
        let listed = |c: ErrorCode| match c {
            ErrorCode::InvalidPath
            | ErrorCode::OutsideWorkspace
            | ErrorCode::PathNotFound
            | ErrorCode::PermissionDenied
            | ErrorCode::IoError
            | ErrorCode::AmbiguousEdit
            | ErrorCode::EditNotFound
            | ErrorCode::NotAFile
            | ErrorCode::NotADirectory
            | ErrorCode::TooLarge
            | ErrorCode::NoSpace
            | ErrorCode::InvalidArguments
            | ErrorCode::UnknownTool
            | ErrorCode::InvalidWorkspace
            | ErrorCode::Cancelled
            | ErrorCode::Timeout
            | ErrorCode::LineOutOfRange
            | ErrorCode::InvalidRegex
            | ErrorCode::WritesDisabled
            | ErrorCode::PolicyDenied
            | ErrorCode::FileExists
            | ErrorCode::RecursiveRequired
            | ErrorCode::CapabilityDenied
            | ErrorCode::FuelExhausted
            | ErrorCode::MemoryLimit
            | ErrorCode::ToolTrap
            | ErrorCode::ManifestInvalid
            | ErrorCode::ModuleMismatch
            | ErrorCode::GatewayError
            | ErrorCode::ExecDisabled
            | ErrorCode::SandboxUnavailable
            | ErrorCode::CommandRequired
            | ErrorCode::ConfirmationRequired
            | ErrorCode::ApprovalDenied
            | ErrorCode::NothingToCommit
            | ErrorCode::OverlayUnavailable
            | ErrorCode::NoSession
            | ErrorCode::FeatureNotBuilt => ErrorCode::ALL.contains(&c),
        };
        for (i, &c) in ErrorCode::ALL.iter().enumerate() {
            assert!(listed(c));
            assert_eq!(
                ErrorCode::ALL.iter().position(|&a| a == c),
                Some(i),
                "{c:?} twice"
            );
            assert_eq!(ErrorCode::from_wire(c.as_str()), Some(c));
        }
        assert_eq!(ErrorCode::from_wire("no_such_code"), None);
    }

    #[test]
    fn escape_attempts_without_errno_are_outside_workspace() {
        let escape = io::Error::new(io::ErrorKind::PermissionDenied, "a path led outside");
        assert_eq!(
            WsfsError::from_io(&escape, "x").code,
            ErrorCode::OutsideWorkspace
        );
        let eacces = io::Error::from_raw_os_error(libc::EACCES);
        assert_eq!(
            WsfsError::from_io(&eacces, "x").code,
            ErrorCode::PermissionDenied
        );
    }

    #[test]
    fn errno_mapping() {
        let cases = [
            (libc::ENOENT, ErrorCode::PathNotFound),
            (libc::ENOTDIR, ErrorCode::NotADirectory),
            (libc::EISDIR, ErrorCode::NotAFile),
            (libc::ELOOP, ErrorCode::InvalidPath),
            (libc::EIO, ErrorCode::IoError),
            (libc::ENOSPC, ErrorCode::NoSpace),
            (libc::EDQUOT, ErrorCode::NoSpace),
            (libc::EFBIG, ErrorCode::NoSpace),
        ];
        for (errno, code) in cases {
            let err = io::Error::from_raw_os_error(errno);
            assert_eq!(WsfsError::from_io(&err, "p").code, code, "errno {errno}");
        }
    }

    #[test]
    fn a_full_disk_says_retrying_will_not_help() {
        for errno in [libc::ENOSPC, libc::EDQUOT, libc::EFBIG] {
            let e = WsfsError::from_io(&io::Error::from_raw_os_error(errno), "f.txt");
            assert_eq!(e.code.as_str(), "no_space");
            assert!(
                e.message.contains("Retrying will not help"),
                "{}",
                e.message
            );
            assert!(e.message.starts_with("f.txt: "), "{}", e.message);
        }
    }

    #[test]
    fn running_out_of_descriptors_says_what_to_do() {
        for errno in [libc::EMFILE, libc::ENFILE] {
            let e = WsfsError::from_io(&io::Error::from_raw_os_error(errno), "f.txt");
            assert_eq!(e.code.as_str(), "io_error");
            assert!(
                e.message.contains("no file descriptor left"),
                "{}",
                e.message
            );
            assert!(e.message.contains("RLIMIT_NOFILE"), "{}", e.message);
        }
    }

    #[test]
    fn display_is_code_colon_message() {
        let e = WsfsError::new(ErrorCode::EditNotFound, "no match");
        assert_eq!(e.to_string(), "edit_not_found: no match");
    }
}
