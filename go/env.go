package wsfs

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// The environment variables of the sandboxed-tools configuration (see
// .env.example), read by ApplyToolEnv: the CLI and the MCP server apply them
// to their workspace configuration, and a Go host may too.
const (
	// EnvToolRuntime: "builtin" serves only the built-in tools (the
	// config's wasm_tools are left out); "wasm" requires wasm_tools; unset
	// lets the config decide.
	EnvToolRuntime = "TOOL_RUNTIME"
	// EnvToolTimeoutSecs: wasm_policy.timeout_ms, in seconds (decimals
	// allowed).
	EnvToolTimeoutSecs = "TOOL_TIMEOUT_SECS"
	// EnvToolMemoryMB: wasm_policy.memory_mb.
	EnvToolMemoryMB = "TOOL_MEMORY_MB"
	// EnvToolAllowDirectNetwork: wasm_policy.allow_direct_network
	// ("true"/"false", "1"/"0"); false by default.
	EnvToolAllowDirectNetwork = "TOOL_ALLOW_DIRECT_NETWORK"
	// EnvWorkspaceFSMode: the config's "mode": "host" (the tools change
	// the root in place; the config's session keys are dropped) or
	// "overlay" (an overlay session over the root; docs/sessions.md). "agentfs" is refused until that backend exists.
	EnvWorkspaceFSMode = "WORKSPACE_FS_MODE"
	// EnvWorkspaceFSSession: the config's "session", the overlay
	// session's name; it needs overlay mode (by the config or
	// WORKSPACE_FS_MODE).
	EnvWorkspaceFSSession = "WORKSPACE_FS_SESSION"
	// EnvModelProvider: model_gateway.provider, the gateway the library
	// provides to Wasm tools with model_access when the host sets no
	// callback: "openai-compatible", "anthropic" or "ollama"
	// (docs/model-gateway.md).
	EnvModelProvider = "MODEL_PROVIDER"
	// EnvModelBaseURL: model_gateway.base_url (https://, or http:// to a
	// loopback host).
	EnvModelBaseURL = "MODEL_BASE_URL"
	// EnvModelAPIKeyEnv: model_gateway.api_key_env, the NAME of the
	// variable that holds the API key (never the key).
	EnvModelAPIKeyEnv = "MODEL_API_KEY_ENV"
	// EnvModelTimeoutSecs: model_gateway.timeout_ms, in seconds (decimals
	// allowed).
	EnvModelTimeoutSecs = "MODEL_TIMEOUT_SECS"
	// EnvModelName: model_gateway.model.
	EnvModelName = "MODEL_NAME"
)

