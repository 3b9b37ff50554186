package wsfs

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// listing is list_dir's data as a result type of the generic path, which
// the tools after the first five use.
type listing struct {
	Path    string     `json:"path"`
	Entries []DirEntry `json:"entries"`
	Total   int        `json:"total"`
	ToolReply
}

func TestCallTypedDecodesDataTextAndWarnings(t *testing.T) {
	ws := openTest(t, Config{})
	writeFile(t, filepath.Join(ws.Root(), "b.txt"), "12345")
	writeFile(t, filepath.Join(ws.Root(), "a.txt"), "1")
	r, err := callTyped[listing](context.Background(), ws, ToolListDir, struct {
		Path string `json:"path"`
	}{"."}, ".")
	if err != nil {
		t.Fatal(err)
	}
	if r.Path != "." || r.Total != 2 || len(r.Entries) != 2 || r.Entries[1] != (DirEntry{Name: "b.txt", Type: EntryFile, Size: 5}) {
		t.Fatalf("result %+v", r)
	}
	if r.Text != ". (2 entries)\na.txt  1 byte\nb.txt  5 bytes" || r.Warnings == nil {
		t.Fatalf("text %q, warnings %#v", r.Text, r.Warnings)
	}
	_, err = callTyped[listing](context.Background(), ws, ToolListDir, struct {
		Path string `json:"path"`
	}{"../x"}, "../x")
	if code := errorCode(err); code != CodeOutsideWorkspace {
		t.Fatalf("escape: %v", err)
	}
}

func TestDecodeResultTakesTheSlowPathToo(t *testing.T) {
	var data rawData
	env, perr := parseEnvelope("list_dir", `{"ok":true,"data":{"path":"x","total":3,"new_field":[1]},"text":"t","warnings":[]}`, outputFull, &data)
	if perr != nil || !env.OK {
		t.Fatal(perr)
	}
	var r listing
	if err := decodeResult(string(data), &r); err != nil || r.Path != "x" || r.Total != 3 {
		t.Fatalf("%+v %v", r, err)
	}
	// Invalid JSON inside data makes the fast reader give up; encoding/json
	// must then keep the raw value too (and reject it).
	if _, perr := parseEnvelope("list_dir", `{"ok":true,"data":{"path":"x",},"text":"t"}`, outputFull, &data); perr == nil {
		t.Fatal("malformed data accepted")
	}
}

// errorCode is err's wsfs code, "" if it is not an *Error.
func errorCode(err error) Code {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return ""
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
