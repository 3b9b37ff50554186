package wsfs

import (
	"path/filepath"
	"strings"
	"testing"
)

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
	if !strings.Contains(r.Text, "[truncated: line 1 is longer than max_read_bytes (5): only its first 4 of 9 bytes are shown; continue with start_line=2]") {
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