// ApplyToolEnv returns the library configuration configJSON (one JSON
// object) with the sandboxed-tools environment variables applied, looked up
// with lookup (os.LookupEnv). A variable that is set overrides the
// configuration's field; an empty one counts as unset. A value that is not
// valid is an *Error with CodeInvalidArguments naming the variable.
func ApplyToolEnv(configJSON []byte, lookup func(string) (string, bool)) ([]byte, error) {
	var cfg map[string]json.RawMessage
	if err := json.Unmarshal(configJSON, &cfg); err != nil || cfg == nil {
		return nil, newError("config", CodeInvalidArguments, "the configuration must be one JSON object")
	}
	get := func(name string) (string, bool) {
		v, ok := lookup(name)
		v = strings.TrimSpace(v)
		return v, ok && v != ""
	}
	bad := func(name, v, want string) error {
		return newError("config", CodeInvalidArguments, "%s=%q: %s", name, v, want)
	}
	if v, ok := get(EnvWorkspaceFSMode); ok {
		switch v {
		case "host":
			cfg["mode"] = json.RawMessage(`"host"`)
			// The session keys belong to overlay mode (the library refuses
			// them in host mode): a config written for a session still
			// opens on the host.
			delete(cfg, "session")
			delete(cfg, "session_refresh_ms")
		case "overlay":
			cfg["mode"] = json.RawMessage(`"overlay"`)
		case "agentfs":
			return nil, bad(EnvWorkspaceFSMode, v, "the agentfs mode is not available yet; use host or overlay")
		default:
			return nil, bad(EnvWorkspaceFSMode, v, "must be host or overlay")
		}
	}
	if v, ok := get(EnvWorkspaceFSSession); ok {
		var mode string
		if raw, ok := cfg["mode"]; !ok || json.Unmarshal(raw, &mode) != nil || mode != "overlay" {
			return nil, bad(EnvWorkspaceFSSession, v, "names an overlay session: set WORKSPACE_FS_MODE=overlay (or the configuration's mode) too")
		}
		b, err := json.Marshal(v)
		if err != nil {
			return nil, fmt.Errorf("wsfs: %w", err)
		}
		cfg["session"] = b
	}
	if v, ok := get(EnvToolRuntime); ok {
		switch v {
		case "builtin":
			delete(cfg, "wasm_tools")
		case "wasm":
			var folders []string
			if raw, ok := cfg["wasm_tools"]; !ok || json.Unmarshal(raw, &folders) != nil || len(folders) == 0 {
				return nil, bad(EnvToolRuntime, v, "needs Wasm tools: list their folders in the configuration's wasm_tools")
			}
		default:
			return nil, bad(EnvToolRuntime, v, "must be builtin or wasm")
		}
	}
	policy := map[string]json.RawMessage{}
	if raw, ok := cfg["wasm_policy"]; ok {
		if err := json.Unmarshal(raw, &policy); err != nil || policy == nil {
			return nil, newError("config", CodeInvalidArguments, "wasm_policy must be a JSON object")
		}
	}
	changed := false
	if v, ok := get(EnvToolTimeoutSecs); ok {
		secs, err := strconv.ParseFloat(v, 64)
		if err != nil || !(secs > 0) || secs > 24*3600 {
			return nil, bad(EnvToolTimeoutSecs, v, "must be a number of seconds above 0, at most 86400")
		}
		policy["timeout_ms"] = json.RawMessage(strconv.FormatInt(int64(math.Ceil(secs*1000)), 10))
		changed = true
	}
	if v, ok := get(EnvToolMemoryMB); ok {
		mb, err := strconv.ParseUint(v, 10, 32)
		if err != nil || mb == 0 {
			return nil, bad(EnvToolMemoryMB, v, "must be a whole number of MiB above 0")
		}
		policy["memory_mb"] = json.RawMessage(strconv.FormatUint(mb, 10))
		changed = true
	}
	if v, ok := get(EnvToolAllowDirectNetwork); ok {
		allow, err := strconv.ParseBool(v)
		if err != nil {
			return nil, bad(EnvToolAllowDirectNetwork, v, "must be true or false")
		}
		policy["allow_direct_network"] = json.RawMessage(strconv.FormatBool(allow))
		changed = true
	}
	if changed {
		b, err := json.Marshal(policy)
		if err != nil {
			return nil, fmt.Errorf("wsfs: %w", err)
		}
		cfg["wasm_policy"] = b
	}
	if err := applyModelEnv(cfg, get, bad); err != nil {
		return nil, err
	}
	return json.Marshal(cfg)
}

// applyModelEnv applies the MODEL_* variables to cfg's model_gateway (made
// when one is set); the library checks the whole object at open.
func applyModelEnv(cfg map[string]json.RawMessage, get func(string) (string, bool), bad func(name, v, want string) error) error {
	gateway := map[string]json.RawMessage{}
	if raw, ok := cfg["model_gateway"]; ok && string(raw) != "null" {
		if err := json.Unmarshal(raw, &gateway); err != nil || gateway == nil {
			return newError("config", CodeInvalidArguments, "model_gateway must be a JSON object")
		}
	}
	changed := false
	set := func(key, v string) {
		b, _ := json.Marshal(v) // a string always encodes
		gateway[key] = b
		changed = true
	}
	if v, ok := get(EnvModelProvider); ok {
		switch v {
		case "openai-compatible", "anthropic", "ollama":
			set("provider", v)
		default:
			return bad(EnvModelProvider, v, "must be openai-compatible, anthropic or ollama")
		}
	}
	if v, ok := get(EnvModelBaseURL); ok {
		set("base_url", v)
	}
	if v, ok := get(EnvModelAPIKeyEnv); ok {
		// Checked by the library, which never echoes it: a key put here by
		// mistake stays out of every message.
		set("api_key_env", v)
	}
	if v, ok := get(EnvModelName); ok {
		set("model", v)
	}
	if v, ok := get(EnvModelTimeoutSecs); ok {
		secs, err := strconv.ParseFloat(v, 64)
		if err != nil || !(secs > 0) || secs > 24*3600 {
			return bad(EnvModelTimeoutSecs, v, "must be a number of seconds above 0, at most 86400")
		}
		gateway["timeout_ms"] = json.RawMessage(strconv.FormatInt(int64(math.Ceil(secs*1000)), 10))
		changed = true
	}
	if changed {
		b, err := json.Marshal(gateway)
		if err != nil {
			return fmt.Errorf("wsfs: %w", err)
		}
		cfg["model_gateway"] = b
	}
	return nil
}
