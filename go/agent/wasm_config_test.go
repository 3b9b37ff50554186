package agent

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/wsfs/wsfs/go/scripted"
)

// exampleTools is the repository's tools/ folder (ask_model, echo, inventory).
func exampleTools(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs("../../tools")
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestAgentDefaultsWasmTools: MiniClaw's config loads Wasm tools
// (agents.defaults.wsfs.wasm_tools) under a wasm_policy; the Runner offers
// them after the default five, a tools list may name them, and the model's
// call reaches the tool.
func TestAgentDefaultsWasmTools(t *testing.T) {
	root := t.TempDir()
	wsfsObj := `"wsfs":{"wasm_tools":[` + strconvQuote(exampleTools(t)) + `],"wasm_policy":{"timeout_ms":30000,"memory_mb":16,"allowed_env":[]}}`
	d, err := ParseAgentDefaults([]byte(`{"agents":{"defaults":{"workspace":` + strconvQuote(root) + `,` + wsfsObj + `}}}`))
	if err != nil {
		t.Fatal(err)
	}
	if p := d.WSFS.WasmPolicy; p == nil || p.TimeoutMS != 30000 || p.MemoryMB != 16 {
		t.Fatalf("wasm_policy decoded as %+v", p)
	}
	model := scripted.New(scripted.Use(scripted.Call("echo", `{"message":"hi"}`)), scripted.Say("done"))
	r, err := NewRunner(d.RunnerConfig(model))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	want := append(slices.Clone(DefaultTools), "ask_model", "echo", "inventory")
	if !slices.Equal(r.Tools(), want) {
		t.Fatalf("tools %v, want %v", r.Tools(), want)
	}
	reply, err := r.Run(bg, "s", "echo hi")
	if err != nil {
		t.Fatal(err)
	}
	if res := toolResults(reply.Messages); len(res) != 1 || !strings.Contains(res[0], `"received":{"message":"hi"}`) {
		t.Fatalf("echo's result: %v", res)
	}

	// A list names Wasm tools like built-in ones; the names are checked
	// when the workspace is open, since only the manifests know them.
	d, err = ParseAgentDefaults([]byte(`{"agents":{"defaults":{"workspace":` + strconvQuote(root) + `,"tools":["read_file","echo"],` + wsfsObj + `}}}`))
	if err != nil {
		t.Fatal(err)
	}
	r2, err := NewRunner(d.RunnerConfig(scripted.New(scripted.Say("hi"))))
	if err != nil {
		t.Fatal(err)
	}
	defer r2.Close()
	if !slices.Equal(r2.Tools(), []string{"read_file", "echo"}) {
		t.Fatalf("named tools: %v", r2.Tools())
	}
	d, err = ParseAgentDefaults([]byte(`{"agents":{"defaults":{"workspace":` + strconvQuote(root) + `,"tools":["ecko"],` + wsfsObj + `}}}`))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := NewRunner(d.RunnerConfig(scripted.New(scripted.Say("hi")))); err == nil || !strings.Contains(err.Error(), `unknown tool "ecko"`) || !strings.Contains(err.Error(), "echo") {
		t.Fatalf("a misspelt Wasm tool: %v", err)
	}
}

// TestAgentDefaultsWasmPolicy: the wasm_policy object is the host's
// ceiling (a manifest asking for more fails the open, naming the tool), and
// its keys and limits are checked when the file is read.
func TestAgentDefaultsWasmPolicy(t *testing.T) {
	root := t.TempDir()
	conf := func(policy string) string {
		return `{"agents":{"defaults":{"workspace":` + strconvQuote(root) + `,"wsfs":{"wasm_tools":[` +
			strconvQuote(exampleTools(t)) + `],"wasm_policy":` + policy + `}}}}`
	}
	d, err := ParseAgentDefaults([]byte(conf(`{"filesystem":"read"}`)))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := NewRunner(d.RunnerConfig(scripted.New(scripted.Say("hi")))); err == nil || !strings.Contains(err.Error(), "capability_denied") {
		t.Fatalf("a ceiling below a manifest: %v", err)
	}
	for policy, want := range map[string]string{
		`{"timeout":5}`:      `unknown key "timeout"`,
		`{"memory_mb":0}`:    "wasm_policy.memory_mb is 0",
		`{"timeout_ms":-1}`:  "wasm_policy.timeout_ms is -1",
		`{"fuel":0}`:         "wasm_policy.fuel is 0",
		`{"filesystem":1}`:   "wasm_policy",
		`{"engine":"wasmi"}`: "",
	} {
		_, err := ParseAgentDefaults([]byte(conf(policy)))
		if want == "" {
			if err != nil {
				t.Errorf("%s: %v", policy, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want it to contain %q", policy, err, want)
		}
	}
}
