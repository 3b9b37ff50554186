package mcpserver

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	wsfs "github.com/wsfs/wsfs/go"
)

// connect serves ws with opts over the SDK's in-memory transport and
// returns a connected client session.
func connect(t *testing.T, ws *wsfs.Workspace, opts Options) *mcp.ClientSession {
	t.Helper()
	server, err := New(ws, opts)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := server.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func openWorkspace(t *testing.T) *wsfs.Workspace {
	t.Helper()
	ws, err := wsfs.Open(wsfs.Config{Root: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.Close() })
	return ws
}

// openExecWorkspace opens a workspace whose policy turns every developer tool
// on, so that every tool of the library is offered.
func openExecWorkspace(t *testing.T) *wsfs.Workspace {
	t.Helper()
	ws, err := wsfs.Open(wsfs.Config{Root: t.TempDir(), Policy: wsfs.Policy{ExecEnabled: true, ShellEnabled: true}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.Close() })
	return ws
}

// TestDevToolsOnlyWhenExecEnabled: the developer tools are listed and
// callable only when the workspace's policy turns them on; shell only with
// shell_enabled too.
func TestDevToolsOnlyWhenExecEnabled(t *testing.T) {
	list := func(ws *wsfs.Workspace) []string {
		res, err := connect(t, ws, Options{}).ListTools(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, tl := range res.Tools {
			names = append(names, tl.Name)
		}
		return names
	}
	for _, name := range list(openWorkspace(t)) {
		if slices.Contains(wsfs.ExecToolNames, name) {
			t.Errorf("%s offered without exec_enabled", name)
		}
	}
	ws, err := wsfs.Open(wsfs.Config{Root: t.TempDir(), Policy: wsfs.Policy{ExecEnabled: true}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.Close() })
	names := list(ws)
	for _, name := range wsfs.ExecToolNames {
		if slices.Contains(names, name) != (name != wsfs.ToolShell) {
			t.Errorf("exec_enabled without shell_enabled: %s offered = %v", name, slices.Contains(names, name))
		}
	}
	if got, _ := ToolsFor(ws, Options{}); len(got) != len(names) {
		t.Errorf("ToolsFor = %v, the server lists %v", got, names)
	}
	cs := connect(t, ws, Options{})
	res := call(t, cs, wsfs.ToolSafeShell, map[string]any{"command": "echo hi"})
	if res.IsError || !strings.HasPrefix(res.Content[0].(*mcp.TextContent).Text, "exit code 0\nhi") {
		t.Fatalf("safe_shell: %+v", res.Content[0])
	}
	res = call(t, cs, wsfs.ToolSafeShell, map[string]any{"command": "rm -rf /"})
	if res.IsError || !strings.HasPrefix(res.Content[0].(*mcp.TextContent).Text, "blocked: ") {
		t.Fatalf("safe_shell rm: %+v", res.Content[0])
	}
	// Not offered, not callable.
	if _, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: wsfs.ToolShell, Arguments: map[string]any{"command": "true"}}); err == nil {
		t.Fatal("shell was callable without shell_enabled")
	}
}

func call(t *testing.T, cs *mcp.ClientSession, name string, args any) *mcp.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return res
}

func text(t *testing.T, res *mcp.CallToolResult) string {
	t.Helper()
	if len(res.Content) != 1 {
		t.Fatalf("%d content items", len(res.Content))
	}
	tc, ok := res.Content[0].(*mcp.TextContent)
	if !ok {
		t.Fatalf("content %T", res.Content[0])
	}
	return tc.Text
}

// structured re-encodes a result's structuredContent as JSON.
func structured(t *testing.T, res *mcp.CallToolResult) string {
	t.Helper()
	b, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestToolsComeFromSpecs: every tool of wsfs_tool_specs() is offered, with
// the library's description, schema and annotations.
func TestToolsComeFromSpecs(t *testing.T) {
	specs, err := wsfs.ToolSpecs()
	if err != nil {
		t.Fatal(err)
	}
	cs := connect(t, openExecWorkspace(t), Options{})
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Tools) != len(specs) {
		t.Fatalf("%d tools offered, the library has %d", len(res.Tools), len(specs))
	}
	for _, spec := range specs {
		i := slices.IndexFunc(res.Tools, func(tl *mcp.Tool) bool { return tl.Name == spec.Name })
		if i < 0 {
			t.Fatalf("%s not offered", spec.Name)
		}
		tool := res.Tools[i]
		if tool.Description != spec.Description {
			t.Errorf("%s: description differs", spec.Name)
		}
		assertSameJSON(t, spec.Name+" schema", tool.InputSchema, spec.Parameters)
		assertSameJSON(t, spec.Name+" annotations", tool.Annotations, spec.Annotations)
	}
}

