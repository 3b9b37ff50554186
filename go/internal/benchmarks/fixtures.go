package benchmarks

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
	"unsafe"
)

// Benchmark paths (how a tool is called), measured by the Go benchmarks.
const (
	// PathFantasy: fantasytools.Tools(ws), then tool.Run(ctx, fantasy.ToolCall{Input: json}).
	PathFantasy = "fantasy"
	// PathTyped: the typed Go API (ws.ReadFile(ctx, wsfs.ReadFileInput{...}) ...).
	PathTyped = "typed"
	// PathCgoTyped and PathCgoFantasy: the library called through cgo exactly
	// as the typed API and the fantasy tools call it (Case.Typed and
	// Case.Fantasy: output mode, content buffer), with no Go-side checks,
	// context handling or decoding.
	PathCgoTyped   = "cgo_typed"
	PathCgoFantasy = "cgo_fantasy"
	// PathBaseline: the pure-Go os.Root implementation (Baseline).
	PathBaseline = "baseline"
	// PathBaselineFantasy: the Baseline wrapped with fantasy.NewAgentTool.
	PathBaselineFantasy = "baseline_fantasy"
	// PathFloor: the system calls alone (Floor).
	PathFloor = "floor"
	// PathBaselineAA: the Baseline again, on its own files: the A/A control
	// (baseline against itself) shows the noise of the paired measurement.
	PathBaselineAA = "baseline_aa"
	// PathTypedBackground and PathFantasyBackground: the typed API and the
	// fantasy tools with context.Background() instead of a cancellable
	// context, to measure what cancellation costs.
	PathTypedBackground   = "typed_bg"
	PathFantasyBackground = "fantasy_bg"
	// PathBaselineOpenFirst: the Baseline whose read_file opens the path
	// before looking at the leaf (OpenBaselineOpenFirst), which does not keep
	// the special-file contract. Measured for reference only, paired with the
	// typed API on OpenFirstCases; not in GoPaths.
	PathBaselineOpenFirst = "baseline_open_first"
)

// GoPaths are the paths the Go benchmarks measure, in table order.
var GoPaths = []string{PathFloor, PathBaseline, PathBaselineAA, PathBaselineFantasy, PathCgoTyped, PathCgoFantasy, PathTyped, PathFantasy}

// Filesystems a case's workspace can be on: the scratch disk (ext4 here),
// or tmpfs, where fsync costs nothing and a write's CPU cost shows.
const (
	FSDisk  = ""
	FSTmpfs = "tmpfs"
)

// RustLayers are the layers the Rust bench (benches/layers.rs) measures:
// wsfs::run_tool (core), and the C ABI called as the typed API calls it and
// as the fantasy tools call it (Case.Typed, Case.Fantasy).
var RustLayers = []string{"core", "cabi_typed", "cabi_fantasy"}

// CallMode is how a path calls the C ABI: the output mode, and whether
// write_file/append_file's content goes as a separate buffer
// (wsfs_call_with_content) instead of inside the JSON arguments. These
// mirror go/files.go and go/tools.go; update them when those change, or the
// layer breakdown attributes costs to the wrong layer.
type CallMode struct {
	Output        string `json:"output"`
	ContentBuffer bool   `json:"content_buffer,omitempty"`
}

// typedMode is how the typed API calls c's tool.
func typedMode(c Case) CallMode {
	switch c.Tool {
	case "read_file":
		if c.StartLine != 0 || c.MaxLines != 0 {
			return CallMode{Output: "full"} // a range's text is not its content
		}
		return CallMode{Output: "data_raw"}
	case "write_file", "append_file":
		return CallMode{Output: "full", ContentBuffer: true}
	}
	return CallMode{Output: "full"}
}

// fantasyMode is how the fantasy tools call every tool: the model's JSON
// arguments as they are, the text unescaped after the envelope.
var fantasyMode = CallMode{Output: "text_raw"}

