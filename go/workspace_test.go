package wsfs

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

var bg = context.Background()

func TestVersionABI(t *testing.T) {
	v, err := Version()
	if err != nil {
		t.Fatal(err)
	}
	if v.ABI != ABIVersion || v.Version == "" {
		t.Fatalf("Version() = %+v, want abi %d and a version", v, ABIVersion)
	}

	got, err := checkABI(`{"version":"9.9.9","abi":2}`)
	var mismatch *ABIMismatchError
	if !errors.As(err, &mismatch) {
		t.Fatalf("checkABI(abi 2) = %v, want *ABIMismatchError", err)
	}
	if *mismatch != (ABIMismatchError{Want: 1, Got: 2, LibraryVersion: "9.9.9"}) {
		t.Fatalf("mismatch = %+v", *mismatch)
	}
	if got.ABI != 2 || !strings.Contains(err.Error(), "ABI 2") {
		t.Fatalf("got %+v, %q", got, err)
	}
	if _, err := checkABI(`not json`); err == nil {
		t.Fatal("checkABI(not json) succeeded")
	}
	if _, err := checkABI(`{"version":"0.1.0","abi":1}`); err != nil {
		t.Fatalf("checkABI(abi 1) = %v", err)
	}
}

func TestOpenConfig(t *testing.T) {
	ws := openTest(t, Config{})
	want := Limits{MaxReadBytes: 262144, MaxWriteBytes: 1048576, MaxListEntries: 500, OperationTimeout: 10 * time.Second}
	if ws.Limits() != want {
		t.Fatalf("default limits = %+v, want %+v", ws.Limits(), want)
	}
	if !ws.RestrictToWorkspace() {
		t.Fatal("RestrictToWorkspace defaults to false")
	}

	// Custom limits, restriction off, and a root reached through a symlink
	// (resolved once at open).
	real := t.TempDir()
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	lim := Limits{MaxReadBytes: 10, MaxWriteBytes: 20, MaxListEntries: 3, OperationTimeout: 1500 * time.Microsecond}
	ws2 := openTest(t, Config{Root: link, RestrictToWorkspace: Bool(false), Limits: lim})
	lim.OperationTimeout = 2 * time.Millisecond // rounded up to whole milliseconds
	if ws2.Limits() != lim {
		t.Fatalf("limits = %+v, want %+v", ws2.Limits(), lim)
	}
	if ws2.RestrictToWorkspace() {
		t.Fatal("RestrictToWorkspace = true, want false")
	}
	if ws2.Root() != real {
		t.Fatalf("Root() = %q, want %q", ws2.Root(), real)
	}

	// A root that does not exist yet is created.
	fresh := filepath.Join(t.TempDir(), "a", "b")
	openTest(t, Config{Root: fresh})
	if fi, err := os.Stat(fresh); err != nil || !fi.IsDir() {
		t.Fatalf("root not created: %v", err)
	}
}

func TestOpenErrors(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file")
	writeFile(t, file, "x")
	for _, tc := range []struct {
		name string
		cfg  Config
		code Code
	}{
		{"empty root", Config{Root: "  "}, CodeInvalidPath},
		{"NUL in root", Config{Root: "/tmp/a\x00b"}, CodeInvalidPath},
		{"negative limit", Config{Root: t.TempDir(), Limits: Limits{MaxReadBytes: -1}}, CodeInvalidArguments},
		{"limit over the ceiling", Config{Root: t.TempDir(), Limits: Limits{MaxListEntries: 2_000_000}}, CodeInvalidArguments},
		{"root is a file", Config{Root: file}, CodeNotADirectory},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ws, err := Open(tc.cfg)
			if ws != nil {
				ws.Close()
			}
			e := wantCode(t, err, tc.code)
			if e.Tool != "open" {
				t.Fatalf("Tool = %q, want open", e.Tool)
			}
		})
	}
}

