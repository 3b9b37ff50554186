package fantasytools

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"charm.land/fantasy"

	wsfs "github.com/wsfs/wsfs/go"
)

func infoNames(tools []fantasy.AgentTool) []string {
	var names []string
	for _, tool := range tools {
		names = append(names, tool.Info().Name)
	}
	return names
}

// TestProfileToolsAreTheProfiles: on a workspace opened with a profile, the
// fantasy tools are the profile's (names, schemas, descriptions from the
// workspace's specs), and each returns the profile's envelope (issue 31,
// item 1).
func TestProfileToolsAreTheProfiles(t *testing.T) {
	for _, profile := range []string{"miniclaw", "filesystem-tool", "agent-base", "capability-plan"} {
		ws := openTest(t, wsfs.Config{Profile: profile, Policy: wsfs.Policy{WritesEnabled: wsfs.Bool(true)}})
		specs, err := ws.ToolSpecs()
		if err != nil {
			t.Fatal(err)
		}
		var want []string
		for _, s := range specs {
			want = append(want, s.Name)
		}
		tools := Tools(ws)
		if got := infoNames(tools); !slices.Equal(got, want) {
			t.Fatalf("%s: tools %v, want the workspace's %v", profile, got, want)
		}
		for i, tool := range tools {
			info := tool.Info()
			if info.Description != specs[i].Description {
				t.Fatalf("%s/%s: description differs from the spec", profile, info.Name)
			}
			var params struct {
				Required []string `json:"required"`
			}
			json.Unmarshal(specs[i].Parameters, &params)
			if len(params.Required) > 0 && !slices.Equal(info.Required, params.Required) {
				t.Fatalf("%s/%s: required %v, spec %v", profile, info.Name, info.Required, params.Required)
			}
		}
	}
}

func TestProfileToolsReturnTheProfilesEnvelope(t *testing.T) {
	ws := openTest(t, wsfs.Config{Profile: "agent-base"})
	writeFile(t, filepath.Join(ws.Root(), "notes.md"), "one\ntwo\n")
	tools := Tools(ws)
	resp, err := runTool(t, toolByName(t, tools, "read_file"), bg, `{"path":"notes.md"}`)
	if err != nil || resp.IsError {
		t.Fatalf("read_file = %+v, %v", resp, err)
	}
	var ok struct {
		Success bool `json:"success"`
		Result  struct {
			Content string `json:"content"`
		} `json:"result"`
	}
	if json.Unmarshal([]byte(resp.Content), &ok) != nil || !ok.Success || ok.Result.Content != "one\ntwo\n" {
		t.Fatalf("read_file content %s", resp.Content)
	}
	// A failure is an error response with the profile's code; the run goes on.
	resp, err = runTool(t, toolByName(t, tools, "read_file"), bg, `{"path":"notes/../x"}`)
	if err != nil || !resp.IsError || !strings.Contains(resp.Content, `"error":"path_traversal_attempt"`) {
		t.Fatalf("traversal = %+v, %v", resp, err)
	}
	// agent-base's writes are off by default: offered, and refused in its words.
	resp, err = runTool(t, toolByName(t, tools, "write_file"), bg, `{"path":"a.txt","content":"x"}`)
	if err != nil || !resp.IsError || !strings.Contains(resp.Content, `"error":"writes_disabled"`) {
		t.Fatalf("write_file = %+v, %v", resp, err)
	}
	// WithToolNames names the profile's tools; read-only keeps the readers.
	if got := infoNames(Tools(ws, WithToolNames("read_file", "search_text"))); !slices.Equal(got, []string{"read_file", "search_text"}) {
		t.Fatalf("WithToolNames: %v", got)
	}
	for _, name := range infoNames(Tools(ws, WithReadOnlyTools())) {
		if slices.Contains([]string{"write_file", "apply_text_edit", "create_directory"}, name) {
			t.Fatalf("WithReadOnlyTools kept %s", name)
		}
	}
	func() {
		defer func() {
			if r := recover(); r == nil || !strings.Contains(r.(string), `profile has no tool named "list_dir"`) {
				t.Fatalf("a native name under agent-base: %v", r)
			}
		}()
		Tools(ws, WithToolNames("list_dir"))
	}()
	// A closed workspace stops the run.
	ws.Close()
	if _, err := runTool(t, toolByName(t, tools, "read_file"), bg, `{"path":"notes.md"}`); err == nil {
		t.Fatal("a closed workspace did not stop the run")
	}
}

// TestCapabilityPlanThroughFantasy: the capability plan's names under
// fantasy, with its ToolResult envelope.
func TestCapabilityPlanThroughFantasy(t *testing.T) {
	ws := openTest(t, wsfs.Config{Profile: "capability-plan"})
	writeFile(t, filepath.Join(ws.Root(), "src/app.py"), "x = 1\n")
	tools := Tools(ws)
	resp, err := runTool(t, toolByName(t, tools, "file_read"), bg, `{"path":"src/app.py"}`)
	if err != nil || resp.IsError || !strings.Contains(resp.Content, `"ok":true`) {
		t.Fatalf("file_read = %+v, %v", resp, err)
	}
	resp, err = runTool(t, toolByName(t, tools, "file_delete"), bg, `{"path":"src"}`)
	if err != nil || !resp.IsError || !strings.Contains(resp.Content, `"error_code":"RECURSIVE_REQUIRED"`) {
		t.Fatalf("file_delete = %+v, %v", resp, err)
	}
}
