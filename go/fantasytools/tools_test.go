package fantasytools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"charm.land/fantasy"

	wsfs "github.com/wsfs/wsfs/go"
	"github.com/wsfs/wsfs/go/scripted"
)

// specParams is the parameters schema of a wsfs_tool_specs() entry.
type specParams struct {
	Type       string `json:"type"`
	Properties map[string]struct {
		Type        string `json:"type"`
		Description string `json:"description"`
	} `json:"properties"`
	Required []string `json:"required"`
}

// TestToolSchemasMatchLibrary checks that the schemas fantasy generates from
// the Go input structs describe exactly the arguments the library accepts.
func TestToolSchemasMatchLibrary(t *testing.T) {
	// With the developer tools on, so that every tool is compared.
	ws := openTest(t, wsfs.Config{Policy: wsfs.Policy{ExecEnabled: true, ShellEnabled: true}})
	specs, err := wsfs.ToolSpecs()
	if err != nil {
		t.Fatal(err)
	}
	tools := Tools(ws)
	if len(tools) != len(specs) {
		t.Fatalf("%d tools, %d specs", len(tools), len(specs))
	}
	for i, tool := range tools {
		spec := specs[i]
		var params specParams
		if err := json.Unmarshal(spec.Parameters, &params); err != nil {
			t.Fatal(err)
		}
		t.Run(spec.Name, func(t *testing.T) {
			// What fantasy generated from the Go struct tags, before the
			// library's descriptions are applied.
			st, ok := tool.(*specTool)
			if !ok {
				t.Fatalf("tool is %T, want *specTool", tool)
			}
			for _, info := range []fantasy.ToolInfo{st.AgentTool.Info(), tool.Info()} {
				if info.Name != spec.Name {
					t.Fatalf("name %q, spec %q", info.Name, spec.Name)
				}
				if got, want := slices.Sorted(maps.Keys(info.Parameters)), slices.Sorted(maps.Keys(params.Properties)); !slices.Equal(got, want) {
					t.Fatalf("properties %v, spec %v", got, want)
				}
				if got, want := slices.Sorted(slices.Values(info.Required)), slices.Sorted(slices.Values(params.Required)); !slices.Equal(got, want) {
					t.Fatalf("required %v, spec %v", got, want)
				}
				for name, p := range params.Properties {
					prop := info.Parameters[name].(map[string]any)
					if prop["type"] != p.Type {
						t.Errorf("%s.type = %v, spec %s", name, prop["type"], p.Type)
					}
				}
				if info.Parallel {
					t.Error("tool is parallel, want sequential")
				}
			}
			// The model sees the library's descriptions.
			info := tool.Info()
			if info.Description != spec.Description {
				t.Errorf("description %q, spec %q", info.Description, spec.Description)
			}
			for name, p := range params.Properties {
				if d := info.Parameters[name].(map[string]any)["description"]; d != p.Description {
					t.Errorf("%s.description = %q, spec %q", name, d, p.Description)
				}
			}
			// The schema fantasy derives from the Go input struct (used to
			// decode the model's arguments, and by `go doc` readers) is the
			// library's, down to nested objects, descriptions and enums.
			var full map[string]any
			if err := json.Unmarshal(spec.Parameters, &full); err != nil {
				t.Fatal(err)
			}
			goInfo := st.AgentTool.Info()
			fromGo := map[string]any{"type": "object", "properties": goInfo.Parameters, "required": goInfo.Required}
			got, want := schemaShape(fromGo), schemaShape(full)
			if !reflect.DeepEqual(got, want) {
				gb, _ := json.MarshalIndent(got, "", " ")
				wb, _ := json.MarshalIndent(want, "", " ")
				t.Errorf("Go input struct schema differs from the library's:\nGo:      %s\nlibrary: %s", gb, wb)
			}
		})
	}
	// Info returns copies: changing one does not change the tool.
	info := tools[0].Info()
	info.Parameters["path"].(map[string]any)["description"] = "changed"
	info.Required[0] = "changed"
	if again := tools[0].Info(); again.Parameters["path"].(map[string]any)["description"] == "changed" || again.Required[0] == "changed" {
		t.Fatal("Info shares state with the tool")
	}
}

