package agent

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	wsfs "github.com/wsfs/wsfs/go"
	"github.com/wsfs/wsfs/go/scripted"
)

func TestAgentDefaultsConfig(t *testing.T) {
	d, err := LoadAgentDefaults(filepath.Join("..", "..", "config", "config.example.json"))
	if err != nil {
		t.Fatal(err)
	}
	if d.Workspace != "~/.miniclaw/workspace" || d.RestrictToWorkspace == nil || !*d.RestrictToWorkspace ||
		d.MaxToolIterations != 20 || d.Provider != "fantasy-agent" {
		t.Fatalf("defaults = %+v", d)
	}
	want := wsfs.Limits{MaxReadBytes: 262144, MaxWriteBytes: 1048576, MaxListEntries: 500, OperationTimeout: 10_000_000_000}
	if d.WSFS.Limits() != want {
		t.Fatalf("limits = %+v", d.WSFS.Limits())
	}
	rc := d.RunnerConfig(scripted.New())
	if rc.Workspace != d.Workspace || rc.MaxToolIterations != 20 || rc.Limits != want || rc.Model == nil || !*rc.RestrictToWorkspace {
		t.Fatalf("RunnerConfig = %+v", rc)
	}
	// The example spells out the default tools, MiniClaw's five.
	if !slices.Equal(d.Tools, DefaultTools) || !slices.Equal(rc.Tools, DefaultTools) {
		t.Fatalf("tools = %v, RunnerConfig.Tools = %v; want %v", d.Tools, rc.Tools, DefaultTools)
	}
	if p := rc.Policy; p.WritesEnabled == nil || !*p.WritesEnabled || !slices.Equal(p.DenyRead, []string{".env", "**/*.pem"}) ||
		!slices.Equal(p.DenyWrite, []string{".git/**"}) || p.AuditLog != "" {
		t.Fatalf("policy = %+v", p)
	}
	// Absent restrict_to_workspace stays nil, which means true; absent tools, the default.
	d, err = ParseAgentDefaults([]byte(`{"agents":{"defaults":{"workspace":"/w"}}}`))
	if err != nil || d.RestrictToWorkspace != nil || d.MaxToolIterations != 0 || d.Tools != nil {
		t.Fatalf("minimal = %+v, %v", d, err)
	}
	// An absent deny_write keeps the library's default (nil); [] means none.
	if p := d.WSFS.Policy.Policy(); p.WritesEnabled != nil || p.DenyWrite != nil {
		t.Fatalf("minimal policy = %+v", p)
	}
	d, err = ParseAgentDefaults([]byte(`{"agents":{"defaults":{"wsfs":{"policy":{"deny_write":[],"writes_enabled":false}}}}}`))
	if p := d.WSFS.Policy.Policy(); err != nil || p.DenyWrite == nil || len(p.DenyWrite) != 0 || *p.WritesEnabled {
		t.Fatalf("policy = %+v, %v", p, err)
	}
	// Every key of the library's policy reaches wsfs.Policy.
	d, err = ParseAgentDefaults([]byte(`{"agents":{"defaults":{"wsfs":{"policy":{
		"audit_log":"/tmp/a.jsonl","audit_arguments":true,"allow_tools":["read_file","list_dir"],
		"deny_tools":["list_dir"],"safe_shell_rules":"/etc/rules.toml"}}}}}`))
	if p := d.WSFS.Policy.Policy(); err != nil || !p.AuditArguments || !slices.Equal(p.AllowTools, []string{"read_file", "list_dir"}) ||
		!slices.Equal(p.DenyTools, []string{"list_dir"}) || p.SafeShellRules != "/etc/rules.toml" {
		t.Fatalf("policy = %+v, %v", p, err)
	}
	if _, err := ParseAgentDefaults([]byte(`{`)); err == nil {
		t.Fatal("bad JSON accepted")
	}
}

// TestAgentDefaultsOverlaySession: "mode": "overlay" in agents.defaults.wsfs
// gives the Runner an overlay session, so the agent's writes wait for the
// host's commit; a mode that is neither host nor overlay is refused.
func TestAgentDefaultsOverlaySession(t *testing.T) {
	root, state := t.TempDir(), t.TempDir()
	conf, _ := json.Marshal(map[string]any{"agents": map[string]any{"defaults": map[string]any{
		"workspace": root,
		"wsfs":      map[string]any{"mode": "overlay", "session": "review", "state_dir": state, "session_refresh_ms": 0},
	}}})
	d, err := ParseAgentDefaults(conf)
	if err != nil {
		t.Fatal(err)
	}
	rc := d.RunnerConfig(scripted.New())
	if rc.Mode != wsfs.ModeOverlay || rc.Session != "review" || rc.StateDir != state || rc.SessionRefreshMs == nil || *rc.SessionRefreshMs != 0 {
		t.Fatalf("RunnerConfig = %+v", rc)
	}
	r, err := NewRunner(rc)
	if err != nil {
		var e *wsfs.Error
		if errors.As(err, &e) && e.Code == wsfs.CodeOverlayUnavailable {
			t.Skipf("overlay sessions are not available here: %v", err)
		}
		t.Fatal(err)
	}
	defer r.Close()
	ws := r.Workspace()
	if ws.Mode() != wsfs.ModeOverlay || ws.Session() != "review" {
		t.Fatalf("workspace mode %q session %q", ws.Mode(), ws.Session())
	}
	if _, err := ws.WriteFile(context.Background(), wsfs.WriteFileInput{Path: "a.txt", Content: "x"}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "a.txt")); !os.IsNotExist(err) {
		t.Fatalf("the write reached the base before a commit: %v", err)
	}
	_, err = ParseAgentDefaults([]byte(`{"agents":{"defaults":{"wsfs":{"mode":"layered"}}}}`))
	if err == nil || !strings.Contains(err.Error(), `agents.defaults.wsfs.mode is "layered"`) {
		t.Fatalf("mode layered: %v", err)
	}
}