func assertSameJSON(t *testing.T, what string, got any, want json.RawMessage) {
	t.Helper()
	b, err := json.Marshal(got)
	if err != nil {
		t.Fatal(err)
	}
	var g, w any
	if err := json.Unmarshal(b, &g); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(want, &w); err != nil {
		t.Fatal(err)
	}
	gb, _ := json.Marshal(g)
	wb, _ := json.Marshal(w)
	if string(gb) != string(wb) {
		t.Errorf("%s:\n got %s\nwant %s", what, gb, wb)
	}
}

func TestReadOnlyFollowsAnnotations(t *testing.T) {
	specs, _ := wsfs.ToolSpecs()
	var want []string
	for _, s := range specs {
		if s.ReadOnly() {
			want = append(want, s.Name)
		}
	}
	if len(want) == 0 || len(want) == len(specs) {
		t.Fatalf("read-only tools %v of %d: the test needs both kinds", want, len(specs))
	}
	ws := openExecWorkspace(t)
	cs := connect(t, ws, Options{ReadOnly: true})
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, tl := range res.Tools {
		got = append(got, tl.Name)
		if tl.Annotations == nil || !tl.Annotations.ReadOnlyHint {
			t.Errorf("%s offered in read-only mode without readOnlyHint", tl.Name)
		}
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("read-only tools %v, want %v", got, want)
	}
	// Tools is for the default policy: no developer tools.
	want = slices.DeleteFunc(want, func(n string) bool { return slices.Contains(wsfs.ExecToolNames, n) })
	names, _ := Tools(true)
	slices.Sort(names)
	if !slices.Equal(names, want) {
		t.Fatalf("Tools(true) = %v, want %v", names, want)
	}
	// A tool that is not offered cannot be called.
	_, err = cs.CallTool(context.Background(), &mcp.CallToolParams{Name: wsfs.ToolWriteFile,
		Arguments: map[string]any{"path": "x.txt", "content": "x"}})
	if err == nil || !strings.Contains(err.Error(), "unknown tool") {
		t.Fatalf("write_file in read-only mode: %v", err)
	}
	if _, err := os.Stat(filepath.Join(ws.Root(), "x.txt")); !os.IsNotExist(err) {
		t.Fatalf("x.txt exists: %v", err)
	}
}

// TestDefaultResultsAreText: by default a result is the envelope's text
// alone, with no structuredContent, so a client that would show the model
// structuredContent instead of the text cannot drop the hints, notices and
// warnings the text carries. A failure is isError with "<code>: <message>".
func TestDefaultResultsAreText(t *testing.T) {
	ws, err := wsfs.Open(wsfs.Config{Root: t.TempDir(), Limits: wsfs.Limits{MaxReadBytes: 4}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.Close() })
	cs := connect(t, ws, Options{})

	res := call(t, cs, wsfs.ToolWriteFile, map[string]any{"path": "a.txt", "content": "hello\n"})
	if res.IsError || text(t, res) != "created a.txt (6 bytes)" || res.StructuredContent != nil {
		t.Fatalf("write_file: %v %q %s", res.IsError, text(t, res), structured(t, res))
	}
	res = call(t, cs, wsfs.ToolReadFile, map[string]any{"path": "a.txt"})
	if res.IsError || text(t, res) != "hell\n[truncated: line 1 is longer than max_read_bytes (4): only its first 4 of 6 bytes are shown; continue with start_line=2]" || res.StructuredContent != nil {
		t.Fatalf("read_file: %v %q %s", res.IsError, text(t, res), structured(t, res))
	}
	res = call(t, cs, wsfs.ToolReadFile, map[string]any{"path": "../x"})
	if !res.IsError || !strings.HasPrefix(text(t, res), "outside_workspace: ") || res.StructuredContent != nil {
		t.Fatalf("read_file ../x: %v %q %s", res.IsError, text(t, res), structured(t, res))
	}
	if r := Result(`{"ok":false}`); !r.IsError || r.StructuredContent != nil {
		t.Fatalf("malformed envelope: %v %s", r.IsError, structured(t, r))
	}
}

