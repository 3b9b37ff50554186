package wsfs

import (
	"encoding/json"
	"strings"
	"testing"
)

func envOf(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

// TestApplyToolEnv: each variable lands in the configuration the library
// decodes strictly; a bad value names its variable.
func TestApplyToolEnv(t *testing.T) {
	base := []byte(`{"root":"/x","wasm_tools":["/t"],"wasm_policy":{"fuel":5}}`)
	out, err := ApplyToolEnv(base, envOf(map[string]string{
		EnvToolTimeoutSecs: "1.5", EnvToolMemoryMB: "16", EnvToolAllowDirectNetwork: "true",
		EnvToolRuntime: "wasm", EnvWorkspaceFSMode: "host",
	}))
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		WasmTools  []string       `json:"wasm_tools"`
		WasmPolicy map[string]any `json:"wasm_policy"`
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"fuel": 5.0, "timeout_ms": 1500.0, "memory_mb": 16.0, "allow_direct_network": true}
	for k, v := range want {
		if got.WasmPolicy[k] != v {
			t.Errorf("%s = %v, want %v (%s)", k, got.WasmPolicy[k], v, out)
		}
	}
	out, err = ApplyToolEnv(base, envOf(map[string]string{EnvToolRuntime: "builtin"}))
	if err != nil || json.Unmarshal(out, &got) != nil {
		t.Fatal(err)
	}
	var top map[string]any
	_ = json.Unmarshal(out, &top)
	if _, ok := top["wasm_tools"]; ok {
		t.Errorf("builtin kept wasm_tools: %s", out)
	}
	for name, v := range map[string]string{
		EnvToolRuntime: "docker", EnvToolTimeoutSecs: "0", EnvToolMemoryMB: "-1",
		EnvToolAllowDirectNetwork: "maybe", EnvWorkspaceFSMode: "agentfs",
		EnvWorkspaceFSSession: "s1",
	} {
		_, err := ApplyToolEnv(base, envOf(map[string]string{name: v}))
		e := wantCode(t, err, CodeInvalidArguments)
		if !strings.Contains(e.Message, name) {
			t.Errorf("%s=%s: %s", name, v, e.Message)
		}
	}
	if _, err := ApplyToolEnv([]byte(`{"root":"/x"}`), envOf(map[string]string{EnvToolRuntime: "wasm"})); err == nil {
		t.Error("TOOL_RUNTIME=wasm without wasm_tools accepted")
	}
	// Unset and empty variables change nothing.
	out, _ = ApplyToolEnv([]byte(`{"root":"/x"}`), envOf(map[string]string{EnvToolMemoryMB: " "}))
	if string(out) != `{"root":"/x"}` {
		t.Errorf("empty variable applied: %s", out)
	}
}

// TestApplyToolEnvMode: WORKSPACE_FS_MODE sets the config's mode (host drops
// the session keys), WORKSPACE_FS_SESSION its session, in overlay mode only.
func TestApplyToolEnvMode(t *testing.T) {
	overlayCfg := []byte(`{"root":"/x","mode":"overlay","session":"a","session_refresh_ms":5}`)
	for _, c := range []struct {
		cfg  string
		env  map[string]string
		want string
	}{
		{`{"root":"/x"}`, map[string]string{EnvWorkspaceFSMode: "overlay"}, `{"mode":"overlay","root":"/x"}`},
		{`{"root":"/x"}`, map[string]string{EnvWorkspaceFSMode: "overlay", EnvWorkspaceFSSession: "s1"},
			`{"mode":"overlay","root":"/x","session":"s1"}`},
		{string(overlayCfg), map[string]string{EnvWorkspaceFSMode: "host"}, `{"mode":"host","root":"/x"}`},
		{string(overlayCfg), map[string]string{EnvWorkspaceFSSession: "b"},
			`{"mode":"overlay","root":"/x","session":"b","session_refresh_ms":5}`},
	} {
		out, err := ApplyToolEnv([]byte(c.cfg), envOf(c.env))
		if err != nil || string(out) != c.want {
			t.Errorf("%s with %v = %s, %v; want %s", c.cfg, c.env, out, err, c.want)
		}
	}
	_, err := ApplyToolEnv([]byte(`{"root":"/x","mode":"host"}`), envOf(map[string]string{EnvWorkspaceFSSession: "s"}))
	if e := wantCode(t, err, CodeInvalidArguments); !strings.Contains(e.Message, EnvWorkspaceFSSession) {
		t.Errorf("session in host mode: %s", e.Message)
	}
}
