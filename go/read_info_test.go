package wsfs

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestReadFileRange reads line ranges through the typed API and checks the
// fields, and that Text is exactly the library's text (numbered lines and
// hint included).
func TestReadFileRange(t *testing.T) {
	ws := openTest(t, Config{Limits: Limits{MaxReadBytes: 40}})
	root := ws.Root()
	var lines strings.Builder
	for i := 1; i <= 10; i++ {
		fmt.Fprintf(&lines, "line %d\n", i)
	}
	writeFile(t, filepath.Join(root, "a.txt"), lines.String())
	writeFile(t, filepath.Join(root, "crlf.txt"), "one\r\ntwo\r\nthree")
	writeFile(t, filepath.Join(root, "empty.txt"), "")
	writeFile(t, filepath.Join(root, "long.txt"), "short\n"+strings.Repeat("€", 20)+"\n")
	sum := sha256.Sum256([]byte(lines.String()))
	for _, in := range []ReadFileInput{
		{Path: "a.txt", StartLine: 3, MaxLines: 2},
		{Path: "a.txt", StartLine: 9},
		{Path: "a.txt", LineNumbers: true},
		{Path: "a.txt", MaxLines: 1, LineNumbers: true},
		{Path: "crlf.txt", StartLine: 2, LineNumbers: true},
		{Path: "empty.txt", StartLine: 1},
		{Path: "long.txt", StartLine: 2},
	} {
		r, err := ws.ReadFile(bg, in)
		if err != nil {
			t.Fatalf("%+v: %v", in, err)
		}
		args := mustJSON(t, in)
		text, ok := libraryText(t, ws, ToolReadFile, args)
		if !ok || text != r.Text {
			t.Fatalf("%+v: typed text %q, library text %q", in, r.Text, text)
		}
		if r.Bytes != int64(len(r.Content)) || r.StartLine < 1 || r.EndLine < r.StartLine-1 {
			t.Fatalf("%+v: %+v", in, r)
		}
	}
	r, err := ws.ReadFile(bg, ReadFileInput{Path: "a.txt", StartLine: 3, MaxLines: 2})
	if err != nil || r.Content != "line 3\nline 4\n" || r.EndLine != 4 || r.TotalLines == nil || *r.TotalLines != 10 ||
		r.NextStartLine != 5 || r.SHA256 != hex.EncodeToString(sum[:]) || r.Truncated {
		t.Fatalf("range = %+v, %v", r, err)
	}
	if r.Text != "line 3\nline 4\n[lines 3-4 of 10; continue with start_line=5, max_lines=2]" {
		t.Fatalf("text %q", r.Text)
	}
	r, err = ws.ReadFile(bg, ReadFileInput{Path: "a.txt", StartLine: 9})
	if err != nil || r.NextStartLine != 0 || !strings.HasSuffix(r.Text, "[lines 9-10 of 10; end of file]") {
		t.Fatalf("last page = %+v, %v", r, err)
	}
	// MaxReadBytes (40) stops the range at a line boundary.
	r, err = ws.ReadFile(bg, ReadFileInput{Path: "a.txt", StartLine: 1})
	if err != nil || !r.Truncated || r.EndLine != 5 || r.NextStartLine != 6 {
		t.Fatalf("capped = %+v, %v", r, err)
	}
	r, err = ws.ReadFile(bg, ReadFileInput{Path: "empty.txt", StartLine: 1})
	if err != nil || r.Text != "(empty file)" || r.EndLine != 0 || r.TotalLines == nil || *r.TotalLines != 0 {
		t.Fatalf("empty = %+v, %v", r, err)
	}
	// A plain read has none of the range fields.
	r, err = ws.ReadFile(bg, ReadFileInput{Path: "a.txt"})
	if err != nil || r.StartLine != 0 || r.TotalLines != nil || r.SHA256 != "" {
		t.Fatalf("plain = %+v, %v", r, err)
	}
	_, err = ws.ReadFile(bg, ReadFileInput{Path: "a.txt", StartLine: 11})
	if e := wantCode(t, err, CodeLineOutOfRange); !strings.Contains(e.Message, "10 lines") {
		t.Fatalf("out of range: %v", e)
	}
	_, err = ws.ReadFile(bg, ReadFileInput{Path: "a.txt", MaxLines: 10001})
	wantCode(t, err, CodeInvalidArguments)
	_, err = ws.ReadFile(bg, ReadFileInput{Path: "a.txt", StartLine: -1})
	wantCode(t, err, CodeInvalidArguments)
}

