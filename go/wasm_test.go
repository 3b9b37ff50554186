package wsfs

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// exampleTools is the repository's tools/ folder (the example Wasm tools).
func exampleTools(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs("../tools")
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestWasmToolsAreListedAndCalledLikeBuiltins: Config.WasmTools loads the
// example tools; Workspace.ToolSpecs lists them after the built-ins with
// their manifest's schema, and CallRaw runs one by name.
func TestWasmToolsAreListedAndCalledLikeBuiltins(t *testing.T) {
	// Every built-in tool is offered once the exec switches are on.
	ws := openTest(t, Config{WasmTools: []string{exampleTools(t)}, Policy: Policy{ExecEnabled: true, ShellEnabled: true}})
	if got := ws.WasmTools(); !slices.Equal(got, []string{"ask_model", "echo", "inventory"}) {
		t.Fatalf("WasmTools() = %v", got)
	}
	specs, err := ws.ToolSpecs()
	if err != nil {
		t.Fatal(err)
	}
	builtin, _ := ToolSpecs()
	if len(specs) != len(builtin)+3 || specs[len(builtin)+1].Name != "echo" {
		t.Fatalf("specs: %d (builtin %d)", len(specs), len(builtin))
	}
	if !strings.Contains(string(specs[len(builtin)+1].Parameters), `"message"`) {
		t.Fatalf("echo's schema: %s", specs[len(builtin)+1].Parameters)
	}
	text, err := ws.CallForModel(context.Background(), ModelCall{Tool: "echo", Args: `{"message":"hi"}`})
	if err != nil || text != `{"received":{"message":"hi"}}` {
		t.Fatalf("echo: %q, %v", text, err)
	}
	_, err = ws.CallForModel(context.Background(), ModelCall{Tool: "echo", Args: `{"message":1}`})
	wantCode(t, err, CodeInvalidArguments)
	// A workspace without Wasm tools lists the built-ins only: with the exec
	// switches off by default, those that run no programs.
	plain := openTest(t, Config{})
	var want []string
	for _, b := range builtin {
		if plain.ExecSwitchOn(b.Name) {
			want = append(want, b.Name)
		}
	}
	s, _ := plain.ToolSpecs()
	var got []string
	for _, spec := range s {
		got = append(got, spec.Name)
	}
	if !slices.Equal(got, want) || len(want) != len(builtin)-9 {
		t.Fatalf("plain workspace: %v, want %v", got, want)
	}
}

// TestWasmPolicyIsTheHostsCeiling: a WasmPolicy allowing less than a
// manifest asks for fails Open with CodeCapabilityDenied; a bad value is
// CodeInvalidArguments from the library's strict decoding.
func TestWasmPolicyIsTheHostsCeiling(t *testing.T) {
	_, err := Open(Config{Root: t.TempDir(), WasmTools: []string{exampleTools(t)},
		WasmPolicy: &WasmPolicy{Filesystem: "read"}})
	wantCode(t, err, CodeCapabilityDenied)
	_, err = Open(Config{Root: t.TempDir(), WasmTools: []string{exampleTools(t)},
		WasmPolicy: &WasmPolicy{Timeout: time.Second}})
	wantCode(t, err, CodeCapabilityDenied)
	_, err = Open(Config{Root: t.TempDir(), WasmPolicy: &WasmPolicy{Filesystem: "all"}})
	wantCode(t, err, CodeInvalidArguments)
	_, err = OpenJSON([]byte(`{"root":"`+t.TempDir()+`","wasm_tools":"x"}`), nil)
	wantCode(t, err, CodeInvalidArguments)
}