// schemaShape keeps what both a Go input struct and the library's schema
// can state (type, description, enum, items, properties, required), in a
// canonical form: required sorted, JSON numbers and maps as decoded by
// encoding/json.
func schemaShape(v any) any {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	var m map[string]any
	if json.Unmarshal(b, &m) != nil {
		return nil
	}
	out := map[string]any{}
	for _, k := range []string{"type", "description", "enum"} {
		if x, ok := m[k]; ok {
			out[k] = x
		}
	}
	if items, ok := m["items"]; ok {
		out["items"] = schemaShape(items)
	}
	if props, ok := m["properties"].(map[string]any); ok {
		shaped := map[string]any{}
		for name, p := range props {
			shaped[name] = schemaShape(p)
		}
		out["properties"] = shaped
		var req []string
		if r, ok := m["required"].([]any); ok {
			for _, x := range r {
				req = append(req, x.(string))
			}
		}
		slices.Sort(req)
		out["required"] = req
	}
	return out
}

func TestToolSelection(t *testing.T) {
	names := func(tools []fantasy.AgentTool) []string {
		var out []string
		for _, tool := range tools {
			out = append(out, tool.Info().Name)
		}
		return out
	}
	// The developer tools only when the policy turns them on; shell only
	// with ShellEnabled as well.
	fileTools := slices.DeleteFunc(slices.Clone(wsfs.ToolNames), func(n string) bool { return slices.Contains(wsfs.ExecToolNames, n) })
	if got := names(Tools(openTest(t, wsfs.Config{}))); !slices.Equal(got, fileTools) {
		t.Fatalf("Tools without exec = %v, want %v", got, fileTools)
	}
	noShell := slices.DeleteFunc(slices.Clone(wsfs.ToolNames), func(n string) bool { return n == wsfs.ToolShell })
	if got := names(Tools(openTest(t, wsfs.Config{Policy: wsfs.Policy{ExecEnabled: true}}))); !slices.Equal(got, noShell) {
		t.Fatalf("Tools with exec, without shell = %v, want %v", got, noShell)
	}
	ws := openTest(t, wsfs.Config{Policy: wsfs.Policy{ExecEnabled: true, ShellEnabled: true}})
	if got := names(Tools(ws)); !slices.Equal(got, wsfs.ToolNames) {
		t.Fatalf("Tools = %v, want ToolNames %v", got, wsfs.ToolNames)
	}
	readOnly := names(Tools(ws, WithReadOnlyTools()))
	if !slices.Contains(readOnly, wsfs.ToolReadFile) || !slices.Contains(readOnly, wsfs.ToolListDir) {
		t.Fatalf("read-only tools %v lack read_file or list_dir", readOnly)
	}
	for _, name := range readOnly {
		if spec, _ := specFor(name); !spec.ReadOnly() {
			t.Errorf("%s is offered read-only but its spec says it changes things", name)
		}
	}
	for _, writer := range []string{wsfs.ToolWriteFile, wsfs.ToolAppendFile, wsfs.ToolEditFile, wsfs.ToolApplyPatch} {
		if slices.Contains(readOnly, writer) {
			t.Errorf("read-only tools include %s", writer)
		}
	}
	if got := names(Tools(ws, WithToolNames(wsfs.ToolEditFile, wsfs.ToolReadFile))); !slices.Equal(got, []string{wsfs.ToolReadFile, wsfs.ToolEditFile}) {
		t.Fatalf("WithToolNames = %v", got)
	}
	if got := names(Tools(ws, WithToolNames(wsfs.ToolEditFile, wsfs.ToolReadFile), WithReadOnlyTools())); !slices.Equal(got, []string{wsfs.ToolReadFile}) {
		t.Fatalf("WithToolNames+WithReadOnlyTools = %v", got)
	}
	defer func() {
		if r := recover(); r == nil || !strings.Contains(fmt.Sprint(r), "rm_rf") {
			t.Fatalf("unknown tool name: recovered %v", r)
		}
	}()
	Tools(ws, WithToolNames("rm_rf"))
}

