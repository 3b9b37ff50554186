package benchmarks

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"charm.land/fantasy"
	wsfs "github.com/wsfs/wsfs/go"
	"github.com/wsfs/wsfs/go/fantasytools"
)

// The baseline is only a fair comparison if it keeps wsfs's contract. These
// tests run the same calls through wsfs and the Baseline on two identical
// trees and require the same results (error codes, not messages), the same
// files afterwards, and the same agent-tool responses.

var bg = context.Background()

func makeTree(t *testing.T, dir string) {
	t.Helper()
	files := map[string]string{
		"a.txt":           "one\ntwo\nthree\n",
		"dup.txt":         "x x x",
		"utf8.txt":        "abcdéfgh",
		"bin.dat":         "ab\x00cd",
		"bad.txt":         "ab\xffcd",
		"d/c":             "c",
		"d/a":             "a",
		"d/b":             "bb",
		"d/sub/x":         "",
		"mode.txt":        "private\n",
		"hard.txt":        "hard\n",
		"deep/er/f.txt":   "deep\n",
		"crlf.txt":        "\ufeffline1\r\nline2\r\n",
		"nonl.txt":        "no newline",
		"edit/target.txt": "keep BEFORE keep",
	}
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	must(t, os.Chmod(filepath.Join(dir, "mode.txt"), 0o600))
	must(t, os.Symlink("a.txt", filepath.Join(dir, "link")))
	must(t, os.Symlink("d", filepath.Join(dir, "d/sub/up")))
	must(t, os.Symlink("/etc/passwd", filepath.Join(dir, "abs")))
	must(t, os.Symlink("../../etc/passwd", filepath.Join(dir, "escape")))
	must(t, os.Link(filepath.Join(dir, "hard.txt"), filepath.Join(dir, "hard2.txt")))
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

type pair struct {
	wsDir, baseDir string
	ws             *wsfs.Workspace
	base           *Baseline
}

func newPair(t *testing.T, limits wsfs.Limits) *pair {
	t.Helper()
	p := &pair{wsDir: t.TempDir(), baseDir: t.TempDir()}
	makeTree(t, p.wsDir)
	makeTree(t, p.baseDir)
	var err error
	if p.ws, err = wsfs.Open(wsfs.Config{Root: p.wsDir, Limits: limits}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.ws.Close() })
	if p.base, err = OpenBaseline(p.baseDir, limits); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.base.Close() })
	return p
}

func code(err error) wsfs.Code {
	var e *wsfs.Error
	if errors.As(err, &e) {
		return e.Code
	}
	if err != nil {
		return "non-wsfs error: " + wsfs.Code(err.Error())
	}
	return ""
}

// same runs in through both and compares.
func (p *pair) same(t *testing.T, in any) {
	t.Helper()
	want, werr := typedCall(bg, p.ws, in)
	got, gerr := typedCall(bg, p.base, in)
	if code(werr) != code(gerr) {
		t.Fatalf("%+v: wsfs error %v, baseline error %v", in, werr, gerr)
	}
	if werr == nil && !reflect.DeepEqual(normalize(want), normalize(got)) {
		t.Fatalf("%+v:\nwsfs     %+v\nbaseline %+v", in, want, got)
	}
}

// normalize clears what legitimately differs: list_dir's size of a
// directory (the same on both sides only by accident of the filesystem), and
// an empty Warnings slice versus nil.
func normalize(v any) any {
	rv := reflect.New(reflect.TypeOf(v)).Elem()
	rv.Set(reflect.ValueOf(v))
	if w := rv.FieldByName("Warnings"); w.IsValid() && w.Len() == 0 {
		w.Set(reflect.Zero(w.Type()))
	}
	v = rv.Interface()
	if l, ok := v.(wsfs.ListDirResult); ok {
		l.Entries = append([]wsfs.DirEntry(nil), l.Entries...)
		for i := range l.Entries {
			if l.Entries[i].Type == wsfs.EntryDir {
				l.Entries[i].Size = 0
			}
		}
		return l
	}
	return v
}

