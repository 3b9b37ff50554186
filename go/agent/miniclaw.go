package agent

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"charm.land/fantasy"

	wsfs "github.com/wsfs/wsfs/go"
)

// AgentDefaults is MiniClaw's agents.defaults object, as far as the
// fantasy-agent provider uses it. See config/config.example.json in the
// repository for a commented example. Other keys (MiniClaw's own, and the
// example's "_comment..." keys) are ignored here; "tools" and the "wsfs"
// object are checked strictly (see Tools and LimitsConfig).
type AgentDefaults struct {
	// Workspace is the directory the agent's file tools are confined to.
	Workspace string `json:"workspace"`
	// RestrictToWorkspace confines the tools to Workspace; absent means true.
	RestrictToWorkspace *bool `json:"restrict_to_workspace"`
	// MaxToolIterations is how many model steps of one request may call
	// tools; absent or <= 0 means DefaultMaxToolIterations.
	MaxToolIterations int `json:"max_tool_iterations"`
	// Tools names the workspace tools the agent is offered (see
	// RunnerConfig.Tools): absent or null means DefaultTools, MiniClaw's
	// five; ["all"] every tool. Checked when the file is decoded: an
	// unknown name is an error naming it and the known ones, as are a name
	// given twice, "all" next to other names, and an empty list (leave the
	// key out for the default).
	Tools []string `json:"tools"`
	// Provider and Model are MiniClaw's own settings (the provider name,
	// "fantasy-agent", and the model ID); wsfs does not interpret them.
	Provider string `json:"provider"`
	Model    string `json:"model"`
	// WSFS holds the workspace tool limits; absent fields take the library
	// defaults, and 0 or negative values are refused (see LimitsConfig).
	WSFS LimitsConfig `json:"wsfs"`
}

// LimitsConfig is the "wsfs" object of AgentDefaults: Limits in the units
// of the C ABI's configuration, the workspace policy, and the overlay session
// settings (mode, session, session_refresh_ms, state_dir). In the config file
// an absent limit means the library's default and a present one must be at
// least 1: 0 and negative values are refused when the file is decoded, as
// the library refuses them, so writing 0 (perhaps meaning "no limit") never
// silently gets the default. In Go, a zero field means the default, as in
// wsfs.Limits.
//
// Its keys are checked: an unknown one (a typo such as "max_read_byte") is
// an error naming it and the known ones, except keys starting with
// "_comment", which explain the settings next to them. The policy's keys
// are checked the same way, comments included (see PolicyConfig).
type LimitsConfig struct {
	MaxReadBytes       int `json:"max_read_bytes"`
	MaxWriteBytes      int `json:"max_write_bytes"`
	MaxListEntries     int `json:"max_list_entries"`
	OperationTimeoutMS int `json:"operation_timeout_ms"`
	// Policy is the "policy" object (see wsfs.Policy); absent means the
	// library's defaults.
	Policy PolicyConfig `json:"policy"`
	// Mode ("host" or "overlay"), Session, SessionRefreshMs and StateDir are
	// the workspace's (see wsfs.Config): "mode": "overlay" keeps the agent's
	// changes in a session until the host commits them.
	Mode             wsfs.Mode `json:"mode"`
	Session          string    `json:"session"`
	SessionRefreshMs *int      `json:"session_refresh_ms"`
	StateDir         string    `json:"state_dir"`
	// Profile is the workspace's profile (see wsfs.Config.Profile): its
	// tools are then the agent's, and agents.defaults.tools names them.
	Profile string `json:"profile"`
	// WasmTools lists folders of Wasm tools (see wsfs.Config.WasmTools):
	// the agent is offered them next to the built-in tools, and
	// agents.defaults.tools may name them. WasmPolicy is the most any of
	// them may have (see WasmPolicyConfig); absent means the library's
	// defaults.
	WasmTools  []string          `json:"wasm_tools"`
	WasmPolicy *WasmPolicyConfig `json:"wasm_policy"`
	// ModelGateway is the model gateway the library provides to Wasm tools
	// that ask a model (see ModelGatewayConfig); absent means none.
	ModelGateway *ModelGatewayConfig `json:"model_gateway"`
}

