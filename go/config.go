package wsfs

import (
	"log/slog"
	"strings"
	"time"
	"unicode/utf8"
)

// Limits bounds every call on a workspace. A zero field means "use the
// library's default" (shown in parentheses); negative values are
// invalid_arguments. The library also enforces upper ceilings (1 GiB for the
// byte limits, 1,000,000 entries, 24 hours).
type Limits struct {
	// MaxReadBytes is the most read_file returns (256 KiB); longer files are
	// cut at a UTF-8 boundary and flagged as truncated.
	MaxReadBytes int
	// MaxWriteBytes is the largest content write_file, append_file and
	// edit_file accept, and the largest file edit_file works on (1 MiB).
	MaxWriteBytes int
	// MaxListEntries is the most entries list_dir returns (500).
	MaxListEntries int
	// OperationTimeout bounds each call (10s); it is rounded up to whole
	// milliseconds. A context deadline or a per-tool timeout can only
	// shorten it.
	OperationTimeout time.Duration
}

// Config configures Open.
type Config struct {
	// Root is the workspace directory. It is trimmed, a leading "~" is
	// expanded to $HOME, it is made absolute against the current directory,
	// and its symlinks are resolved once, at Open. Every tool path is
	// resolved beneath it by the kernel. A Root that does not exist fails
	// Open with CodePathNotFound naming it, unless CreateRoot is set.
	Root string
	// CreateRoot makes a missing Root, with its parents, at Open (the
	// library's create_root). Off by default, so a typo'd Root is refused
	// rather than turned into an empty workspace; agent.NewRunner sets it
	// (MiniClaw makes its default workspace).
	CreateRoot bool
	// RestrictToWorkspace confines every path to Root (MiniClaw's
	// restrict_to_workspace). nil means true; set it to Bool(false) only if
	// you really want the agent to reach the whole filesystem.
	RestrictToWorkspace *bool
	// Limits bounds every call; zero fields take the library defaults.
	Limits Limits
	// StateDir is where the library keeps the journals of multi-file
	// apply_patch commits. It must lie outside Root. Empty means the
	// library's default, $XDG_STATE_HOME/wsfs or ~/.local/state/wsfs.
	StateDir string
	// Policy says what the agent may read and change, and where every call
	// is logged. The zero value is the library's default: writes enabled,
	// nothing denied to reading, ".git/**" denied to changes, no audit log.
	Policy Policy
	// Profile serves the tools as one host expects them (docs/profiles.md): "miniclaw", "filesystem-tool", "agent-base",
	// "capability-plan"; "" or "wsfs" means the native tools. On a
	// workspace with a profile every call takes the profile's tool and
	// argument names and returns the profile's envelope: use
	// Workspace.CallRaw and Workspace.ToolSpecs (the typed methods and
	// CallForModel return the native results and refuse such a workspace).
	// An unknown name is CodeInvalidArguments listing the known ones.
	Profile string
	// Logger receives one record per tool call (tool, workspace-relative
	// path, outcome code, duration). Never file contents. nil discards.
	Logger *slog.Logger
	// WasmTools lists folders of Wasm tools (host paths): each a tool
	// folder (manifest.json beside module.wasm or module.wat) or a folder of
	// them. They are loaded at Open (a tool that does not load fails it with
	// CodeManifestInvalid, CodeModuleMismatch or CodeCapabilityDenied) and
	// called by name like the built-in tools (Workspace.ToolSpecs lists
	// them). See docs/TOOL_AUTHORING.md.
	WasmTools []string
	// WasmPolicy is the most any Wasm tool may have; nil takes the
	// library's defaults (30 s, 64 MiB, no direct network, model access and
	// the workspace allowed).
	WasmPolicy *WasmPolicy
	// ModelGateway configures the model gateway the library itself provides
	// to Wasm tools with model_access (docs/model-gateway.md); a gateway set
	// with Workspace.SetModelGateway takes precedence. nil: none (or the
	// MODEL_* variables, through ApplyToolEnv).
	ModelGateway *ModelGatewayConfig
	// Mode is where the tools' changes go: ModeHost ("" means host) changes
	// Root in place; ModeOverlay makes Root the read-only base of an overlay
	// session: every tool sees base + session, and nothing in Root changes
	// until Workspace.SessionCommit (docs/sessions.md). Overlay mode
	// needs RestrictToWorkspace (nil or true) and StateDir outside Root (or
	// the default), where the session is kept.
	Mode Mode
	// Session is the overlay session's name ("" means "default"): opening
	// the same name again continues it, and sessions of one base never see
	// each other. Overlay mode only (CodeInvalidArguments in host mode).
	Session string
	// SessionRefreshMs: overlay mode, a view older than this many
	// milliseconds is mounted afresh by the next call that starts while no
	// other runs, so changes made to the base outside the session show. nil
	// means the library's default (1000); Int(0) means before every such
	// call. Overlay mode only.
	SessionRefreshMs *int
}