func TestTypedRoundTrip(t *testing.T) {
	ws := openTest(t, Config{})
	root := ws.Root()

	w, err := ws.WriteFile(bg, WriteFileInput{Path: "dir/a.txt", Content: "one\ntwo\n"})
	if err != nil {
		t.Fatal(err)
	}
	if w.Path != "dir/a.txt" || w.BytesWritten != 8 || !w.Created || w.Text == "" {
		t.Fatalf("WriteFile = %+v", w)
	}
	w, err = ws.WriteFile(bg, WriteFileInput{Path: "dir/a.txt", Content: "one\ntwo\n"})
	if err != nil {
		t.Fatal(err)
	}
	if w.Created || !reflect.DeepEqual(w.Warnings, []string{"file exists, overwriting"}) {
		t.Fatalf("overwrite = %+v", w)
	}

	a, err := ws.AppendFile(bg, AppendFileInput{Path: "dir/a.txt", Content: "three\n"})
	if err != nil {
		t.Fatal(err)
	}
	if a.Path != "dir/a.txt" || a.BytesAppended != 6 || a.Size != 14 {
		t.Fatalf("AppendFile = %+v", a)
	}

	e, err := ws.EditFile(bg, EditFileInput{Path: "dir/a.txt", OldText: "two", NewText: "2"})
	if err != nil {
		t.Fatal(err)
	}
	if e.Path != "dir/a.txt" || e.Matches != 1 || e.Replaced != 1 {
		t.Fatalf("EditFile = %+v", e)
	}
	writeFile(t, filepath.Join(root, "b.txt"), "x x x")
	e, err = ws.EditFile(bg, EditFileInput{Path: "b.txt", OldText: "x", NewText: "y", ReplaceAll: true})
	if err != nil {
		t.Fatal(err)
	}
	if e.Matches != 3 || e.Replaced != 3 || readFile(t, filepath.Join(root, "b.txt")) != "y y y" {
		t.Fatalf("EditFile(replace_all) = %+v", e)
	}

	r, err := ws.ReadFile(bg, ReadFileInput{Path: "dir/a.txt"})
	if err != nil {
		t.Fatal(err)
	}
	if r.Path != "dir/a.txt" || r.Content != "one\n2\nthree\n" || r.Bytes != 12 || r.TotalBytes != 12 || r.Truncated {
		t.Fatalf("ReadFile = %+v", r)
	}
	if r.Text != r.Content {
		t.Fatalf("read_file text %q != content %q", r.Text, r.Content)
	}

	// An absolute path inside the workspace is accepted and reported
	// relative to the root.
	r, err = ws.ReadFile(bg, ReadFileInput{Path: filepath.Join(root, "dir", "a.txt")})
	if err != nil || r.Path != "dir/a.txt" {
		t.Fatalf("ReadFile(absolute inside) = %+v, %v", r, err)
	}

	if err := os.Symlink("b.txt", filepath.Join(root, "link")); err != nil {
		t.Fatal(err)
	}
	l, err := ws.ListDir(bg, ListDirInput{})
	if err != nil {
		t.Fatal(err)
	}
	wantEntries := []DirEntry{
		{Name: "b.txt", Type: EntryFile, Size: 5},
		{Name: "dir", Type: EntryDir, Size: l.Entries[1].Size},
		{Name: "link", Type: EntrySymlink, Size: 5},
	}
	if l.Path != "." || l.Total != 3 || l.Truncated || !reflect.DeepEqual(l.Entries, wantEntries) {
		t.Fatalf("ListDir = %+v", l)
	}
}

