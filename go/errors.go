package wsfs

import (
	"fmt"
)

// Code is a stable error code from the wsfs library. The values are exactly
// the codes of the C ABI's error envelope ({"ok":false,"error":{"code":...}}).
type Code string

// Error codes. Each one has a matching sentinel (ErrInvalidPath, ...) for use
// with errors.Is.
const (
	// CodeInvalidPath: empty path, NUL byte, invalid UTF-8, path longer
	// than 4096 bytes, a symlink loop, a name reserved for wsfs's temporary
	// files (.wsfs-<16 hex digits>.tmp), or a \xNN escape for '/' or NUL.
	CodeInvalidPath Code = "invalid_path"
	// CodeOutsideWorkspace: the path, or a symlink on it, leads outside the
	// workspace.
	CodeOutsideWorkspace Code = "outside_workspace"
	// CodePathNotFound: the file or a parent directory does not exist; at
	// Open, a Root that does not exist without Config.CreateRoot.
	CodePathNotFound Code = "path_not_found"
	// CodePermissionDenied: the OS refused, a protected system path, or an
	// append to a hard-linked file; at Open, a Root this process may not
	// list or enter (the message names the permission).
	CodePermissionDenied Code = "permission_denied"
	// CodeIOError: any other I/O failure, a binary or non-UTF-8 file, or an
	// internal error in the library.
	CodeIOError Code = "io_error"
	// CodeAmbiguousEdit: old_text occurs more than once and ReplaceAll is
	// false.
	CodeAmbiguousEdit Code = "ambiguous_edit"
	// CodeEditNotFound: old_text does not occur in the file.
	CodeEditNotFound Code = "edit_not_found"
	// CodeNotAFile: the path is a directory, FIFO, socket or device where a
	// regular file is needed.
	CodeNotAFile Code = "not_a_file"
	// CodeNotADirectory: list_dir on a file, or a file used as a parent
	// directory.
	CodeNotADirectory Code = "not_a_directory"
	// CodeTooLarge: content, result or arguments over a configured limit.
	CodeTooLarge Code = "too_large"
	// CodeNoSpace: the device is full, the disk quota is exceeded, or the
	// file would exceed the largest size the file system or the process
	// (RLIMIT_FSIZE) allows. Retrying, even with smaller content, will not
	// help until space is freed or the limit raised. Nothing was changed.
	CodeNoSpace Code = "no_space"
	// CodeInvalidArguments: invalid JSON, wrong types, missing or unknown
	// fields, bad options or limits.
	CodeInvalidArguments Code = "invalid_arguments"
	// CodeUnknownTool: Workspace.CallRaw with a name that is not a tool.
	CodeUnknownTool Code = "unknown_tool"
	// CodeInvalidWorkspace: the workspace was closed (or the handle is
	// unknown to the library).
	CodeInvalidWorkspace Code = "invalid_workspace"
	// CodeCancelled: the context was cancelled before the operation's commit
	// point. Nothing was changed.
	CodeCancelled Code = "cancelled"
	// CodeTimeout: the deadline (context deadline, per-call timeout or the
	// workspace's OperationTimeout) passed before the operation's commit
	// point. Nothing was changed.
	CodeTimeout Code = "timeout"
	// CodeLineOutOfRange: read_file's start_line is past the end of the
	// file; the message names the file's line count.
	CodeLineOutOfRange Code = "line_out_of_range"
	// CodeInvalidRegex: search_text's query is not a valid regular
	// expression (or is too large); the message is the parser's.
	CodeInvalidRegex Code = "invalid_regex"
	// CodeWritesDisabled: the workspace is read-only (Policy.WritesEnabled
	// is false) and the tool changes things. Nothing was touched.
	CodeWritesDisabled Code = "writes_disabled"
	// CodePolicyDenied: the workspace policy denies reading or changing the
	// path (as resolved: symlinks and ".." do not get around it; the
	// message names the rule), or the path is the workspace's audit log.
	CodePolicyDenied Code = "policy_denied"
	// CodeFileExists: write_file with Mode "create" on a name that is
	// taken, or move_file onto an existing destination without Overwrite
	// (decided atomically), or onto a directory that is not empty. Nothing
	// was written or moved.
	CodeFileExists Code = "file_exists"
	// CodeRecursiveRequired: delete_file on a directory without Recursive.
	// Nothing was deleted.
	CodeRecursiveRequired Code = "recursive_required"
	// CodeCapabilityDenied: a Wasm tool asked for something its manifest
	// does not grant or the host does not allow (a capability, or limits
	// over the host's): refused when the tool is loaded, or by the host
	// function the tool called.
	CodeCapabilityDenied Code = "capability_denied"
	// CodeFuelExhausted: a Wasm tool used up its fuel (instruction budget,
	// the manifest's limits.fuel) and was stopped.
	CodeFuelExhausted Code = "fuel_exhausted"
	// CodeMemoryLimit: a Wasm tool needed more memory than its limit
	// (limits.memory_mb) and failed or was stopped.
	CodeMemoryLimit Code = "memory_limit"
	// CodeToolTrap: a Wasm tool crashed (a trap), exited with a failure
	// status without saying why, or broke the protocol (its output is not
	// JSON).
	CodeToolTrap Code = "tool_trap"
	// CodeManifestInvalid: a Wasm tool's manifest.json or module is not
	// valid; the message names the field.
	CodeManifestInvalid Code = "manifest_invalid"
	// CodeModuleMismatch: a Wasm tool's module does not match the
	// manifest's module_sha256, so it was not loaded.
	CodeModuleMismatch Code = "module_mismatch"
	// CodeGatewayError: the host's model gateway failed or is not set, for
	// a Wasm tool's model call.
	CodeGatewayError Code = "gateway_error"
	// CodeExecDisabled: a developer tool (tests, lint, typecheck, git,
	// safe_shell) while the policy's exec_enabled is false, or shell while
	// shell_enabled is false. Nothing ran.
	CodeExecDisabled Code = "exec_disabled"
	// CodeSandboxUnavailable: the kernel sandbox (Landlock) cannot be
	// applied and the policy requires it (exec_require_sandbox, the
	// default). Nothing ran.
	CodeSandboxUnavailable Code = "sandbox_unavailable"
	// CodeCommandRequired: run_tests, run_lint or typecheck found no tool
	// to run for this workspace; pass the command.
	CodeCommandRequired Code = "command_required"
	// CodeConfirmationRequired: git_commit without confirmed: true. Nothing
	// was staged or committed.
	CodeConfirmationRequired Code = "confirmation_required"
	// CodeApprovalDenied: the host's approval handler (SetApprovalHandler)
	// denied a call that needs confirming (git_commit), failed, or did not
	// answer before the call's deadline. Nothing ran.
	CodeApprovalDenied Code = "approval_denied"
	// CodeNothingToCommit: git_commit with nothing staged and no paths.
	CodeNothingToCommit Code = "nothing_to_commit"
	// CodeOverlayUnavailable: overlay mode needs a kernel overlay of the
	// base and the session (the workspace's view, and each program's view in
	// its own user and mount namespaces) and this system cannot make it.
	// Nothing ran; a program never runs on the base.
	CodeOverlayUnavailable Code = "overlay_unavailable"
	// CodeNoSession: a session operation (Workspace.SessionDiff,
	// SessionCommit, ...) on a workspace in host mode, which has no overlay
	// session. Nothing was done.
	CodeNoSession Code = "no_session"
	// CodeFeatureNotBuilt: the configuration asks for a part the library was
	// built without (a cargo feature: overlay, exec, wasm, wasmtime; the
	// message names it). Nothing was opened or created.
	CodeFeatureNotBuilt Code = "feature_not_built"
)