// TestCallResults: with Options.StructuredContent, a result also carries
// the envelope's data, or {"error": {code, message}} for a failure.
// TestPolicyWithoutWritesOffersReadOnlyTools: a workspace whose policy
// says writes_enabled: false (from --config, or a host's wsfs.Config) gets
// only the read-only tools, as with Options.ReadOnly: every other tool
// could only fail with writes_disabled.
func TestPolicyWithoutWritesOffersReadOnlyTools(t *testing.T) {
	want, _ := Tools(true)
	ws, err := wsfs.Open(wsfs.Config{Root: t.TempDir(), Policy: wsfs.Policy{WritesEnabled: wsfs.Bool(false)}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.Close() })
	res, err := connect(t, ws, Options{}).ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, tl := range res.Tools {
		got = append(got, tl.Name)
	}
	sorted := slices.Sorted(slices.Values(want)) // the SDK lists tools by name
	if !slices.Equal(got, sorted) {
		t.Fatalf("writes_enabled false: tools %v, want %v", got, sorted)
	}
	if names, err := ToolsFor(ws, Options{}); err != nil || !slices.Equal(names, want) {
		t.Fatalf("ToolsFor = %v, %v; want %v", names, err, want)
	}
	all, _ := Tools(false)
	if names, err := ToolsFor(openWorkspace(t), Options{}); err != nil || !slices.Equal(names, all) {
		t.Fatalf("ToolsFor a writable workspace = %v, %v; want %v", names, err, all)
	}
}

func TestCallResults(t *testing.T) {
	ws := openWorkspace(t)
	cs := connect(t, ws, Options{StructuredContent: true})

	res := call(t, cs, wsfs.ToolWriteFile, map[string]any{"path": "a/b.txt", "content": "hello\n"})
	if res.IsError || text(t, res) != "created a/b.txt (6 bytes)" ||
		structured(t, res) != `{"bytes_written":6,"created":true,"existed_before":false,"mode":"overwrite","path":"a/b.txt"}` {
		t.Fatalf("write_file: %v %q %s", res.IsError, text(t, res), structured(t, res))
	}
	res = call(t, cs, wsfs.ToolReadFile, map[string]any{"path": "a/b.txt"})
	if res.IsError || text(t, res) != "hello\n" ||
		structured(t, res) != `{"bytes":6,"content":"hello\n","path":"a/b.txt","sha256":"5891b5b522d5df086d0ff0b110fbd9d21bb4fc7163af34d08286a2e846f6be03","total_bytes":6,"total_lines":1,"truncated":false}` {
		t.Fatalf("read_file: %v %q %s", res.IsError, text(t, res), structured(t, res))
	}
	// No arguments at all: the library's defaults apply.
	res = call(t, cs, wsfs.ToolListDir, nil)
	if res.IsError || !strings.HasPrefix(text(t, res), ". (1 entry)") {
		t.Fatalf("list_dir: %v %q", res.IsError, text(t, res))
	}

	for _, tc := range []struct {
		name string
		args any
		code string
	}{
		{wsfs.ToolReadFile, map[string]any{"path": "../x"}, "outside_workspace"},
		{wsfs.ToolReadFile, map[string]any{"path": "nope.txt"}, "path_not_found"},
		{wsfs.ToolReadFile, map[string]any{"path": 7}, "invalid_arguments"},
		{wsfs.ToolReadFile, map[string]any{"path": "a/b.txt", "extra": true}, "invalid_arguments"},
		{wsfs.ToolEditFile, map[string]any{"path": "a/b.txt", "old_text": "absent", "new_text": "x"}, "edit_not_found"},
	} {
		res := call(t, cs, tc.name, tc.args)
		var sc struct {
			Error ErrorInfo `json:"error"`
		}
		if err := json.Unmarshal([]byte(structured(t, res)), &sc); err != nil {
			t.Fatal(err)
		}
		if !res.IsError || !strings.HasPrefix(text(t, res), tc.code+": ") ||
			sc.Error.Code != tc.code || text(t, res) != sc.Error.Code+": "+sc.Error.Message {
			t.Errorf("%s %v: isError %v, text %q, structured %s", tc.name, tc.args, res.IsError, text(t, res), structured(t, res))
		}
	}

	// A closed workspace is a tool error too, not a protocol failure.
	ws.Close()
	res = call(t, cs, wsfs.ToolReadFile, map[string]any{"path": "a/b.txt"})
	if !res.IsError || !strings.HasPrefix(text(t, res), "invalid_workspace: ") {
		t.Fatalf("after Close: %v %q", res.IsError, text(t, res))
	}
}