// ModelGatewayConfig is wsfs.ModelGatewayConfig with the C ABI's field
// names (the "model_gateway" object of the library's configuration;
// docs/model-gateway.md): {"provider": "ollama", "base_url":
// "http://localhost:11434/v1", "model": "llama3.2", "api_key_env":
// "ANTHROPIC_API_KEY", "timeout_ms": 60000, "max_retries": 2}. Its keys
// are checked strictly; the library checks the values when the workspace
// opens. The key itself is never in the file: api_key_env names the
// environment variable that holds it.
type ModelGatewayConfig struct {
	Provider   string `json:"provider"`
	BaseURL    string `json:"base_url"`
	APIKeyEnv  string `json:"api_key_env"`
	Model      string `json:"model"`
	TimeoutMS  int64  `json:"timeout_ms"`
	MaxRetries *int   `json:"max_retries"`
}

var modelGatewayKeys = []string{"provider", "base_url", "api_key_env", "model", "timeout_ms", "max_retries"}

// UnmarshalJSON decodes the "model_gateway" object, refusing unknown keys
// and a timeout below 1.
func (c *ModelGatewayConfig) UnmarshalJSON(b []byte) error {
	if err := checkKeys(b, "agents.defaults.wsfs.model_gateway", modelGatewayKeys, false); err != nil {
		return err
	}
	type plain ModelGatewayConfig // without this method
	var out plain
	if err := json.Unmarshal(b, &out); err != nil {
		return fmt.Errorf("agents.defaults.wsfs.model_gateway: %w", err)
	}
	var present map[string]json.RawMessage
	_ = json.Unmarshal(b, &present) // an object: json.Unmarshal above accepted it
	if _, ok := present["timeout_ms"]; ok && out.TimeoutMS < 1 {
		return fmt.Errorf("agents.defaults.wsfs.model_gateway.timeout_ms is %d: a limit must be at least 1 (leave the key out for the default)", out.TimeoutMS)
	}
	*c = ModelGatewayConfig(out)
	return nil
}

// ModelGateway converts c to wsfs.ModelGatewayConfig; nil gives nil (no
// configured gateway).
func (c *ModelGatewayConfig) ModelGateway() *wsfs.ModelGatewayConfig {
	if c == nil {
		return nil
	}
	return &wsfs.ModelGatewayConfig{Provider: c.Provider, BaseURL: c.BaseURL, APIKeyEnv: c.APIKeyEnv,
		Model: c.Model, Timeout: time.Duration(c.TimeoutMS) * time.Millisecond, MaxRetries: c.MaxRetries}
}

// WasmPolicyConfig is wsfs.WasmPolicy with the C ABI's field names (the
// "wasm_policy" object of the library's configuration): {"timeout_ms":
// 30000, "memory_mb": 64, "fuel": ..., "allow_direct_network": false,
// "allow_model_access": true, "filesystem": "write", "allowed_env": [],
// "engine": "wasmi"}. Absent keys take the library's defaults; its keys
// are checked strictly, as the policy's are.
type WasmPolicyConfig struct {
	TimeoutMS          int64    `json:"timeout_ms"`
	MemoryMB           int      `json:"memory_mb"`
	Fuel               uint64   `json:"fuel"`
	AllowDirectNetwork bool     `json:"allow_direct_network"`
	AllowModelAccess   *bool    `json:"allow_model_access"`
	Filesystem         string   `json:"filesystem"`
	AllowedEnv         []string `json:"allowed_env"`
	Engine             string   `json:"engine"`
}

var wasmPolicyKeys = []string{"timeout_ms", "memory_mb", "fuel", "allow_direct_network",
	"allow_model_access", "filesystem", "allowed_env", "engine"}

