package benchmarks

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"
	"unsafe"

	wsfs "github.com/wsfs/wsfs/go"
)

// Baseline is the leanest correct pure-Go implementation of wsfs's contract
// (docs/) on os.Root that we know how to write: what a good Go engineer
// would write for the same job, without the costs the contract does not ask
// for. Comparing wsfs with it measures wsfs's layers, not the cost of doing
// less (or more):
//
//   - every path is resolved beneath the workspace by os.Root (openat of
//     each component with O_NOFOLLOW; ".." and absolute symlinks that would
//     leave the root are refused, a leading ".." without a system call;
//     os.Root refuses every absolute symlink, where wsfs follows one whose
//     target lies inside the root: no benchmarked case has one);
//   - read_file: like every file tool, the leaf's lstat in its directory
//     (the directory opened once with os.Root.OpenRoot; a relative symlink
//     there followed as wsfs does), so special files are refused before
//     anything opens them (a FIFO's waiting writer is not woken; the
//     variant that skips this look, OpenBaselineOpenFirst, is measured for
//     reference only), then one open (O_NONBLOCK|O_NOCTTY: a FIFO swapped
//     in never blocks), fstat (regular files only), at most MaxReadBytes+1
//     bytes read into one buffer sized from st_size, which also has room for
//     the truncation notice, so the content is in memory once: Content and
//     Text share it; cut back to a UTF-8 boundary, NUL and UTF-8 checked,
//     SHA-256 of a whole file within MaxWriteBytes; a range of lines is
//     streamed through one 64 KiB buffer (baseline_range.go);
//   - the change tools refuse paths under .git, wsfs's default policy,
//     by a lexical check of the path (refuseGitWrite);
//   - write_file: size check before touching the disk, parents created, an
//     exclusive flock on the existing file (re-checked after locking), an
//     unnamed O_TMPFILE temp file (a crash before the commit leaves nothing),
//     locked, written, owner and mode kept (fchown, fchmod), fsync, linked
//     to the new name or under a temp name and renamed over the old one,
//     fsync of the directory (baseline_write.go);
//   - append_file: one O_APPEND write under the flock, hard-link refusal,
//     fdatasync (and a directory fsync when the file was created);
//   - edit_file: read under the flock, exact match count (unique unless
//     ReplaceAll), replace, then the same atomic replace as write_file;
//   - list_dir: names read in batches, a max-heap bounded by MaxListEntries
//     (memory bounded by the limit, not the directory), sorted in byte order,
//     lstat of each listed entry, wsfs's temp names hidden, names that are
//     not UTF-8 escaped (baseline_list.go);
//   - results are wsfs's own result types, with the same Text wsfs renders;
//     baseline_test.go checks that every benchmarked call returns the same
//     data and text as wsfs.
//
// It returns *wsfs.Error with wsfs's codes (messages are shorter, except
// where a benchmark compares them: outside_workspace).
type Baseline struct {
	root     *os.Root
	rootPath string
	limits   wsfs.Limits
	// openFirst: read_file opens before it looks (OpenBaselineOpenFirst).
	openFirst bool
}

// Default limits, as in docs/security.md.
const (
	DefaultMaxReadBytes   = 256 << 10
	DefaultMaxWriteBytes  = 1 << 20
	DefaultMaxListEntries = 500
)