func TestResultOfMalformedEnvelope(t *testing.T) {
	for _, env := range []string{"", "{", `{"ok":false}`} {
		for _, res := range []*mcp.CallToolResult{Result(env), StructuredResult(env)} {
			if !res.IsError || text(t, res) != "io_error: malformed result from the wsfs library" {
				t.Errorf("Result(%q) = %v %q", env, res.IsError, text(t, res))
			}
		}
	}
	if sc := structured(t, StructuredResult("")); sc != `{"error":{"code":"io_error","message":"malformed result from the wsfs library"}}` {
		t.Errorf("StructuredResult(\"\") structuredContent %s", sc)
	}
}

func TestWorkspaceConfig(t *testing.T) {
	for _, tc := range []struct {
		file, root, want, err string
	}{
		{"", "/w", `{"root":"/w"}`, ""},
		{`{"root":"/file","limits":{"max_read_bytes":5},"policy":{"x":1}}`, "", `{"limits":{"max_read_bytes":5},"policy":{"x":1},"root":"/file"}`, ""},
		{`{"root":"/file","restrict_to_workspace":false}`, "/flag", `{"restrict_to_workspace":false,"root":"/flag"}`, ""},
		{"null", "/w", `{"root":"/w"}`, ""},
		{"", "", "", "no workspace root"},
		{`{"limits":{}}`, "", "", "no workspace root"},
		{`[1]`, "/w", "", "one JSON object"},
		{`{} {}`, "/w", "", "more after it"},
	} {
		got, err := WorkspaceConfig([]byte(tc.file), tc.root)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("WorkspaceConfig(%q, %q) error %v, want %q", tc.file, tc.root, err, tc.err)
			}
			continue
		}
		if err != nil || string(got) != tc.want {
			t.Errorf("WorkspaceConfig(%q, %q) = %s, %v; want %s", tc.file, tc.root, got, err, tc.want)
		}
	}
	// The library, not the server, judges the keys: an unknown one is refused.
	cfg, _ := WorkspaceConfig([]byte(`{"no_such_key":1}`), t.TempDir())
	if _, err := wsfs.OpenJSON(cfg, nil); !strings.Contains(err.Error(), "invalid_arguments") {
		t.Fatalf("unknown key: %v", err)
	}
}

func TestReadOnlyConfig(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`{"root":"/w"}`, `{"policy":{"writes_enabled":false},"root":"/w"}`},
		{`{"root":"/w","policy":null}`, `{"policy":{"writes_enabled":false},"root":"/w"}`},
		{`{"root":"/w","policy":{"deny_read":[".env"],"writes_enabled":true}}`, `{"policy":{"deny_read":[".env"],"writes_enabled":false},"root":"/w"}`},
	} {
		got, err := ReadOnlyConfig([]byte(tc.in))
		if err != nil || string(got) != tc.want {
			t.Errorf("ReadOnlyConfig(%s) = %s, %v; want %s", tc.in, got, err, tc.want)
		}
	}
	if _, err := ReadOnlyConfig([]byte(`{"root":"/w","policy":[1]}`)); err == nil {
		t.Error("a policy that is not an object is accepted")
	}
	// The library refuses changes in the resulting workspace.
	cfg, _ := WorkspaceConfig(nil, t.TempDir())
	cfg, _ = ReadOnlyConfig(cfg)
	ws, err := wsfs.OpenJSON(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	raw, _ := ws.CallRaw(context.Background(), "write_file", `{"path":"x","content":"y"}`)
	if res := Result(raw); !res.IsError || !strings.Contains(text(t, res), "writes_disabled") {
		t.Fatalf("write in a read-only config: %v %q", res.IsError, text(t, res))
	}
}

