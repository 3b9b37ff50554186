package wsfs

import (
	"path/filepath"
	"testing"
)

// Issue 18 gap 5: ListDirInput's IncludeFiles / IncludeDirs reach the library.
func TestListDirIncludeFilesAndDirs(t *testing.T) {
	ws := openTest(t, Config{})
	writeFile(t, filepath.Join(ws.Root(), "a.txt"), "a")
	writeFile(t, filepath.Join(ws.Root(), "sub", "b.txt"), "b")
	names := func(r ListDirResult) []string {
		var out []string
		for _, e := range r.Entries {
			out = append(out, e.Name)
		}
		return out
	}
	r, err := ws.ListDir(bg, ListDirInput{IncludeFiles: Bool(false)})
	if err != nil || len(names(r)) != 1 || names(r)[0] != "sub" {
		t.Fatalf("dirs only: %v %v", names(r), err)
	}
	r, err = ws.ListDir(bg, ListDirInput{IncludeDirs: Bool(false)})
	if err != nil || len(names(r)) != 1 || names(r)[0] != "a.txt" {
		t.Fatalf("files only: %v %v", names(r), err)
	}
	r, err = ws.ListDir(bg, ListDirInput{Depth: 2, IncludeFiles: Bool(false)})
	if err != nil || r.Tree == nil || len(r.Tree.Children) != 1 || len(r.Tree.Children[0].Children) != 0 {
		t.Fatalf("tree of dirs: %+v %v", r.Tree, err)
	}
	_, err = ws.ListDir(bg, ListDirInput{IncludeFiles: Bool(false), IncludeDirs: Bool(false)})
	wantCode(t, err, CodeInvalidArguments)
}