// Mode is a workspace's mode (Config.Mode).
type Mode string

const (
	// ModeHost: the tools change the workspace root in place (the default).
	ModeHost Mode = "host"
	// ModeOverlay: the tools change an overlay session over the root, which
	// stays unchanged until a commit.
	ModeOverlay Mode = "overlay"
)

// WasmPolicy is the host's ceiling for the Wasm tools of a workspace (the
// "wasm_policy" object of the C ABI's config). Zero fields take the
// library's defaults.
type WasmPolicy struct {
	// Timeout is the longest run (TOOL_TIMEOUT_SECS); whole milliseconds.
	Timeout time.Duration `json:"-"`
	// MemoryMB is the most linear memory (TOOL_MEMORY_MB).
	MemoryMB int `json:"memory_mb,omitempty"`
	// Fuel is the most fuel (instructions, roughly) one run may use.
	Fuel uint64 `json:"fuel,omitempty"`
	// AllowDirectNetwork lets tools with the network capability reach
	// their allowed_hosts (TOOL_ALLOW_DIRECT_NETWORK); off by default.
	AllowDirectNetwork bool `json:"allow_direct_network,omitempty"`
	// AllowModelAccess: nil means true (tools may ask for model_access).
	AllowModelAccess *bool `json:"allow_model_access,omitempty"`
	// Filesystem is the most workspace access a tool may ask for: "none",
	// "read" or "write" ("" means "write"; the workspace policy applies on
	// top).
	Filesystem string `json:"filesystem,omitempty"`
	// AllowedEnv names the host environment variables a tool may ask for.
	AllowedEnv []string `json:"allowed_env,omitempty"`
	// Engine runs the tools: "wasmi" ("" means wasmi; an interpreter) or
	// "wasmtime" (a JIT, only in a library built with the cargo feature
	// wasmtime; otherwise the open fails with CodeFeatureNotBuilt).
	Engine string `json:"engine,omitempty"`
}

// ModelGatewayConfig is the "model_gateway" object of the C ABI's config:
// the provider the library calls for a tool's model_generate when the host
// set no gateway callback. The library checks it at Open
// (CodeInvalidArguments naming the field; CodeFeatureNotBuilt in a library
// built without the cargo feature model-gateway-http).
type ModelGatewayConfig struct {
	// Provider is "openai-compatible", "anthropic" or "ollama"
	// (MODEL_PROVIDER).
	Provider string `json:"provider"`
	// BaseURL is where the API is (MODEL_BASE_URL): https://, or http:// to
	// a loopback host. "" takes the provider's default (anthropic:
	// https://api.anthropic.com; ollama: http://localhost:11434/v1).
	BaseURL string `json:"base_url,omitempty"`
	// APIKeyEnv names the environment variable that holds the API key
	// (MODEL_API_KEY_ENV); "" sends none. Never the key itself.
	APIKeyEnv string `json:"api_key_env,omitempty"`
	// Model is the provider's model name (MODEL_NAME).
	Model string `json:"model"`
	// Timeout bounds one model call, retries included (MODEL_TIMEOUT_SECS);
	// whole milliseconds, 0 takes the default (60 s).
	Timeout time.Duration `json:"-"`
	// MaxRetries is how often a 429, 5xx or failed connection is retried
	// (nil: 2; at most 10).
	MaxRetries *int `json:"max_retries,omitempty"`
}

type modelGatewayJSON struct {
	ModelGatewayConfig
	TimeoutMS int64 `json:"timeout_ms,omitempty"`
}

type wasmPolicyJSON struct {
	WasmPolicy
	TimeoutMS int64 `json:"timeout_ms,omitempty"`
}

