package wsfs

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// walkTree makes a small project in root: sources, a .gitignore, a hidden
// file, a symlink leading outside.
func walkTree(t *testing.T, root string) {
	t.Helper()
	for name, content := range map[string]string{
		"src/main.go":      "package main\n\nfunc main() { println(\"needle\") }\n",
		"src/util/util.go": "package util // needle\n",
		"README.md":        "No Needle here\n",
		".env":             "needle=1\n",
		"gen/out.go":       "needle generated\n",
		".gitignore":       "gen/\n",
		"docs/é.txt":       "héllo needle\n",
	} {
		writeFile(t, filepath.Join(root, name), content)
	}
	outside := t.TempDir()
	writeFile(t, filepath.Join(outside, "secret.go"), "needle outside\n")
	if err := os.Symlink(outside, filepath.Join(root, "out")); err != nil {
		t.Fatal(err)
	}
}

func TestFindFiles(t *testing.T) {
	ws := openTest(t, Config{})
	walkTree(t, ws.Root())
	ctx := context.Background()
	r, err := ws.FindFiles(ctx, FindFilesInput{Pattern: "**/*.go"})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"src/main.go", "src/util/util.go"}; !slices.Equal(r.Files, want) || r.Truncated {
		t.Fatalf("files %v (truncated %v), want %v", r.Files, r.Truncated, want)
	}
	if r.FilesScanned == 0 || !strings.Contains(r.Text, "src/main.go\nsrc/util/util.go\n") {
		t.Fatalf("%+v", r)
	}
	no := false
	r, err = ws.FindFiles(ctx, FindFilesInput{Pattern: "*.go", RespectGitignore: &no, MaxResults: 1})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(r.Files, []string{"gen/out.go"}) || !r.Truncated {
		t.Fatalf("respect_gitignore=false, max 1: %+v", r)
	}
	_, err = ws.FindFiles(ctx, FindFilesInput{Pattern: "a["})
	wantCode(t, err, CodeInvalidArguments)
	_, err = ws.FindFiles(ctx, FindFilesInput{Pattern: "*", Path: "../x"})
	wantCode(t, err, CodeOutsideWorkspace)
	_, err = ws.FindFiles(ctx, FindFilesInput{Pattern: "*", Path: "a\x00b"})
	wantCode(t, err, CodeInvalidPath)
}

func TestSearchText(t *testing.T) {
	ws := openTest(t, Config{})
	walkTree(t, ws.Root())
	ctx := context.Background()
	r, err := ws.SearchText(ctx, SearchTextInput{Query: "needle"})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range r.Matches {
		got = append(got, m.File+":"+m.Snippet)
		if m.Matched() != "needle" {
			t.Errorf("%+v: Matched() = %q", m, m.Matched())
		}
	}
	want := []string{"docs/é.txt:héllo needle", `src/main.go:func main() { println("needle") }`, "src/util/util.go:package util // needle"}
	if !slices.Equal(got, want) || r.Truncated || r.FilesSearched != 4 {
		t.Fatalf("got %q (files searched %d), want %q", got, r.FilesSearched, want)
	}
	if m := r.Matches[0]; m.Line != 1 || m.Column != 7 || m.MatchStart != 6 || m.MatchEnd != 12 {
		t.Fatalf("columns count characters: %+v", m)
	}
	no := false
	r, err = ws.SearchText(ctx, SearchTextInput{Query: "NEEDLE", CaseSensitive: &no, Glob: "*.md", ContextLines: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Matches) != 1 || r.Matches[0].File != "README.md" || r.Matches[0].Before != nil {
		t.Fatalf("case-insensitive glob search: %+v", r)
	}
	r, err = ws.SearchText(ctx, SearchTextInput{Query: `func \w+\(`, UseRegex: true, Path: "src/main.go", ContextLines: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Matches) != 1 || r.Matches[0].Line != 3 || !slices.Equal(r.Matches[0].Before, []string{""}) {
		t.Fatalf("regex search of one file: %+v", r)
	}
	_, err = ws.SearchText(ctx, SearchTextInput{Query: "(", UseRegex: true})
	e := wantCode(t, err, CodeInvalidRegex)
	if !strings.Contains(e.Message, "unclosed group") {
		t.Fatalf("message %q", e.Message)
	}
}

func TestListDirTree(t *testing.T) {
	slow := slowDecodes.Load()
	ws := openTest(t, Config{})
	walkTree(t, ws.Root())
	ctx := context.Background()
	no, yes := false, true
	r, err := ws.ListDir(ctx, ListDirInput{Depth: 2, IncludeHidden: &no, RespectGitignore: &yes})
	if err != nil {
		t.Fatal(err)
	}
	if r.Tree == nil || r.Tree.Name != "." || r.Tree.Type != EntryDir || len(r.Entries) != 0 {
		t.Fatalf("%+v", r)
	}
	var names []string
	for _, c := range r.Tree.Children {
		names = append(names, c.Name+"/"+c.Type)
	}
	if want := []string{"README.md/file", "docs/dir", "out/symlink", "src/dir"}; !slices.Equal(names, want) {
		t.Fatalf("children %v, want %v", names, want)
	}
	src := r.Tree.Children[3]
	if len(src.Children) != 2 || src.Children[0].Name != "main.go" || src.Children[0].Size == 0 || src.Children[1].Children != nil {
		t.Fatalf("src: %+v", src)
	}
	if r.Total != 7 || r.Truncated || !strings.Contains(r.Text, "\n  src/\n    main.go  ") {
		t.Fatalf("total %d truncated %v text %q", r.Total, r.Truncated, r.Text)
	}
	// Filters on one level keep the flat shape.
	r, err = ws.ListDir(ctx, ListDirInput{IncludeHidden: &no, MaxEntries: 2})
	if err != nil {
		t.Fatal(err)
	}
	if r.Tree != nil || len(r.Entries) != 2 || r.Total != 5 || !r.Truncated {
		t.Fatalf("filtered flat listing: %+v", r)
	}
	_, err = ws.ListDir(ctx, ListDirInput{Depth: 61})
	wantCode(t, err, CodeInvalidArguments)
	if n := slowDecodes.Load() - slow; n != 0 {
		t.Fatalf("%d envelopes needed the slow decoder", n)
	}
}
