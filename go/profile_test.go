package wsfs

import (
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func specNames(t *testing.T, ws *Workspace) []string {
	t.Helper()
	specs, err := ws.ToolSpecs()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range specs {
		names = append(names, s.Name)
	}
	return names
}

// TestProfileIsAConfigKey: Config.Profile chooses the profile; the default
// is the native tools; an unknown name names the known ones.
func TestProfileIsAConfigKey(t *testing.T) {
	ws := openTest(t, Config{})
	if ws.Profile() != NativeProfile {
		t.Fatalf("default profile %q", ws.Profile())
	}
	all, err := ToolSpecs()
	if err != nil {
		t.Fatal(err)
	}
	// Every built-in tool but the developer tools, which the default policy leaves off.
	if got := specNames(t, ws); len(got) != len(all)-len(ExecToolNames) {
		t.Fatalf("native workspace offers %v", got)
	}
	mc := openTest(t, Config{Profile: "miniclaw"})
	if mc.Profile() != "miniclaw" {
		t.Fatalf("profile %q", mc.Profile())
	}
	want := []string{"read_file", "write_file", "append_file", "list_dir", "edit_file"}
	if got := specNames(t, mc); !slices.Equal(got, want) {
		t.Fatalf("miniclaw offers %v", got)
	}
	_, err = Open(Config{Root: t.TempDir(), Profile: "agentbase"})
	e := wantCode(t, err, CodeInvalidArguments)
	for _, name := range []string{"wsfs", "miniclaw", "filesystem-tool", "agent-base", "capability-plan"} {
		if !strings.Contains(e.Message, name) {
			t.Errorf("%q does not name %s", e.Message, name)
		}
	}
}

// TestProfileCallsReturnTheProfilesEnvelope: CallRaw takes the profile's
// names and returns its envelope; the typed methods refuse the workspace.
func TestProfileCallsReturnTheProfilesEnvelope(t *testing.T) {
	root := t.TempDir()
	writeFile(t, filepath.Join(root, "a.txt"), "one\n")
	// agent-base defaults writes off; this host turns them on.
	ws := openTest(t, Config{Root: root, Profile: "agent-base", Policy: Policy{WritesEnabled: Bool(true)}})
	ctx := context.Background()
	raw, err := ws.CallRaw(ctx, "write_file", `{"path":"a.txt","content":"x"}`)
	if err != nil {
		t.Fatal(err)
	}
	var env struct {
		Success bool   `json:"success"`
		Error   string `json:"error"`
	}
	if err := json.Unmarshal([]byte(raw), &env); err != nil {
		t.Fatal(err)
	}
	if env.Success || env.Error != "file_exists" { // agent-base's write_file defaults to mode create
		t.Fatalf("got %s", raw)
	}
	if got := readFile(t, filepath.Join(root, "a.txt")); got != "one\n" {
		t.Fatalf("a.txt is %q", got)
	}
	raw, err = ws.CallRaw(ctx, "list_directory", `{}`)
	if err != nil || !strings.Contains(raw, `"success":true`) {
		t.Fatalf("%s %v", raw, err)
	}
	_, err = ws.ReadFile(ctx, ReadFileInput{Path: "a.txt"})
	e := wantCode(t, err, CodeInvalidArguments)
	if !strings.Contains(e.Message, "agent-base") {
		t.Fatal(e.Message)
	}
	_, err = ws.CallForModel(ctx, ModelCall{Tool: "read_file", Args: `{"path":"a.txt"}`})
	wantCode(t, err, CodeInvalidArguments)
}

// TestProfileToolSpecsFollowThePolicy: a workspace whose policy disables
// writes offers no tool that could only fail.
func TestProfileToolSpecsFollowThePolicy(t *testing.T) {
	ws := openTest(t, Config{Profile: "miniclaw", Policy: Policy{WritesEnabled: Bool(false)}})
	if got := specNames(t, ws); !slices.Equal(got, []string{"read_file", "list_dir"}) {
		t.Fatalf("offers %v", got)
	}
	ws.Close()
	_, err := ws.ToolSpecs()
	wantCode(t, err, CodeInvalidWorkspace)
}
