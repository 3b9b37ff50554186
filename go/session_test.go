package wsfs

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// lines is n numbered lines, line i replaced by repl[i] where given.
func lines(n int, repl map[int]string) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		if r, ok := repl[i]; ok {
			b.WriteString(r + "\n")
		} else {
			fmt.Fprintf(&b, "line %d\n", i)
		}
	}
	return b.String()
}

// openOverlay opens an overlay session over base with its state in a
// directory of its own; it skips the test where the kernel refuses the
// overlay (overlay_unavailable).
func openOverlay(t *testing.T, base string) *Workspace {
	t.Helper()
	ws, err := Open(Config{Root: base, StateDir: t.TempDir(), Mode: ModeOverlay, Session: "t1"})
	if errors.Is(err, ErrOverlayUnavailable) {
		t.Skipf("this kernel refuses the overlay view: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.Close() })
	// A refusal may come with the first tool call instead.
	if _, err := ws.ListDir(bg, ListDirInput{Path: "."}); errors.Is(err, ErrOverlayUnavailable) {
		t.Skipf("this kernel refuses the overlay view: %v", err)
	} else if err != nil {
		t.Fatal(err)
	}
	return ws
}

// TestSession: the agent's writes stay in the session; the host diffs,
// checkpoints, rewinds and commits part (paths, then one hunk, then a
// merge over a change made to the base outside), checking the base on disk
// at each step.
func TestSession(t *testing.T) {
	base := t.TempDir()
	writeFile(t, filepath.Join(base, "a.txt"), lines(20, nil))
	writeFile(t, filepath.Join(base, "b.txt"), "bee\n")
	writeFile(t, filepath.Join(base, "gone.txt"), "going\n")
	writeFile(t, filepath.Join(base, "m.txt"), lines(20, nil))
	ws := openOverlay(t, base)
	if ws.Mode() != ModeOverlay || ws.Session() != "t1" {
		t.Fatalf("Mode, Session = %q, %q", ws.Mode(), ws.Session())
	}

	aNew := lines(20, map[int]string{2: "LINE TWO", 18: "LINE EIGHTEEN"})
	if _, err := ws.WriteFile(bg, WriteFileInput{Path: "a.txt", Content: aNew}); err != nil {
		t.Fatal(err)
	}
	if _, err := ws.WriteFile(bg, WriteFileInput{Path: "c.txt", Content: "sea\n"}); err != nil {
		t.Fatal(err)
	}
	if _, err := ws.DeleteFile(bg, DeleteFileInput{Path: "gone.txt"}); err != nil {
		t.Fatal(err)
	}
	// The base is untouched; the tools see the session.
	if got := readFile(t, filepath.Join(base, "a.txt")); got != lines(20, nil) {
		t.Fatalf("base a.txt changed before a commit: %q", got)
	}
	if _, err := os.Stat(filepath.Join(base, "c.txt")); !os.IsNotExist(err) {
		t.Fatalf("base c.txt exists before a commit: %v", err)
	}
	if r, err := ws.ReadFile(bg, ReadFileInput{Path: "a.txt"}); err != nil || r.Content != aNew {
		t.Fatalf("ReadFile(a.txt) = %q, %v", r.Content, err)
	}

	d, err := ws.SessionDiff(bg, DiffOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range d.Changes {
		got = append(got, c.Status+" "+c.Path)
	}
	if want := []string{"D gone.txt", "M a.txt", "A c.txt"}; !slices.Equal(got, want) {
		t.Fatalf("diff changes = %v, want %v (deletions first)", got, want)
	}
	a := d.Changes[1]
	if a.Type != EntryFile || a.Binary || len(a.Hunks) != 2 || a.BytesBefore == nil || *a.BytesBefore != int64(len(lines(20, nil))) ||
		a.BytesAfter == nil || *a.BytesAfter != int64(len(aNew)) || d.Changes[2].BytesBefore != nil {
		t.Fatalf("a.txt change = %+v", a)
	}
	if !strings.Contains(d.Unified, "+LINE TWO") || d.Truncated || d.Text == "" {
		t.Fatalf("unified = %q, truncated %v, text %q", d.Unified, d.Truncated, d.Text)
	}
	if d, err := ws.SessionDiff(bg, DiffOptions{Paths: []string{"c.txt"}, MaxBytes: 10}); err != nil ||
		len(d.Changes) != 1 || !d.Truncated {
		t.Fatalf("diff of c.txt bounded to 10 bytes = %+v, %v", d, err)
	}

	// Checkpoint, change b.txt, rewind: b.txt is the base's again.
	cp, err := ws.SessionCheckpoint(bg, CheckpointOptions{Label: "before b"})
	if err != nil || cp.ID == "" {
		t.Fatalf("checkpoint = %+v, %v", cp, err)
	}
	if _, err := ws.WriteFile(bg, WriteFileInput{Path: "b.txt", Content: "changed\n"}); err != nil {
		t.Fatal(err)
	}
	cps, err := ws.SessionCheckpoints(bg)
	if err != nil || len(cps) != 1 || cps[0].ID != cp.ID || cps[0].Label != "before b" || cps[0].Time == "" {
		t.Fatalf("checkpoints = %+v, %v", cps, err)
	}
	if err := ws.SessionRewind(bg, cp.ID); err != nil {
		t.Fatal(err)
	}
	if r, err := ws.ReadFile(bg, ReadFileInput{Path: "b.txt"}); err != nil || r.Content != "bee\n" {
		t.Fatalf("b.txt after rewind = %q, %v", r.Content, err)
	}
	if err := ws.SessionRewind(bg, "no-such-checkpoint"); !errors.Is(err, ErrInvalidArguments) {
		t.Fatalf("rewind to an unknown id: %v", err)
	}

	// Commit some paths: the addition and the deletion.
	c, err := ws.SessionCommit(bg, CommitOptions{Paths: []string{"c.txt", "gone.txt"}})
	if err != nil || !c.Committed || len(c.Conflicts) != 0 {
		t.Fatalf("commit of two paths = %+v, %v", c, err)
	}
	slices.Sort(c.Files)
	if !slices.Equal(c.Files, []string{"c.txt", "gone.txt"}) {
		t.Fatalf("committed files = %v", c.Files)
	}
	if got := readFile(t, filepath.Join(base, "c.txt")); got != "sea\n" {
		t.Fatalf("base c.txt = %q", got)
	}
	if _, err := os.Stat(filepath.Join(base, "gone.txt")); !os.IsNotExist(err) {
		t.Fatalf("base gone.txt after its commit: %v", err)
	}
	if got := readFile(t, filepath.Join(base, "a.txt")); got != lines(20, nil) {
		t.Fatalf("base a.txt changed by a commit of other paths: %q", got)
	}

	// Commit one hunk of a.txt: the other stays in the session.
	c, err = ws.SessionCommit(bg, CommitOptions{Hunks: map[string][]string{"a.txt": {a.Hunks[0].ID}}})
	if err != nil || !c.Committed {
		t.Fatalf("commit of one hunk = %+v, %v", c, err)
	}
	if got, want := readFile(t, filepath.Join(base, "a.txt")), lines(20, map[int]string{2: "LINE TWO"}); got != want {
		t.Fatalf("base a.txt after one hunk = %q, want %q", got, want)
	}
	d, err = ws.SessionDiff(bg, DiffOptions{})
	if err != nil || len(d.Changes) != 1 || d.Changes[0].Path != "a.txt" || len(d.Changes[0].Hunks) != 1 {
		t.Fatalf("diff after one hunk = %+v, %v", d, err)
	}

	// The rest of a.txt.
	c, err = ws.SessionCommit(bg, CommitOptions{Paths: []string{"a.txt"}})
	if err != nil || !c.Committed {
		t.Fatalf("commit of the rest of a.txt = %+v, %v", c, err)
	}
	if got := readFile(t, filepath.Join(base, "a.txt")); got != aNew {
		t.Fatalf("base a.txt after the rest = %q, want %q", got, aNew)
	}

	// The base changes outside (line 2 of m.txt) after the session changed
	// line 18: a conflict, nothing written; the merge commits both.
	if _, err := ws.WriteFile(bg, WriteFileInput{Path: "m.txt", Content: lines(20, map[int]string{18: "session"})}); err != nil {
		t.Fatal(err)
	}
	outside := lines(20, map[int]string{2: "outside"})
	writeFile(t, filepath.Join(base, "m.txt"), outside)
	if err := ws.SessionRefresh(bg); err != nil {
		t.Fatal(err)
	}
	c, err = ws.SessionCommit(bg, CommitOptions{})
	if err != nil || c.Committed || len(c.Conflicts) != 1 || c.Conflicts[0] != (CommitConflict{Path: "m.txt", BaseChanged: true, SessionChanged: true, Mergeable: true}) {
		t.Fatalf("commit over an outside change = %+v, %v", c, err)
	}
	if got := readFile(t, filepath.Join(base, "m.txt")); got != outside {
		t.Fatalf("a conflict wrote the base: %q", got)
	}
	c, err = ws.SessionCommit(bg, CommitOptions{Merge: true})
	if err != nil || !c.Committed || !slices.Equal(c.Merged, []string{"m.txt"}) {
		t.Fatalf("merge commit = %+v, %v", c, err)
	}
	if got, want := readFile(t, filepath.Join(base, "m.txt")), lines(20, map[int]string{2: "outside", 18: "session"}); got != want {
		t.Fatalf("base m.txt after the merge = %q, want %q", got, want)
	}

	// Discard: an empty session over the base.
	if _, err := ws.WriteFile(bg, WriteFileInput{Path: "b.txt", Content: "dropped\n"}); err != nil {
		t.Fatal(err)
	}
	if err := ws.SessionDiscard(bg); err != nil {
		t.Fatal(err)
	}
	if d, err := ws.SessionDiff(bg, DiffOptions{}); err != nil || len(d.Changes) != 0 {
		t.Fatalf("diff after discard = %+v, %v", d, err)
	}
	if got := readFile(t, filepath.Join(base, "b.txt")); got != "bee\n" {
		t.Fatalf("base b.txt = %q", got)
	}
	raw, err := ws.SessionCallRaw(bg, SessionOpCheckpoints, "")
	if err != nil || !strings.Contains(raw, `"checkpoints":[]`) {
		t.Fatalf("raw checkpoints = %s, %v", raw, err)
	}
}

// TestSessionNoSession: a host workspace has no session; bad calls are
// refused before they reach the library.
func TestSessionNoSession(t *testing.T) {
	ws := openTest(t, Config{Root: t.TempDir()})
	if ws.Mode() != ModeHost || ws.Session() != "" {
		t.Fatalf("Mode, Session = %q, %q", ws.Mode(), ws.Session())
	}
	_, err := ws.SessionDiff(bg, DiffOptions{})
	wantCode(t, err, CodeNoSession)
	_, err = ws.SessionCommit(bg, CommitOptions{})
	wantCode(t, err, CodeNoSession)
	_, err = ws.SessionCheckpoint(bg, CheckpointOptions{})
	wantCode(t, err, CodeNoSession)
	wantCode(t, ws.SessionRewind(bg, "x"), CodeNoSession)
	_, err = ws.SessionCheckpoints(bg)
	wantCode(t, err, CodeNoSession)
	wantCode(t, ws.SessionDiscard(bg), CodeNoSession)
	wantCode(t, ws.SessionRefresh(bg), CodeNoSession)
	raw, err := ws.SessionCallRaw(bg, "diff", `{"paths":["a"]}`)
	wantCode(t, err, CodeNoSession)
	if !strings.Contains(raw, `"code":"no_session"`) {
		t.Fatalf("raw = %s", raw)
	}
	_, err = ws.SessionCallRaw(bg, "merge", "")
	wantCode(t, err, CodeInvalidArguments)
	_, err = ws.SessionCallRaw(bg, "diff", "{\"paths\":[\"a\x00\"]}")
	wantCode(t, err, CodeInvalidArguments)
	// Session keys in host mode are the library's invalid_arguments.
	_, err = Open(Config{Root: t.TempDir(), Session: "s"})
	wantCode(t, err, CodeInvalidArguments)
}

// TestSessionIgnored: a cache and a .gitignore'd file stay out of SessionDiff
// and SessionCommit (counted in Ignored, kept in the session) until
// IncludeIgnored takes them.
func TestSessionIgnored(t *testing.T) {
	base := t.TempDir()
	writeFile(t, filepath.Join(base, ".gitignore"), "*.log\n")
	writeFile(t, filepath.Join(base, "a.txt"), "a\n")
	ws := openOverlay(t, base)
	for path, content := range map[string]string{
		"a.txt": "A\n", "run.log": "log\n", ".pytest_cache/v/cache/nodeids": "[]\n",
	} {
		if _, err := ws.WriteFile(bg, WriteFileInput{Path: path, Content: content}); err != nil {
			t.Fatal(err)
		}
	}
	d, err := ws.SessionDiff(bg, DiffOptions{})
	if err != nil || len(d.Changes) != 1 || d.Changes[0].Path != "a.txt" || d.Ignored != 5 {
		t.Fatalf("diff: %+v %v", d, err)
	}
	all, err := ws.SessionDiff(bg, DiffOptions{IncludeIgnored: true})
	if err != nil || len(all.Changes) != 6 || all.Ignored != 0 {
		t.Fatalf("diff include_ignored: %+v %v", all, err)
	}
	c, err := ws.SessionCommit(bg, CommitOptions{})
	if err != nil || !c.Committed || !slices.Equal(c.Files, []string{"a.txt"}) || c.Ignored != 5 {
		t.Fatalf("commit: %+v %v", c, err)
	}
	if _, err := os.Stat(filepath.Join(base, "run.log")); !os.IsNotExist(err) {
		t.Fatalf("an ignored file reached the base: %v", err)
	}
	c, err = ws.SessionCommit(bg, CommitOptions{IncludeIgnored: true})
	if err != nil || !c.Committed || c.Ignored != 0 {
		t.Fatalf("commit include_ignored: %+v %v", c, err)
	}
	if got := readFile(t, filepath.Join(base, "run.log")); got != "log\n" {
		t.Fatalf("base run.log: %q", got)
	}
}
