package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	wsfs "github.com/wsfs/wsfs/go"
	"github.com/wsfs/wsfs/go/mcpserver"
)

// serveInMemory stands in for mcpserver.ServeStdio: the real server, over
// in-memory transports, with a client that connects, makes one tool call
// and leaves.
func serveInMemory(ctx context.Context, ws *wsfs.Workspace, o mcpserver.Options) error {
	server, err := mcpserver.New(ws, o)
	if err != nil {
		return err
	}
	st, ct := mcp.NewInMemoryTransports()
	ss, err := server.Connect(ctx, st, nil)
	if err != nil {
		return err
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		return err
	}
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: wsfs.ToolWriteFile,
		Arguments: map[string]any{"path": "a.txt", "content": "x"}}); err != nil {
		return err
	}
	cs.Close()
	return ss.Wait()
}

// TestMCPLogging: stderr has the startup line; -v adds one line per tool
// call, not the MCP SDK's own info lines (sessions, connections), which
// only --sdk-log turns on.
func TestMCPLogging(t *testing.T) {
	const sdkLine = "server session connected" // one of the SDK's info lines
	for _, tc := range []struct {
		flags           []string
		toolLine, sdkOn bool
	}{
		{nil, false, false},
		{[]string{"-v"}, true, false},
		{[]string{"--sdk-log"}, false, true},
		{[]string{"-v", "--sdk-log"}, true, true},
	} {
		var errw strings.Builder
		args := append([]string{"--root", t.TempDir()}, tc.flags...)
		if code := runMCP(context.Background(), args, &errw, serveInMemory); code != 0 {
			t.Fatalf("wsfs mcp %v: exit %d: %s", args, code, errw.String())
		}
		log := errw.String()
		if !strings.Contains(log, "wsfs mcp: serving on stdio") {
			t.Errorf("%v: no startup line in %q", tc.flags, log)
		}
		if got := strings.Contains(log, "wsfs tool call") && strings.Contains(log, "tool=write_file"); got != tc.toolLine {
			t.Errorf("%v: tool-call line %v, want %v:\n%s", tc.flags, got, tc.toolLine, log)
		}
		if got := strings.Contains(log, sdkLine); got != tc.sdkOn {
			t.Errorf("%v: the SDK's info lines %v, want %v:\n%s", tc.flags, got, tc.sdkOn, log)
		}
	}
}

// TestMCPRelativeRoot: a relative --root is taken from the working
// directory the host starts the server in, as -h says, and the startup
// warns about it with the directory it resolved to.
func TestMCPRelativeRoot(t *testing.T) {
	var errw strings.Builder
	if code := runMCP(context.Background(), []string{"-h"}, &errw, serveInMemory); code != 0 ||
		!strings.Contains(errw.String(), "A relative root is taken from the working\ndirectory the MCP host starts the server in") {
		t.Fatalf("wsfs mcp -h: exit %d, usage does not say where a relative root is taken from:\n%s", code, errw.String())
	}
	dir := t.TempDir()
	t.Chdir(dir)
	errw.Reset()
	// A missing root is refused with the path it resolved to; --create-root makes it.
	if code := runMCP(context.Background(), []string{"--root", "notes"}, &errw, serveInMemory); code != 2 ||
		!strings.Contains(errw.String(), filepath.Join(dir, "notes")) || !strings.Contains(errw.String(), "--create-root") {
		t.Fatalf("a missing relative root: exit %d: %s", code, errw.String())
	}
	errw.Reset()
	if code := runMCP(context.Background(), []string{"--root", "notes", "--create-root"}, &errw, serveInMemory); code != 0 {
		t.Fatalf("exit %d: %s", code, errw.String())
	}
	if !strings.Contains(errw.String(), "--root is relative") || !strings.Contains(errw.String(), "resolved="+filepath.Join(dir, "notes")) {
		t.Fatalf("no warning about the relative root:\n%s", errw.String())
	}
}

// TestMCPStructuredContentFlag: results are text only unless
// --structured-content asks for structuredContent too.
func TestMCPStructuredContentFlag(t *testing.T) {
	for _, tc := range []struct {
		flags []string
		want  bool
	}{
		{nil, false},
		{[]string{"--structured-content"}, true},
	} {
		var got mcpserver.Options
		var structured any
		serve := func(ctx context.Context, ws *wsfs.Workspace, o mcpserver.Options) error {
			got = o
			server, err := mcpserver.New(ws, o)
			if err != nil {
				return err
			}
			st, ct := mcp.NewInMemoryTransports()
			ss, err := server.Connect(ctx, st, nil)
			if err != nil {
				return err
			}
			cs, err := mcp.NewClient(&mcp.Implementation{Name: "test"}, nil).Connect(ctx, ct, nil)
			if err != nil {
				return err
			}
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: wsfs.ToolListDir, Arguments: map[string]any{}})
			if err != nil {
				return err
			}
			structured = res.StructuredContent
			cs.Close()
			return ss.Wait()
		}
		var errw strings.Builder
		args := append([]string{"--root", t.TempDir()}, tc.flags...)
		if code := runMCP(context.Background(), args, &errw, serve); code != 0 {
			t.Fatalf("wsfs mcp %v: exit %d: %s", args, code, errw.String())
		}
		if got.StructuredContent != tc.want || (structured != nil) != tc.want {
			t.Errorf("%v: Options.StructuredContent %v, structuredContent %v; want %v", tc.flags, got.StructuredContent, structured, tc.want)
		}
		if !strings.Contains(errw.String(), fmt.Sprintf("structured_content=%v", tc.want)) {
			t.Errorf("%v: the startup line does not say structured_content=%v:\n%s", tc.flags, tc.want, errw.String())
		}
	}
}

