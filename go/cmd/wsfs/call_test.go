package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCallDispatchesAWholeToolCall: `wsfs call` takes the call as an
// argument or on stdin, runs built-in and Wasm tools and a profile's names,
// and exits 1 for a malformed call, 2 for usage errors.
func TestCallDispatchesAWholeToolCall(t *testing.T) {
	t.Setenv("WORKSPACE_FS_MODE", "")
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte("hi"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runCLI(t, "", "call", "--json", "-workspace", dir,
		`{"tool_call":{"name":"read_file","arguments":{"path":"a.txt"}}}`)
	if env := decode(t, out); code != 0 || !env.OK || !strings.Contains(string(env.Data), `"content":"hi"`) {
		t.Fatalf("exit %d: %s %s", code, out, errOut)
	}
	code, out, _ = runCLI(t, `{"name":"write_file","arguments":"{\"path\":\"b.txt\",\"content\":\"b\"}"}`,
		"call", "--json", "-workspace", dir)
	if b, _ := os.ReadFile(filepath.Join(dir, "b.txt")); code != 0 || string(b) != "b" {
		t.Fatalf("stdin call: exit %d: %s", code, out)
	}
	code, out, _ = runCLI(t, "", "call", "--json", "-workspace", dir, "-read-only", `{"name":"write_file","arguments":{"path":"c.txt","content":"c"}}`)
	if env := decode(t, out); code != 1 || env.Error == nil || env.Error.Code != "writes_disabled" {
		t.Fatalf("read-only: exit %d: %s", code, out)
	}
	code, out, _ = runCLI(t, "", "call", "--json", "-workspace", dir, `{"tool_call":{"name":"read_file"},"name":"x"}`)
	if env := decode(t, out); code != 1 || env.Error == nil || env.Error.Code != "invalid_arguments" ||
		!strings.Contains(out, "both forms at once") {
		t.Fatalf("malformed: exit %d: %s", code, out)
	}
	// The config's Wasm tools and a profile's names.
	cfg := filepath.Join(t.TempDir(), "ws.json")
	tools, _ := filepath.Abs("../../../tools/echo")
	if err := os.WriteFile(cfg, []byte(`{"wasm_tools":["`+tools+`"]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, _ = runCLI(t, "", "call", "--json", "-workspace", dir, "-config", cfg, `{"name":"echo","arguments":{"message":"m"}}`)
	if code != 0 || !strings.Contains(out, `"received":{"message":"m"}`) {
		t.Fatalf("echo: exit %d: %s", code, out)
	}
	code, out, _ = runCLI(t, "", "call", "--json", "-workspace", dir, "-profile", "capability-plan", `{"name":"file_read","arguments":{"path":"a.txt"}}`)
	if code != 0 || !strings.Contains(out, `"error_code":null`) {
		t.Fatalf("profile: exit %d: %s", code, out)
	}
	// A person reads the tool's text; an error goes to stderr.
	code, out, errOut = runCLI(t, "", "call", "-workspace", dir, `{"name":"read_file","arguments":{"path":"a.txt"}}`)
	if code != 0 || strings.TrimSpace(out) != "hi" {
		t.Fatalf("text: exit %d: %q %q", code, out, errOut)
	}
	code, out, errOut = runCLI(t, "", "call", "-workspace", dir, `{"name":"read_file","arguments":{"path":"../x"}}`)
	if code != 1 || out != "" || !strings.HasPrefix(errOut, "wsfs call: ") {
		t.Fatalf("text error: exit %d: %q %q", code, out, errOut)
	}
	if code, out, _ := runCLI(t, "", "help", "call"); code != 0 || !strings.Contains(out, "usage: wsfs call") {
		t.Fatalf("help call: exit %d: %q", code, out)
	}
	if code, _, errOut := runCLI(t, "", "call", "--json", "-workspace", dir, "{}", "{}"); code != 2 || !strings.Contains(errOut, "too many arguments") {
		t.Fatalf("usage: exit %d: %s", code, errOut)
	}
}