// OpenBaseline opens dir with os.OpenRoot; zero limits take the defaults.
func OpenBaseline(dir string, limits wsfs.Limits) (*Baseline, error) {
	if limits.MaxReadBytes == 0 {
		limits.MaxReadBytes = DefaultMaxReadBytes
	}
	if limits.MaxWriteBytes == 0 {
		limits.MaxWriteBytes = DefaultMaxWriteBytes
	}
	if limits.MaxListEntries == 0 {
		limits.MaxListEntries = DefaultMaxListEntries
	}
	if limits.OperationTimeout == 0 {
		limits.OperationTimeout = 10 * time.Second
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	return &Baseline{root: root, rootPath: root.Name(), limits: limits}, nil
}

// OpenBaselineOpenFirst is OpenBaseline with a read_file that opens the
// path before looking at it: one os.Root.OpenFile of the whole path
// (O_NONBLOCK|O_NOCTTY), then fstat, regular files only, as many would write
// it. It skips the look at the leaf (its lstat in its directory) that wsfs
// and the default Baseline make first, and for a file in a subdirectory also
// the fstat with which os.Root.OpenRoot checks the directory it opened
// (os.Root.OpenFile's walk opens directories with O_DIRECTORY instead): two
// system calls fewer per read there, one for a file at the root.
//
// It does NOT keep the contract that special files are refused without being
// opened: opening a FIFO wakes a writer waiting for a reader, and opening a
// device calls its driver (TestOpenFirstOpensSpecialFiles shows it). It is
// measured for reference only (PathBaselineOpenFirst), never as the
// baseline; its other tools are the Baseline's.
func OpenBaselineOpenFirst(dir string, limits wsfs.Limits) (*Baseline, error) {
	b, err := OpenBaseline(dir, limits)
	if err != nil {
		return nil, err
	}
	b.openFirst = true
	return b, nil
}

// Close closes the root.
func (b *Baseline) Close() error { return b.root.Close() }

func bErr(tool string, code wsfs.Code, format string, args ...any) *wsfs.Error {
	return &wsfs.Error{Tool: tool, Code: code, Message: fmt.Sprintf(format, args...)}
}

// outside is wsfs's outside_workspace error, word for word (the refusal
// benchmark compares texts).
func outside(tool, display string) *wsfs.Error {
	return &wsfs.Error{Tool: tool, Code: wsfs.CodeOutsideWorkspace,
		Message: display + " leads outside the workspace (through '..', an absolute path or a symlink); use a path inside the workspace"}
}

// ioErr maps an OS error to a wsfs code.
func ioErr(tool, display string, err error) *wsfs.Error {
	var e *wsfs.Error
	if errors.As(err, &e) {
		return e
	}
	var errno syscall.Errno
	errors.As(err, &errno)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return bErr(tool, wsfs.CodePathNotFound, "%s does not exist", display)
	case errors.Is(err, fs.ErrPermission):
		return bErr(tool, wsfs.CodePermissionDenied, "%s: permission denied", display)
	case errno == syscall.ENOTDIR, strings.HasSuffix(err.Error(), "not a directory"):
		return bErr(tool, wsfs.CodeNotADirectory, "a component of %s is not a directory", display)
	case errno == syscall.ELOOP:
		return bErr(tool, wsfs.CodeInvalidPath, "%s: too many levels of symbolic links", display)
	case errno == syscall.ENXIO:
		return bErr(tool, wsfs.CodeNotAFile, "%s is not a regular file", display)
	case strings.HasSuffix(err.Error(), "path escapes from parent"):
		return outside(tool, display)
	}
	return bErr(tool, wsfs.CodeIOError, "%s: %v", display, err)
}

func ctxErr(tool string, ctx context.Context) *wsfs.Error {
	if err := ctx.Err(); err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			return bErr(tool, wsfs.CodeTimeout, "deadline passed; nothing was changed")
		}
		return bErr(tool, wsfs.CodeCancelled, "cancelled; nothing was changed")
	}
	return nil
}

// bpath is a validated tool path: a workspace-relative slash path.
type bpath struct {
	rel, display string
	trailing     bool
}

// parse validates a tool path. A path that is already clean (relative, no
// empty or "." component, no trailing '/': what models send) is used as it
// is; others are normalised like wsfs does (absolute paths inside the root
// made relative, "." and empty components dropped, ".." left to os.Root).
func (b *Baseline) parse(tool, raw string) (bpath, *wsfs.Error) {
	switch {
	case raw == "":
		return bpath{}, bErr(tool, wsfs.CodeInvalidPath, "path is empty")
	case len(raw) > 4096:
		return bpath{}, bErr(tool, wsfs.CodeInvalidPath, "path is %d bytes long; the limit is 4096 bytes", len(raw))
	case strings.IndexByte(raw, 0) >= 0:
		return bpath{}, bErr(tool, wsfs.CodeInvalidPath, "path contains a NUL byte")
	}
	if clean(raw) {
		return bpath{rel: raw, display: raw}, refuseTempName(tool, raw)
	}
	p := raw
	if strings.HasPrefix(p, "/") {
		rest, ok := strings.CutPrefix(p, b.rootPath)
		if !ok || (rest != "" && rest[0] != '/') {
			return bpath{}, bErr(tool, wsfs.CodeOutsideWorkspace, "%s is outside the workspace", raw)
		}
		p = rest
	}
	var kept []string
	for c := range strings.SplitSeq(p, "/") {
		if c != "" && c != "." {
			kept = append(kept, c)
		}
	}
	rel := strings.Join(kept, "/")
	if rel == "" {
		rel = "."
	}
	return bpath{rel: rel, display: rel, trailing: len(raw) > 1 && strings.HasSuffix(raw, "/")}, refuseTempName(tool, rel)
}