// Case is one benchmark case. The fixture's manifest.json lists them, so the
// Rust bench runs exactly the same calls on the same files.
type Case struct {
	Name string `json:"name"`
	Tool string `json:"tool"`
	// Desc is shown in docs/PERFORMANCE.md.
	Desc string `json:"desc"`
	// Path is the tool path, relative to the workspace root; "{layer}" is
	// replaced by the layer's name so mutating cases never share a file.
	Path string `json:"path"`
	// StartLine and MaxLines (read_file) ask for a range of lines.
	StartLine int `json:"start_line,omitempty"`
	MaxLines  int `json:"max_lines,omitempty"`
	// ContentFile (write_file, append_file) holds the content, relative to
	// the fixture directory.
	ContentFile string `json:"content_file,omitempty"`
	// ResetFrom is copied over Path before every timed run.
	ResetFrom string `json:"reset_from,omitempty"`
	// Edits are edit_file's old_text/new_text, used in turn (A->B, B->A) so
	// the file returns to its original state.
	Edits [][2]string `json:"edits,omitempty"`
	// ExpectOK is whether the call must succeed.
	ExpectOK bool `json:"expect_ok"`
	// ExpectBytes (read_file) is len(content).
	ExpectBytes int64 `json:"expect_bytes,omitempty"`
	// ExpectEntries and ExpectTotal (list_dir).
	ExpectEntries int `json:"expect_entries,omitempty"`
	ExpectTotal   int `json:"expect_total,omitempty"`
	// ExpectCode (a failing case) is the error code the call must return.
	ExpectCode string `json:"expect_code,omitempty"`
	// FS is the filesystem of the case's workspace: FSDisk or FSTmpfs.
	FS string `json:"fs,omitempty"`
	// FullOnly cases need the full-scale fixture (bench/run.sh without --short).
	FullOnly bool `json:"full_only,omitempty"`
	// Probe cases measure one thing only, the cost of a cancellable context
	// (ContextComparisons): a call the library refuses after reading its
	// options and arguments, without touching a file.
	Probe bool `json:"probe,omitempty"`
	// Warm is the small case of the same tool run once before a peak-RSS
	// measurement, so one-time initialisation is not counted.
	Warm string `json:"warm"`
	// Typed and Fantasy are how the typed API and the fantasy tools call
	// the C ABI for this case (set by AllCases).
	Typed   CallMode `json:"typed"`
	Fantasy CallMode `json:"fantasy"`
}

// Manifest is manifest.json at the top of a fixture directory.
type Manifest struct {
	Version int    `json:"version"`
	Full    bool   `json:"full"`
	WS      string `json:"workspace"`
	// WSTmpfs is the absolute path of the workspace on tmpfs, for the cases
	// with FS == FSTmpfs ("" when the fixture has none).
	WSTmpfs string `json:"workspace_tmpfs,omitempty"`
	Cases   []Case `json:"cases"`
}

const manifestVersion = 4

// Edit markers: equal length, each unique in its file.
const (
	markerA = "<<<wsfs-bench-marker-A>>>"
	markerB = "<<<wsfs-bench-marker-B>>>"
)

// Scale of the directory fixtures.
const (
	entries1M   = 1_000_000
	entries100k = 100_000
	entries10k  = 10_000
	entries50   = 50
	sparseSize  = 10 << 30
	// text1m.txt is read capped at max_read_bytes.
	size1m = 1 << 20
	// text64m.txt is this block repeated 64 times.
	block64m  = 1 << 20
	blocks64m = 64
	// The range read of text64m.txt: lines 500000-500100.
	rangeStart = 500_000
	rangeLines = 101
)