// Policy is the workspace policy, the host's say over the tools (the
// "policy" object of the C ABI's config; docs/security.md, "Policy and audit log" has
// the details).
type Policy struct {
	// WritesEnabled: nil means true, or the profile's default (agent-base:
	// false, as its design says). Bool(false) makes the workspace
	// read-only: every tool that is not read-only (see ToolSpec.ReadOnly)
	// fails with CodeWritesDisabled before it runs; reading tools work.
	WritesEnabled *bool
	// DenyRead lists gitignore-style globs (".env", "**/*.pem",
	// "secrets/") of workspace-relative paths that no tool may read, list
	// or walk into. They are matched on the path as resolved by the kernel,
	// so symlinks and ".." do not get around them; a pattern naming a
	// directory denies everything under it. Refusals are CodePolicyDenied;
	// listings leave denied entries out and count them.
	DenyRead []string
	// DenyWrite lists the globs of paths no tool may change. nil means the
	// library's default, [".git/**"] (agents read a repository's history
	// but cannot rewrite it); a non-nil empty slice means no rules.
	DenyWrite []string
	// AuditLog, if not "", is the file that gets one JSON line per call
	// (time, tool, paths, outcome, bytes, duration, sha256 of each changed
	// file before and after; never contents), fsynced before the call
	// returns. "~" is expanded and a relative path is taken from the
	// current directory, as for Root. If it lies inside the workspace, no
	// tool can reach or list it.
	AuditLog string
	// AuditArguments makes each audit line record the call's arguments as
	// well, every argument that carries file content (content, old_text,
	// new_text, patch, diff_text, replace_with, expected_text,
	// replacement_text, query, command) replaced by
	// {"length", "sha256"}: enough to replay or debug a call, never its
	// contents. It needs AuditLog (CodeInvalidArguments at Open otherwise).
	AuditArguments bool
	// AllowTools, if non-nil, are the only tools the workspace offers
	// (Workspace.ToolSpecs) and runs, by the names it offers them under (its
	// profile's); any other tool is refused with CodePolicyDenied. nil
	// means every tool; a non-nil empty slice allows none.
	AllowTools []string
	// DenyTools are tools the workspace neither offers nor runs
	// (CodePolicyDenied), by the same names. Refusals are audited.
	DenyTools []string
	// ExecEnabled turns on the developer tools (workspace_info, git_status,
	// git_diff, git_commit, run_tests, run_lint, typecheck, safe_shell),
	// which run programs in the workspace under a kernel sandbox (docs/devtools.md). Off, they fail with
	// CodeExecDisabled. It cannot be combined with DenyRead rules, DenyWrite
	// rules other than ".git/**", or an AuditLog inside the workspace:
	// programs could not honour them (CodeInvalidArguments at Open).
	ExecEnabled bool
	// ShellEnabled turns on the raw shell tool as well (needs ExecEnabled).
	ShellEnabled bool
	// ExecRequireSandbox: nil means true: a program is refused with
	// CodeSandboxUnavailable where Landlock cannot be applied. Bool(false)
	// runs it unconfined there (results say "sandbox": "none").
	ExecRequireSandbox *bool
	// ExecNetwork lets programs use the network (default: no TCP connect or
	// bind, no other sockets).
	ExecNetwork bool
	// ExecReadPaths are absolute directories programs may read and execute
	// besides the system's: toolchain homes such as ~/.cargo or /opt/go.
	// The word "auto" (alone or with directories) adds, read and execute
	// only, the toolchains the library finds on the host's PATH when the
	// workspace opens: a pyenv version (pyenv's root for its shims), a
	// virtualenv and the Python it links to, nvm's node version, ~/.cargo
	// and ~/.rustup, or the prefix above another bin/ directory (never the
	// home directory or ~/.local whole: only their bin/). workspace_info's
	// unreadable_toolchains lists those programs cannot read, each with the
	// entry to add.
	ExecReadPaths []string
	// ExecEnvAllow names host environment variables programs get besides
	// PATH, HOME and LANG (a trailing "*" makes a prefix).
	ExecEnvAllow []string
	// ExecTimeout is a program's wall-clock limit, in whole seconds (rounded
	// up); 0 means the library's default, 60 s. A tool's timeout_sec may
	// only shorten it. The developer tools are bounded by it instead of
	// Limits.OperationTimeout; a context deadline still shortens either.
	ExecTimeout time.Duration
	// SafeShellRules is the absolute path of the host's safe_shell rules
	// file (config/safe_shell_policy.toml's format), read and checked against
	// its own examples when the workspace opens; "" means the shipped rules.
	SafeShellRules string
}

// Bool returns a pointer to v, for Config.RestrictToWorkspace and
// agent.RunnerConfig.RestrictToWorkspace.
func Bool(v bool) *bool { return &v }

// Int returns a pointer to v, for Config.SessionRefreshMs.
func Int(v int) *int { return &v }

type limitsJSON struct {
	MaxReadBytes       int64 `json:"max_read_bytes,omitempty"`
	MaxWriteBytes      int64 `json:"max_write_bytes,omitempty"`
	MaxListEntries     int64 `json:"max_list_entries,omitempty"`
	OperationTimeoutMS int64 `json:"operation_timeout_ms,omitempty"`
}