func TestTruncation(t *testing.T) {
	ws := openTest(t, Config{Limits: Limits{MaxReadBytes: 5, MaxListEntries: 2}})
	writeFile(t, filepath.Join(ws.Root(), "long.txt"), "abcdéfgh")
	r, err := ws.ReadFile(bg, ReadFileInput{Path: "long.txt"})
	if err != nil {
		t.Fatal(err)
	}
	// 5 bytes would split "é", so the content is cut back to 4.
	if r.Content != "abcd" || r.Bytes != 4 || r.TotalBytes != 9 || !r.Truncated {
		t.Fatalf("ReadFile = %+v", r)
	}
	if !strings.Contains(r.Text, "[truncated: showing the first 4 of 9 bytes; max_read_bytes is 5]") {
		t.Fatalf("read text %q has no truncation notice", r.Text)
	}
	for _, n := range []string{"a", "b", "c"} {
		writeFile(t, filepath.Join(ws.Root(), "d", n), "")
	}
	l, err := ws.ListDir(bg, ListDirInput{Path: "d"})
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Entries) != 2 || l.Total != 3 || !l.Truncated || l.Entries[1].Name != "b" {
		t.Fatalf("ListDir = %+v", l)
	}
	if !strings.Contains(l.Text, "[truncated: showing the first 2 of 3 entries]") {
		t.Fatalf("list text %q has no truncation notice", l.Text)
	}
}

// TestErrorCodes reaches every error code the library can return to Go.
func TestErrorCodes(t *testing.T) {
	dir := t.TempDir()
	ws := openTest(t, Config{Root: filepath.Join(dir, "ws"), Limits: Limits{MaxWriteBytes: 16}})
	root := ws.Root()
	writeFile(t, filepath.Join(dir, "outside.txt"), "secret")
	writeFile(t, filepath.Join(root, "f.txt"), "aa bb aa")
	writeFile(t, filepath.Join(root, "bin"), "a\x00b")
	writeFile(t, filepath.Join(root, "linked"), "x")
	if err := os.Link(filepath.Join(root, "linked"), filepath.Join(root, "linked2")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(dir, "outside.txt"), filepath.Join(root, "escape")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(root, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}

	read := func(p string) error { _, err := ws.ReadFile(bg, ReadFileInput{Path: p}); return err }
	cases := []struct {
		name string
		code Code
		err  error
	}{
		{"empty path", CodeInvalidPath, read("")},
		{"path too long", CodeInvalidPath, read(strings.Repeat("a/", 2100))},
		{"dot-dot", CodeOutsideWorkspace, read("../outside.txt")},
		{"absolute outside", CodeOutsideWorkspace, read(filepath.Join(dir, "outside.txt"))},
		{"symlink outside", CodeOutsideWorkspace, read("escape")},
		{"missing file", CodePathNotFound, read("missing.txt")},
		{"missing parent", CodePathNotFound, read("nope/f.txt")},
		{"append to hard-linked file", CodePermissionDenied, func() error {
			_, err := ws.AppendFile(bg, AppendFileInput{Path: "linked", Content: "y"})
			return err
		}()},
		{"binary file", CodeIOError, read("bin")},
		{"ambiguous edit", CodeAmbiguousEdit, func() error {
			_, err := ws.EditFile(bg, EditFileInput{Path: "f.txt", OldText: "aa", NewText: "cc"})
			return err
		}()},
		{"edit text not found", CodeEditNotFound, func() error {
			_, err := ws.EditFile(bg, EditFileInput{Path: "f.txt", OldText: "zz", NewText: "cc"})
			return err
		}()},
		{"read a directory", CodeNotAFile, read("sub")},
		{"list a file", CodeNotADirectory, func() error {
			_, err := ws.ListDir(bg, ListDirInput{Path: "f.txt"})
			return err
		}()},
		{"file as parent", CodeNotADirectory, func() error {
			_, err := ws.WriteFile(bg, WriteFileInput{Path: "f.txt/x", Content: "y"})
			return err
		}()},
		{"write over the limit", CodeTooLarge, func() error {
			_, err := ws.WriteFile(bg, WriteFileInput{Path: "big.txt", Content: strings.Repeat("x", 17)})
			return err
		}()},
		{"empty old_text", CodeInvalidArguments, func() error {
			_, err := ws.EditFile(bg, EditFileInput{Path: "f.txt", OldText: "", NewText: "x"})
			return err
		}()},
		{"unknown argument", CodeInvalidArguments, func() error {
			_, err := ws.CallRaw(bg, ToolReadFile, `{"path":"f.txt","mode":"fast"}`)
			return err
		}()},
		{"invalid JSON", CodeInvalidArguments, func() error {
			_, err := ws.CallRaw(bg, ToolReadFile, `{"path":`)
			return err
		}()},
		{"unknown tool", CodeUnknownTool, func() error {
			_, err := ws.CallRaw(bg, "delete_file", `{"path":"f.txt"}`)
			return err
		}()},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := wantCode(t, tc.err, tc.code)
			if strings.Contains(e.Message, root) {
				t.Errorf("message %q reveals the absolute root", e.Message)
			}
		})
	}
	// Nothing was changed by the failed calls.
	if got := readFile(t, filepath.Join(root, "f.txt")); got != "aa bb aa" {
		t.Fatalf("f.txt = %q", got)
	}
	if got := readFile(t, filepath.Join(root, "linked")); got != "x" {
		t.Fatalf("linked = %q", got)
	}
	if _, err := os.Stat(filepath.Join(root, "big.txt")); !os.IsNotExist(err) {
		t.Fatalf("big.txt exists after too_large: %v", err)
	}
	if got := readFile(t, filepath.Join(dir, "outside.txt")); got != "secret" {
		t.Fatalf("outside.txt = %q", got)
	}
}

