package fantasytools

import (
	"path/filepath"
	"testing"

	"charm.land/fantasy"

	wsfs "github.com/wsfs/wsfs/go"
)

// TestWasmToolsAreOfferedLikeBuiltins: a workspace's Wasm tools follow the
// built-in ones with their manifest's description and schema, run through
// the library, and are chosen by WithReadOnlyTools and WithToolNames.
func TestWasmToolsAreOfferedLikeBuiltins(t *testing.T) {
	dir, _ := filepath.Abs("../../tools")
	ws := openTest(t, wsfs.Config{WasmTools: []string{dir}})
	tools := Tools(ws)
	byName := map[string]fantasy.AgentTool{}
	for _, tool := range tools {
		byName[tool.Info().Name] = tool
	}
	echo, ok := byName["echo"]
	// The built-ins but the developer tools (their policy switch is off), then the three examples.
	if !ok || len(tools) != len(wsfs.ToolNames)-len(wsfs.ExecToolNames)+3 {
		t.Fatalf("%d tools, echo %v", len(tools), ok)
	}
	info := echo.Info()
	if _, ok := info.Parameters["message"]; !ok || len(info.Required) != 1 {
		t.Fatalf("echo's info: %+v", info)
	}
	resp, err := echo.Run(bg, fantasy.ToolCall{ID: "1", Name: "echo", Input: `{"message":"hi"}`})
	if err != nil || resp.IsError || resp.Content != `{"received":{"message":"hi"}}` {
		t.Fatalf("echo: %+v, %v", resp, err)
	}
	resp, err = echo.Run(bg, fantasy.ToolCall{ID: "2", Name: "echo", Input: `{"message":"hi","x":1}`})
	if err != nil || !resp.IsError {
		t.Fatalf("extra field: %+v, %v", resp, err)
	}
	for _, tool := range Tools(ws, WithReadOnlyTools()) {
		if tool.Info().Name == "inventory" {
			t.Fatal("inventory writes: not a read-only tool")
		}
	}
	only := Tools(ws, WithToolNames("echo", "read_file"))
	if len(only) != 2 {
		t.Fatalf("WithToolNames: %d tools", len(only))
	}
}