// TestAgentDefaultsLimits: as config/config.example.json says, an absent
// limit takes the default, and 0 or a negative value is refused (it never
// silently becomes the default).
func TestAgentDefaultsLimits(t *testing.T) {
	d, err := ParseAgentDefaults([]byte(`{"agents":{"defaults":{"workspace":"/w","wsfs":{"max_read_bytes":100,"max_list_entries":null}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	if want := (wsfs.Limits{MaxReadBytes: 100}); d.WSFS.Limits() != want {
		t.Fatalf("limits %+v, want %+v", d.WSFS.Limits(), want)
	}
	for _, key := range []string{"max_read_bytes", "max_write_bytes", "max_list_entries", "operation_timeout_ms"} {
		for _, v := range []string{"0", "-1"} {
			_, err := ParseAgentDefaults([]byte(`{"agents":{"defaults":{"workspace":"/w","wsfs":{"` + key + `":` + v + `}}}}`))
			if err == nil || !strings.Contains(err.Error(), "agents.defaults.wsfs."+key+" is "+v+": a limit must be at least 1") {
				t.Errorf("%s = %s: %v", key, v, err)
			}
		}
	}
	// A wsfs object of the wrong shape is an error, not a default.
	if _, err := ParseAgentDefaults([]byte(`{"agents":{"defaults":{"wsfs":{"max_read_bytes":"big"}}}}`)); err == nil {
		t.Fatal("a string limit was accepted")
	}
	// The comment keys of the example are ignored.
	if _, err := ParseAgentDefaults([]byte(`{"agents":{"defaults":{"wsfs":{"_comment":"x","max_read_bytes":5}}}}`)); err != nil {
		t.Fatal(err)
	}
}

// TestAgentDefaultsAreStrict: as config/config.example.json says, the keys
// of agents.defaults.wsfs and of its policy are checked: a typo or a
// comment in the policy is an error naming the key and the known ones, not
// a deny rule silently gone. The wsfs object takes "_comment..." keys, as
// agents.defaults does.
func TestAgentDefaultsAreStrict(t *testing.T) {
	for _, tc := range []struct{ wsfs, path, key, known string }{
		{`{"policy":{"deny_reads":[".env"]}}`, "agents.defaults.wsfs.policy", "deny_reads", "writes_enabled, deny_read, deny_write, audit_log"},
		{`{"policy":{"_comment":"no secrets","deny_read":[".env"]}}`, "agents.defaults.wsfs.policy", "_comment", "writes_enabled, deny_read, deny_write, audit_log"},
		{`{"policy":{"Deny_Read":[".env"]}}`, "agents.defaults.wsfs.policy", "Deny_Read", "writes_enabled, deny_read, deny_write, audit_log"},
		{`{"max_read_byte":100}`, "agents.defaults.wsfs", "max_read_byte", "max_read_bytes, max_write_bytes, max_list_entries, operation_timeout_ms, policy"},
		{`{"Max_Read_Bytes":100}`, "agents.defaults.wsfs", "Max_Read_Bytes", "max_read_bytes, max_write_bytes, max_list_entries, operation_timeout_ms, policy"},
	} {
		_, err := ParseAgentDefaults([]byte(`{"agents":{"defaults":{"workspace":"/w","wsfs":` + tc.wsfs + `}}}`))
		if err == nil {
			t.Errorf("%s: accepted", tc.wsfs)
			continue
		}
		for _, want := range []string{tc.path, `unknown key "` + tc.key + `"`, tc.known} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("%s: error %q does not say %q", tc.wsfs, err, want)
			}
		}
	}
	// Comments in the wsfs object and in agents.defaults, null objects, and
	// MiniClaw's own keys in agents.defaults are fine.
	for _, ok := range []string{
		`{"agents":{"defaults":{"_comment":"x","workspace":"/w","wsfs":{"_comment_policy":"y","policy":{"deny_read":[]}}}}}`,
		`{"agents":{"defaults":{"workspace":"/w","wsfs":null}}}`,
		`{"agents":{"defaults":{"workspace":"/w","wsfs":{"policy":null}}}}`,
		`{"agents":{"defaults":{"workspace":"/w","temperature":0.7,"max_tokens":8192}}}`,
	} {
		if _, err := ParseAgentDefaults([]byte(ok)); err != nil {
			t.Errorf("%s: %v", ok, err)
		}
	}
}

// TestAgentDefaultsTools: agents.defaults.tools chooses the Runner's tools:
// absent or null means the default five, ["all"] every tool; the names are
// checked strictly when the file is read (an unknown one is an error naming
// it and the known ones), and [] is refused rather than silently the default.
func TestAgentDefaultsTools(t *testing.T) {
	for _, tc := range []struct {
		tools string
		want  []string // the Runner's tools
	}{
		{`null`, DefaultTools},
		{`["all"]`, fileToolNames()}, // the developer tools need policy.exec_enabled
		{`["search_text","read_file","delete_file"]`, []string{"read_file", "search_text", "delete_file"}},
	} {
		d, err := ParseAgentDefaults([]byte(`{"agents":{"defaults":{"workspace":"/w","tools":` + tc.tools + `}}}`))
		if err != nil {
			t.Fatalf("tools %s: %v", tc.tools, err)
		}
		rc := d.RunnerConfig(scripted.New())
		rc.Workspace = t.TempDir()
		r, err := NewRunner(rc)
		if err != nil {
			t.Fatalf("tools %s: %v", tc.tools, err)
		}
		if !slices.Equal(r.Tools(), tc.want) {
			t.Errorf("tools %s: the Runner offers %v, want %v", tc.tools, r.Tools(), tc.want)
		}
		r.Close()
	}
	known := strings.Join(wsfs.ToolNames, ", ")
	for _, tc := range []struct{ tools, err string }{
		{`["read_file","delete_files"]`, `agents.defaults.tools: unknown tool "delete_files"; the tools are ` + known + `, or "all" alone for every one`},
		{`["all","read_file"]`, `agents.defaults.tools: "all" must be the only entry`},
		{`["list_dir","list_dir"]`, `agents.defaults.tools names "list_dir" twice`},
		{`[]`, `agents.defaults.tools is empty: leave the key out for the default tools (read_file, write_file, append_file, list_dir, edit_file), or name the tools`},
		{`"all"`, `agents.defaults.tools must be a list of tool names`},
	} {
		_, err := ParseAgentDefaults([]byte(`{"agents":{"defaults":{"workspace":"/w","tools":` + tc.tools + `}}}`))
		if err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("tools %s: error %v, want %q", tc.tools, err, tc.err)
		}
	}
}

// TestConfigExampleNamesEveryTool: the example's description of the tools
// key names each tool, from the one list of them.
func TestConfigExampleNamesEveryTool(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "config", "config.example.json"))
	if err != nil {
		t.Fatal(err)
	}
	var cfg struct {
		Agents struct {
			Defaults struct {
				Tools string `json:"_comment_tools"`
			} `json:"defaults"`
		} `json:"agents"`
	}
	if err := json.Unmarshal(b, &cfg); err != nil {
		t.Fatal(err)
	}
	words := strings.FieldsFunc(cfg.Agents.Defaults.Tools, func(r rune) bool { return r == ' ' || r == ',' || r == '.' || r == ':' })
	for _, name := range wsfs.ToolNames {
		if !slices.Contains(words, name) {
			t.Errorf("config.example.json's _comment_tools does not name %s", name)
		}
	}
}

// TestConfigExampleShowsEveryKey: every key the "wsfs" object, its policy
// and its wasm_policy accept is shown in config.example.json, as a key or
// named in the comments next to it.
func TestConfigExampleShowsEveryKey(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "config", "config.example.json"))
	if err != nil {
		t.Fatal(err)
	}
	var cfg struct {
		Agents struct {
			Defaults struct {
				WSFS map[string]json.RawMessage `json:"wsfs"`
			} `json:"defaults"`
		} `json:"agents"`
	}
	if err := json.Unmarshal(b, &cfg); err != nil {
		t.Fatal(err)
	}
	obj := cfg.Agents.Defaults.WSFS
	var comments strings.Builder
	for key, v := range obj {
		if strings.HasPrefix(key, "_comment") {
			comments.Write(v)
		}
	}
	words := strings.FieldsFunc(comments.String(), func(r rune) bool { return strings.ContainsRune(" ,.:;()'\"", r) })
	shown := func(key string) bool { _, ok := obj[key]; return ok || slices.Contains(words, key) }
	for _, keys := range [][]string{limitsKeys, policyKeys, wasmPolicyKeys} {
		for _, key := range keys {
			if !shown(key) {
				t.Errorf("config.example.json's wsfs object does not show %q", key)
			}
		}
	}
	d, err := ParseAgentDefaults(b)
	if err != nil {
		t.Fatal(err)
	}
	if p := d.RunnerConfig(scripted.New()).WasmPolicy; p == nil || p.Filesystem != "read" || p.Timeout != 30*time.Second {
		t.Fatalf("the example's wasm_policy: %+v", p)
	}
}
