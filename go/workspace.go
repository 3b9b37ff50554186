package wsfs

import (
	"encoding/json"
	"log/slog"
	"reflect"
	"runtime"
	"strings"
	"sync/atomic"
	"time"
	"unicode/utf8"
)

// Workspace is an open wsfs workspace: a directory that the tools can
// read and change and never leave. It is safe for concurrent use by many
// goroutines; Close may be called while calls are in flight (those calls
// either finish normally or fail with CodeInvalidWorkspace).
//
// # Deadlines, cancellation and what a failure means
//
// Every method takes a context. The call is bounded by the workspace's
// OperationTimeout, shortened by the context's deadline (and by a per-tool
// timeout for the agent tools). If the context can be cancelled, cancelling
// it makes the library stop at its next check (between path components, read
// chunks, directory entries and before the commit point); a single system
// call is never interrupted. A context that is already done returns
// CodeCancelled or CodeTimeout without calling the library.
//
// The library guarantees that a CodeCancelled or CodeTimeout result means
// nothing was changed. Once an operation passes its commit point (the rename
// of write_file and edit_file, the write of append_file) it finishes and
// reports success even if the context is cancelled meanwhile. So a failure is
// always truthful: retrying a cancelled write, edit or append is safe and
// never duplicates it.
type Workspace struct {
	handle   uint64
	root     string
	restrict bool
	limits   Limits
	policy   Policy
	warnings []string
	logger   *slog.Logger
	// profile is the workspace's profile, "" for the native tools (wsfs).
	profile  string
	wasm     []string
	gateways gateways
	// approvals are the ids of the approval handlers it was given.
	approvals approvals
	// mode and session are the config's (ModeHost and "" in host mode).
	mode    Mode
	session string

	closed  atomic.Bool
	cleanup runtime.Cleanup
}

// openData is the data of wsfs_workspace_open's envelope.
type openData struct {
	Workspace           uint64     `json:"workspace"`
	Root                string     `json:"root"`
	RestrictToWorkspace bool       `json:"restrict_to_workspace"`
	Limits              limitsJSON `json:"limits"`
	Policy              struct {
		WritesEnabled bool     `json:"writes_enabled"`
		DenyRead      []string `json:"deny_read"`
		DenyWrite     []string `json:"deny_write"`
		AuditLog      *string  `json:"audit_log"`

		AuditArguments bool     `json:"audit_arguments"`
		AllowTools     []string `json:"allow_tools"`
		DenyTools      []string `json:"deny_tools"`

		ExecEnabled        bool     `json:"exec_enabled"`
		ShellEnabled       bool     `json:"shell_enabled"`
		ExecRequireSandbox bool     `json:"exec_require_sandbox"`
		ExecNetwork        bool     `json:"exec_network"`
		ExecReadPaths      []string `json:"exec_read_paths"`
		ExecEnvAllow       []string `json:"exec_env_allow"`
		ExecTimeoutSec     int64    `json:"exec_timeout_sec"`
	} `json:"policy"`
	Profile   string   `json:"profile"`
	WasmTools []string `json:"wasm_tools"`
}

