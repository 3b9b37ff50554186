package wsfs

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
)

func TestMoveFile(t *testing.T) {
	ws := openTest(t, Config{})
	root := ws.Root()
	writeFile(t, filepath.Join(root, "a.txt"), "A")
	writeFile(t, filepath.Join(root, "b.txt"), "B")
	r, err := ws.MoveFile(bg, MoveFileInput{Src: "a.txt", Dst: "docs/new/a.txt"})
	if err != nil || r.MovedFrom != "a.txt" || r.MovedTo != "docs/new/a.txt" || r.Type != EntryFile ||
		r.Replaced || !slices.Equal(r.DirsCreated, []string{"docs", "docs/new"}) ||
		r.Text != "moved a.txt to docs/new/a.txt; created 2 directories: docs, docs/new" {
		t.Fatalf("MoveFile = %+v, %v", r, err)
	}
	if got := readFile(t, filepath.Join(root, "docs/new/a.txt")); got != "A" {
		t.Fatalf("moved content %q", got)
	}
	_, err = ws.MoveFile(bg, MoveFileInput{Src: "b.txt", Dst: "docs/new/a.txt"})
	wantCode(t, err, CodeFileExists)
	r, err = ws.MoveFile(bg, MoveFileInput{Src: "b.txt", Dst: "docs/new/a.txt", Overwrite: true})
	if err != nil || !r.Replaced || readFile(t, filepath.Join(root, "docs/new/a.txt")) != "B" {
		t.Fatalf("overwrite = %+v, %v", r, err)
	}
	_, err = ws.MoveFile(bg, MoveFileInput{Src: "docs", Dst: "docs/new/inside"})
	if e := wantCode(t, err, CodeInvalidPath); !strings.Contains(e.Message, "into itself") {
		t.Fatalf("into itself: %v", e)
	}
	_, err = ws.MoveFile(bg, MoveFileInput{Src: ".", Dst: "x"})
	wantCode(t, err, CodeInvalidPath)
	_, err = ws.MoveFile(bg, MoveFileInput{Src: "docs", Dst: "../x"})
	wantCode(t, err, CodeOutsideWorkspace)
	_, err = ws.MoveFile(bg, MoveFileInput{Src: "docs\x00", Dst: "x"})
	wantCode(t, err, CodeInvalidPath)
	// Both change tools are offered.
	if !slices.Contains(ToolNames, ToolMoveFile) || !slices.Contains(ToolNames, ToolDeleteFile) {
		t.Fatalf("ToolNames = %v", ToolNames)
	}
}

func TestDeleteFile(t *testing.T) {
	ws := openTest(t, Config{})
	root := ws.Root()
	outside := t.TempDir()
	writeFile(t, filepath.Join(outside, "canary"), "c")
	writeFile(t, filepath.Join(root, "a.txt"), "A")
	writeFile(t, filepath.Join(root, "t", "sub", "f.txt"), "f")
	if err := os.Symlink(outside, filepath.Join(root, "t", "out")); err != nil {
		t.Fatal(err)
	}
	r, err := ws.DeleteFile(bg, DeleteFileInput{Path: "a.txt"})
	if err != nil || !r.Deleted || r.WasDirectory || r.EntriesRemoved != 1 || r.Text != "deleted a.txt" {
		t.Fatalf("DeleteFile = %+v, %v", r, err)
	}
	_, err = ws.DeleteFile(bg, DeleteFileInput{Path: "t"})
	if e := wantCode(t, err, CodeRecursiveRequired); !strings.Contains(e.Message, "holding 2 entries") {
		t.Fatalf("recursive_required: %v", e)
	}
	r, err = ws.DeleteFile(bg, DeleteFileInput{Path: "t", Recursive: true})
	if err != nil || !r.Deleted || !r.WasDirectory || r.EntriesRemoved != 4 || r.Stopped != "" {
		t.Fatalf("recursive DeleteFile = %+v, %v", r, err)
	}
	if got := readFile(t, filepath.Join(outside, "canary")); got != "c" {
		t.Fatalf("outside canary = %q", got)
	}
	_, err = ws.DeleteFile(bg, DeleteFileInput{Path: ".", Recursive: true})
	wantCode(t, err, CodeInvalidPath)
	_, err = ws.DeleteFile(bg, DeleteFileInput{Path: "t"})
	wantCode(t, err, CodePathNotFound)

	// A deletion that stops part-way is a result with Deleted false, not an error.
	writeFile(t, filepath.Join(root, "p", "a.txt"), "a")
	busy := filepath.Join(root, "p", ".wsfs-00000000000000aa.tmp")
	writeFile(t, busy, "in flight")
	f, err := os.Open(busy)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	r, err = ws.DeleteFile(bg, DeleteFileInput{Path: "p", Recursive: true})
	if err != nil || r.Deleted || r.Stopped != DeleteStoppedNotRemoved || r.EntriesRemoved != 1 ||
		r.NotRemovedCount != 1 || len(r.NotRemoved) != 1 || r.NotRemoved[0].Path != "p/.wsfs-00000000000000aa.tmp" ||
		!strings.HasPrefix(r.Text, "p was NOT fully deleted: 1 entries were removed") {
		t.Fatalf("partial DeleteFile = %+v, %v", r, err)
	}
	// Called again, nothing more can be removed: now an error (nothing changed).
	_, err = ws.DeleteFile(bg, DeleteFileInput{Path: "p", Recursive: true})
	if e := wantCode(t, err, CodeIOError); !strings.HasPrefix(e.Message, "nothing was deleted: p/.wsfs-00000000000000aa.tmp: a wsfs write in progress") {
		t.Fatalf("second delete: %v", e)
	}
	if !errors.Is(&Error{Code: CodeRecursiveRequired}, ErrRecursiveRequired) {
		t.Fatal("no sentinel")
	}
}
