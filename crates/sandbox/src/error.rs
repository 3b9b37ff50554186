//! Error categories shared by every tool and their stable wire codes.

use std::io;

/// The stable error categories of the C ABI. Their `as_str()` strings never change. Each
/// variant's doc comment is its meaning in docs/tools.md's error table, which
/// python/tests/test_reference_docs.py generates from this file (one source).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorCode {
    /// empty path, NUL byte, path longer than 4096 bytes, symlink loop, a root that is empty or
    /// has a NUL, a name reserved for wsfs's temp files, a `\xNN` escape for `/` or NUL, the
    /// workspace root (or a path ending in `..`) given to `move_file` or `delete_file`, a
    /// directory moved into itself
    InvalidPath,
    /// the path (or a symlink on it) leads outside the workspace
    OutsideWorkspace,
    /// the file or a parent directory does not exist (the message suggests similar names)
    PathNotFound,
    /// the OS refused, a protected system path, or append to a hard-linked file
    PermissionDenied,
    /// any other I/O failure, a binary/non-UTF-8 file, or an internal error (caught panic)
    IoError,
    /// `old_text` occurs more than once and `replace_all` is false (the message gives the count
    /// and the lines of the first matches)
    AmbiguousEdit,
    /// `old_text` does not occur (the message shows the closest text and what differs)
    EditNotFound,
    /// a directory, FIFO, socket or device where a file is needed; a file path ending in `/`
    NotAFile,
    /// `list_dir` or `find_files` on a file, a file used as a parent directory, a root that is
    /// a file
    NotADirectory,
    /// content, result or argument JSON over a configured limit (checked before parsing);
    /// smaller content will fit
    TooLarge,
    /// the device is full (ENOSPC), the disk quota is exceeded (EDQUOT), or the file would pass
    /// the largest size the file system or the process's `RLIMIT_FSIZE` allows (EFBIG); nothing
    /// was changed, and retrying will not help until space is freed or the limit raised
    NoSpace,
    /// not a JSON object, invalid JSON, wrong types, missing or unknown fields, bad options, a
    /// NULL or non-UTF-8 argument (including the tool name), `max_lines` over 10000, an edit
    /// whose `old_text` is empty or equal to `new_text`
    InvalidArguments,
    /// `wsfs_call` with a name that is not a tool
    UnknownTool,
    /// unknown, closed or 0 workspace handle
    InvalidWorkspace,
    /// the cancel token fired before the commit point; nothing changed (a recursive
    /// `delete_file` that had already removed something reports that instead, with `deleted:
    /// false`)
    Cancelled,
    /// the deadline passed before the commit point; nothing changed (the same exception)
    Timeout,
    /// `read_file`'s `start_line` is past the end of the file (the message gives its line
    /// count)
    LineOutOfRange,
    /// `search_text`'s `query` is not a valid regular expression, or compiles too large (the
    /// parser's message)
    InvalidRegex,
    /// the workspace is read-only (`policy.writes_enabled: false`) and the tool is not
    /// read-only (`run_tests`, `run_lint`, `typecheck`, `safe_shell` and `shell` still run, on
    /// a read-only view); nothing was parsed or touched
    WritesDisabled,
    /// the policy denies reading or changing the resolved path (the message names the rule), or
    /// the path is the audit log
    PolicyDenied,
    /// `write_file` with `mode: "create"` on a name that is taken (nothing was written);
    /// `move_file`'s `dst` exists and `overwrite` is false (decided atomically by the rename),
    /// or with `overwrite` it is a non-empty directory (nothing was moved)
    FileExists,
    /// `delete_file` on a directory without `recursive: true` (the message says how many
    /// entries it holds); nothing was deleted
    RecursiveRequired,
    /// a Wasm tool asked for something its manifest does not grant or the host does not allow:
    /// a manifest whose capabilities or limits exceed the host's (refused at load), or a host
    /// function the tool is not entitled to (`model_generate` without `model_access`,
    /// `http_request` without `network`)
    CapabilityDenied,
    /// a Wasm tool used its whole fuel budget (`limits.fuel`) and was stopped
    FuelExhausted,
    /// a Wasm tool needed more linear memory than `limits.memory_mb` and failed or was stopped
    MemoryLimit,
    /// a Wasm tool trapped (crashed), exited with a failure status without a JSON error, or
    /// wrote a result that is not JSON
    ToolTrap,
    /// a Wasm tool's `manifest.json` is malformed or incomplete, or its module is not a valid
    /// WASI command (the message names the field)
    ManifestInvalid,
    /// a Wasm tool's module does not hash to the manifest's `module_sha256`; it was not loaded
    ModuleMismatch,
    /// the host's model gateway is not set, failed, or answered with something that is not
    /// JSON, for a Wasm tool's `model_generate`
    GatewayError,
    /// a developer tool (`run_tests`, `run_lint`, `typecheck`, the git tools, `safe_shell`)
    /// while the policy's `exec_enabled` is false, or `shell` while `shell_enabled` is false;
    /// nothing ran
    ExecDisabled,
    /// the kernel sandbox (Landlock) cannot be applied on this system and the policy requires
    /// it (`exec_require_sandbox`, the default); nothing ran
    SandboxUnavailable,
    /// `run_tests`, `run_lint` or `typecheck` found no tool to run for this workspace; pass
    /// `command`
    CommandRequired,
    /// `git_commit` without `confirmed: true` (a soft gate, not a human approval); nothing was
    /// staged or committed
    ConfirmationRequired,
    /// the host's approval handler (`wsfs_set_approval_handler`) denied a call that needs
    /// confirming (`git_commit`), failed, or did not answer before the call's deadline; the
    /// message gives the host's reason; nothing ran
    ApprovalDenied,
    /// `git_commit` with nothing staged and no `paths`
    NothingToCommit,
    /// overlay mode needs a kernel overlay of the base and the session, and this system cannot
    /// make it (no unprivileged user namespaces, no overlayfs): opening a workspace in overlay
    /// mode fails with it, and so does a developer tool whose program's view (a kernel overlay
    /// in the program's own namespaces) cannot be made: nothing ran, and a program is never run
    /// on the base instead
    OverlayUnavailable,
    /// a session operation (`wsfs_session_diff`, `_commit`, `_checkpoint`, `_rewind`,
    /// `_checkpoints`, `_discard`, `_refresh`; Go `Workspace.Session*`, Python
    /// `Workspace.session_*`, `wsfs session`) on a workspace in host mode, which has no overlay
    /// session; nothing was done
    NoSession,
    /// the configuration asks for a part this library was built without (a cargo feature:
    /// `overlay` for `"mode": "overlay"` and the session functions, `exec` for
    /// `policy.exec_enabled`, `wasm` for `wasm_tools` and the model gateway, `wasmtime` for its
    /// engine); the message names the feature; nothing was opened or created
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