// sameTree compares the two workspaces file by file (content and mode),
// ignoring directory sizes.
func (p *pair) sameTree(t *testing.T) {
	t.Helper()
	snap := func(root string) map[string]string {
		m := map[string]string{}
		filepath.Walk(root, func(path string, fi os.FileInfo, err error) error {
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(root, path)
			switch {
			case fi.Mode()&os.ModeSymlink != 0:
				target, _ := os.Readlink(path)
				m[rel] = "link:" + target
			case fi.IsDir():
				m[rel] = "dir"
			default:
				b, _ := os.ReadFile(path)
				m[rel] = fi.Mode().String() + ":" + string(b)
			}
			return nil
		})
		return m
	}
	if w, b := snap(p.wsDir), snap(p.baseDir); !reflect.DeepEqual(w, b) {
		t.Fatalf("trees differ:\nwsfs     %v\nbaseline %v", w, b)
	}
}

func TestBaselineMatchesWsfs(t *testing.T) {
	p := newPair(t, wsfs.Limits{})
	for _, in := range []any{
		wsfs.ReadFileInput{Path: "a.txt"},
		wsfs.ReadFileInput{Path: "./d/../a.txt"},
		wsfs.ReadFileInput{Path: "link"},
		wsfs.ReadFileInput{Path: "crlf.txt"},
		wsfs.ReadFileInput{Path: "bin.dat"},
		wsfs.ReadFileInput{Path: "bad.txt"},
		wsfs.ReadFileInput{Path: "missing.txt"},
		wsfs.ReadFileInput{Path: "d"},
		wsfs.ReadFileInput{Path: ""},
		wsfs.ReadFileInput{Path: "../outside"},
		wsfs.ReadFileInput{Path: "abs"},
		wsfs.ReadFileInput{Path: "escape"},
		wsfs.ReadFileInput{Path: "/etc/passwd"},
		wsfs.ReadFileInput{Path: "a.txt", StartLine: 2},
		wsfs.ReadFileInput{Path: "a.txt", MaxLines: 1, LineNumbers: true},
		wsfs.ReadFileInput{Path: "crlf.txt", StartLine: 2, LineNumbers: true},
		wsfs.ReadFileInput{Path: "nonl.txt", StartLine: 1},
		wsfs.ReadFileInput{Path: "a.txt", StartLine: 4},
		wsfs.ReadFileInput{Path: "a.txt", MaxLines: 10_001},
		wsfs.ReadFileInput{Path: "bin.dat", StartLine: 1},
		wsfs.ListDirInput{},
		wsfs.ListDirInput{Path: "d"},
		wsfs.ListDirInput{Path: "d/sub"},
		wsfs.ListDirInput{Path: "a.txt"},
		wsfs.ListDirInput{Path: "nope"},
		wsfs.WriteFileInput{Path: "new/dir/n.txt", Content: "new\n"},
		wsfs.WriteFileInput{Path: "a.txt", Content: "replaced"},
		wsfs.WriteFileInput{Path: "mode.txt", Content: "still private"},
		wsfs.WriteFileInput{Path: "link", Content: "through the link"},
		wsfs.WriteFileInput{Path: "one.txt", Content: "1"},
		wsfs.WriteFileInput{Path: "bad.txt", Content: "bad \xff byte"},
		wsfs.AppendFileInput{Path: "bad.txt", Content: "\xfe"},
		wsfs.EditFileInput{Path: "a.txt", OldText: "one", NewText: "\xff"},
		wsfs.AppendFileInput{Path: "nonl.txt", Content: "+more"},
		wsfs.AppendFileInput{Path: "fresh/log.txt", Content: "first\n"},
		wsfs.AppendFileInput{Path: "hard.txt", Content: "x"},
		wsfs.WriteFileInput{Path: ".git/HEAD", Content: "x"},
		wsfs.AppendFileInput{Path: "d/../.git/config", Content: "x"},
		wsfs.EditFileInput{Path: "edit/target.txt", OldText: "BEFORE", NewText: "AFTER"},
		wsfs.EditFileInput{Path: "crlf.txt", OldText: "line2", NewText: "LINE2"},
		wsfs.EditFileInput{Path: "mode.txt", OldText: "still", NewText: "yet"},
		wsfs.EditFileInput{Path: "dup.txt", OldText: "x", NewText: "y"},
		wsfs.EditFileInput{Path: "dup.txt", OldText: "x", NewText: "y", ReplaceAll: true},
		wsfs.EditFileInput{Path: "dup.txt", OldText: "zzz", NewText: "y"},
		wsfs.EditFileInput{Path: "dup.txt", OldText: "", NewText: "y"},
		wsfs.EditFileInput{Path: "bin.dat", OldText: "ab", NewText: "y"},
		wsfs.ReadFileInput{Path: "a.txt"},
		wsfs.ListDirInput{},
	} {
		p.same(t, in)
	}
	p.sameTree(t)
}

