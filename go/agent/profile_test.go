package agent

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	wsfs "github.com/wsfs/wsfs/go"
	"github.com/wsfs/wsfs/go/scripted"
)

func openProfile(t *testing.T, profile string, policy wsfs.Policy) *wsfs.Workspace {
	t.Helper()
	ws, err := wsfs.Open(wsfs.Config{Root: t.TempDir(), Profile: profile, Policy: policy})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.Close() })
	return ws
}

// TestRunnerServesTheProfilesTools: a Runner on a workspace opened with a
// profile offers the profile's tools (all of them by default) and the model's
// calls get the profile's envelopes (issue 31, item 1).
func TestRunnerServesTheProfilesTools(t *testing.T) {
	for _, profile := range []string{"miniclaw", "filesystem-tool", "agent-base", "capability-plan"} {
		ws := openProfile(t, profile, wsfs.Policy{})
		specs, err := ws.ToolSpecs()
		if err != nil {
			t.Fatal(err)
		}
		var want []string
		for _, s := range specs {
			want = append(want, s.Name)
		}
		r, err := NewRunnerWithWorkspace(ws, RunnerConfig{Model: scripted.New(scripted.Say("hi"))})
		if err != nil {
			t.Fatalf("%s: %v", profile, err)
		}
		if !slices.Equal(r.Tools(), want) {
			t.Fatalf("%s: the Runner offers %v, want %v", profile, r.Tools(), want)
		}
		r.Close()
	}
	ws := openProfile(t, "capability-plan", wsfs.Policy{})
	_, err := NewRunnerWithWorkspace(ws, RunnerConfig{Model: scripted.New(), Tools: []string{"file_read", "read_files"}})
	if err == nil || !strings.Contains(err.Error(), `unknown tool "read_files"`) || !strings.Contains(err.Error(), "file_patch") {
		t.Fatalf("unknown name: %v", err)
	}
}

// TestCapabilityPlanScenarioThroughTheRunner: seed 004's file tools under the
// plan's names, through the Runner: list, read, patch, move, a refused
// delete and a recursive one, each answered in the ToolResult envelope.
func TestCapabilityPlanScenarioThroughTheRunner(t *testing.T) {
	ws := openProfile(t, "capability-plan", wsfs.Policy{})
	root := ws.Root()
	if err := os.MkdirAll(filepath.Join(root, "src"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "src", "app.py"), []byte("a\nb\nc\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c := scripted.Call
	diff := `--- a/src/app.py\n+++ b/src/app.py\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n`
	results := runScript(t, ws, nil,
		scripted.Use(c("file_list", `{"path":"."}`)),
		scripted.Use(c("file_read", `{"path":"src/app.py"}`)),
		scripted.Use(c("file_patch", `{"diff_text":"`+diff+`"}`)),
		scripted.Use(c("file_move", `{"src":"src/app.py","dst":"lib/app.py"}`)),
		scripted.Use(c("file_delete", `{"path":"lib"}`)),
		scripted.Use(c("file_delete", `{"path":"lib","recursive":true}`)),
		scripted.Say("done"),
	)
	wantResult(t, results, 0, "ok: ", `"ok":true`, `"app.py"`)
	wantResult(t, results, 1, "ok: ", `"content":"a\nb\nc\n"`)
	wantResult(t, results, 2, "ok: ", `"applied":true`)
	wantResult(t, results, 3, "ok: ", `"moved_to":"lib/app.py"`)
	wantResult(t, results, 4, "error: ", `"error_code":"RECURSIVE_REQUIRED"`)
	wantResult(t, results, 5, "ok: ", `"ok":true`)
	if _, err := os.Stat(filepath.Join(root, "lib")); !os.IsNotExist(err) {
		t.Fatalf("lib is still there: %v", err)
	}
}

// TestAgentBaseWritesOffThroughTheRunner: agent-base's default (writes off)
// offers the changing tools, and the model is told writes_disabled in the
// profile's words.
func TestAgentBaseWritesOffThroughTheRunner(t *testing.T) {
	ws := openProfile(t, "agent-base", wsfs.Policy{})
	results := runScript(t, ws, nil,
		scripted.Use(scripted.Call("write_file", `{"path":"a.txt","content":"x"}`)),
		scripted.Say("done"),
	)
	wantResult(t, results, 0, "error: ", `"error":"writes_disabled"`, "filesystem_writes_enabled")
	if _, err := os.Stat(filepath.Join(ws.Root(), "a.txt")); !os.IsNotExist(err) {
		t.Fatalf("a.txt was written: %v", err)
	}
}

// TestAgentDefaultsProfile: MiniClaw's config can name a profile; the agent
// then gets that profile's tools, and agents.defaults.tools names them.
func TestAgentDefaultsProfile(t *testing.T) {
	root := t.TempDir()
	conf := `{"agents":{"defaults":{"workspace":` + strconvQuote(root) + `,"tools":["file_read","file_list"],"wsfs":{"profile":"capability-plan"}}}}`
	d, err := ParseAgentDefaults([]byte(conf))
	if err != nil {
		t.Fatal(err)
	}
	r, err := NewRunner(d.RunnerConfig(scripted.New(scripted.Say("hi"))))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if r.Workspace().Profile() != "capability-plan" || !slices.Equal(r.Tools(), []string{"file_read", "file_list"}) {
		t.Fatalf("profile %q, tools %v", r.Workspace().Profile(), r.Tools())
	}
	// Natively, the same names are refused when the file is read.
	_, err = ParseAgentDefaults([]byte(`{"agents":{"defaults":{"tools":["file_read"]}}}`))
	if err == nil || !strings.Contains(err.Error(), `unknown tool "file_read"`) {
		t.Fatalf("native: %v", err)
	}
}

func strconvQuote(s string) string { b, _ := json.Marshal(s); return string(b) }
