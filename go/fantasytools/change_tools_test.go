package fantasytools

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	wsfs "github.com/wsfs/wsfs/go"
)

// The changing tools as agent tools: the library's text, and its errors as
// error responses (the typed API's tests are beside the typed methods).

func TestMoveFileTool(t *testing.T) {
	ws := openTest(t, wsfs.Config{})
	writeFile(t, filepath.Join(ws.Root(), "docs", "new", "a.txt"), "A")
	// The fantasy tool returns the library's text, and its errors as error responses.
	tool := toolByName(t, Tools(ws), wsfs.ToolMoveFile)
	resp, err := runTool(t, tool, bg, `{"src":"docs","dst":"moved"}`)
	if err != nil || resp.IsError || resp.Content != "moved directory docs to moved" {
		t.Fatalf("fantasy move_file = %+v, %v", resp, err)
	}
	resp, err = runTool(t, tool, bg, `{"src":"moved","dst":"moved"}`)
	if err != nil || !resp.IsError || !strings.HasPrefix(resp.Content, "invalid_arguments: ") {
		t.Fatalf("fantasy move_file onto itself = %+v, %v", resp, err)
	}
	// Both change tools are never offered as read-only tools.
	for _, tl := range Tools(ws, WithReadOnlyTools()) {
		if name := tl.Info().Name; name == wsfs.ToolMoveFile || name == wsfs.ToolDeleteFile {
			t.Fatalf("%s is offered as a read-only tool", name)
		}
	}
}

func TestDeleteFileTool(t *testing.T) {
	ws := openTest(t, wsfs.Config{})
	root := ws.Root()
	// The fantasy tool: the text, and recursive_required as an error response.
	writeFile(t, filepath.Join(root, "d", "x"), "x")
	tool := toolByName(t, Tools(ws), wsfs.ToolDeleteFile)
	resp, err := runTool(t, tool, bg, `{"path":"d"}`)
	if err != nil || !resp.IsError || !strings.HasPrefix(resp.Content, "recursive_required: d is a directory holding 1 entry;") {
		t.Fatalf("fantasy delete_file = %+v, %v", resp, err)
	}
	resp, err = runTool(t, tool, bg, `{"path":"d","recursive":true}`)
	if err != nil || resp.IsError || resp.Content != "deleted directory d and everything in it (2 entries removed, the directory included)" {
		t.Fatalf("fantasy delete_file = %+v, %v", resp, err)
	}
}

func TestReadOnlyWorkspaceRefusesEveryChangingAgentTool(t *testing.T) {
	// Exec on too, so that every tool of the specs is among the agent tools.
	ws := openTest(t, wsfs.Config{Policy: wsfs.Policy{WritesEnabled: wsfs.Bool(false), ExecEnabled: true, ShellEnabled: true}})
	writeFile(t, filepath.Join(ws.Root(), "a.txt"), "hello\n")
	specs, err := wsfs.ToolSpecs()
	if err != nil {
		t.Fatal(err)
	}
	tools := Tools(ws)
	var refused int
	for _, spec := range specs {
		args := `{"path":"a.txt","content":"x","old_text":"hello","new_text":"bye"}`
		resp, runErr := runTool(t, toolByName(t, tools, spec.Name), bg, args)
		if spec.ReadOnly() || ws.ToolEnabled(spec.Name) {
			// Read-only, or a program tool that runs on a read-only view.
			if strings.HasPrefix(resp.Content, "writes_disabled") {
				t.Errorf("%s is read-only but was refused", spec.Name)
			}
			continue
		}
		refused++
		if runErr != nil || !resp.IsError || !strings.HasPrefix(resp.Content, "writes_disabled: ") {
			t.Errorf("%s as an agent tool: %+v, %v", spec.Name, resp, runErr)
		}
	}
	if refused < 4 {
		t.Fatalf("only %d changing tools", refused)
	}
	// A program tool runs, and the kernel refuses its change.
	resp, err := runTool(t, toolByName(t, tools, wsfs.ToolShell), bg, `{"command":"echo x > a.txt"}`)
	if err != nil || !strings.Contains(resp.Content, "Read-only file system") {
		t.Errorf("shell in a read-only workspace: %+v, %v", resp, err)
	}
	if got := readFile(t, filepath.Join(ws.Root(), "a.txt")); got != "hello\n" {
		t.Fatalf("a.txt = %q", got)
	}
}

func TestCreateDirectoryTool(t *testing.T) {
	ws := openTest(t, wsfs.Config{})
	tool := Tools(ws, WithToolNames(wsfs.ToolCreateDirectory))[0]
	resp, err := runTool(t, tool, context.Background(), `{"path":"t/u","parents":true}`)
	if err != nil || resp.IsError || resp.Content != "created directory t/u (and 1 parent directory)" {
		t.Fatalf("agent tool: %+v, %v", resp, err)
	}
	if fi, err := os.Stat(filepath.Join(ws.Root(), "t", "u")); err != nil || !fi.IsDir() {
		t.Fatal(err)
	}
}

func TestApplyPatchTool(t *testing.T) {
	ws := openTest(t, wsfs.Config{})
	writeFile(t, filepath.Join(ws.Root(), "a.txt"), "one\ntwo\n")
	// The agent tool returns the library's text; a rejected patch is not an error response.
	tool := toolByName(t, Tools(ws), wsfs.ToolApplyPatch)
	resp, err := runTool(t, tool, bg, `{"patch":"*** Begin Patch\n*** Update File: a.txt\n-missing\n+x\n*** End Patch\n"}`)
	if err != nil || resp.IsError || !strings.HasPrefix(resp.Content, "PATCH NOT APPLIED") {
		t.Fatalf("tool response %+v, %v", resp, err)
	}
}

// TestLargeArgumentsTool: a write_file whose arguments are larger than the
// C memory threshold.
func TestLargeArgumentsTool(t *testing.T) {
	ws := openTest(t, wsfs.Config{})
	big := strings.Repeat("0123456789abcdef\n", (64<<10)/16)
	resp, err := runTool(t, toolByName(t, Tools(ws), wsfs.ToolWriteFile), bg, `{"path":"big.txt","content":`+jsonString(big)+`}`)
	if err != nil || resp.IsError {
		t.Fatalf("fantasy write_file = %+v, %v", resp, err)
	}
	if got := readFile(t, filepath.Join(ws.Root(), "big.txt")); got != big {
		t.Fatalf("big.txt holds %d bytes, want %d", len(got), len(big))
	}
}
