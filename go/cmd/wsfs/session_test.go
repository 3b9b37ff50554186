package main

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	wsfs "github.com/wsfs/wsfs/go"
)

// sessionCLI runs `wsfs session OP ARGS... --root root` with the session's
// state in the test's own directory; it skips where the kernel refuses the
// overlay.
func sessionCLI(t *testing.T, root string, stdin string, args ...string) (int, envelope, string) {
	t.Helper()
	code, out, msg := runCLI(t, stdin, append(append([]string{"--json", "session"}, args...), "--root", root)...)
	if strings.Contains(out+msg, "overlay_unavailable") {
		t.Skipf("this kernel refuses the overlay view: %s %s", out, msg)
	}
	if code == 2 {
		return code, envelope{}, msg
	}
	return code, decode(t, out), msg
}

// TestSessionCLI: the agent's changes (made through the library on the same
// session) are diffed, checkpointed, rewound and committed in part by
// `wsfs session`, with flags and with JSON options; the base is checked on
// disk.
func TestSessionCLI(t *testing.T) {
	root := t.TempDir()
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	t.Setenv("WORKSPACE_FS_MODE", "")
	t.Setenv("WORKSPACE_FS_SESSION", "")
	writeBase := func(name, content string) {
		if err := os.WriteFile(filepath.Join(root, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	writeBase("a.txt", "one\n")
	// The agent: a tool run on the overlay session (the CLI's tool runner has
	// no mode flag, so this goes through wsfs session's own configuration).
	agentWrite := func(path, content string) {
		t.Helper()
		cfg, err := sessionConfig(nil, root, "", "", func(string) (string, bool) { return "", false })
		if err != nil {
			t.Fatal(err)
		}
		ws := openJSONForTest(t, cfg)
		defer ws.Close()
		if _, err := ws.CallRaw(context.Background(), "write_file", string(mustJSON(map[string]string{"path": path, "content": content}))); err != nil {
			t.Fatal(err)
		}
	}
	agentWrite("a.txt", "ONE\n")
	agentWrite("b.txt", "bee\n")

	code, env, msg := sessionCLI(t, root, "", "diff")
	var d struct {
		Changes []struct{ Path, Status string }
	}
	if code != 0 || json.Unmarshal(env.Data, &d) != nil || len(d.Changes) != 2 {
		t.Fatalf("diff: %d %+v %s", code, env, msg)
	}
	if code, env, _ := sessionCLI(t, root, "", "diff", "--path", "b.txt", "--max-bytes", "5"); code != 0 ||
		!strings.Contains(string(env.Data), `"truncated":true`) || strings.Contains(string(env.Data), "a.txt") {
		t.Fatalf("diff --path --max-bytes: %d %s", code, env.Data)
	}

	code, env, _ = sessionCLI(t, root, "", "checkpoint", "--label", "two files")
	var cp struct{ ID string }
	if code != 0 || json.Unmarshal(env.Data, &cp) != nil || cp.ID == "" {
		t.Fatalf("checkpoint: %d %s", code, env.Data)
	}
	agentWrite("b.txt", "changed\n")
	if code, env, _ := sessionCLI(t, root, "", "checkpoints"); code != 0 || !strings.Contains(string(env.Data), `"label":"two files"`) {
		t.Fatalf("checkpoints: %d %s", code, env.Data)
	}
	if code, env, _ := sessionCLI(t, root, "", "rewind", cp.ID); code != 0 || !env.OK {
		t.Fatalf("rewind: %d %+v", code, env)
	}

	// Commit a.txt by flag, then b.txt by JSON on stdin.
	if code, env, _ := sessionCLI(t, root, "", "commit", "--path", "a.txt"); code != 0 || !strings.Contains(string(env.Data), `"committed":true`) {
		t.Fatalf("commit --path: %d %s", code, env.Data)
	}
	if b, _ := os.ReadFile(filepath.Join(root, "a.txt")); string(b) != "ONE\n" {
		t.Fatalf("base a.txt = %q", b)
	}
	if _, err := os.Stat(filepath.Join(root, "b.txt")); !os.IsNotExist(err) {
		t.Fatalf("b.txt reached the base before its commit: %v", err)
	}
	// A conflict: exit 1, nothing written.
	agentWrite("a.txt", "session\n")
	writeBase("a.txt", "outside\n")
	if code, env, _ := sessionCLI(t, root, "", "refresh"); code != 0 || !env.OK {
		t.Fatalf("refresh: %d %+v", code, env)
	}
	if code, env, _ := sessionCLI(t, root, "", "commit", `{"paths":["a.txt"]}`); code != 1 || !strings.Contains(string(env.Data), `"base_changed":true`) {
		t.Fatalf("conflicting commit: %d %s", code, env.Data)
	}
	// For a person: the text, singular for one, its hint naming the flags.
	if code, out, msg := runCLI(t, "", "session", "commit", "--path", "a.txt", "--root", root); code != 1 ||
		!strings.HasPrefix(out, "nothing was committed: 1 conflict (a.txt)") || !strings.Contains(out, "--merge or --force") ||
		strings.Contains(out, "merge: true") {
		t.Fatalf("conflicting commit, text: %d %q %q", code, out, msg)
	}
	if code, env, _ := sessionCLI(t, root, `{"paths":["b.txt"]}`, "commit", "-"); code != 0 || !strings.Contains(string(env.Data), `"committed":true`) {
		t.Fatalf("commit from stdin: %d %s", code, env.Data)
	}
	if b, _ := os.ReadFile(filepath.Join(root, "b.txt")); string(b) != "bee\n" {
		t.Fatalf("base b.txt = %q (the rewind should have brought back bee)", b)
	}
	if code, _, _ := sessionCLI(t, root, "", "discard"); code != 0 {
		t.Fatalf("discard: %d", code)
	}
	if code, env, _ := sessionCLI(t, root, "", "diff"); code != 0 || !strings.Contains(string(env.Data), `"changes":[]`) {
		t.Fatalf("diff after discard: %d %s", code, env.Data)
	}
	if b, _ := os.ReadFile(filepath.Join(root, "a.txt")); string(b) != "outside\n" {
		t.Fatalf("base a.txt = %q", b)
	}

	// WORKSPACE_FS_MODE=host: no session.
	t.Setenv("WORKSPACE_FS_MODE", "host")
	if code, env, _ := sessionCLI(t, root, "", "diff"); code != 1 || env.Error == nil || env.Error.Code != "no_session" {
		t.Fatalf("host mode: %d %+v", code, env)
	}
}

// TestSessionCLIUsage: bad operations, flags and argument mixes are usage
// errors (exit 2) before anything is opened.
func TestSessionCLIUsage(t *testing.T) {
	root := t.TempDir()
	for _, args := range [][]string{
		{"session"},
		{"session", "merge"},
		{"session", "rewind", "--root", root},
		{"session", "diff", "--label", "x", "--root", root},
		{"session", "commit", "--path", "a", `{"paths":["b"]}`, "--root", root},
		{"session", "commit", "--hunk", "nocolon", "--root", root},
		{"session", "checkpoints", "--path", "a", "--root", root},
		{"session", "checkpoint", "--include-ignored", "--root", root},
		{"session", "diff", "{}", "{}", "--root", root},
		{"session", "diff"},
	} {
		if code, out, msg := runCLI(t, "", args...); code != 2 || out != "" {
			t.Errorf("%v: exit %d, out %q, stderr %q", args, code, out, msg)
		}
	}
	// Help is on stdout, with every operation's flags under the one heading.
	if code, out, msg := runCLI(t, "", "session", "-h"); code != 0 || msg != "" || !strings.Contains(out, "checkpoints") ||
		!strings.Contains(out, "flags:\n  -config") || !strings.Contains(out, "-hunk") || strings.HasSuffix(out, "flags:\n") {
		t.Fatalf("-h: %d %q %q", code, out, msg)
	}
}

func openJSONForTest(t *testing.T, cfg []byte) *wsfs.Workspace {
	t.Helper()
	ws, err := wsfs.OpenJSON(cfg, nil)
	if errors.Is(err, wsfs.ErrOverlayUnavailable) {
		t.Skipf("this kernel refuses the overlay view: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	return ws
}

// TestToolRunOnSession: under WORKSPACE_FS_MODE=overlay a tool run writes to
// the session WORKSPACE_FS_SESSION, and wsfs session commits it.
func TestToolRunOnSession(t *testing.T) {
	root := t.TempDir()
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	t.Setenv("WORKSPACE_FS_MODE", "overlay")
	t.Setenv("WORKSPACE_FS_SESSION", "cli1")
	code, out, msg := runCLI(t, "", "-workspace", root, "write_file", `{"path":"a.txt","content":"x\n"}`)
	if strings.Contains(out+msg, "overlay_unavailable") {
		t.Skipf("this kernel refuses the overlay view: %s %s", out, msg)
	}
	if code != 0 {
		t.Fatalf("write_file: %d %s %s", code, out, msg)
	}
	if _, err := os.Stat(filepath.Join(root, "a.txt")); !os.IsNotExist(err) {
		t.Fatalf("the tool run wrote the base: %v", err)
	}
	if code, env, _ := sessionCLI(t, root, "", "diff", "--session", "other"); code != 0 || !strings.Contains(string(env.Data), `"changes":[]`) {
		t.Fatalf("another session sees the change: %d %s", code, env.Data)
	}
	if code, env, _ := sessionCLI(t, root, "", "commit"); code != 0 || !env.OK {
		t.Fatalf("commit: %d %+v", code, env)
	}
	if b, err := os.ReadFile(filepath.Join(root, "a.txt")); err != nil || string(b) != "x\n" {
		t.Fatalf("base a.txt = %q, %v", b, err)
	}
	t.Setenv("WORKSPACE_FS_MODE", "agentfs")
	if code, _, msg := runCLI(t, "", "-workspace", root, "read_file", `{"path":"a.txt"}`); code != 2 || !strings.Contains(msg, "WORKSPACE_FS_MODE") {
		t.Fatalf("agentfs: %d %s", code, msg)
	}
}

// TestSessionCLIIncludeIgnored: a cache the agent made stays out of `wsfs
// session diff` and `commit` (and in the session) until --include-ignored.
func TestSessionCLIIncludeIgnored(t *testing.T) {
	root := t.TempDir()
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	t.Setenv("WORKSPACE_FS_MODE", "")
	t.Setenv("WORKSPACE_FS_SESSION", "")
	cfg, err := sessionConfig(nil, root, "", "", func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	ws := openJSONForTest(t, cfg)
	for path, content := range map[string]string{"a.txt": "a\n", "__pycache__/m.pyc": "pyc\n"} {
		if _, err := ws.CallRaw(context.Background(), "write_file", string(mustJSON(map[string]string{"path": path, "content": content}))); err != nil {
			t.Fatal(err)
		}
	}
	ws.Close()
	type diff struct {
		Changes []struct{ Path string }
		Ignored int
	}
	paths := func(args ...string) (diff, string) {
		t.Helper()
		code, env, msg := sessionCLI(t, root, "", append([]string{"diff"}, args...)...)
		var d diff
		if code != 0 || json.Unmarshal(env.Data, &d) != nil {
			t.Fatalf("diff %v: %d %+v %s", args, code, env, msg)
		}
		var p []string
		for _, c := range d.Changes {
			p = append(p, c.Path)
		}
		return d, strings.Join(p, " ")
	}
	if d, p := paths(); p != "a.txt" || d.Ignored != 2 {
		t.Fatalf("diff: %s %+v", p, d)
	}
	if d, p := paths("--include-ignored"); p != "__pycache__ __pycache__/m.pyc a.txt" || d.Ignored != 0 {
		t.Fatalf("diff --include-ignored: %s %+v", p, d)
	}
	if code, env, _ := sessionCLI(t, root, "", "commit"); code != 0 || !strings.Contains(string(env.Data), `"ignored":2`) {
		t.Fatalf("commit: %d %s", code, env.Data)
	}
	if _, err := os.Stat(filepath.Join(root, "__pycache__")); !os.IsNotExist(err) {
		t.Fatalf("the cache reached the base: %v", err)
	}
	if code, env, _ := sessionCLI(t, root, "", "commit", "--include-ignored"); code != 0 || !strings.Contains(string(env.Data), `"committed":true`) {
		t.Fatalf("commit --include-ignored: %d %s", code, env.Data)
	}
	if b, err := os.ReadFile(filepath.Join(root, "__pycache__", "m.pyc")); err != nil || string(b) != "pyc\n" {
		t.Fatalf("base __pycache__/m.pyc = %q, %v", b, err)
	}
}