// TestMCPConfigWithoutWrites: a --config policy with "writes_enabled":
// false serves the read-only tools, as --read-only does, and the startup
// line says so.
func TestMCPConfigWithoutWrites(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "wsfs.json")
	if err := os.WriteFile(cfg, []byte(`{"policy":{"writes_enabled":false}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	var offered []string
	serve := func(ctx context.Context, ws *wsfs.Workspace, o mcpserver.Options) error {
		names, err := mcpserver.ToolsFor(ws, o)
		offered = names
		return err
	}
	var errw strings.Builder
	if code := runMCP(context.Background(), []string{"--config", cfg, "--root", t.TempDir()}, &errw, serve); code != 0 {
		t.Fatalf("exit %d: %s", code, errw.String())
	}
	want, _ := mcpserver.Tools(true)
	if !slices.Equal(offered, want) {
		t.Fatalf("offered %v, want %v", offered, want)
	}
	if !strings.Contains(errw.String(), "read_only=true") || !strings.Contains(errw.String(), "tools="+strings.Join(want, ",")+"\n") {
		t.Fatalf("the startup line does not show the read-only tools:\n%s", errw.String())
	}
}

// TestMCPWasmToolsAndToolEnv: the config's wasm_tools are served; the
// TOOL_* and WORKSPACE_FS_MODE variables apply to the configuration, and a
// bad one stops the server before it starts.
func TestMCPWasmToolsAndToolEnv(t *testing.T) {
	tools, _ := filepath.Abs("../../../tools")
	cfg := filepath.Join(t.TempDir(), "wsfs.json")
	if err := os.WriteFile(cfg, []byte(`{"wasm_tools":["`+tools+`"]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	var offered []string
	serve := func(ctx context.Context, ws *wsfs.Workspace, o mcpserver.Options) error {
		names, err := mcpserver.ToolsFor(ws, o)
		offered = names
		return err
	}
	run := func() (int, string) {
		var errw strings.Builder
		code := runMCP(context.Background(), []string{"--config", cfg, "--root", t.TempDir()}, &errw, serve)
		return code, errw.String()
	}
	if code, msg := run(); code != 0 || !slices.Contains(offered, "echo") {
		t.Fatalf("exit %d, offered %v: %s", code, offered, msg)
	}
	t.Setenv("TOOL_RUNTIME", "builtin")
	if code, msg := run(); code != 0 || slices.Contains(offered, "echo") {
		t.Fatalf("builtin: exit %d, offered %v: %s", code, offered, msg)
	}
	t.Setenv("TOOL_RUNTIME", "wasm")
	t.Setenv("TOOL_TIMEOUT_SECS", "1")
	if code, msg := run(); code == 0 || !strings.Contains(msg, "capability_denied") {
		t.Fatalf("a 1 s ceiling under the examples' timeouts: exit %d: %s", code, msg)
	}
	t.Setenv("TOOL_TIMEOUT_SECS", "")
	t.Setenv("WORKSPACE_FS_MODE", "agentfs")
	if code, msg := run(); code == 0 || !strings.Contains(msg, "WORKSPACE_FS_MODE") {
		t.Fatalf("agentfs: exit %d: %s", code, msg)
	}
	t.Setenv("WORKSPACE_FS_MODE", "host")
	t.Setenv("WORKSPACE_FS_SESSION", "s1")
	if code, msg := run(); code == 0 || !strings.Contains(msg, "WORKSPACE_FS_SESSION") {
		t.Fatalf("a session in host mode: exit %d: %s", code, msg)
	}
}

// TestMCPOverlay: WORKSPACE_FS_MODE=overlay and WORKSPACE_FS_SESSION put the
// served workspace on that session: the client's writes leave the root
// unchanged until the host commits, here with wsfs session after the server
// ended (it holds the session while it runs).
func TestMCPOverlay(t *testing.T) {
	root := t.TempDir()
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	t.Setenv("WORKSPACE_FS_MODE", "overlay")
	t.Setenv("WORKSPACE_FS_SESSION", "mcp1")
	var mode wsfs.Mode
	var session string
	serve := func(ctx context.Context, ws *wsfs.Workspace, o mcpserver.Options) error {
		mode, session = ws.Mode(), ws.Session()
		_, err := ws.WriteFile(ctx, wsfs.WriteFileInput{Path: "a.txt", Content: "from the client\n"})
		return err
	}
	var errw strings.Builder
	code := runMCP(context.Background(), []string{"--root", root}, &errw, serve)
	if strings.Contains(errw.String(), string(wsfs.CodeOverlayUnavailable)) {
		t.Skipf("this kernel refuses the overlay view: %s", errw.String())
	}
	if code != 0 || mode != wsfs.ModeOverlay || session != "mcp1" || !strings.Contains(errw.String(), "mode=overlay session=mcp1") {
		t.Fatalf("exit %d, mode %q, session %q: %s", code, mode, session, errw.String())
	}
	if _, err := os.Stat(filepath.Join(root, "a.txt")); !os.IsNotExist(err) {
		t.Fatalf("the client's write reached the root: %v", err)
	}
	code, out, msg := runCLI(t, "", "session", "commit", "--root", root, "--json")
	if code != 0 || !decode(t, out).OK {
		t.Fatalf("session commit: %d %s %s", code, out, msg)
	}
	if b, err := os.ReadFile(filepath.Join(root, "a.txt")); err != nil || string(b) != "from the client\n" {
		t.Fatalf("root a.txt after the commit = %q, %v", b, err)
	}
}