func runTool(t *testing.T, tool fantasy.AgentTool, ctx context.Context, input string) (fantasy.ToolResponse, error) {
	t.Helper()
	return tool.Run(ctx, fantasy.ToolCall{ID: "call_1", Name: tool.Info().Name, Input: input})
}

func toolByName(t *testing.T, tools []fantasy.AgentTool, name string) fantasy.AgentTool {
	t.Helper()
	for _, tool := range tools {
		if tool.Info().Name == name {
			return tool
		}
	}
	t.Fatalf("no tool %s", name)
	return nil
}

func TestToolResponses(t *testing.T) {
	h := &recordHandler{}
	ws := openTest(t, wsfs.Config{})
	tools := Tools(ws, WithLogger(slogNew(h)))
	writeFile(t, filepath.Join(ws.Root(), "a.txt"), "hello\n")

	// Success: the library's text, unchanged.
	resp, err := runTool(t, toolByName(t, tools, wsfs.ToolReadFile), bg, `{"path":"a.txt"}`)
	if err != nil || resp.IsError || resp.Type != "text" || resp.Content != "hello\n" {
		t.Fatalf("read_file = %+v, %v", resp, err)
	}
	resp, err = runTool(t, toolByName(t, tools, wsfs.ToolListDir), bg, `{}`)
	if err != nil || resp.IsError {
		t.Fatalf("list_dir = %+v, %v", resp, err)
	}
	raw, _ := ws.CallRaw(bg, wsfs.ToolListDir, `{}`)
	var env struct{ Text string }
	json.Unmarshal([]byte(raw), &env)
	if resp.Content != env.Text {
		t.Fatalf("list_dir text %q, library text %q", resp.Content, env.Text)
	}

	// Recoverable failures: "<code>: <message>" error responses, nil error.
	for _, tc := range []struct {
		tool, input string
		code        wsfs.Code
	}{
		{wsfs.ToolReadFile, `{"path":"../etc/passwd"}`, wsfs.CodeOutsideWorkspace},
		{wsfs.ToolReadFile, `{"path":"missing.txt"}`, wsfs.CodePathNotFound},
		{wsfs.ToolEditFile, `{"path":"a.txt","old_text":"nope","new_text":"x"}`, wsfs.CodeEditNotFound},
		{wsfs.ToolWriteFile, `{"path":"b.txt","content":"x","mode":"0777"}`, wsfs.CodeInvalidArguments}, // unknown field reaches the library
		{wsfs.ToolAppendFile, `{"path":"","content":"x"}`, wsfs.CodeInvalidPath},
	} {
		resp, err := runTool(t, toolByName(t, tools, tc.tool), bg, tc.input)
		if err != nil {
			t.Fatalf("%s %s: Go error %v", tc.tool, tc.input, err)
		}
		if !resp.IsError || !strings.HasPrefix(resp.Content, string(tc.code)+": ") {
			t.Fatalf("%s %s = %+v, want error response with code %s", tc.tool, tc.input, resp, tc.code)
		}
	}
	// A JSON type mismatch is caught by fantasy before the tool runs.
	resp, err = runTool(t, toolByName(t, tools, wsfs.ToolReadFile), bg, `{"path":5}`)
	if err != nil || !resp.IsError || !strings.HasPrefix(resp.Content, "invalid parameters") {
		t.Fatalf("type mismatch = %+v, %v", resp, err)
	}

	// The tools log through WithLogger: one record per call that ran.
	if n := len(h.toolRecords()); n != 7 {
		t.Fatalf("%d log records, want 7", n)
	}
}

