package wsfs

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

func TestApplyPatch(t *testing.T) {
	ws := openTest(t, Config{StateDir: t.TempDir()})
	root := ws.Root()
	writeFile(t, filepath.Join(root, "a.txt"), "one\ntwo\nthree\n")
	writeFile(t, filepath.Join(root, "b.txt"), "x\r\ny\r\n")

	patch := "*** Begin Patch\n*** Update File: a.txt\n one\n-two\n+TWO\n*** Update File: b.txt\n x\n+inserted\n*** Add File: new/c.txt\n+hello\n*** End Patch\n"
	r, err := ws.ApplyPatch(bg, ApplyPatchInput{Patch: patch})
	if err != nil {
		t.Fatal(err)
	}
	if !r.Applied || len(r.FilesChanged) != 3 || len(r.RejectedHunks) != 0 {
		t.Fatalf("result %+v", r)
	}
	if f := r.FilesChanged[2]; f.Action != "add" || f.Path != "new/c.txt" || f.AddedLines != 1 {
		t.Fatalf("added file %+v", f)
	}
	if !strings.HasPrefix(r.Text, "applied the patch: 3 files changed") || !strings.Contains(r.Diff, "+TWO") {
		t.Fatalf("text %q diff %q", r.Text, r.Diff)
	}
	for name, want := range map[string]string{"a.txt": "one\nTWO\nthree\n", "b.txt": "x\r\ninserted\r\ny\r\n", "new/c.txt": "hello\n"} {
		if got, _ := os.ReadFile(filepath.Join(root, name)); string(got) != want {
			t.Fatalf("%s = %q, want %q", name, got, want)
		}
	}

	// A patch that does not apply is a result, not an error, and writes nothing.
	r, err = ws.ApplyPatch(bg, ApplyPatchInput{Patch: strings.Replace(patch, "-two", "-nope", 1)})
	if err != nil {
		t.Fatal(err)
	}
	if r.Applied || len(r.RejectedHunks) != 2 || r.RejectedHunks[0].Reason != "context_not_found" || r.RejectedHunks[1].Reason != "file_exists" {
		t.Fatalf("rejected result %+v", r)
	}
	if rh := r.RejectedHunks[0]; rh.Path != "a.txt" || rh.Hunk != 1 || rh.NearestLine != 1 || len(rh.Expected) != 2 {
		t.Fatalf("rejection %+v", rh)
	}
	if !strings.HasPrefix(r.Text, "PATCH NOT APPLIED") {
		t.Fatalf("text %q", r.Text)
	}

	// The files form, non-strict, with a stale hash on one file.
	r, err = ws.ApplyPatch(bg, ApplyPatchInput{Strict: Bool(false), Files: []PatchFileEdits{
		{Path: "a.txt", Hunks: []PatchLineRange{{StartLine: 4, EndLine: 3, ReplaceWith: "four"}}},
		{Path: "b.txt", FileHash: strings.Repeat("0", 64), Hunks: []PatchLineRange{{StartLine: 1, EndLine: 1, ReplaceWith: "X"}}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if !r.Applied || len(r.FilesChanged) != 1 || len(r.RejectedHunks) != 1 || r.RejectedHunks[0].Reason != "stale" {
		t.Fatalf("non-strict result %+v", r)
	}
	if got, _ := os.ReadFile(filepath.Join(root, "a.txt")); string(got) != "one\nTWO\nthree\nfour\n" {
		t.Fatalf("a.txt = %q", got)
	}

	// Invalid arguments are errors.
	_, err = ws.ApplyPatch(bg, ApplyPatchInput{})
	wantCode(t, err, CodeInvalidArguments)
}

// TestApplyPatchStateDir: the state directory reaches the library both ways a
// host opens a workspace, Config.StateDir and OpenJSON's "state_dir", and one
// inside the workspace is refused either way.
func TestApplyPatchStateDir(t *testing.T) {
	twoFiles := "*** Begin Patch\n*** Update File: a.txt\n-a\n+A\n*** Update File: b.txt\n-b\n+B\n*** End Patch\n"
	for _, how := range []string{"Config", "OpenJSON"} {
		base := t.TempDir()
		root, state := filepath.Join(base, "ws"), filepath.Join(base, "state")
		if err := os.Mkdir(root, 0o755); err != nil {
			t.Fatal(err)
		}
		open := func(stateDir string) (*Workspace, error) {
			if how == "Config" {
				return Open(Config{Root: root, StateDir: stateDir})
			}
			return OpenJSON([]byte(`{"root":`+strconv.Quote(root)+`,"state_dir":`+strconv.Quote(stateDir)+`}`), nil)
		}
		_, err := open(filepath.Join(root, ".state"))
		if e := wantCode(t, err, CodeInvalidArguments); !strings.Contains(e.Message, "inside the workspace") {
			t.Fatalf("%s: %v", how, e)
		}
		ws, err := open(state)
		if err != nil {
			t.Fatalf("%s: %v", how, err)
		}
		writeFile(t, filepath.Join(root, "a.txt"), "a\n")
		writeFile(t, filepath.Join(root, "b.txt"), "b\n")
		r, err := ws.ApplyPatch(bg, ApplyPatchInput{Patch: twoFiles})
		if err != nil || !r.Applied {
			t.Fatalf("%s: %+v, %v", how, r, err)
		}
		// The journal went to the state directory (its per-workspace directory is left).
		if entries, err := os.ReadDir(state); err != nil || len(entries) != 1 {
			t.Fatalf("%s: state directory %v, %v", how, entries, err)
		}
		ws.Close()
	}
}
