package wsfs

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

var bg = context.Background()

// The Go module is released with the library of the same version (make dist
// tags it "v" + PackageVersion): a bump of Cargo.toml's version without this
// constant, or the reverse, fails here.
func TestPackageVersionIsTheLibrarys(t *testing.T) {
	v, err := Version()
	if err != nil {
		t.Fatal(err)
	}
	if v.Version != PackageVersion {
		t.Fatalf("the library is version %q, PackageVersion is %q: set go/version.go's PackageVersion to Cargo.toml's [workspace.package] version", v.Version, PackageVersion)
	}
}

func TestVersionABI(t *testing.T) {
	v, err := Version()
	if err != nil {
		t.Fatal(err)
	}
	if v.ABI != ABIVersion || v.Version == "" {
		t.Fatalf("Version() = %+v, want abi %d and a version", v, ABIVersion)
	}

	got, err := checkABI(`{"version":"9.9.9","abi":2}`)
	var mismatch *ABIMismatchError
	if !errors.As(err, &mismatch) {
		t.Fatalf("checkABI(abi 2) = %v, want *ABIMismatchError", err)
	}
	if *mismatch != (ABIMismatchError{Want: 1, Got: 2, LibraryVersion: "9.9.9"}) {
		t.Fatalf("mismatch = %+v", *mismatch)
	}
	if got.ABI != 2 || !strings.Contains(err.Error(), "ABI 2") {
		t.Fatalf("got %+v, %q", got, err)
	}
	if _, err := checkABI(`not json`); err == nil {
		t.Fatal("checkABI(not json) succeeded")
	}
	if _, err := checkABI(`{"version":"0.1.0","abi":1}`); err != nil {
		t.Fatalf("checkABI(abi 1) = %v", err)
	}
}

func TestOpenConfig(t *testing.T) {
	ws := openTest(t, Config{})
	want := Limits{MaxReadBytes: 262144, MaxWriteBytes: 1048576, MaxListEntries: 500, OperationTimeout: 10 * time.Second}
	if ws.Limits() != want {
		t.Fatalf("default limits = %+v, want %+v", ws.Limits(), want)
	}
	if !ws.RestrictToWorkspace() {
		t.Fatal("RestrictToWorkspace defaults to false")
	}

	// Custom limits, restriction off, and a root reached through a symlink
	// (resolved once at open).
	real := t.TempDir()
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	lim := Limits{MaxReadBytes: 10, MaxWriteBytes: 20, MaxListEntries: 3, OperationTimeout: 1500 * time.Microsecond}
	ws2 := openTest(t, Config{Root: link, RestrictToWorkspace: Bool(false), Limits: lim})
	lim.OperationTimeout = 2 * time.Millisecond // rounded up to whole milliseconds
	if ws2.Limits() != lim {
		t.Fatalf("limits = %+v, want %+v", ws2.Limits(), lim)
	}
	if ws2.RestrictToWorkspace() {
		t.Fatal("RestrictToWorkspace = true, want false")
	}
	if ws2.Root() != real {
		t.Fatalf("Root() = %q, want %q", ws2.Root(), real)
	}

	// A root that does not exist yet is refused, naming it, unless CreateRoot makes it.
	fresh := filepath.Join(t.TempDir(), "a", "b")
	if ws, err := Open(Config{Root: fresh}); ws != nil || !errors.Is(err, ErrPathNotFound) ||
		!strings.Contains(err.Error(), fresh) || !strings.Contains(err.Error(), "create_root") {
		t.Fatalf("a missing root: %v", err)
	}
	if _, err := os.Stat(filepath.Dir(fresh)); !os.IsNotExist(err) {
		t.Fatalf("a refused root's parent was made: %v", err)
	}
	openTest(t, Config{Root: fresh, CreateRoot: true})
	if fi, err := os.Stat(fresh); err != nil || !fi.IsDir() {
		t.Fatalf("root not created: %v", err)
	}
}