// Open checks the library's ABI version and opens a workspace. Failures are
// *Error (CodeInvalidPath for an empty root or one with a NUL byte,
// CodeInvalidArguments for bad limits, CodeNotADirectory, CodePermissionDenied
// ...) or *ABIMismatchError. Close the workspace when done.
func Open(cfg Config) (*Workspace, error) {
	if _, err := Version(); err != nil {
		return nil, err
	}
	if strings.IndexByte(cfg.Root, 0) >= 0 {
		return nil, newError("open", CodeInvalidPath, "workspace root contains a NUL byte")
	}
	if !utf8.ValidString(cfg.Root) {
		return nil, newError("open", CodeInvalidPath, "workspace root is not valid UTF-8")
	}
	lj, err := cfg.Limits.toJSON()
	if err != nil {
		return nil, err
	}
	cj := configJSON{Root: cfg.Root, CreateRoot: cfg.CreateRoot, RestrictToWorkspace: true, StateDir: cfg.StateDir, Profile: cfg.Profile}
	if cfg.RestrictToWorkspace != nil {
		cj.RestrictToWorkspace = *cfg.RestrictToWorkspace
	}
	if lj != (limitsJSON{}) {
		cj.Limits = &lj
	}
	pj, err := cfg.Policy.toJSON()
	if err != nil {
		return nil, err
	}
	if !reflect.DeepEqual(pj, policyJSON{}) {
		cj.Policy = &pj
	}
	cj.WasmTools = cfg.WasmTools
	cj.Mode, cj.Session, cj.SessionRefreshMs = cfg.Mode, cfg.Session, cfg.SessionRefreshMs
	if !utf8.ValidString(string(cfg.Mode)) || !utf8.ValidString(cfg.Session) {
		return nil, newError("open", CodeInvalidArguments, "Mode and Session must be valid UTF-8")
	}
	if p := cfg.WasmPolicy; p != nil {
		if p.Timeout < 0 || p.MemoryMB < 0 {
			return nil, newError("open", CodeInvalidArguments, "WasmPolicy: Timeout and MemoryMB must not be negative")
		}
		cj.WasmPolicy = &wasmPolicyJSON{WasmPolicy: *p, TimeoutMS: (p.Timeout + time.Millisecond - 1).Milliseconds()}
	}
	if g := cfg.ModelGateway; g != nil {
		if g.Timeout < 0 {
			return nil, newError("open", CodeInvalidArguments, "ModelGateway: Timeout must not be negative")
		}
		cj.ModelGateway = &modelGatewayJSON{ModelGatewayConfig: *g, TimeoutMS: (g.Timeout + time.Millisecond - 1).Milliseconds()}
	}
	body, err := json.Marshal(cj)
	if err != nil {
		return nil, newError("open", CodeInvalidArguments, "encoding config: %v", err)
	}
	return openJSON(string(body), cfg.Logger)
}

// OpenJSON opens a workspace from the library's configuration JSON, passed
// to wsfs_workspace_open as it is: {"root": ..., "restrict_to_workspace":
// ..., "limits": {...}, "state_dir": ...} (state_dir is Config.StateDir) and
// any key a newer library accepts, so a host that
// reads the configuration from a file (the MCP server's --config) needs no
// change when the library gains one. The library validates it (unknown keys
// and zero limits are CodeInvalidArguments). logger is Config.Logger.
func OpenJSON(configJSON []byte, logger *slog.Logger) (*Workspace, error) {
	if _, err := Version(); err != nil {
		return nil, err
	}
	return openJSON(string(configJSON), logger)
}

func openJSON(configJSON string, logger *slog.Logger) (*Workspace, error) {
	raw, ok := cOpen(configJSON)
	if !ok {
		return nil, newError("open", CodeInvalidArguments, "config contains a NUL byte")
	}
	var data openData
	env, perr := parseEnvelope("open", raw, outputFull, &data)
	if perr != nil {
		return nil, perr
	}
	if !env.OK {
		return nil, env.err("open", nil)
	}
	if data.Workspace == 0 {
		return nil, newError("open", CodeIOError, "malformed wsfs_workspace_open envelope: %s", raw)
	}
	ws := &Workspace{
		handle:   data.Workspace,
		root:     data.Root,
		restrict: data.RestrictToWorkspace,
		limits: Limits{
			MaxReadBytes:     int(data.Limits.MaxReadBytes),
			MaxWriteBytes:    int(data.Limits.MaxWriteBytes),
			MaxListEntries:   int(data.Limits.MaxListEntries),
			OperationTimeout: time.Duration(data.Limits.OperationTimeoutMS) * time.Millisecond,
		},
		policy: Policy{
			WritesEnabled: Bool(data.Policy.WritesEnabled),
			DenyRead:      nonNil(data.Policy.DenyRead),
			DenyWrite:     nonNil(data.Policy.DenyWrite),

			AuditArguments: data.Policy.AuditArguments,
			AllowTools:     data.Policy.AllowTools,
			DenyTools:      nonNil(data.Policy.DenyTools),

			ExecEnabled:        data.Policy.ExecEnabled,
			ShellEnabled:       data.Policy.ShellEnabled,
			ExecRequireSandbox: Bool(data.Policy.ExecRequireSandbox),
			ExecNetwork:        data.Policy.ExecNetwork,
			ExecReadPaths:      nonNil(data.Policy.ExecReadPaths),
			ExecEnvAllow:       nonNil(data.Policy.ExecEnvAllow),
			ExecTimeout:        time.Duration(data.Policy.ExecTimeoutSec) * time.Second,
		},
		warnings: env.Warnings,
		logger:   logger,
		wasm:     data.WasmTools,
	}
	if data.Profile != NativeProfile {
		ws.profile = data.Profile
	}
	if data.Policy.AuditLog != nil {
		ws.policy.AuditLog = *data.Policy.AuditLog
	}
	if ws.logger == nil {
		ws.logger = discardLogger
	}
	ws.mode, ws.session = configMode(configJSON)
	// A workspace that is garbage collected without Close still releases
	// its handle (and the directory descriptor behind it).
	ws.cleanup = runtime.AddCleanup(ws, func(h uint64) { cClose(h) }, ws.handle)
	return ws, nil
}