func TestMaxLineLength(t *testing.T) {
	if got := maxLineLength(wsfs.Limits{MaxWriteBytes: 1 << 20}); got != 16<<20+64<<10 {
		t.Fatalf("default limits: %d", got)
	}
	if got := maxLineLength(wsfs.Limits{MaxWriteBytes: 10 << 20}); got != 61<<20+64<<10 {
		t.Fatalf("10 MiB writes: %d", got)
	}
}

// TestProfileWorkspace: a workspace opened with a profile is served as that
// profile: its tools, and its envelope as each result's text.
func TestProfileWorkspace(t *testing.T) {
	cfg, err := WorkspaceConfig([]byte(`{"profile": "filesystem-tool"}`), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ws, err := wsfs.OpenJSON(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.Close() })
	cs := connect(t, ws, Options{})
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Tools) != 1 || res.Tools[0].Name != "filesystem" {
		t.Fatalf("tools %v", res.Tools)
	}
	if names, err := ToolsFor(ws, Options{}); err != nil || !slices.Equal(names, []string{"filesystem"}) {
		t.Fatalf("ToolsFor: %v %v", names, err)
	}
	r := call(t, cs, "filesystem", map[string]any{"operation": "write", "path": "a.txt", "content": "hi"})
	if r.IsError || !strings.Contains(text(t, r), `"ok":true`) {
		t.Fatalf("write: %s", text(t, r))
	}
	r = call(t, cs, "filesystem", map[string]any{"operation": "read", "path": "a.txt"})
	if got := text(t, r); r.IsError || got != `{"ok":true,"result":"hi","warnings":[]}` {
		t.Fatalf("read: %s", got)
	}
	r = call(t, cs, "filesystem", map[string]any{"operation": "read", "path": "nope.txt"})
	if !r.IsError || !strings.Contains(text(t, r), "File not found: nope.txt") {
		t.Fatalf("missing: %v %s", r.IsError, text(t, r))
	}
	if r := ProfileResult(`{"success":false,"error":"x","message":"m"}`, true); !r.IsError || r.StructuredContent == nil {
		t.Fatalf("agent-base failure: %+v", r)
	}
}

// TestWasmToolsAreServed: a workspace's Wasm tools are offered after the
// built-in ones, with their manifest's schema, and called like them.
func TestWasmToolsAreServed(t *testing.T) {
	dir, _ := filepath.Abs("../../tools")
	ws, err := wsfs.Open(wsfs.Config{Root: t.TempDir(), WasmTools: []string{dir}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.Close() })
	cs := connect(t, ws, Options{})
	list, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range list.Tools {
		names = append(names, tool.Name)
	}
	if !slices.Contains(names, "echo") || !slices.Contains(names, "inventory") {
		t.Fatalf("tools: %v", names)
	}
	res := call(t, cs, "echo", map[string]any{"message": "hi"})
	if res.IsError || text(t, res) != `{"received":{"message":"hi"}}` {
		t.Fatalf("echo: %q", text(t, res))
	}
	ro, err := ToolsFor(ws, Options{ReadOnly: true})
	if err != nil || slices.Contains(ro, "inventory") || !slices.Contains(ro, "echo") {
		t.Fatalf("read-only: %v, %v", ro, err)
	}
}

// TestInstructionsSayThePathsRule: the server's instructions carry
// wsfs.ToolInstructions(), said once rather than in every tool (issue 19
// item 10).
func TestInstructionsSayThePathsRule(t *testing.T) {
	ws, err := wsfs.Open(wsfs.Config{Root: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.Close() })
	cs := connect(t, ws, Options{})
	got := cs.InitializeResult().Instructions
	if !strings.Contains(got, wsfs.ToolInstructions()) {
		t.Fatalf("instructions %q do not hold %q", got, wsfs.ToolInstructions())
	}
}