// AllCases returns every case; FullOnly ones need a full fixture.
func AllCases() []Case {
	edits := [][2]string{{markerA, markerB}, {markerB, markerA}}
	limit := DefaultMaxListEntries
	cases := []Case{
		{Name: "read_4k", Tool: "read_file", Desc: "read_file, 4 KiB text file", Path: "small/f4k.txt",
			ExpectOK: true, ExpectBytes: 4 << 10, Warm: "read_4k"},
		{Name: "read_1m_capped", Tool: "read_file", Desc: "read_file, 256 KiB of a 1 MiB text file (capped)", Path: "big/text1m.txt",
			ExpectOK: true, ExpectBytes: capped(text(size1m)), Warm: "read_4k"},
		{Name: "read_range_64m", Tool: "read_file", Desc: "read_file, 64 MiB text file, lines 500000-500100 (a range)", Path: "big/text64m.txt",
			StartLine: rangeStart, MaxLines: rangeLines, ExpectOK: true, ExpectBytes: rangeBytes(text(block64m), blocks64m, rangeStart, rangeLines), Warm: "read_4k"},
		{Name: "read_sparse10g_text", Tool: "read_file", Desc: "read_file, 10 GiB sparse file, first 256 KiB text (capped)", Path: "big/sparse10g_text.txt",
			ExpectOK: true, ExpectBytes: capped(text(DefaultMaxReadBytes)), Warm: "read_4k"},
		{Name: "read_sparse10g_zeros", Tool: "read_file", Desc: "read_file, 10 GiB sparse file of zeros (refused as binary)", Path: "big/sparse10g_zeros.bin",
			ExpectOK: false, ExpectCode: "io_error", Warm: "read_4k"},
		{Name: "ctx_probe", Tool: "read_file", Desc: "read_file with max_lines 20000 (refused: invalid_arguments), the context's cost alone", Path: "small/f4k.txt",
			MaxLines: 20_000, ExpectOK: false, ExpectCode: "invalid_arguments", Probe: true, Warm: "read_4k"},
		{Name: "refuse_outside", Tool: "read_file", Desc: "read_file `../outside.txt` (refused: outside_workspace)", Path: "../outside.txt",
			ExpectOK: false, ExpectCode: "outside_workspace", Warm: "read_4k"},
		{Name: "write_4k", Tool: "write_file", Desc: "write_file, 4 KiB (overwrite)", Path: "mut/{layer}/w4k.txt",
			ContentFile: "templates/c4k.txt", ResetFrom: "templates/c4k.txt", ExpectOK: true, Warm: "write_4k"},
		{Name: "write_1m", Tool: "write_file", Desc: "write_file, 1 MiB (overwrite)", Path: "mut/{layer}/w1m.txt",
			ContentFile: "templates/c1m.txt", ResetFrom: "templates/c1m.txt", ExpectOK: true, Warm: "write_4k"},
		{Name: "append_100b", Tool: "append_file", Desc: "append_file, 100 B", Path: "mut/{layer}/append.log",
			ContentFile: "templates/c100.txt", ResetFrom: "templates/empty.txt", ExpectOK: true, Warm: "append_100b"},
		{Name: "edit_4k", Tool: "edit_file", Desc: "edit_file, unique 25 B in a 4 KiB file", Path: "mut/{layer}/edit4k.txt",
			ResetFrom: "templates/edit4k.txt", Edits: edits, ExpectOK: true, Warm: "edit_4k"},
		{Name: "edit_1m", Tool: "edit_file", Desc: "edit_file, unique 25 B in the middle of a 1 MiB file", Path: "mut/{layer}/edit1m.txt",
			ResetFrom: "templates/edit1m.txt", Edits: edits, ExpectOK: true, Warm: "edit_4k"},
		{Name: "list_50", Tool: "list_dir", Desc: "list_dir, 50 entries", Path: "list/d50",
			ExpectOK: true, ExpectEntries: entries50, ExpectTotal: entries50, Warm: "list_50"},
		{Name: "list_10k", Tool: "list_dir", Desc: "list_dir, first 500 of 10k entries", Path: "list/d10k",
			ExpectOK: true, ExpectEntries: limit, ExpectTotal: entries10k, Warm: "list_50"},
		{Name: "list_100k", Tool: "list_dir", Desc: "list_dir, first 500 of 100k entries", Path: "list/d100k",
			ExpectOK: true, ExpectEntries: limit, ExpectTotal: entries100k, FullOnly: true, Warm: "list_50"},
		{Name: "list_1m", Tool: "list_dir", Desc: "list_dir, first 500 of 1M entries", Path: "list/d1m",
			ExpectOK: true, ExpectEntries: limit, ExpectTotal: entries1M, FullOnly: true, Warm: "list_50"},
	}
	// The change tools again on tmpfs, where their CPU cost is not hidden
	// behind fsync.
	var onTmpfs []Case
	for _, c := range cases {
		if c.Tool == "write_file" || c.Tool == "append_file" || c.Tool == "edit_file" {
			c.Name += "_tmpfs"
			c.Desc += ", tmpfs"
			c.FS = FSTmpfs
			onTmpfs = append(onTmpfs, c)
		}
	}
	cases = append(cases, onTmpfs...)
	for i := range cases {
		cases[i].Typed, cases[i].Fantasy = typedMode(cases[i]), fantasyMode
	}
	return cases
}