// Close releases the workspace. It is idempotent: only the first call
// closes, later calls return nil. Calls made after Close fail with
// CodeInvalidWorkspace.
func (ws *Workspace) Close() error {
	if !ws.closed.CompareAndSwap(false, true) {
		return nil
	}
	ws.cleanup.Stop()
	raw := cClose(ws.handle)
	// A call still in flight that reaches a forgotten gateway gets
	// gateway_error (see gatewayByID).
	ws.releaseGateways()
	ws.releaseApprovals()
	env, perr := parseEnvelope("close", raw, outputFull, nil)
	if perr != nil {
		return perr
	}
	if !env.OK {
		return env.err("close", nil)
	}
	return nil
}

// Root returns the absolute, symlink-resolved workspace directory.
func (ws *Workspace) Root() string { return ws.root }

// NativeProfile is the profile of the native tools, the library's default.
const NativeProfile = "wsfs"

// Profile is the profile the workspace serves (Config.Profile):
// NativeProfile for the native tools.
func (ws *Workspace) Profile() string {
	if ws.profile == "" {
		return NativeProfile
	}
	return ws.profile
}

// RestrictToWorkspace reports whether paths are confined to Root.
func (ws *Workspace) RestrictToWorkspace() bool { return ws.restrict }

// Limits returns the effective limits, library defaults filled in.
func (ws *Workspace) Limits() Limits { return ws.limits }

// Policy returns the effective policy, library defaults filled in
// (WritesEnabled and ExecRequireSandbox are never nil, the lists never nil
// but AllowTools, which is nil when every tool is allowed, AuditLog absolute
// with its symlinks resolved, or "" for none, ExecTimeout the wall clock in
// force).
func (ws *Workspace) Policy() Policy {
	p := ws.policy
	p.WritesEnabled = Bool(*p.WritesEnabled)
	p.DenyRead = append([]string{}, p.DenyRead...)
	p.DenyWrite = append([]string{}, p.DenyWrite...)
	if p.AllowTools != nil {
		p.AllowTools = append([]string{}, p.AllowTools...)
	}
	p.DenyTools = append([]string{}, p.DenyTools...)
	p.ExecRequireSandbox = Bool(*p.ExecRequireSandbox)
	p.ExecReadPaths = append([]string{}, p.ExecReadPaths...)
	p.ExecEnvAllow = append([]string{}, p.ExecEnvAllow...)
	return p
}

// Warnings returns the warnings from opening the workspace (for example
// that the root is $HOME or "/").
func (ws *Workspace) Warnings() []string { return append([]string(nil), ws.warnings...) }

// WasmTools returns the names of the Wasm tools the workspace loaded (its
// config's wasm_tools), in the order Workspace.ToolSpecs lists them.
func (ws *Workspace) WasmTools() []string { return append([]string(nil), ws.wasm...) }

// Mode is the workspace's mode: ModeHost or ModeOverlay (Config.Mode, or
// the config JSON's "mode").
func (ws *Workspace) Mode() Mode { return ws.mode }

// Session is the overlay session's name ("default" unless the config names
// one), or "" in host mode.
func (ws *Workspace) Session() string { return ws.session }

// configMode reads the mode and the session's name from a configuration
// the library accepted.
func configMode(configJSON string) (Mode, string) {
	var c struct {
		Mode    Mode   `json:"mode"`
		Session string `json:"session"`
	}
	_ = json.Unmarshal([]byte(configJSON), &c)
	if c.Mode != ModeOverlay {
		return ModeHost, ""
	}
	if c.Session == "" {
		c.Session = "default"
	}
	return ModeOverlay, c.Session
}

// Closed reports whether Close has been called.
func (ws *Workspace) Closed() bool { return ws.closed.Load() }
