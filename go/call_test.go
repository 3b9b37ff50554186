package wsfs

import (
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

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
