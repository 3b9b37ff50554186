package fantasytools

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"charm.land/fantasy"

	wsfs "github.com/wsfs/wsfs/go"
)

// The reading tools as agent tools return exactly the library's text (the
// typed API's tests are beside the typed methods).

// TestRawReadEdgeCasesTool reads contents that could confuse the split of
// a raw result through the fantasy tool.
func TestRawReadEdgeCasesTool(t *testing.T) {
	ws := openTest(t, wsfs.Config{})
	readTool := toolByName(t, Tools(ws), wsfs.ToolReadFile)
	for name, content := range map[string]string{
		"empty":        "",
		"newline":      "\n",
		"newlines":     "\n\n\nx\n\n",
		"lines":        "a\nb\nc\n",
		"no-eol":       "a\nb",
		"crlf":         "line 1\r\nline 2\r\n\r\n",
		"cr":           "a\rb\r",
		"envelope":     `{"ok":false,"error":{"code":"io_error","message":"fake"},"text":"io_error: fake"}`,
		"envelope-nl":  "{\"ok\":true,\"warnings\":[]}\n{\"ok\":true,\"data\":{\"path\":\"x\",\"bytes\":1}}\nmore\n",
		"json-escapes": `"\n\u0000\\" \ud800 "quoted"`,
		"unicode":      "é\u2028\u2029\U0001F600\t\x7f",
		"trailing-ws":  "x \t \n \n",
	} {
		writeFile(t, filepath.Join(ws.Root(), name), content)
		args := pathArgs(name)
		wantText := content
		if content == "" {
			wantText = "(empty file)"
		}
		resp, err := runTool(t, readTool, bg, args)
		if err != nil || resp.IsError || resp.Content != wantText {
			t.Fatalf("%s: fantasy read_file = %+v, %v", name, resp, err)
		}
	}
}

// TestReadTextMatchesLibraryTool: a cut read's text from the fantasy tool
// is the library's.
func TestReadTextMatchesLibraryTool(t *testing.T) {
	for _, limit := range []int{1, 2, 5, 8, 64, 1000} {
		ws := openTest(t, wsfs.Config{Limits: wsfs.Limits{MaxReadBytes: limit}})
		readTool := toolByName(t, Tools(ws), wsfs.ToolReadFile)
		files := map[string]string{
			"eol":       "0123456789\n",
			"eol-cut":   "0123\n6789abcdef", // cut right after a newline for limit 5
			"no-eol":    "abcdefghijklmnopqrstuvwxyz",
			"multibyte": "ééé€€€\U0001F600\U0001F600", // cut back to a UTF-8 boundary
			"lines":     strings.Repeat("line\n", 300),
			"crlf":      strings.Repeat("l\r\n", 10),
			"short":     "x",
			"empty":     "",
		}
		for name, content := range files {
			writeFile(t, filepath.Join(ws.Root(), name), content)
			text, ok := libraryText(t, ws, wsfs.ToolReadFile, pathArgs(name))
			if !ok {
				t.Fatalf("limit %d, %s: the library failed: %q", limit, name, text)
			}
			resp, err := runTool(t, readTool, bg, pathArgs(name))
			if err != nil || resp.IsError || resp.Content != text {
				t.Fatalf("limit %d, %s: fantasy read_file = %+v, %v; library text %q", limit, name, resp, err, text)
			}
		}
	}
}

// TestRawModeErrorsTool: failures in the raw output modes reach the model
// as the library's error text.
func TestRawModeErrorsTool(t *testing.T) {
	ws := openTest(t, wsfs.Config{})
	writeFile(t, filepath.Join(ws.Root(), "bin"), "a\x00b\n")
	writeFile(t, filepath.Join(ws.Root(), "dir", "x"), "x")
	readTool := toolByName(t, Tools(ws), wsfs.ToolReadFile)
	for _, tc := range []struct {
		path string
		code wsfs.Code
	}{
		{"missing.txt", wsfs.CodePathNotFound},
		{"bin", wsfs.CodeIOError},
		{"dir", wsfs.CodeNotAFile},
		{"../outside", wsfs.CodeOutsideWorkspace},
		{"", wsfs.CodeInvalidPath},
	} {
		text, ok := libraryText(t, ws, wsfs.ToolReadFile, pathArgs(tc.path))
		if ok || !strings.HasPrefix(text, string(tc.code)+": ") {
			t.Fatalf("%q: library text %q, want code %s", tc.path, text, tc.code)
		}
		resp, err := runTool(t, readTool, bg, pathArgs(tc.path))
		if err != nil || !resp.IsError || resp.Content != text {
			t.Fatalf("%q: fantasy = %+v, %v; want error response %q", tc.path, resp, err, text)
		}
	}
}

// TestOutsideCheckTool: the read_file tool answers every path exactly as
// the library does, the paths the Go check refuses without calling it
// included.
func TestOutsideCheckTool(t *testing.T) {
	ws := openTest(t, wsfs.Config{})
	paths := []string{
		"../x", "..", "../", "./../x", "..//a/b", "../.", ".././x/./y", "./.", "../../../etc/passwd",
		"../.wsfs-0123456789abcdef.tmp", "../.wsfs-notes.tmp", "../x/", `..\x`, `../caf\xe9`,
		"a/../../x", "a/..", "...", "..x", "x/../..", "/abs/../x", "../é", "../ x", " ../x",
		"../" + strings.Repeat("a", 5000), "./", "", "x",
	}
	for _, p := range paths {
		text, ok := libraryText(t, ws, wsfs.ToolReadFile, pathArgs(p))
		resp, err := runTool(t, toolByName(t, Tools(ws), wsfs.ToolReadFile), context.Background(), pathArgs(p))
		if err != nil || resp.IsError == ok || resp.Content != text {
			t.Fatalf("%q: tool %+v, %v; library %q", p, resp, err, text)
		}
	}
}