// UnmarshalJSON decodes the "wasm_policy" object, refusing unknown keys
// and negative or zero limits.
func (c *WasmPolicyConfig) UnmarshalJSON(b []byte) error {
	if err := checkKeys(b, "agents.defaults.wsfs.wasm_policy", wasmPolicyKeys, false); err != nil {
		return err
	}
	type plain WasmPolicyConfig // without this method
	var out plain
	if err := json.Unmarshal(b, &out); err != nil {
		return fmt.Errorf("agents.defaults.wsfs.wasm_policy: %w", err)
	}
	var present map[string]json.RawMessage
	_ = json.Unmarshal(b, &present) // an object: json.Unmarshal above accepted it
	for key, value := range map[string]int64{"timeout_ms": out.TimeoutMS, "memory_mb": int64(out.MemoryMB)} {
		if _, ok := present[key]; ok && value < 1 {
			return fmt.Errorf("agents.defaults.wsfs.wasm_policy.%s is %d: a limit must be at least 1 (leave the key out for the default)", key, value)
		}
	}
	if _, ok := present["fuel"]; ok && out.Fuel == 0 {
		return fmt.Errorf("agents.defaults.wsfs.wasm_policy.fuel is 0: a limit must be at least 1 (leave the key out for the default)")
	}
	*c = WasmPolicyConfig(out)
	return nil
}

// WasmPolicy converts c to wsfs.WasmPolicy; nil gives nil (the library's
// defaults).
func (c *WasmPolicyConfig) WasmPolicy() *wsfs.WasmPolicy {
	if c == nil {
		return nil
	}
	return &wsfs.WasmPolicy{
		Timeout:            time.Duration(c.TimeoutMS) * time.Millisecond,
		MemoryMB:           c.MemoryMB,
		Fuel:               c.Fuel,
		AllowDirectNetwork: c.AllowDirectNetwork,
		AllowModelAccess:   c.AllowModelAccess,
		Filesystem:         c.Filesystem,
		AllowedEnv:         c.AllowedEnv,
		Engine:             c.Engine,
	}
}

// PolicyConfig is wsfs.Policy with the C ABI's field names, as MiniClaw's config
// file spells them: {"writes_enabled": false, "deny_read": [".env"],
// "deny_write": [".git/**"], "audit_log": "~/.miniclaw/audit.jsonl"}. An
// absent deny_write keeps the default [".git/**"]; [] means no rules.
//
// Its keys are checked strictly, as the library checks its own
// configuration's: an unknown key (a comment, or a typo such as
// "deny_reads", which would otherwise silently drop a deny rule) is an
// error naming it and the known ones.
type PolicyConfig struct {
	WritesEnabled  *bool    `json:"writes_enabled"`
	DenyRead       []string `json:"deny_read"`
	DenyWrite      []string `json:"deny_write"`
	AuditLog       string   `json:"audit_log"`
	AuditArguments bool     `json:"audit_arguments"`
	// AllowTools (when present) and DenyTools name tools as the workspace
	// offers them (see wsfs.Policy).
	AllowTools []string `json:"allow_tools"`
	DenyTools  []string `json:"deny_tools"`

	// The developer tools' switches (see wsfs.Policy): exec_timeout_sec is
	// whole seconds.
	ExecEnabled        bool     `json:"exec_enabled"`
	ShellEnabled       bool     `json:"shell_enabled"`
	ExecRequireSandbox *bool    `json:"exec_require_sandbox"`
	ExecNetwork        bool     `json:"exec_network"`
	ExecReadPaths      []string `json:"exec_read_paths"`
	ExecEnvAllow       []string `json:"exec_env_allow"`
	ExecTimeoutSec     int      `json:"exec_timeout_sec"`
	// SafeShellRules is the absolute path of a safe_shell rules file (see
	// wsfs.Policy.SafeShellRules).
	SafeShellRules string `json:"safe_shell_rules"`
}

// UnmarshalJSON decodes agents.defaults, checking "tools" (see Tools).
func (d *AgentDefaults) UnmarshalJSON(b []byte) error {
	var probe struct {
		Tools json.RawMessage `json:"tools"`
		WSFS  struct {
			Profile   string   `json:"profile"`
			WasmTools []string `json:"wasm_tools"`
		} `json:"wsfs"`
	}
	if err := json.Unmarshal(b, &probe); err == nil && len(probe.Tools) > 0 {
		var names []string
		if json.Unmarshal(probe.Tools, &names) != nil {
			return fmt.Errorf("agents.defaults.tools must be a list of tool names, such as [%q, %q] or [%q]; got %s",
				wsfs.ToolReadFile, wsfs.ToolListDir, AllTools, probe.Tools)
		}
		if names != nil && len(names) == 0 {
			return fmt.Errorf("agents.defaults.tools is empty: leave the key out for the default tools (%s), or name the tools",
				strings.Join(DefaultTools, ", "))
		}
		// Under a profile the names are the profile's, and Wasm tools are
		// named in their manifests: both are checked when the workspace is
		// open; here only the list's shape.
		known := wsfs.ToolNames
		if p := probe.WSFS.Profile; (p != "" && p != wsfs.NativeProfile) || len(probe.WSFS.WasmTools) > 0 {
			known = nil
		}
		if err := checkToolsIn("agents.defaults.tools", names, known); err != nil {
			return err
		}
	}
	type plain AgentDefaults // without this method
	return json.Unmarshal(b, (*plain)(d))
}

