package wsfs

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestErrorCodes reaches every error code the library can return to Go.
func TestErrorCodes(t *testing.T) {
	dir := t.TempDir()
	ws := openTest(t, Config{Root: filepath.Join(dir, "ws"), CreateRoot: true, Limits: Limits{MaxWriteBytes: 16}})
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
		{"move onto an existing file", CodeFileExists, func() error {
			_, err := ws.MoveFile(bg, MoveFileInput{Src: "f.txt", Dst: "bin"})
			return err
		}()},
		{"delete a directory without recursive", CodeRecursiveRequired, func() error {
			_, err := ws.DeleteFile(bg, DeleteFileInput{Path: "sub"})
			return err
		}()},
		{"unknown tool", CodeUnknownTool, func() error {
			_, err := ws.CallRaw(bg, "remove_file", `{"path":"f.txt"}`)
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
	end := strings.Index(h, "See docs/tools.md")
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