// Fixture is a built fixture directory: manifest.json, templates/ and the
// workspace ws/.
type Fixture struct {
	Dir      string
	Manifest Manifest

	mu      sync.Mutex
	content map[string]string
}

// WS is the workspace root on the scratch disk.
func (fx *Fixture) WS() string { return filepath.Join(fx.Dir, fx.Manifest.WS) }

// WSOf is the workspace root of c (on disk or on tmpfs).
func (fx *Fixture) WSOf(c Case) string {
	if c.FS == FSTmpfs {
		return fx.Manifest.WSTmpfs
	}
	return fx.WS()
}

// Case returns the case named name.
func (fx *Fixture) Case(name string) (Case, bool) {
	for _, c := range fx.Manifest.Cases {
		if c.Name == name {
			return c, true
		}
	}
	return Case{}, false
}

// ToolPath is c's tool path for layer.
func (fx *Fixture) ToolPath(c Case, layer string) string {
	return strings.ReplaceAll(c.Path, "{layer}", layer)
}

// Content is c's content (cached).
func (fx *Fixture) Content(c Case) (string, error) {
	if c.ContentFile == "" {
		return "", nil
	}
	fx.mu.Lock()
	defer fx.mu.Unlock()
	if s, ok := fx.content[c.ContentFile]; ok {
		return s, nil
	}
	b, err := os.ReadFile(filepath.Join(fx.Dir, c.ContentFile))
	if err != nil {
		return "", err
	}
	if fx.content == nil {
		fx.content = map[string]string{}
	}
	fx.content[c.ContentFile] = string(b)
	return string(b), nil
}

// Reset puts c's file for layer back in its initial state.
func (fx *Fixture) Reset(c Case, layer string) error {
	if c.ResetFrom == "" {
		return nil
	}
	b, err := os.ReadFile(filepath.Join(fx.Dir, c.ResetFrom))
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(fx.WSOf(c), fx.ToolPath(c, layer)), b, 0o644)
}

// LoadFixture reads dir/manifest.json.
func LoadFixture(dir string) (*Fixture, error) {
	b, err := os.ReadFile(filepath.Join(dir, "manifest.json"))
	if err != nil {
		return nil, err
	}
	fx := &Fixture{Dir: dir}
	if err := json.Unmarshal(b, &fx.Manifest); err != nil {
		return nil, fmt.Errorf("%s/manifest.json: %v", dir, err)
	}
	if fx.Manifest.Version != manifestVersion {
		return nil, fmt.Errorf("%s/manifest.json: version %d, want %d", dir, fx.Manifest.Version, manifestVersion)
	}
	return fx, nil
}