// Policy converts c to wsfs.Policy.
func (c PolicyConfig) Policy() wsfs.Policy {
	return wsfs.Policy{
		WritesEnabled:  c.WritesEnabled,
		DenyRead:       c.DenyRead,
		DenyWrite:      c.DenyWrite,
		AuditLog:       c.AuditLog,
		AuditArguments: c.AuditArguments,
		AllowTools:     c.AllowTools,
		DenyTools:      c.DenyTools,

		ExecEnabled:        c.ExecEnabled,
		ShellEnabled:       c.ShellEnabled,
		ExecRequireSandbox: c.ExecRequireSandbox,
		ExecNetwork:        c.ExecNetwork,
		ExecReadPaths:      c.ExecReadPaths,
		ExecEnvAllow:       c.ExecEnvAllow,
		ExecTimeout:        time.Duration(c.ExecTimeoutSec) * time.Second,
		SafeShellRules:     c.SafeShellRules,
	}
}

// UnmarshalJSON decodes the "policy" object, refusing unknown keys.
func (c *PolicyConfig) UnmarshalJSON(b []byte) error {
	if err := checkKeys(b, "agents.defaults.wsfs.policy", policyKeys, false); err != nil {
		return err
	}
	type plain PolicyConfig // without this method
	return json.Unmarshal(b, (*plain)(c))
}

var policyKeys = []string{"writes_enabled", "deny_read", "deny_write", "audit_log",
	"audit_arguments", "allow_tools", "deny_tools",
	"exec_enabled", "shell_enabled", "exec_require_sandbox", "exec_network", "exec_read_paths",
	"exec_env_allow", "exec_timeout_sec", "safe_shell_rules"}

var limitsKeys = []string{"max_read_bytes", "max_write_bytes", "max_list_entries", "operation_timeout_ms", "policy",
	"mode", "session", "session_refresh_ms", "state_dir", "profile", "wasm_tools", "wasm_policy", "model_gateway"}

// checkKeys returns an error naming the keys of the JSON object b that are
// not known (exactly; encoding/json would also take them in another case),
// and the known ones. With comments, keys starting with "_comment" are
// allowed. Anything but an object is left to the decoding that follows.
func checkKeys(b []byte, where string, known []string, comments bool) error {
	var obj map[string]json.RawMessage
	if json.Unmarshal(b, &obj) != nil {
		return nil
	}
	var unknown []string
	for key := range obj {
		if !slices.Contains(known, key) && !(comments && strings.HasPrefix(key, "_comment")) {
			unknown = append(unknown, strconv.Quote(key))
		}
	}
	if len(unknown) == 0 {
		return nil
	}
	slices.Sort(unknown)
	what := "unknown key"
	if len(unknown) > 1 {
		what = "unknown keys"
	}
	return fmt.Errorf("%s: %s %s; the known keys are %s", where, what, strings.Join(unknown, ", "), strings.Join(known, ", "))
}