func TestToolFatalErrors(t *testing.T) {
	ws, err := wsfs.Open(wsfs.Config{Root: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	tools := Tools(ws)

	// A cancelled run: fatal, wrapping context.Canceled.
	ctx, cancel := context.WithCancel(bg)
	cancel()
	resp, err := runTool(t, toolByName(t, tools, wsfs.ToolWriteFile), ctx, `{"path":"a.txt","content":"x"}`)
	if !errors.Is(err, context.Canceled) || !errors.Is(err, wsfs.ErrCancelled) || !resp.IsError || !strings.HasPrefix(resp.Content, "cancelled: ") {
		t.Fatalf("cancelled = %+v, %v", resp, err)
	}

	// A closed workspace: fatal.
	ws.Close()
	resp, err = runTool(t, toolByName(t, tools, wsfs.ToolListDir), bg, `{}`)
	if !errors.Is(err, wsfs.ErrInvalidWorkspace) || !resp.IsError || !strings.HasPrefix(resp.Content, "invalid_workspace: ") {
		t.Fatalf("closed = %+v, %v", resp, err)
	}
}

// TestLargeToolContentAsBuffer: a fantasy write_file or append_file with
// large content passes it to the library as a buffer, with the same result
// and the same errors as inside the JSON.
func TestLargeToolContentAsBuffer(t *testing.T) {
	ws := openTest(t, wsfs.Config{})
	big := strings.Repeat("line \"quoted\" \\ é\n", largeToolArgs/16)
	enc := jsonString(big)
	for _, c := range []struct {
		tool, args string
		want       string // "" for success: the file then holds the content
	}{
		{wsfs.ToolWriteFile, `{"path":"w.txt","content":` + enc + `}`, ""},
		{wsfs.ToolWriteFile, ` { "content" : ` + enc + ` , "path" : "w2.txt" } `, ""},
		{wsfs.ToolAppendFile, `{"path":"a.txt","content":` + enc + `}`, ""},
		{wsfs.ToolWriteFile, `{"path":"w3.txt","content":` + enc + `,"bogus":1}`, "invalid_arguments: "},
		{wsfs.ToolWriteFile, `{"path":"../w4.txt","content":` + enc + `}`, "outside_workspace: "},
	} {
		resp, err := runTool(t, toolByName(t, Tools(ws), c.tool), bg, c.args)
		if err != nil {
			t.Fatal(err)
		}
		if c.want != "" {
			if !resp.IsError || !strings.HasPrefix(resp.Content, c.want) {
				t.Fatalf("%s %.40s: %+v", c.tool, c.args, resp)
			}
			continue
		}
		var path struct {
			Path string `json:"path"`
		}
		json.Unmarshal([]byte(c.args), &path)
		if resp.IsError || readFile(t, filepath.Join(ws.Root(), path.Path)) != big {
			t.Fatalf("%s %s: %+v", c.tool, path.Path, resp)
		}
	}
}

// largeToolArgs is the size of arguments from which CallForModel passes
// write_file's and append_file's content as a buffer.
const largeToolArgs = 64 << 10

// TestToolsWithPlainAgent uses Tools directly with fantasy.NewAgent and
// Generate, without the Runner.
func TestToolsWithPlainAgent(t *testing.T) {
	ws := openTest(t, wsfs.Config{})
	model := scripted.New(
		scripted.Use(scripted.Call(wsfs.ToolWriteFile, `{"path":"p.txt","content":"plain"}`)),
		scripted.Use(scripted.Call(wsfs.ToolReadFile, `{"path":"p.txt"}`)),
		scripted.Say("read it"),
	)
	agent := fantasy.NewAgent(model, fantasy.WithTools(Tools(ws)...), fantasy.WithStopConditions(fantasy.StepCountIs(5)))
	res, err := agent.Generate(bg, fantasy.AgentCall{Prompt: "go"})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Steps) != 3 || res.Response.Content.Text() != "read it" {
		t.Fatalf("steps %d, text %q", len(res.Steps), res.Response.Content.Text())
	}
	got := scripted.ResultText(res.Steps[1].Content.ToolResults()[0].Result)
	if got != "plain" {
		t.Fatalf("read_file result %q", got)
	}
}