// BuildFixture creates the fixture in dir (which may exist) unless a fixture
// of at least the requested scale is already there. full adds the 100k-
// and 1M-entry directories; tmpfs, if not "", is a directory on tmpfs for
// the tmpfs cases' workspace (without it they are left out). Progress goes
// to log (may be nil).
func BuildFixture(dir string, full bool, tmpfs string, log io.Writer) (*Fixture, error) {
	if log == nil {
		log = io.Discard
	}
	if fx, err := LoadFixture(dir); err == nil && (fx.Manifest.Full || !full) && (fx.Manifest.WSTmpfs != "" || tmpfs == "") {
		return fx, nil
	}
	start := time.Now()
	ws := filepath.Join(dir, "ws")
	tmpl := filepath.Join(dir, "templates")
	for _, d := range []string{tmpl, filepath.Join(ws, "small"), filepath.Join(ws, "big"), filepath.Join(ws, "list")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, err
		}
	}
	wsTmpfs := ""
	if tmpfs != "" {
		var err error
		if wsTmpfs, err = filepath.Abs(filepath.Join(tmpfs, "ws")); err != nil {
			return nil, err
		}
	}
	for _, root := range []string{ws, wsTmpfs} {
		for _, layer := range append(append([]string(nil), GoPaths...), RustLayers...) {
			if root == "" {
				continue
			}
			if err := os.MkdirAll(filepath.Join(root, "mut", layer), 0o755); err != nil {
				return nil, err
			}
		}
	}

	edit4k := withMarker(4 << 10)
	edit1m := withMarker(1 << 20)
	files := []struct {
		path string
		data []byte
	}{
		{filepath.Join(tmpl, "c4k.txt"), text(4 << 10)},
		{filepath.Join(tmpl, "c1m.txt"), text(1 << 20)},
		{filepath.Join(tmpl, "c100.txt"), text(100)},
		{filepath.Join(tmpl, "empty.txt"), nil},
		{filepath.Join(tmpl, "edit4k.txt"), edit4k},
		{filepath.Join(tmpl, "edit1m.txt"), edit1m},
		{filepath.Join(ws, "small", "f4k.txt"), text(4 << 10)},
		{filepath.Join(ws, "big", "text1m.txt"), text(size1m)},
	}
	for _, f := range files {
		if err := os.WriteFile(f.path, f.data, 0o644); err != nil {
			return nil, err
		}
	}
	if err := writeRepeated(filepath.Join(ws, "big", "text64m.txt"), text(block64m), blocks64m); err != nil {
		return nil, err
	}
	if err := writeSparse(filepath.Join(ws, "big", "sparse10g_text.txt"), text(DefaultMaxReadBytes), sparseSize); err != nil {
		return nil, err
	}
	if err := writeSparse(filepath.Join(ws, "big", "sparse10g_zeros.bin"), nil, sparseSize); err != nil {
		return nil, err
	}
	dirs := []struct {
		name string
		n    int
	}{{"d50", entries50}, {"d10k", entries10k}}
	if full {
		dirs = append(dirs, []struct {
			name string
			n    int
		}{{"d100k", entries100k}, {"d1m", entries1M}}...)
	}
	for _, d := range dirs {
		t := time.Now()
		if err := makeEntries(filepath.Join(ws, "list", d.name), filepath.Join(dir, "linksrc", d.name), d.n); err != nil {
			return nil, err
		}
		fmt.Fprintf(log, "fixture: list/%s (%d entries) in %v\n", d.name, d.n, time.Since(t).Round(time.Millisecond))
	}

	var cases []Case
	for _, c := range AllCases() {
		if (full || !c.FullOnly) && (c.FS != FSTmpfs || wsTmpfs != "") {
			cases = append(cases, c)
		}
	}
	m := Manifest{Version: manifestVersion, Full: full, WS: "ws", WSTmpfs: wsTmpfs, Cases: cases}
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, "manifest.json"), b, 0o644); err != nil {
		return nil, err
	}
	fx := &Fixture{Dir: dir, Manifest: m}
	for _, c := range cases {
		for _, layer := range append(append([]string(nil), GoPaths...), RustLayers...) {
			if err := fx.Reset(c, layer); err != nil {
				return nil, err
			}
		}
	}
	fmt.Fprintf(log, "fixture: built in %v (full=%v) at %s\n", time.Since(start).Round(time.Millisecond), full, dir)
	return fx, nil
}

// text returns n bytes of ASCII text in lines ending with '\n'.
func text(n int) []byte {
	var b bytes.Buffer
	b.Grow(n + 100)
	for i := 0; b.Len() < n; i++ {
		fmt.Fprintf(&b, "%07d the quick brown fox jumps over the lazy dog; wsfs benchmark text\n", i)
	}
	out := b.Bytes()[:n]
	if n > 0 {
		out[n-1] = '\n'
	}
	return out
}