// clean reports whether p needs no normalisation.
func clean(p string) bool {
	if p[0] == '/' || p[len(p)-1] == '/' || strings.Contains(p, "//") {
		return false
	}
	return p != "." && !strings.HasPrefix(p, "./") && !strings.HasSuffix(p, "/.") && !strings.Contains(p, "/./")
}

// isTempName is wsfs's reserved temp-file name: .wsfs-<16 hex digits>.tmp.
func isTempName(name string) bool {
	hexPart, ok := strings.CutPrefix(name, ".wsfs-")
	if !ok || len(hexPart) != 16+len(".tmp") || !strings.HasSuffix(hexPart, ".tmp") {
		return false
	}
	for _, c := range []byte(hexPart[:16]) {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// refuseTempName refuses a path whose last name is a wsfs temp name.
func refuseTempName(tool, rel string) *wsfs.Error {
	if isTempName(rel[strings.LastIndexByte(rel, '/')+1:]) {
		return bErr(tool, wsfs.CodeInvalidPath, "%s: names like .wsfs-0123456789abcdef.tmp are reserved", rel)
	}
	return nil
}

const leafFlags = syscall.O_NONBLOCK | syscall.O_NOCTTY

func requireRegular(tool, display string, fi fs.FileInfo) *wsfs.Error {
	switch {
	case fi.Mode().IsRegular():
		return nil
	case fi.IsDir():
		return bErr(tool, wsfs.CodeNotAFile, "%s is a directory; use list_dir", display)
	default:
		return bErr(tool, wsfs.CodeNotAFile, "%s is not a regular file (a FIFO, socket or device)", display)
	}
}

func refuseTrailing(tool string, p bpath) *wsfs.Error {
	if p.trailing {
		return bErr(tool, wsfs.CodeNotAFile, "%s/ ends with '/', which names a directory", p.display)
	}
	return nil
}

// openRegular opens the regular file p names for reading and returns it with
// its size. As wsfs does, and the other tools here, it looks at the leaf
// before opening it (locate, fileLeaf): directories and special files are
// refused without being opened.
func (b *Baseline) openRegular(tool string, p bpath) (*os.File, int64, *wsfs.Error) {
	if b.openFirst {
		return b.openRegularFirst(tool, p)
	}
	loc, e := b.locate(tool, p, false)
	if e != nil {
		return nil, 0, e
	}
	defer b.closeDir(loc.dir)
	if e := loc.fileLeaf(tool, p.display, false); e != nil {
		return nil, 0, e
	}
	f, err := loc.dir.OpenFile(loc.leaf, os.O_RDONLY|leafFlags, 0)
	if err != nil {
		return nil, 0, ioErr(tool, p.display, err)
	}
	return regularOrClose(tool, p, f)
}

// openRegularFirst is openRegular for OpenBaselineOpenFirst: the whole path
// opened by os.Root (symlinks followed while they stay inside) with no look
// at the leaf first, so a FIFO or device is opened before fstat refuses it.
func (b *Baseline) openRegularFirst(tool string, p bpath) (*os.File, int64, *wsfs.Error) {
	if e := refuseTrailing(tool, p); e != nil {
		return nil, 0, e
	}
	f, err := b.root.OpenFile(p.rel, os.O_RDONLY|leafFlags, 0)
	if err != nil {
		return nil, 0, ioErr(tool, p.display, err)
	}
	return regularOrClose(tool, p, f)
}

// regularOrClose returns f with its size if fstat says it is a regular file,
// and closes it otherwise.
func regularOrClose(tool string, p bpath, f *os.File) (*os.File, int64, *wsfs.Error) {
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, 0, ioErr(tool, p.display, err)
	}
	if e := requireRegular(tool, p.display, fi); e != nil {
		f.Close()
		return nil, 0, e
	}
	return f, fi.Size(), nil
}

// noticeRoom is what a read buffer keeps free for the truncation notice.
const noticeRoom = 256

// ReadFile implements read_file.
func (b *Baseline) ReadFile(ctx context.Context, in wsfs.ReadFileInput) (wsfs.ReadFileResult, error) {
	const tool = wsfs.ToolReadFile
	if e := ctxErr(tool, ctx); e != nil {
		return wsfs.ReadFileResult{}, e
	}
	p, e := b.parse(tool, in.Path)
	if e != nil {
		return wsfs.ReadFileResult{}, e
	}
	f, size, e := b.openRegular(tool, p)
	if e != nil {
		return wsfs.ReadFileResult{}, e
	}
	defer f.Close()
	if in.StartLine != 0 || in.MaxLines != 0 || in.LineNumbers {
		return b.readRange(ctx, f, size, p.display, in)
	}
	limit := b.limits.MaxReadBytes
	buf, err := readBounded(ctx, f, size, limit+1, noticeRoom)
	if err != nil {
		return wsfs.ReadFileResult{}, ioErr(tool, p.display, err)
	}
	truncated := len(buf) > limit
	next := 0
	if truncated {
		buf = cutToRuneBoundary(buf[:limit])
		// Cut back to a line boundary when there is one (as the library does).
		if i := bytes.LastIndexByte(buf, '\n'); i >= 0 {
			buf = buf[:i+1]
		}
		next = bytes.Count(buf, []byte{'\n'}) + 1
		if next == 1 {
			next = 2
		}
	}
	if bytes.IndexByte(buf, 0) >= 0 || !utf8.Valid(buf) {
		return wsfs.ReadFileResult{}, bErr(tool, wsfs.CodeIOError, "%s is binary or not UTF-8; only text files can be read or edited", p.display)
	}
	// The buffer is never written again (the notice goes after it), so
	// the content can be a string over it: no copy.
	content := unsafe.String(unsafe.SliceData(buf), len(buf))
	r := wsfs.ReadFileResult{
		Path:       p.display,
		Content:    content,
		TotalLines: wholeFileLines(buf, truncated),
		Bytes:      int64(len(buf)),
		TotalBytes: max(size, int64(len(buf))),
		Truncated:  truncated,
		Text:       content,

		NextStartLine: next,
	}
	switch {
	case truncated:
		text := buf
		switch {
		case !strings.HasSuffix(content, "\n"):
			text = fmt.Appendf(text, "\n[truncated: line 1 is longer than max_read_bytes (%d): only its first %d of %d bytes are shown", limit, r.Bytes, r.TotalBytes)
		case next == 2:
			text = fmt.Appendf(text, "[truncated: showing line 1 (%d of %d bytes); max_read_bytes is %d", r.Bytes, r.TotalBytes, limit)
		default:
			text = fmt.Appendf(text, "[truncated: showing lines 1-%d (%d of %d bytes); max_read_bytes is %d", next-1, r.Bytes, r.TotalBytes, limit)
		}
		text = fmt.Appendf(text, "; continue with start_line=%d]", next)
		r.Text = unsafe.String(unsafe.SliceData(text), len(text))
	case len(buf) == 0:
		r.Text = "(empty file)"
		fallthrough
	case len(buf) <= b.limits.MaxWriteBytes:
		sum := sha256.Sum256(buf)
		r.SHA256 = hex.EncodeToString(sum[:])
	}
	return r, nil
}

// wholeFileLines is a whole read's line count (each \n ends a line, and a
// last line may lack it), as the library reports it; nil for a cut read.
func wholeFileLines(buf []byte, truncated bool) *int {
	if truncated {
		return nil
	}
	n := bytes.Count(buf, []byte{'\n'})
	if len(buf) > 0 && buf[len(buf)-1] != '\n' {
		n++
	}
	return &n
}

// readBounded reads at most want bytes into a buffer sized from st_size
// (which is not trusted: the file may change or lie), with room bytes to
// spare at the end.
func readBounded(ctx context.Context, f *os.File, size int64, want, room int) ([]byte, error) {
	const chunk = 64 << 10
	initial := want
	if size >= 0 && size+1 < int64(want) {
		initial = int(size) + 1
	}
	buf := make([]byte, 0, initial+room)
	for len(buf) < want {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if cap(buf)-len(buf) <= room { // longer than st_size said
			grown := make([]byte, len(buf), len(buf)+min(want-len(buf), chunk)+room)
			copy(grown, buf)
			buf = grown
		}
		n, err := f.Read(buf[len(buf):min(cap(buf)-room, want)])
		buf = buf[:len(buf)+n]
		if err == io.EOF || (err == nil && n == 0) {
			break
		}
		if err != nil {
			return nil, err
		}
	}
	return buf, nil
}

// cutToRuneBoundary drops a UTF-8 sequence cut in half at the end.
func cutToRuneBoundary(b []byte) []byte {
	for i := len(b) - 1; i >= 0 && i >= len(b)-utf8.UTFMax; i-- {
		if utf8.RuneStart(b[i]) {
			if !utf8.FullRune(b[i:]) {
				return b[:i]
			}
			break
		}
	}
	return b
}

func byteCount(n int64) string {
	if n == 1 {
		return "1 byte"
	}
	return strconv.FormatInt(n, 10) + " bytes"
}