type configJSON struct {
	Root                string            `json:"root"`
	CreateRoot          bool              `json:"create_root,omitempty"`
	RestrictToWorkspace bool              `json:"restrict_to_workspace"`
	Limits              *limitsJSON       `json:"limits,omitempty"`
	StateDir            string            `json:"state_dir,omitempty"`
	Policy              *policyJSON       `json:"policy,omitempty"`
	Profile             string            `json:"profile,omitempty"`
	WasmTools           []string          `json:"wasm_tools,omitempty"`
	WasmPolicy          *wasmPolicyJSON   `json:"wasm_policy,omitempty"`
	ModelGateway        *modelGatewayJSON `json:"model_gateway,omitempty"`
	Mode                Mode              `json:"mode,omitempty"`
	Session             string            `json:"session,omitempty"`
	SessionRefreshMs    *int              `json:"session_refresh_ms,omitempty"`
}

// policyJSON is Policy in the C ABI's config: absent fields take the
// library's defaults, so nil DenyWrite (the default) and an empty one (no
// rules) stay apart.
type policyJSON struct {
	WritesEnabled *bool     `json:"writes_enabled,omitempty"`
	DenyRead      []string  `json:"deny_read,omitempty"`
	DenyWrite     *[]string `json:"deny_write,omitempty"`
	AuditLog      string    `json:"audit_log,omitempty"`

	AuditArguments bool      `json:"audit_arguments,omitempty"`
	AllowTools     *[]string `json:"allow_tools,omitempty"`
	DenyTools      []string  `json:"deny_tools,omitempty"`

	ExecEnabled        bool     `json:"exec_enabled,omitempty"`
	ShellEnabled       bool     `json:"shell_enabled,omitempty"`
	ExecRequireSandbox *bool    `json:"exec_require_sandbox,omitempty"`
	ExecNetwork        bool     `json:"exec_network,omitempty"`
	ExecReadPaths      []string `json:"exec_read_paths,omitempty"`
	ExecEnvAllow       []string `json:"exec_env_allow,omitempty"`
	ExecTimeoutSec     int64    `json:"exec_timeout_sec,omitempty"`
	SafeShellRules     string   `json:"safe_shell_rules,omitempty"`
}

func (l Limits) toJSON() (limitsJSON, error) {
	for _, f := range []struct {
		name string
		v    int64
	}{
		{"MaxReadBytes", int64(l.MaxReadBytes)},
		{"MaxWriteBytes", int64(l.MaxWriteBytes)},
		{"MaxListEntries", int64(l.MaxListEntries)},
		{"OperationTimeout", int64(l.OperationTimeout)},
	} {
		if f.v < 0 {
			return limitsJSON{}, newError("open", CodeInvalidArguments, "Limits.%s must not be negative, got %d", f.name, f.v)
		}
	}
	return limitsJSON{
		MaxReadBytes:       int64(l.MaxReadBytes),
		MaxWriteBytes:      int64(l.MaxWriteBytes),
		MaxListEntries:     int64(l.MaxListEntries),
		OperationTimeoutMS: ceilMillis(l.OperationTimeout),
	}, nil
}

// toJSON checks the policy's strings (JSON encoding would silently replace
// invalid UTF-8) and maps it to the config's JSON.
func (p Policy) toJSON() (policyJSON, error) {
	if p.ExecTimeout < 0 {
		return policyJSON{}, newError("open", CodeInvalidArguments, "Policy.ExecTimeout must not be negative, got %v", p.ExecTimeout)
	}
	for _, list := range [][]string{p.DenyRead, p.DenyWrite, {p.AuditLog}, p.AllowTools, p.DenyTools, p.ExecReadPaths, p.ExecEnvAllow, {p.SafeShellRules}} {
		for _, s := range list {
			if !utf8.ValidString(s) || strings.IndexByte(s, 0) >= 0 {
				return policyJSON{}, newError("open", CodeInvalidArguments, "Policy has a string that is not valid UTF-8 or contains a NUL byte: %q", s)
			}
		}
	}
	pj := policyJSON{
		WritesEnabled: p.WritesEnabled, DenyRead: p.DenyRead, AuditLog: p.AuditLog,
		AuditArguments: p.AuditArguments, DenyTools: p.DenyTools,
		ExecEnabled: p.ExecEnabled, ShellEnabled: p.ShellEnabled,
		ExecRequireSandbox: p.ExecRequireSandbox, ExecNetwork: p.ExecNetwork,
		ExecReadPaths: p.ExecReadPaths, ExecEnvAllow: p.ExecEnvAllow,
		ExecTimeoutSec: int64((p.ExecTimeout + time.Second - 1) / time.Second),
		SafeShellRules: p.SafeShellRules,
	}
	if p.DenyWrite != nil {
		pj.DenyWrite = &p.DenyWrite
	}
	if p.AllowTools != nil {
		pj.AllowTools = &p.AllowTools
	}
	return pj, nil
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// ceilMillis rounds d up to whole milliseconds (0 stays 0).
func ceilMillis(d time.Duration) int64 {
	if d <= 0 {
		return 0
	}
	return int64((d + time.Millisecond - 1) / time.Millisecond)
}
