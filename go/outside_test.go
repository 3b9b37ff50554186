package wsfs

import (
	"context"
	"strings"
	"testing"
)

// TestOutsideCheckMatchesLibrary: whenever the Go check refuses a path, the
// library refuses it with the same code and message; it refuses the usual
// escapes; and it never refuses in an unrestricted workspace.
func TestOutsideCheckMatchesLibrary(t *testing.T) {
	ws := openTest(t, Config{})
	free := openTest(t, Config{RestrictToWorkspace: Bool(false)})
	paths := []string{
		"../x", "..", "../", "./../x", "..//a/b", "../.", ".././x/./y", "./.", "../../../etc/passwd",
		"../.wsfs-0123456789abcdef.tmp", "../.wsfs-notes.tmp", "../x/", `..\x`, `../caf\xe9`,
		"a/../../x", "a/..", "...", "..x", "x/../..", "/abs/../x", "../é", "../ x", " ../x",
		"../" + strings.Repeat("a", 5000), "./", "", "x",
	}
	refused := 0
	for _, p := range paths {
		e := ws.outsideLexically(ToolReadFile, p)
		if free.outsideLexically(ToolReadFile, p) != nil {
			t.Fatalf("%q refused in an unrestricted workspace", p)
		}
		if e == nil {
			continue
		}
		refused++
		var buf strings.Builder
		cCall(&buf, ws.handle, ToolReadFile, pathArgs(p), `{"output":"data_raw"}`, nil, 0)
		env, pe := parseEnvelope(ToolReadFile, buf.String(), outputDataRaw, nil)
		if pe != nil || env.OK || env.Error.Code != e.Code || env.Error.Message != e.Message || env.Text != e.Text() {
			t.Fatalf("%q: Go check %q, library %s", p, e.Text(), buf.String())
		}
		// The typed API gives the library's answer.
		_, err := ws.ReadFile(context.Background(), ReadFileInput{Path: p})
		if err == nil || err.Error() != e.Error() {
			t.Fatalf("%q: ReadFile error %v, want %v", p, err, e)
		}
	}
	for _, p := range []string{"../x", "..", "./../x", "../.", "../../../etc/passwd"} {
		if ws.outsideLexically(ToolReadFile, p) == nil {
			t.Errorf("%q is not refused by the Go check", p)
		}
	}
	if refused == 0 {
		t.Fatal("nothing refused")
	}
	// Arguments with more than a path go to the library (which refuses an
	// unknown member first).
	for _, args := range []string{`{"path":"../x","bogus":1}`, `{"bogus":1,"path":"../x"}`, `{"path":"../x","path":"../y"}`, `{"path":1}`, `[]`, `{"path":"../x"}x`} {
		if _, ok := onlyPath(args); ok {
			t.Errorf("onlyPath(%s) accepted", args)
		}
	}
	if p, ok := onlyPath(` { "path" : "..\/x" } `); !ok || p != "../x" {
		t.Errorf("onlyPath = %q, %v", p, ok)
	}
}