// Codes lists every error code, in the order of the C ABI documentation.
var Codes = []Code{
	CodeInvalidPath, CodeOutsideWorkspace, CodePathNotFound, CodePermissionDenied,
	CodeIOError, CodeAmbiguousEdit, CodeEditNotFound, CodeNotAFile, CodeNotADirectory,
	CodeTooLarge, CodeNoSpace, CodeInvalidArguments, CodeUnknownTool, CodeInvalidWorkspace,
	CodeCancelled, CodeTimeout, CodeLineOutOfRange, CodeInvalidRegex, CodeWritesDisabled,
	CodePolicyDenied, CodeFileExists, CodeRecursiveRequired, CodeCapabilityDenied,
	CodeFuelExhausted, CodeMemoryLimit, CodeToolTrap, CodeManifestInvalid, CodeModuleMismatch,
	CodeGatewayError, CodeExecDisabled, CodeSandboxUnavailable, CodeCommandRequired,
	CodeConfirmationRequired, CodeApprovalDenied, CodeNothingToCommit, CodeOverlayUnavailable, CodeNoSession,
	CodeFeatureNotBuilt,
}

// Sentinel errors, one per code, for errors.Is:
//
//	if errors.Is(err, wsfs.ErrOutsideWorkspace) { ... }
//
// An *Error matches a sentinel when the codes are equal; the message does not
// matter. Use errors.As to get the code and message of any failure.
var (
	ErrInvalidPath          = &Error{Code: CodeInvalidPath}
	ErrOutsideWorkspace     = &Error{Code: CodeOutsideWorkspace}
	ErrPathNotFound         = &Error{Code: CodePathNotFound}
	ErrPermissionDenied     = &Error{Code: CodePermissionDenied}
	ErrIOError              = &Error{Code: CodeIOError}
	ErrAmbiguousEdit        = &Error{Code: CodeAmbiguousEdit}
	ErrEditNotFound         = &Error{Code: CodeEditNotFound}
	ErrNotAFile             = &Error{Code: CodeNotAFile}
	ErrNotADirectory        = &Error{Code: CodeNotADirectory}
	ErrTooLarge             = &Error{Code: CodeTooLarge}
	ErrNoSpace              = &Error{Code: CodeNoSpace}
	ErrInvalidArguments     = &Error{Code: CodeInvalidArguments}
	ErrUnknownTool          = &Error{Code: CodeUnknownTool}
	ErrInvalidWorkspace     = &Error{Code: CodeInvalidWorkspace}
	ErrCancelled            = &Error{Code: CodeCancelled}
	ErrLineOutOfRange       = &Error{Code: CodeLineOutOfRange}
	ErrInvalidRegex         = &Error{Code: CodeInvalidRegex}
	ErrTimeout              = &Error{Code: CodeTimeout}
	ErrWritesDisabled       = &Error{Code: CodeWritesDisabled}
	ErrPolicyDenied         = &Error{Code: CodePolicyDenied}
	ErrFileExists           = &Error{Code: CodeFileExists}
	ErrRecursiveRequired    = &Error{Code: CodeRecursiveRequired}
	ErrCapabilityDenied     = &Error{Code: CodeCapabilityDenied}
	ErrFuelExhausted        = &Error{Code: CodeFuelExhausted}
	ErrMemoryLimit          = &Error{Code: CodeMemoryLimit}
	ErrToolTrap             = &Error{Code: CodeToolTrap}
	ErrManifestInvalid      = &Error{Code: CodeManifestInvalid}
	ErrModuleMismatch       = &Error{Code: CodeModuleMismatch}
	ErrGatewayError         = &Error{Code: CodeGatewayError}
	ErrExecDisabled         = &Error{Code: CodeExecDisabled}
	ErrSandboxUnavailable   = &Error{Code: CodeSandboxUnavailable}
	ErrCommandRequired      = &Error{Code: CodeCommandRequired}
	ErrConfirmationRequired = &Error{Code: CodeConfirmationRequired}
	ErrApprovalDenied       = &Error{Code: CodeApprovalDenied}
	ErrNothingToCommit      = &Error{Code: CodeNothingToCommit}
	ErrOverlayUnavailable   = &Error{Code: CodeOverlayUnavailable}
	ErrNoSession            = &Error{Code: CodeNoSession}
	ErrFeatureNotBuilt      = &Error{Code: CodeFeatureNotBuilt}
)