func TestOpenErrors(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file")
	writeFile(t, file, "x")
	for _, tc := range []struct {
		name string
		cfg  Config
		code Code
	}{
		{"empty root", Config{Root: "  "}, CodeInvalidPath},
		{"NUL in root", Config{Root: "/tmp/a\x00b"}, CodeInvalidPath},
		{"negative limit", Config{Root: t.TempDir(), Limits: Limits{MaxReadBytes: -1}}, CodeInvalidArguments},
		{"limit over the ceiling", Config{Root: t.TempDir(), Limits: Limits{MaxListEntries: 2_000_000}}, CodeInvalidArguments},
		{"root is a file", Config{Root: file}, CodeNotADirectory},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ws, err := Open(tc.cfg)
			if ws != nil {
				ws.Close()
			}
			e := wantCode(t, err, tc.code)
			if e.Tool != "open" {
				t.Fatalf("Tool = %q, want open", e.Tool)
			}
		})
	}
}

// TestOpenJSON: the library's configuration JSON is passed through as is,
// and the library judges it.
func TestOpenJSON(t *testing.T) {
	root := t.TempDir()
	h := &recordHandler{}
	ws, err := OpenJSON([]byte(`{"root":`+strconv.Quote(root)+`,"restrict_to_workspace":false,"limits":{"max_read_bytes":3}}`), slogNew(h))
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	if ws.Root() != root || ws.RestrictToWorkspace() || ws.Limits().MaxReadBytes != 3 || ws.Limits().MaxListEntries != 500 {
		t.Fatalf("root %s, restrict %v, limits %+v", ws.Root(), ws.RestrictToWorkspace(), ws.Limits())
	}
	writeFile(t, filepath.Join(root, "a.txt"), "abcdef")
	r, err := ws.ReadFile(bg, ReadFileInput{Path: "a.txt"})
	if err != nil || r.Content != "abc" || !r.Truncated {
		t.Fatalf("read %+v, %v", r, err)
	}
	if recs := h.toolRecords(); len(recs) != 1 || recs[0]["tool"] != ToolReadFile {
		t.Fatalf("the logger did not get the call: %v", recs)
	}

	for _, tc := range []struct {
		name, cfg string
		code      Code
	}{
		{"unknown key", `{"root":` + strconv.Quote(root) + `,"no_such_key":1}`, CodeInvalidArguments},
		{"zero limit", `{"root":` + strconv.Quote(root) + `,"limits":{"max_list_entries":0}}`, CodeInvalidArguments},
		{"not JSON", `{`, CodeInvalidArguments},
		{"NUL byte", "{\"root\":\"/tmp\"}\x00", CodeInvalidArguments},
	} {
		ws, err := OpenJSON([]byte(tc.cfg), nil)
		if ws != nil {
			ws.Close()
		}
		if e := wantCode(t, err, tc.code); e.Tool != "open" {
			t.Fatalf("%s: Tool = %q", tc.name, e.Tool)
		}
	}
}

func TestRestrictToWorkspaceFalse(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "outside.txt"), "visible")
	ws := openTest(t, Config{Root: filepath.Join(dir, "ws"), CreateRoot: true, RestrictToWorkspace: Bool(false)})
	r, err := ws.ReadFile(bg, ReadFileInput{Path: "../outside.txt"})
	if err != nil || r.Content != "visible" {
		t.Fatalf("unrestricted read = %+v, %v", r, err)
	}
}

func TestClose(t *testing.T) {
	ws, err := Open(Config{Root: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for i := range errs {
		wg.Go(func() { errs[i] = ws.Close() })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("Close #%d: %v", i, err)
		}
	}
	if !ws.Closed() {
		t.Fatal("Closed() = false")
	}
	_, err = ws.ListDir(bg, ListDirInput{})
	wantCode(t, err, CodeInvalidWorkspace)
	_, err = ws.WriteFile(bg, WriteFileInput{Path: "a", Content: "b"})
	wantCode(t, err, CodeInvalidWorkspace)
	if err := ws.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
}