// TestReadFileRangeOfAHugeFile: a 10 GiB sparse file's lines are not all
// counted, and TotalLines says so with nil.
func TestReadFileRangeOfAHugeFile(t *testing.T) {
	ws := openTest(t, Config{})
	p := filepath.Join(ws.Root(), "sparse.txt")
	writeFile(t, p, "a\nb\nc\n")
	if err := os.Truncate(p, 10<<30); err != nil {
		t.Fatal(err)
	}
	r, err := ws.ReadFile(bg, ReadFileInput{Path: "sparse.txt", MaxLines: 2})
	if err != nil || r.Content != "a\nb\n" || r.TotalLines != nil || r.SHA256 != "" || r.NextStartLine != 3 {
		t.Fatalf("sparse range = %+v, %v", r, err)
	}
}

func TestGetPathInfo(t *testing.T) {
	ws := openTest(t, Config{})
	root := ws.Root()
	content := "fn main() {}\nlast"
	writeFile(t, filepath.Join(root, "src", "main.rs"), content)
	if err := os.Symlink("src/main.rs", filepath.Join(root, "link")); err != nil {
		t.Fatal(err)
	}
	r, err := ws.GetPathInfo(bg, GetPathInfoInput{Path: "src/main.rs"})
	if err != nil {
		t.Fatal(err)
	}
	st, _ := os.Stat(filepath.Join(root, "src", "main.rs"))
	sum := sha256.Sum256([]byte(content))
	if !r.Exists || r.Type != EntryFile || r.Size != int64(len(content)) || r.Mode != "0644" && r.Mode != fmt.Sprintf("%04o", st.Mode().Perm()) ||
		!r.Readable || !r.Writable || r.LineCount == nil || *r.LineCount != 2 || r.SHA256 != hex.EncodeToString(sum[:]) ||
		!r.Modified.Equal(st.ModTime().Truncate(time.Second)) || r.Modified.Location() != time.UTC {
		t.Fatalf("file info = %+v (mtime %v)", r, st.ModTime())
	}
	if text, _ := libraryText(t, ws, ToolGetPathInfo, pathArgs("src/main.rs")); text != r.Text || !strings.HasPrefix(r.Text, "src/main.rs: file, 17 bytes, 2 lines\n") {
		t.Fatalf("text %q, library %q", r.Text, text)
	}
	l, err := ws.GetPathInfo(bg, GetPathInfoInput{Path: "link"})
	if err != nil || l.Type != EntrySymlink || l.SymlinkTarget != "src/main.rs" || l.SHA256 != "" || l.LineCount != nil {
		t.Fatalf("link info = %+v, %v", l, err)
	}
	m, err := ws.GetPathInfo(bg, GetPathInfoInput{Path: "src/mian.rs"})
	if err != nil || m.Exists || m.Type != "" || m.Text != "src/mian.rs does not exist; did you mean src/main.rs?" {
		t.Fatalf("missing info = %+v, %v", m, err)
	}
	_, err = ws.GetPathInfo(bg, GetPathInfoInput{Path: "../x"})
	wantCode(t, err, CodeOutsideWorkspace)
}

func mustJSON(t *testing.T, in ReadFileInput) string {
	t.Helper()
	b := appendJSONString([]byte(`{"path":`), in.Path)
	if in.StartLine != 0 {
		b = fmt.Appendf(b, `,"start_line":%d`, in.StartLine)
	}
	if in.MaxLines != 0 {
		b = fmt.Appendf(b, `,"max_lines":%d`, in.MaxLines)
	}
	if in.LineNumbers {
		b = append(b, `,"line_numbers":true`...)
	}
	return string(append(b, '}'))
}

// TestReadFileEncodingErrors: "replace" reads a Latin-1 file with U+FFFD.
func TestReadFileEncodingErrors(t *testing.T) {
	ws := openTest(t, Config{})
	writeFile(t, filepath.Join(ws.Root(), "latin1.txt"), "caf\xe9\n")
	_, err := ws.ReadFile(bg, ReadFileInput{Path: "latin1.txt"})
	wantCode(t, err, CodeIOError)
	r, err := ws.ReadFile(bg, ReadFileInput{Path: "latin1.txt", EncodingErrors: "replace"})
	if err != nil || r.Content != "caf\uFFFD\n" || !r.EncodingErrors || r.TotalBytes != 5 || r.Text != r.Content {
		t.Fatalf("%+v %v", r, err)
	}
}