// Error is a failed wsfs operation: the library's error envelope, or the same
// shape produced on the Go side for input rejected before calling C (a NUL
// byte, invalid UTF-8, a context that is already done).
//
// Error() is "wsfs: <tool>: <code>: <message>". Text() is "<code>:
// <message>", the concise form that is shown to a model.
//
// When the failure was caused by the caller's context (CodeCancelled or
// CodeTimeout with the context done), Unwrap returns ctx.Err(), so
// errors.Is(err, context.Canceled) and errors.Is(err,
// context.DeadlineExceeded) work as well.
type Error struct {
	// Code is the stable error code.
	Code Code
	// Message says what went wrong and how to correct the call. Paths in it
	// are relative to the workspace root.
	Message string
	// Tool is the tool that failed ("read_file", ...), or "open"/"close" for
	// Open and Close. Empty for sentinels.
	Tool string

	cause error
}

func (e *Error) Error() string {
	var s string
	if e.Tool != "" {
		s = "wsfs: " + e.Tool + ": " + string(e.Code)
	} else {
		s = "wsfs: " + string(e.Code)
	}
	if e.Message != "" {
		s += ": " + e.Message
	}
	return s
}

// Text returns "<code>: <message>", the form the C ABI puts in an error
// envelope's "text" field and the form a model sees.
func (e *Error) Text() string {
	if e.Message == "" {
		return string(e.Code)
	}
	return string(e.Code) + ": " + e.Message
}

// Is reports whether target is an *Error with the same code. This makes the
// sentinels (ErrOutsideWorkspace, ...) work with errors.Is.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Code == e.Code
}

// Unwrap returns the context error that caused a cancelled or timeout
// failure, or nil.
func (e *Error) Unwrap() error { return e.cause }

func newError(tool string, code Code, format string, args ...any) *Error {
	return &Error{Tool: tool, Code: code, Message: fmt.Sprintf(format, args...)}
}

// ABIMismatchError is returned by Open (and Version) when the loaded wsfs
// library implements a different C ABI version than this package.
type ABIMismatchError struct {
	// Want is the ABI version this package was written for (ABIVersion).
	Want int
	// Got is the "abi" number reported by wsfs_version().
	Got int
	// LibraryVersion is the library's "version" string.
	LibraryVersion string
}

func (e *ABIMismatchError) Error() string {
	return fmt.Sprintf("wsfs: C ABI mismatch: library %q implements ABI %d, this Go package needs ABI %d; rebuild the library (make build) or update the Go package",
		e.LibraryVersion, e.Got, e.Want)
}