// TestReadFileRangeTool: a range's text from the fantasy tool is the
// library's (numbered lines and hint included).
func TestReadFileRangeTool(t *testing.T) {
	ws := openTest(t, wsfs.Config{Limits: wsfs.Limits{MaxReadBytes: 40}})
	readTool := toolByName(t, Tools(ws), wsfs.ToolReadFile)
	root := ws.Root()
	var lines strings.Builder
	for i := 1; i <= 10; i++ {
		fmt.Fprintf(&lines, "line %d\n", i)
	}
	writeFile(t, filepath.Join(root, "a.txt"), lines.String())
	writeFile(t, filepath.Join(root, "crlf.txt"), "one\r\ntwo\r\nthree")
	writeFile(t, filepath.Join(root, "empty.txt"), "")
	writeFile(t, filepath.Join(root, "long.txt"), "short\n"+strings.Repeat("€", 20)+"\n")
	for _, in := range []wsfs.ReadFileInput{
		{Path: "a.txt", StartLine: 3, MaxLines: 2},
		{Path: "a.txt", StartLine: 9},
		{Path: "a.txt", LineNumbers: true},
		{Path: "a.txt", MaxLines: 1, LineNumbers: true},
		{Path: "crlf.txt", StartLine: 2, LineNumbers: true},
		{Path: "empty.txt", StartLine: 1},
		{Path: "long.txt", StartLine: 2},
	} {
		b, err := json.Marshal(in)
		if err != nil {
			t.Fatal(err)
		}
		args := string(b)
		text, ok := libraryText(t, ws, wsfs.ToolReadFile, args)
		if !ok {
			t.Fatalf("%+v: the library failed: %q", in, text)
		}
		resp, err := runTool(t, readTool, bg, args)
		if err != nil || resp.IsError || resp.Content != text {
			t.Fatalf("%+v: fantasy read_file = %+v, %v", in, resp, err)
		}
	}
}

func TestGetPathInfoTool(t *testing.T) {
	ws := openTest(t, wsfs.Config{})
	writeFile(t, filepath.Join(ws.Root(), "src", "main.rs"), "fn main() {}\nlast")
	// The fantasy tool returns the library's text.
	resp, err := runTool(t, toolByName(t, Tools(ws, WithReadOnlyTools()), wsfs.ToolGetPathInfo), bg, pathArgs("src"))
	if err != nil || resp.IsError || !strings.HasPrefix(resp.Content, "src: directory\n") {
		t.Fatalf("fantasy get_path_info = %+v, %v", resp, err)
	}
	if text, _ := libraryText(t, ws, wsfs.ToolGetPathInfo, pathArgs("src")); text != resp.Content {
		t.Fatalf("fantasy get_path_info %q, library %q", resp.Content, text)
	}
}

// walkProject makes a small project in root: sources, a .gitignore, a
// hidden file, a symlink leading outside.
func walkProject(t *testing.T, root string) {
	t.Helper()
	for name, content := range map[string]string{
		"src/main.go":      "package main\n\nfunc main() { println(\"needle\") }\n",
		"src/util/util.go": "package util // needle\n",
		"README.md":        "No Needle here\n",
		".env":             "needle=1\n",
		"gen/out.go":       "needle generated\n",
		".gitignore":       "gen/\n",
		"docs/é.txt":       "héllo needle\n",
	} {
		writeFile(t, filepath.Join(root, name), content)
	}
	outside := t.TempDir()
	writeFile(t, filepath.Join(outside, "secret.go"), "needle outside\n")
	if err := os.Symlink(outside, filepath.Join(root, "out")); err != nil {
		t.Fatal(err)
	}
}

// The fantasy tools pass the model's arguments to the library as sent.
func TestWalkingAgentTools(t *testing.T) {
	ws := openTest(t, wsfs.Config{})
	walkProject(t, ws.Root())
	tools := map[string]fantasy.AgentTool{}
	for _, tool := range Tools(ws, WithReadOnlyTools()) {
		tools[tool.Info().Name] = tool
	}
	for name, args := range map[string]any{
		wsfs.ToolFindFiles:  map[string]any{"pattern": "**/*.go", "respect_gitignore": false},
		wsfs.ToolSearchText: map[string]any{"query": "needle", "glob": "*.go"},
		wsfs.ToolListDir:    map[string]any{"depth": 3},
	} {
		tool, ok := tools[name]
		if !ok {
			t.Fatalf("%s is not a read-only tool", name)
		}
		in, _ := json.Marshal(args)
		resp, err := tool.Run(context.Background(), fantasy.ToolCall{ID: "1", Name: name, Input: string(in)})
		if err != nil || resp.IsError {
			t.Fatalf("%s: %v %+v", name, err, resp)
		}
		if !strings.Contains(resp.Content, "main.go") || strings.Contains(resp.Content, "secret") {
			t.Fatalf("%s: %q", name, resp.Content)
		}
	}
}