// UnmarshalJSON decodes the "wsfs" object, refusing unknown keys and limits
// below 1.
func (c *LimitsConfig) UnmarshalJSON(b []byte) error {
	if err := checkKeys(b, "agents.defaults.wsfs", limitsKeys, true); err != nil {
		return err
	}
	var raw struct {
		MaxReadBytes       *int                `json:"max_read_bytes"`
		MaxWriteBytes      *int                `json:"max_write_bytes"`
		MaxListEntries     *int                `json:"max_list_entries"`
		OperationTimeoutMS *int                `json:"operation_timeout_ms"`
		Policy             PolicyConfig        `json:"policy"`
		Mode               wsfs.Mode           `json:"mode"`
		Session            string              `json:"session"`
		SessionRefreshMs   *int                `json:"session_refresh_ms"`
		StateDir           string              `json:"state_dir"`
		Profile            string              `json:"profile"`
		WasmTools          []string            `json:"wasm_tools"`
		WasmPolicy         *WasmPolicyConfig   `json:"wasm_policy"`
		ModelGateway       *ModelGatewayConfig `json:"model_gateway"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	if raw.Mode != "" && raw.Mode != wsfs.ModeHost && raw.Mode != wsfs.ModeOverlay {
		return fmt.Errorf("agents.defaults.wsfs.mode is %q; it is %q (the default) or %q", raw.Mode, wsfs.ModeHost, wsfs.ModeOverlay)
	}
	out := LimitsConfig{Policy: raw.Policy, Mode: raw.Mode, Session: raw.Session,
		SessionRefreshMs: raw.SessionRefreshMs, StateDir: raw.StateDir, Profile: raw.Profile,
		WasmTools: raw.WasmTools, WasmPolicy: raw.WasmPolicy, ModelGateway: raw.ModelGateway}
	for _, f := range []struct {
		key  string
		from *int
		to   *int
	}{
		{"max_read_bytes", raw.MaxReadBytes, &out.MaxReadBytes},
		{"max_write_bytes", raw.MaxWriteBytes, &out.MaxWriteBytes},
		{"max_list_entries", raw.MaxListEntries, &out.MaxListEntries},
		{"operation_timeout_ms", raw.OperationTimeoutMS, &out.OperationTimeoutMS},
	} {
		if f.from == nil {
			continue
		}
		if *f.from < 1 {
			return fmt.Errorf("agents.defaults.wsfs.%s is %d: a limit must be at least 1 (leave the key out for the default)", f.key, *f.from)
		}
		*f.to = *f.from
	}
	*c = out
	return nil
}

// Limits converts c to wsfs.Limits.
func (c LimitsConfig) Limits() wsfs.Limits {
	return wsfs.Limits{
		MaxReadBytes:     c.MaxReadBytes,
		MaxWriteBytes:    c.MaxWriteBytes,
		MaxListEntries:   c.MaxListEntries,
		OperationTimeout: time.Duration(c.OperationTimeoutMS) * time.Millisecond,
	}
}

// RunnerConfig returns a RunnerConfig with the workspace settings of d and
// the given model. Set the remaining fields (SystemPrompt, Logger, ...) on
// the result.
func (d AgentDefaults) RunnerConfig(model fantasy.LanguageModel) RunnerConfig {
	return RunnerConfig{
		Workspace:           d.Workspace,
		RestrictToWorkspace: d.RestrictToWorkspace,
		MaxToolIterations:   d.MaxToolIterations,
		Tools:               d.Tools,
		Limits:              d.WSFS.Limits(),
		Policy:              d.WSFS.Policy.Policy(),
		Mode:                d.WSFS.Mode,
		Session:             d.WSFS.Session,
		SessionRefreshMs:    d.WSFS.SessionRefreshMs,
		StateDir:            d.WSFS.StateDir,
		Profile:             d.WSFS.Profile,
		WasmTools:           d.WSFS.WasmTools,
		WasmPolicy:          d.WSFS.WasmPolicy.WasmPolicy(),
		ModelGateway:        d.WSFS.ModelGateway.ModelGateway(),
		Model:               model,
	}
}

// ParseAgentDefaults decodes agents.defaults from a MiniClaw config file's
// JSON.
func ParseAgentDefaults(configJSON []byte) (AgentDefaults, error) {
	var cfg struct {
		Agents struct {
			Defaults AgentDefaults `json:"defaults"`
		} `json:"agents"`
	}
	if err := json.Unmarshal(configJSON, &cfg); err != nil {
		return AgentDefaults{}, fmt.Errorf("wsfs: MiniClaw config: %w", err)
	}
	return cfg.Agents.Defaults, nil
}

// LoadAgentDefaults reads a MiniClaw config file and returns its
// agents.defaults.
func LoadAgentDefaults(path string) (AgentDefaults, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return AgentDefaults{}, err
	}
	return ParseAgentDefaults(b)
}