// TestOpenFirstReadsMatchWsfs: the open-first variant of the Baseline
// (OpenBaselineOpenFirst) reads and refuses what wsfs does, special files
// aside (special_test.go), so its reference row measures the one system
// call it skips and nothing else.
func TestOpenFirstReadsMatchWsfs(t *testing.T) {
	for _, limits := range []wsfs.Limits{{}, {MaxReadBytes: 5}} {
		p := newPair(t, limits)
		must(t, p.base.Close()) // newPair's cleanup closes the one put in its place
		var err error
		if p.base, err = OpenBaselineOpenFirst(p.baseDir, limits); err != nil {
			t.Fatal(err)
		}
		for _, in := range []wsfs.ReadFileInput{
			{Path: "a.txt"},
			{Path: "utf8.txt"},
			{Path: "./d/../a.txt"},
			{Path: "link"},
			{Path: "d/sub/up/a"},
			{Path: "crlf.txt"},
			{Path: "bin.dat"},
			{Path: "bad.txt"},
			{Path: "missing.txt"},
			{Path: "missing/x.txt"},
			{Path: "a.txt/x"},
			{Path: "d"},
			{Path: "d/"},
			{Path: "a.txt/"},
			{Path: ""},
			{Path: "../outside"},
			{Path: "abs"},
			{Path: "escape"},
			{Path: "/etc/passwd"},
			{Path: ".wsfs-0123456789abcdef.tmp"},
			{Path: "a.txt", StartLine: 2},
		} {
			p.same(t, in)
		}
	}
}

func TestBaselineLimits(t *testing.T) {
	p := newPair(t, wsfs.Limits{MaxReadBytes: 5, MaxListEntries: 2, MaxWriteBytes: 10})
	for _, in := range []any{
		wsfs.ReadFileInput{Path: "utf8.txt"}, // cut back before a split "é"
		wsfs.ReadFileInput{Path: "a.txt"},
		wsfs.ReadFileInput{Path: "a.txt", StartLine: 1},    // stops at a line boundary
		wsfs.ReadFileInput{Path: "utf8.txt", StartLine: 1}, // one line, cut before "é"
		wsfs.ReadFileInput{Path: "a.txt", StartLine: 2},    // over MaxWriteBytes: no SHA-256
		wsfs.ListDirInput{Path: "d"},
		wsfs.WriteFileInput{Path: "big.txt", Content: strings.Repeat("x", 11)},
		wsfs.AppendFileInput{Path: "a.txt", Content: strings.Repeat("x", 11)},
		wsfs.EditFileInput{Path: "a.txt", OldText: "one", NewText: strings.Repeat("x", 20)},
		wsfs.EditFileInput{Path: "deep/er/f.txt", OldText: "deep", NewText: "DEEP"},
	} {
		p.same(t, in)
	}
	p.sameTree(t)
}

// TestBaselineToolsMatchWsfsTools compares the agent tools' responses.
func TestBaselineToolsMatchWsfsTools(t *testing.T) {
	p := newPair(t, wsfs.Limits{MaxReadBytes: 8, MaxListEntries: 2})
	wt, bt := toolMap(fantasytools.Tools(p.ws)), toolMap(BaselineTools(p.base))
	for _, c := range []struct{ tool, input string }{
		{"read_file", `{"path":"a.txt"}`},
		{"read_file", `{"path":"nonl.txt"}`},
		{"read_file", `{"path":"a.txt","start_line":2,"line_numbers":true}`},
		{"read_file", `{"path":"crlf.txt","max_lines":1}`},
		{"list_dir", `{"path":"d"}`},
		{"list_dir", `{}`},
		{"write_file", `{"path":"w.txt","content":"hello"}`},
		{"write_file", `{"path":"w.txt","content":"hello again"}`},
		{"append_file", `{"path":"w.txt","content":"!"}`},
		{"edit_file", `{"path":"w.txt","old_text":"again","new_text":"there"}`},
		{"read_file", `{"path":"missing"}`},
		{"edit_file", `{"path":"dup.txt","old_text":"x","new_text":"y"}`},
	} {
		call := fantasy.ToolCall{ID: "1", Name: c.tool, Input: c.input}
		want, werr := wt[c.tool].Run(bg, call)
		got, gerr := bt[c.tool].Run(bg, call)
		if werr != nil || gerr != nil {
			t.Fatalf("%s %s: errors %v / %v", c.tool, c.input, werr, gerr)
		}
		if want.IsError != got.IsError {
			t.Fatalf("%s %s: wsfs %+v, baseline %+v", c.tool, c.input, want, got)
		}
		wc, _, _ := strings.Cut(want.Content, ":")
		gc, _, _ := strings.Cut(got.Content, ":")
		if (want.IsError && wc != gc) || (!want.IsError && want.Content != got.Content) {
			t.Fatalf("%s %s:\nwsfs     %q\nbaseline %q", c.tool, c.input, want.Content, got.Content)
		}
	}
}