func TestEnvelopeText(t *testing.T) {
	ws := openTest(t, Config{})
	raw, err := ws.CallRaw(bg, ToolReadFile, `{"path":"../x"}`)
	e := wantCode(t, err, CodeOutsideWorkspace)
	var env struct {
		OK    bool `json:"ok"`
		Error struct {
			Code    string `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
		Text string `json:"text"`
	}
	if err := json.Unmarshal([]byte(raw), &env); err != nil {
		t.Fatal(err)
	}
	if env.OK || env.Error.Code != "outside_workspace" || env.Error.Message != e.Message || env.Text != e.Text() {
		t.Fatalf("envelope %s does not match error %#v", raw, e)
	}
	if e.Text() != "outside_workspace: "+e.Message || e.Error() != "wsfs: read_file: "+e.Text() {
		t.Fatalf("Text() = %q, Error() = %q", e.Text(), e.Error())
	}
}

func TestRestrictToWorkspaceFalse(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "outside.txt"), "visible")
	ws := openTest(t, Config{Root: filepath.Join(dir, "ws"), RestrictToWorkspace: Bool(false)})
	r, err := ws.ReadFile(bg, ReadFileInput{Path: "../outside.txt"})
	if err != nil || r.Content != "visible" {
		t.Fatalf("unrestricted read = %+v, %v", r, err)
	}
}

func TestNULAndUTF8Rejected(t *testing.T) {
	ws := openTest(t, Config{})
	calls := countCalls(t)
	_, err := ws.ReadFile(bg, ReadFileInput{Path: "a\x00b"})
	wantCode(t, err, CodeInvalidPath)
	_, err = ws.WriteFile(bg, WriteFileInput{Path: "a\x00", Content: "x"})
	wantCode(t, err, CodeInvalidPath)
	_, err = ws.ReadFile(bg, ReadFileInput{Path: "bad\xffname"})
	wantCode(t, err, CodeInvalidPath)
	_, err = ws.WriteFile(bg, WriteFileInput{Path: "a.txt", Content: "bad \xff byte"})
	wantCode(t, err, CodeInvalidArguments)
	_, err = ws.EditFile(bg, EditFileInput{Path: "a.txt", OldText: "a", NewText: "\xfe"})
	wantCode(t, err, CodeInvalidArguments)
	// Raw JSON with a literal NUL byte would be truncated by C.CString.
	raw, err := ws.CallRaw(bg, ToolWriteFile, "{\"path\":\"a.txt\",\"content\":\"x\x00\"}")
	wantCode(t, err, CodeInvalidArguments)
	if !strings.Contains(raw, `"code":"invalid_arguments"`) {
		t.Fatalf("synthesised envelope = %s", raw)
	}
	_, err = ws.CallRaw(bg, "read_file\x00", `{"path":"a.txt"}`)
	wantCode(t, err, CodeInvalidArguments)
	if n := calls.Load(); n != 0 {
		t.Fatalf("%d calls reached C", n)
	}
	if _, err := os.Stat(filepath.Join(ws.Root(), "a.txt")); !os.IsNotExist(err) {
		t.Fatalf("a.txt was written: %v", err)
	}

	// A NUL byte in content is JSON-escaped, not truncated: the library
	// writes all of it (and then refuses to read it back as text).
	w, err := ws.WriteFile(bg, WriteFileInput{Path: "nul.bin", Content: "a\x00b"})
	if err != nil || w.BytesWritten != 3 {
		t.Fatalf("WriteFile(NUL content) = %+v, %v", w, err)
	}
	if got := readFile(t, filepath.Join(ws.Root(), "nul.bin")); got != "a\x00b" {
		t.Fatalf("nul.bin = %q", got)
	}
	// The same path escaped in raw JSON reaches the library, which refuses it.
	_, err = ws.CallRaw(bg, ToolReadFile, `{"path":"a\u0000b"}`)
	wantCode(t, err, CodeInvalidPath)
}

func TestClose(t *testing.T) {
	ws, err := Open(Config{Root: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for i := range errs {
		wg.Go(func() { errs[i] = ws.Close() })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("Close #%d: %v", i, err)
		}
	}
	if !ws.Closed() {
		t.Fatal("Closed() = false")
	}
	_, err = ws.ListDir(bg, ListDirInput{})
	wantCode(t, err, CodeInvalidWorkspace)
	_, err = ws.WriteFile(bg, WriteFileInput{Path: "a", Content: "b"})
	wantCode(t, err, CodeInvalidWorkspace)
	if err := ws.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
}

func TestContextAlreadyDone(t *testing.T) {
	ws := openTest(t, Config{})
	calls := countCalls(t)

	ctx, cancel := context.WithCancel(bg)
	cancel()
	_, err := ws.WriteFile(ctx, WriteFileInput{Path: "a.txt", Content: "x"})
	wantCode(t, err, CodeCancelled)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("errors.Is(%v, context.Canceled) = false", err)
	}

	ctx, cancel2 := context.WithDeadline(bg, time.Now().Add(-time.Second))
	defer cancel2()
	_, err = ws.AppendFile(ctx, AppendFileInput{Path: "a.txt", Content: "x"})
	wantCode(t, err, CodeTimeout)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("errors.Is(%v, context.DeadlineExceeded) = false", err)
	}

	if n := calls.Load(); n != 0 {
		t.Fatalf("%d calls reached C with a done context", n)
	}
	if _, err := os.Stat(filepath.Join(ws.Root(), "a.txt")); !os.IsNotExist(err) {
		t.Fatalf("a.txt exists: %v", err)
	}
}

// TestCancelDuringCall cancels the context once the Go side has committed
// to calling the library (after its own context check), and waits until the
// cancel token is set: the library sees the token and stops with cancelled.
func TestCancelDuringCall(t *testing.T) {
	ws := openTest(t, Config{Limits: Limits{MaxListEntries: 10}})

	ctx, cancel := context.WithCancel(bg)
	defer cancel()
	hookBefore(t, func(_ string, tokenDone <-chan struct{}) {
		cancel()
		<-tokenDone
	})
	_, err := ws.ListDir(ctx, ListDirInput{})
	e := wantCode(t, err, CodeCancelled)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("errors.Is(%v, context.Canceled) = false", err)
	}
	if strings.Contains(e.Message, "before the call started") {
		t.Fatalf("cancelled in Go, not by the library: %s", e.Message)
	}
}

// TestLibraryTimeout makes the library's own deadline stop a listing of a
// large directory.
func TestLibraryTimeout(t *testing.T) {
	dir := bigRoot(t)
	ws := openTest(t, Config{Root: dir, Limits: Limits{OperationTimeout: time.Millisecond, MaxListEntries: 10}})
	_, err := ws.ListDir(bg, ListDirInput{Path: "big"})
	e := wantCode(t, err, CodeTimeout)
	if errors.Is(err, context.DeadlineExceeded) {
		t.Fatal("a workspace timeout must not claim the context's deadline passed")
	}
	if strings.Contains(e.Message, "before the call started") {
		t.Fatalf("timeout produced in Go: %s", e.Message)
	}

	// The same through the per-tool timeout of the agent tools.
	ws2 := openTest(t, Config{Root: dir, Limits: Limits{MaxListEntries: 10}})
	_, _, err = ws2.call(bg, callSpec{tool: ToolListDir, args: `{"path":"big"}`, output: outputText, timeout: time.Millisecond})
	wantCode(t, err, CodeTimeout)
}

// TestConcurrentHammer runs 64 goroutines doing reads, writes, appends and
// edits on one workspace; no append and no edit may be lost.
func TestConcurrentHammer(t *testing.T) {
	ws := openTest(t, Config{})
	const workers, rounds = 64, 8
	var shared strings.Builder
	for g := range workers {
		shared.WriteString(slot(g, "todo"))
	}
	writeFile(t, filepath.Join(ws.Root(), "shared.txt"), shared.String())

	var wg sync.WaitGroup
	errc := make(chan error, workers)
	for g := range workers {
		wg.Go(func() {
			own := filepath.Join("own", itoa(g)+".txt")
			for i := range rounds {
				line := "g" + itoa(g) + "-" + itoa(i) + "\n"
				if _, err := ws.AppendFile(bg, AppendFileInput{Path: "log.txt", Content: line}); err != nil {
					errc <- err
					return
				}
				if _, err := ws.WriteFile(bg, WriteFileInput{Path: own, Content: line}); err != nil {
					errc <- err
					return
				}
				r, err := ws.ReadFile(bg, ReadFileInput{Path: own})
				if err != nil {
					errc <- err
					return
				}
				if r.Content != line {
					errc <- errors.New("read " + own + " = " + r.Content + ", want " + line)
					return
				}
				if _, err := ws.ListDir(bg, ListDirInput{Path: "own"}); err != nil {
					errc <- err
					return
				}
			}
			// Each goroutine edits its own slot of one shared file.
			if _, err := ws.EditFile(bg, EditFileInput{Path: "shared.txt", OldText: slot(g, "todo"), NewText: slot(g, "done")}); err != nil {
				errc <- err
			}
		})
	}
	wg.Wait()
	close(errc)
	for err := range errc {
		t.Fatal(err)
	}

	log := readFile(t, filepath.Join(ws.Root(), "log.txt"))
	lines := strings.Split(strings.TrimSuffix(log, "\n"), "\n")
	if len(lines) != workers*rounds {
		t.Fatalf("log.txt has %d lines, want %d", len(lines), workers*rounds)
	}
	seen := map[string]bool{}
	for _, l := range lines {
		seen[l] = true
	}
	for g := range workers {
		for i := range rounds {
			if !seen["g"+itoa(g)+"-"+itoa(i)] {
				t.Fatalf("append g%d-%d lost", g, i)
			}
		}
	}
	var want strings.Builder
	for g := range workers {
		want.WriteString(slot(g, "done"))
	}
	if got := readFile(t, filepath.Join(ws.Root(), "shared.txt")); got != want.String() {
		t.Fatalf("shared.txt lost edits:\n%s", got)
	}
}

func slot(g int, state string) string { return "[" + itoa(g) + ":" + state + "]\n" }

func itoa(i int) string {
	b, _ := json.Marshal(i)
	return string(b)
}

func TestLogging(t *testing.T) {
	h := &recordHandler{}
	ws := openTest(t, Config{Logger: slogNew(h)})
	if _, err := ws.WriteFile(bg, WriteFileInput{Path: "notes.txt", Content: "TOP-SECRET-CONTENT"}); err != nil {
		t.Fatal(err)
	}
	if _, err := ws.ReadFile(bg, ReadFileInput{Path: filepath.Join(ws.Root(), "notes.txt")}); err != nil {
		t.Fatal(err)
	}
	_, err := ws.ReadFile(bg, ReadFileInput{Path: "../etc/passwd"})
	wantCode(t, err, CodeOutsideWorkspace)
	_, err = ws.ReadFile(bg, ReadFileInput{Path: "nul\x00"})
	wantCode(t, err, CodeInvalidPath)
	if _, err := ws.ListDir(bg, ListDirInput{}); err != nil {
		t.Fatal(err)
	}

	recs := h.toolRecords()
	want := []struct{ level, tool, path, outcome string }{
		{"INFO", "write_file", "notes.txt", "ok"},
		{"INFO", "read_file", "notes.txt", "ok"}, // absolute path logged relative
		{"WARN", "read_file", "../etc/passwd", "outside_workspace"},
		{"WARN", "read_file", "nul\x00", "invalid_path"},
		{"INFO", "list_dir", ".", "ok"},
	}
	if len(recs) != len(want) {
		t.Fatalf("got %d records, want %d: %v", len(recs), len(want), recs)
	}
	for i, w := range want {
		r := recs[i]
		if r["level"] != w.level || r["tool"] != w.tool || r["path"] != w.path || r["outcome"] != w.outcome || r["duration"] == "" {
			t.Errorf("record %d = %v, want %+v", i, r, w)
		}
	}
	if strings.Contains(h.allText(), "TOP-SECRET") {
		t.Fatal("file content was logged")
	}
}

func TestToolSpecs(t *testing.T) {
	specs, err := ToolSpecs()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range specs {
		names = append(names, s.Name)
		if s.Description == "" || len(s.Parameters) == 0 {
			t.Errorf("spec %s is incomplete", s.Name)
		}
	}
	if !reflect.DeepEqual(names, ToolNames) {
		t.Fatalf("spec names = %v, want %v", names, ToolNames)
	}
	var again []ToolSpec
	if err := json.Unmarshal([]byte(ToolSpecsJSON()), &again); err != nil || len(again) != len(specs) {
		t.Fatalf("ToolSpecsJSON: %v", err)
	}
}

func TestErrorIs(t *testing.T) {
	e := &Error{Code: CodeTimeout, Message: "slow", cause: context.DeadlineExceeded}
	if !errors.Is(e, ErrTimeout) || errors.Is(e, ErrCancelled) || !errors.Is(e, context.DeadlineExceeded) {
		t.Fatal("Is/Unwrap mismatch")
	}
	if got, want := Codes, headerCodes(t); !slices.Equal(got, want) {
		t.Fatalf("Codes = %v, the header documents %v", got, want)
	}
	for _, c := range Codes {
		if !errors.Is(&Error{Code: c}, sentinel(c)) {
			t.Fatalf("no sentinel for %s", c)
		}
	}
}

// headerCodes is the list of error codes in include/wsfs.h's comment, in
// its order.
func headerCodes(t *testing.T) []Code {
	t.Helper()
	b, err := os.ReadFile("../include/wsfs.h")
	if err != nil {
		t.Fatal(err)
	}
	h := string(b)
	start := strings.Index(h, "Error codes:")
	end := strings.Index(h, "See README.md")
	if start < 0 || end < start {
		t.Fatal("no error code list in include/wsfs.h")
	}
	var codes []Code
	for _, f := range strings.FieldsFunc(h[start+len("Error codes:"):end], func(r rune) bool {
		return r == ',' || r == '.' || r == '*' || r == ' ' || r == '\n'
	}) {
		codes = append(codes, Code(f))
	}
	return codes
}

// TestLongDeadline: a context deadline far beyond the library's ceilings
// still works (the library caps timeout_ms at OperationTimeout).
func TestLongDeadline(t *testing.T) {
	ws := openTest(t, Config{})
	ctx, cancel := context.WithTimeout(bg, 100*365*24*time.Hour)
	defer cancel()
	if _, err := ws.WriteFile(ctx, WriteFileInput{Path: "a.txt", Content: "x"}); err != nil {
		t.Fatal(err)
	}
}