// rangeBytes is the length of lines start..start+n-1 (1-based) of block
// repeated times times; block ends with a newline, so no line spans two
// copies.
// capped is the length of a plain read of b cut at DefaultMaxReadBytes:
// the library cuts back to the end of the last whole line that fits.
func capped(b []byte) int64 {
	b = b[:min(len(b), DefaultMaxReadBytes)]
	if i := bytes.LastIndexByte(b, '\n'); i >= 0 {
		return int64(i + 1)
	}
	return int64(len(b))
}

func rangeBytes(block []byte, times, start, n int) int64 {
	lines := bytes.SplitAfter(block, []byte{'\n'})
	lines = lines[:len(lines)-1] // the empty piece after the last newline
	var total int64
	for k := start; k < start+n && k <= len(lines)*times; k++ {
		total += int64(len(lines[(k-1)%len(lines)]))
	}
	return total
}

// withMarker returns n bytes of text with markerA once, in the middle.
func withMarker(n int) []byte {
	t := text(n)
	mid := n / 2
	copy(t[mid:], markerA)
	return t
}

func writeRepeated(path string, block []byte, times int) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	for range times {
		if _, err := f.Write(block); err != nil {
			f.Close()
			return err
		}
	}
	return f.Close()
}

func writeSparse(path string, head []byte, size int64) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := f.Write(head); err != nil {
		f.Close()
		return err
	}
	if err := f.Truncate(size); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// makeEntries creates n empty regular files in dir, named entry-NNNNNNN.txt.
// They are hard links to a few empty files in srcDir (outside the
// workspace): listing them costs what listing distinct files costs (getdents64,
// then an lstat per listed name), but creating them allocates no inodes, which
// keeps building the 1M-entry directory at seconds instead of minutes on ext4
// after earlier mass deletions. Where hard links are not possible, mknodat
// creates distinct files instead.
func makeEntries(dir, srcDir string, n int) error {
	for _, d := range []string{dir, srcDir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	fd, err := syscall.Open(dir, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer syscall.Close(fd)
	src, err := syscall.Open(srcDir, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer syscall.Close(src)
	const perSource = 60_000 // ext4 allows 65,000 links per inode
	links, source, useLinks := 0, 0, true
	var srcName []byte
	newSource := func() error {
		source++
		links = 0
		srcName = fmt.Appendf(srcName[:0], "s%03d\x00", source)
		return syscall.Mknodat(src, string(srcName[:len(srcName)-1]), syscall.S_IFREG|0o644, 0)
	}
	if err := newSource(); err != nil {
		return err
	}
	name := make([]byte, 0, 32)
	for i := range n {
		name = fmt.Appendf(name[:0], "entry-%07d.txt\x00", i)
		if useLinks {
			if links == perSource {
				if err := newSource(); err != nil {
					return err
				}
			}
			err := linkat(src, srcName, fd, name)
			switch {
			case err == nil || errors.Is(err, syscall.EEXIST):
				links++
				continue
			case errors.Is(err, syscall.EMLINK):
				if err := newSource(); err != nil {
					return err
				}
				if err := linkat(src, srcName, fd, name); err == nil {
					links++
					continue
				}
			}
			useLinks = false
		}
		err := syscall.Mknodat(fd, string(name[:len(name)-1]), syscall.S_IFREG|0o644, 0)
		if err != nil && !errors.Is(err, syscall.EEXIST) {
			return fmt.Errorf("mknodat %s/%s: %w", dir, name[:len(name)-1], err)
		}
	}
	return nil
}

// linkat links NUL-terminated oldName in oldDir as NUL-terminated newName in
// newDir.
func linkat(oldDir int, oldName []byte, newDir int, newName []byte) error {
	_, _, e := syscall.Syscall6(syscall.SYS_LINKAT, uintptr(oldDir), uintptr(unsafe.Pointer(&oldName[0])),
		uintptr(newDir), uintptr(unsafe.Pointer(&newName[0])), 0, 0)
	if e != 0 {
		return e
	}
	return nil
}