// TestBenchCasesMatch runs every benchmarked case once through wsfs and the
// Baseline, typed and as fantasy tools, each on its own copy of the case's
// files, and requires identical results: the same data and text (paths
// differ only by the layer's directory), or the same error code, and for
// outside_workspace the same text. So the benchmark compares two
// implementations of the same contract, case by case. The open-first
// variant (a reference, measured on OpenFirstCases) must return the same on
// those cases too.
func TestBenchCasesMatch(t *testing.T) {
	e := benchEnv(t)
	openFirstSeen := 0
	for _, c := range e.Fx.Manifest.Cases {
		m, err := e.on(c)
		if err != nil {
			t.Fatal(err)
		}
		pairs := [][2]string{{PathTyped, PathBaseline}, {PathFantasy, PathBaselineFantasy}}
		if slices.Contains(OpenFirstCases, c.Name) {
			pairs = append(pairs, [2]string{PathTyped, PathBaselineOpenFirst})
			openFirstSeen++
		}
		for _, pair := range pairs {
			for _, p := range pair {
				must(t, e.Fx.Reset(c, p))
			}
			wsCalls, err := e.calls(c, pair[0])
			must(t, err)
			baseCalls, err := e.calls(c, pair[1])
			must(t, err)
			same := func(s string) string { return strings.ReplaceAll(s, "/"+pair[1]+"/", "/"+pair[0]+"/") }
			for i := range wsCalls {
				if pair[0] == PathTyped {
					want, werr := typedCall(bg, m.WS, wsCalls[i].in)
					got, gerr := typedCall(bg, m.baseline(pair[1]), baseCalls[i].in)
					if code(werr) != code(gerr) {
						t.Fatalf("%s: wsfs error %v, %s error %v", c.Name, werr, pair[1], gerr)
					}
					if werr != nil {
						if code(werr) == wsfs.CodeOutsideWorkspace && werr.Error() != gerr.Error() {
							t.Fatalf("%s: wsfs %q, %s %q", c.Name, werr, pair[1], gerr)
						}
						continue
					}
					w, g := normalize(want), relayer(normalize(got), same)
					if !reflect.DeepEqual(w, g) {
						t.Fatalf("%s:\nwsfs     %.600s\n%s %.600s", c.Name, fmt.Sprintf("%+v", w), pair[1], fmt.Sprintf("%+v", g))
					}
					continue
				}
				call := func(tools map[string]fantasy.AgentTool, args string) fantasy.ToolResponse {
					resp, err := tools[c.Tool].Run(bg, fantasy.ToolCall{ID: "1", Name: c.Tool, Input: args})
					must(t, err)
					return resp
				}
				want, got := call(m.Tools, wsCalls[i].args), call(m.BTools, baseCalls[i].args)
				wc, _, _ := strings.Cut(want.Content, ":")
				gc, _, _ := strings.Cut(got.Content, ":")
				if want.IsError != got.IsError || (want.IsError && wc != gc) ||
					((!want.IsError || wc == string(wsfs.CodeOutsideWorkspace)) && want.Content != same(got.Content)) {
					t.Fatalf("%s (fantasy):\nwsfs     %.300q\nbaseline %.300q", c.Name, want.Content, got.Content)
				}
			}
		}
	}
	if openFirstSeen != len(OpenFirstCases) {
		t.Fatalf("the fixture has %d of OpenFirstCases %v", openFirstSeen, OpenFirstCases)
	}
}

// relayer applies f to the Path and Text of a result struct.
func relayer(v any, f func(string) string) any {
	rv := reflect.New(reflect.TypeOf(v)).Elem()
	rv.Set(reflect.ValueOf(v))
	for _, name := range []string{"Path", "Text"} {
		if fv := rv.FieldByName(name); fv.IsValid() && fv.Kind() == reflect.String {
			fv.SetString(f(fv.String()))
		}
	}
	return rv.Interface()
}
