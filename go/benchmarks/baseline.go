package benchmarks

import (
	"bytes"
	"container/heap"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"

	wsfs "github.com/wsfs/wsfs/go"
)

// Baseline is a pure-Go implementation of the five tools on os.Root. It keeps
// the contract of README.md for everything the benchmarks exercise, so that
// comparing it with wsfs measures the cost of wsfs's layers rather than the
// cost of doing less:
//
//   - every path is resolved beneath the workspace by os.Root (openat with
//     per-component checks, like wsfs's openat2(RESOLVE_BENEATH));
//   - read_file: O_NONBLOCK|O_NOCTTY open, fstat (regular files only), at
//     most MaxReadBytes read (+1 byte to detect more), cut back to a UTF-8
//     boundary, NUL/UTF-8 check, truncation notice; a range of lines is
//     streamed through one 64 KiB buffer (baseline_range.go);
//   - write_file: size check before touching the disk, parents created, an
//     exclusive flock on the existing file (re-checked after locking), temp
//     file (random name, O_EXCL), write, owner and mode kept (fchown,
//     fchmod), fsync, rename, fsync of the directory;
//   - append_file: one O_APPEND write under the flock, hard-link refusal,
//     fdatasync (and a directory fsync when the file was created);
//   - edit_file: read under the flock, exact match count (unique unless
//     ReplaceAll), replace, then the same atomic replace as write_file;
//   - list_dir: names read in batches, a max-heap bounded by MaxListEntries
//     (memory bounded by the limit, not the directory), sorted in byte order,
//     lstat of each listed entry;
//   - results are wsfs's own result types, with the same Text wsfs renders.
//
// It returns *wsfs.Error with wsfs's codes (messages are shorter).
type Baseline struct {
	root     *os.Root
	rootPath string
	limits   wsfs.Limits
}

// Default limits, as in README.md.
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

// Close closes the root.
func (b *Baseline) Close() error { return b.root.Close() }

func bErr(tool string, code wsfs.Code, format string, args ...any) *wsfs.Error {
	return &wsfs.Error{Tool: tool, Code: code, Message: fmt.Sprintf(format, args...)}
}

// ioErr maps an OS error to a wsfs code.
func ioErr(tool, display string, err error) *wsfs.Error {
	var e *wsfs.Error
	if errors.As(err, &e) {
		return e
	}
	code := wsfs.CodeIOError
	var errno syscall.Errno
	switch {
	case errors.Is(err, fs.ErrNotExist):
		code = wsfs.CodePathNotFound
	case errors.Is(err, fs.ErrPermission):
		code = wsfs.CodePermissionDenied
	case errors.As(err, &errno) && errno == syscall.ENOTDIR, strings.HasSuffix(err.Error(), "not a directory"):
		code = wsfs.CodeNotADirectory
	case errors.As(err, &errno) && errno == syscall.ELOOP:
		code = wsfs.CodeInvalidPath
	case strings.Contains(err.Error(), "path escapes from parent"):
		code = wsfs.CodeOutsideWorkspace
	}
	return bErr(tool, code, "%s: %v", display, err)
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

func (b *Baseline) parse(tool, raw string) (bpath, *wsfs.Error) {
	switch {
	case raw == "":
		return bpath{}, bErr(tool, wsfs.CodeInvalidPath, "path is empty")
	case len(raw) > 4096:
		return bpath{}, bErr(tool, wsfs.CodeInvalidPath, "path is %d bytes long; the limit is 4096 bytes", len(raw))
	case strings.IndexByte(raw, 0) >= 0:
		return bpath{}, bErr(tool, wsfs.CodeInvalidPath, "path contains a NUL byte")
	}
	p := raw
	if strings.HasPrefix(p, "/") {
		rest, ok := strings.CutPrefix(p, b.rootPath)
		if !ok || (rest != "" && rest[0] != '/') {
			return bpath{}, bErr(tool, wsfs.CodeOutsideWorkspace, "%s is outside the workspace", raw)
		}
		p = rest
	}
	// Drop "." and empty components; ".." is left to os.Root, which resolves
	// it against real directories and refuses escapes.
	parts := strings.Split(p, "/")
	kept := parts[:0]
	for _, c := range parts {
		if c != "" && c != "." {
			kept = append(kept, c)
		}
	}
	rel := strings.Join(kept, "/")
	display := rel
	if rel == "" {
		rel, display = ".", "."
	}
	return bpath{rel: rel, display: display, trailing: len(raw) > 1 && strings.HasSuffix(raw, "/")}, nil
}

// located is a resolved file path: its open directory, the leaf name and the
// leaf's lstat (nil when it does not exist).
type located struct {
	dir  *os.Root
	leaf string
	fi   fs.FileInfo
}

// fileLeaf refuses directories and special files before anything opens them,
// and a missing leaf unless allowMissing.
func (l located) fileLeaf(tool, display string, allowMissing bool) *wsfs.Error {
	if l.fi == nil {
		if allowMissing {
			return nil
		}
		return bErr(tool, wsfs.CodePathNotFound, "%s does not exist; use list_dir to see what exists", display)
	}
	return requireRegular(tool, display, l.fi)
}

// locate opens the directory of p (creating it if asked) and returns it with
// the leaf name, following a symlinked leaf while it stays relative. File
// tools refuse a trailing '/'.
func (b *Baseline) locate(tool string, p bpath, create bool) (located, *wsfs.Error) {
	if p.trailing {
		return located{}, bErr(tool, wsfs.CodeNotAFile, "%s/ ends with '/', which names a directory; drop the trailing '/' to name a file", p.display)
	}
	rel := p.rel
	for range 40 {
		dirRel, leaf := path.Split(rel)
		dirRel = strings.TrimSuffix(dirRel, "/")
		if leaf == "." || leaf == ".." {
			return located{}, bErr(tool, wsfs.CodeNotAFile, "%s is a directory, not a file; use list_dir", p.display)
		}
		dir, err := b.openDir(dirRel, create)
		if err != nil {
			return located{}, ioErr(tool, p.display, err)
		}
		fi, err := dir.Lstat(leaf)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return located{dir: dir, leaf: leaf}, nil
		case err != nil:
			b.closeDir(dir)
			return located{}, ioErr(tool, p.display, err)
		case fi.Mode()&fs.ModeSymlink == 0:
			return located{dir: dir, leaf: leaf, fi: fi}, nil
		}
		target, err := dir.Readlink(leaf)
		b.closeDir(dir)
		if err != nil {
			return located{}, ioErr(tool, p.display, err)
		}
		if path.IsAbs(target) {
			return located{}, bErr(tool, wsfs.CodeOutsideWorkspace, "%s is a symlink with an absolute target", p.display)
		}
		rel = path.Join(dirRel, target)
		if rel == ".." || strings.HasPrefix(rel, "../") {
			return located{}, bErr(tool, wsfs.CodeOutsideWorkspace, "%s leads outside the workspace", p.display)
		}
	}
	return located{}, bErr(tool, wsfs.CodeInvalidPath, "%s: too many levels of symbolic links", p.display)
}

func (b *Baseline) openDir(rel string, create bool) (*os.Root, error) {
	if rel == "" || rel == "." {
		return b.root, nil
	}
	dir, err := b.root.OpenRoot(rel)
	if err != nil && create && errors.Is(err, fs.ErrNotExist) {
		if err := b.root.MkdirAll(rel, 0o755); err != nil {
			return nil, err
		}
		dir, err = b.root.OpenRoot(rel)
	}
	return dir, err
}

func (b *Baseline) closeDir(dir *os.Root) {
	if dir != b.root {
		dir.Close()
	}
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
	loc, e := b.locate(tool, p, false)
	if e != nil {
		return wsfs.ReadFileResult{}, e
	}
	defer b.closeDir(loc.dir)
	if e := loc.fileLeaf(tool, p.display, false); e != nil {
		return wsfs.ReadFileResult{}, e
	}
	f, err := loc.dir.OpenFile(loc.leaf, os.O_RDONLY|leafFlags, 0)
	if err != nil {
		return wsfs.ReadFileResult{}, ioErr(tool, p.display, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return wsfs.ReadFileResult{}, ioErr(tool, p.display, err)
	}
	if e := requireRegular(tool, p.display, fi); e != nil {
		return wsfs.ReadFileResult{}, e
	}
	if in.StartLine != 0 || in.MaxLines != 0 || in.LineNumbers {
		return b.readRange(ctx, f, fi.Size(), p.display, in)
	}
	limit := b.limits.MaxReadBytes
	buf, err := readBounded(ctx, f, fi.Size(), limit+1)
	if err != nil {
		return wsfs.ReadFileResult{}, ioErr(tool, p.display, err)
	}
	truncated := len(buf) > limit
	if truncated {
		buf = cutToRuneBoundary(buf[:limit])
	}
	if bytes.IndexByte(buf, 0) >= 0 || !utf8.Valid(buf) {
		return wsfs.ReadFileResult{}, bErr(tool, wsfs.CodeIOError, "%s is binary or not UTF-8; only text files can be read or edited", p.display)
	}
	content := string(buf)
	r := wsfs.ReadFileResult{
		Path:       p.display,
		Content:    content,
		Bytes:      int64(len(content)),
		TotalBytes: max(fi.Size(), int64(len(content))),
		Truncated:  truncated,
		Text:       content,
	}
	if !truncated && len(content) <= b.limits.MaxWriteBytes {
		sum := sha256.Sum256(buf)
		r.SHA256 = hex.EncodeToString(sum[:])
	}
	if content == "" && !truncated {
		r.Text = "(empty file)"
	}
	if truncated {
		var t strings.Builder
		t.Grow(len(content) + 120)
		t.WriteString(content)
		if !strings.HasSuffix(content, "\n") {
			t.WriteByte('\n')
		}
		fmt.Fprintf(&t, "[truncated: showing the first %d of %d bytes; max_read_bytes is %d]", r.Bytes, r.TotalBytes, limit)
		r.Text = t.String()
	}
	return r, nil
}

// readBounded reads at most want bytes. The buffer is sized from st_size so
// a small file costs a small allocation, but st_size is not trusted.
func readBounded(ctx context.Context, f *os.File, size int64, want int) ([]byte, error) {
	const chunk = 64 << 10
	initial := want
	if size >= 0 && size+1 < int64(want) {
		initial = int(size) + 1
	}
	buf := make([]byte, 0, initial)
	for len(buf) < want {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if len(buf) == cap(buf) {
			buf = slices.Grow(buf, min(want-len(buf), chunk))
		}
		n, err := f.Read(buf[len(buf):min(cap(buf), want)])
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

// lockCurrent takes an exclusive flock on f and makes sure leaf still names
// it, reopening when the name was replaced meanwhile.
func lockCurrent(ctx context.Context, tool, display string, dir *os.Root, leaf string, f *os.File, reopen func() (*os.File, error)) (*os.File, fs.FileInfo, *wsfs.Error) {
	for {
		pause := 50 * time.Microsecond
		for {
			err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
			if err == nil {
				break
			}
			if err != syscall.EWOULDBLOCK {
				f.Close()
				return nil, nil, ioErr(tool, display, err)
			}
			if e := ctxErr(tool, ctx); e != nil {
				f.Close()
				return nil, nil, e
			}
			time.Sleep(pause)
			pause = min(pause*2, 5*time.Millisecond)
		}
		fi, err := f.Stat()
		if err != nil {
			f.Close()
			return nil, nil, ioErr(tool, display, err)
		}
		if now, err := dir.Lstat(leaf); err == nil && os.SameFile(fi, now) {
			return f, fi, nil
		}
		f.Close()
		if e := ctxErr(tool, ctx); e != nil {
			return nil, nil, e
		}
		if f, err = reopen(); err != nil {
			return nil, nil, ioErr(tool, display, err)
		}
	}
}

// atomicReplace writes content to a new temp file in dir, keeps the old
// file's owner and mode, fsyncs it, renames it over leaf and fsyncs dir.
func atomicReplace(ctx context.Context, tool, display string, dir *os.Root, leaf string, content []byte, keep fs.FileInfo) ([]string, *wsfs.Error) {
	var name string
	var t *os.File
	for {
		name = ".wsfs-" + strconv.FormatUint(rand.Uint64(), 16) + ".tmp"
		var err error
		t, err = dir.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL|leafFlags, 0o644)
		if err == nil {
			break
		}
		if !errors.Is(err, fs.ErrExist) {
			return nil, ioErr(tool, display, err)
		}
	}
	fail := func(err error) ([]string, *wsfs.Error) {
		t.Close()
		dir.Remove(name)
		return nil, ioErr(tool, display, err)
	}
	if _, err := t.Write(content); err != nil {
		return fail(err)
	}
	if keep != nil {
		if st, ok := keep.Sys().(*syscall.Stat_t); ok {
			_ = t.Chown(int(st.Uid), int(st.Gid)) // best effort, as wsfs
		}
		if err := t.Chmod(keep.Mode() & (fs.ModePerm | fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky)); err != nil {
			return fail(err)
		}
	}
	if err := t.Sync(); err != nil {
		return fail(err)
	}
	if err := t.Close(); err != nil {
		dir.Remove(name)
		return nil, ioErr(tool, display, err)
	}
	if e := ctxErr(tool, ctx); e != nil {
		dir.Remove(name)
		return nil, e
	}
	if err := dir.Rename(name, leaf); err != nil {
		dir.Remove(name)
		return nil, ioErr(tool, display, err)
	}
	// Committed.
	if err := syncDir(dir); err != nil {
		return []string{"written, but syncing the directory failed: " + err.Error()}, nil
	}
	return nil, nil
}

func syncDir(dir *os.Root) error {
	d, err := dir.Open(".")
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// withWarnings appends the warnings a model could act on to text, as wsfs
// does (the overwrite warning is left out: the text says "overwrote").
func withWarnings(text string, warnings []string) string {
	for _, w := range warnings {
		if w != overwriteWarning {
			text += "\nwarning: " + w
		}
	}
	return text
}

const overwriteWarning = "file exists, overwriting"

func byteCount(n int64) string {
	if n == 1 {
		return "1 byte"
	}
	return strconv.FormatInt(n, 10) + " bytes"
}

func (b *Baseline) checkWrite(tool, what string, n int) *wsfs.Error {
	if n > b.limits.MaxWriteBytes {
		return bErr(tool, wsfs.CodeTooLarge, "%s is %d bytes; the limit is max_write_bytes = %d", what, n, b.limits.MaxWriteBytes)
	}
	return nil
}

// WriteFile implements write_file.
func (b *Baseline) WriteFile(ctx context.Context, in wsfs.WriteFileInput) (wsfs.WriteFileResult, error) {
	const tool = wsfs.ToolWriteFile
	if e := ctxErr(tool, ctx); e != nil {
		return wsfs.WriteFileResult{}, e
	}
	if e := b.checkWrite(tool, "content", len(in.Content)); e != nil {
		return wsfs.WriteFileResult{}, e
	}
	p, e := b.parse(tool, in.Path)
	if e != nil {
		return wsfs.WriteFileResult{}, e
	}
	loc, e := b.locate(tool, p, true)
	if e != nil {
		return wsfs.WriteFileResult{}, e
	}
	defer b.closeDir(loc.dir)
	if e := loc.fileLeaf(tool, p.display, true); e != nil {
		return wsfs.WriteFileResult{}, e
	}
	dir, leaf := loc.dir, loc.leaf
	var existing fs.FileInfo
	open := func() (*os.File, error) { return dir.OpenFile(leaf, os.O_RDONLY|leafFlags, 0) }
	f, err := open()
	switch {
	case err == nil:
		fi, err := f.Stat()
		if err != nil {
			f.Close()
			return wsfs.WriteFileResult{}, ioErr(tool, p.display, err)
		}
		if e := requireRegular(tool, p.display, fi); e != nil {
			f.Close()
			return wsfs.WriteFileResult{}, e
		}
		locked, fi, e := lockCurrent(ctx, tool, p.display, dir, leaf, f, open)
		if e != nil {
			return wsfs.WriteFileResult{}, e
		}
		defer locked.Close()
		existing = fi
	case errors.Is(err, fs.ErrNotExist):
	case errors.Is(err, fs.ErrPermission):
		existing, _ = dir.Lstat(leaf)
	default:
		return wsfs.WriteFileResult{}, ioErr(tool, p.display, err)
	}
	warnings, e := atomicReplace(ctx, tool, p.display, dir, leaf, []byte(in.Content), existing)
	if e != nil {
		return wsfs.WriteFileResult{}, e
	}
	how := "created"
	if existing != nil {
		how = "overwrote"
		warnings = append([]string{overwriteWarning}, warnings...)
	}
	return wsfs.WriteFileResult{
		Path:          p.display,
		BytesWritten:  int64(len(in.Content)),
		Created:       existing == nil,
		ExistedBefore: existing != nil,
		Text:          withWarnings(how+" "+p.display+" ("+byteCount(int64(len(in.Content)))+")", warnings),
		Warnings:      warnings,
	}, nil
}

// AppendFile implements append_file.
func (b *Baseline) AppendFile(ctx context.Context, in wsfs.AppendFileInput) (wsfs.AppendFileResult, error) {
	const tool = wsfs.ToolAppendFile
	if e := ctxErr(tool, ctx); e != nil {
		return wsfs.AppendFileResult{}, e
	}
	if e := b.checkWrite(tool, "content", len(in.Content)); e != nil {
		return wsfs.AppendFileResult{}, e
	}
	p, e := b.parse(tool, in.Path)
	if e != nil {
		return wsfs.AppendFileResult{}, e
	}
	loc, e := b.locate(tool, p, true)
	if e != nil {
		return wsfs.AppendFileResult{}, e
	}
	defer b.closeDir(loc.dir)
	if e := loc.fileLeaf(tool, p.display, true); e != nil {
		return wsfs.AppendFileResult{}, e
	}
	dir, leaf := loc.dir, loc.leaf
	existed := loc.fi != nil
	open := func() (*os.File, error) {
		return dir.OpenFile(leaf, os.O_WRONLY|os.O_APPEND|os.O_CREATE|leafFlags, 0o644)
	}
	f, err := open()
	if err != nil {
		if errors.Is(err, syscall.ENXIO) {
			return wsfs.AppendFileResult{}, bErr(tool, wsfs.CodeNotAFile, "%s is not a regular file", p.display)
		}
		return wsfs.AppendFileResult{}, ioErr(tool, p.display, err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return wsfs.AppendFileResult{}, ioErr(tool, p.display, err)
	}
	if e := requireRegular(tool, p.display, fi); e != nil {
		f.Close()
		return wsfs.AppendFileResult{}, e
	}
	f, fi, e = lockCurrent(ctx, tool, p.display, dir, leaf, f, open)
	if e != nil {
		return wsfs.AppendFileResult{}, e
	}
	defer f.Close()
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && st.Nlink > 1 {
		return wsfs.AppendFileResult{}, bErr(tool, wsfs.CodePermissionDenied, "%s has %d hard links; appending in place would change the other names too", p.display, st.Nlink)
	}
	if e := ctxErr(tool, ctx); e != nil {
		return wsfs.AppendFileResult{}, e
	}
	// The commit point: one write(2) with O_APPEND.
	if _, err := f.WriteString(in.Content); err != nil {
		return wsfs.AppendFileResult{}, ioErr(tool, p.display, err)
	}
	var warnings []string
	if err := syscall.Fdatasync(int(f.Fd())); err != nil {
		warnings = append(warnings, "appended, but fsync failed: "+err.Error())
	}
	if !existed {
		if err := syncDir(dir); err != nil {
			warnings = append(warnings, "appended, but syncing the directory failed: "+err.Error())
		}
	}
	size := fi.Size() + int64(len(in.Content))
	if now, err := f.Stat(); err == nil {
		size = now.Size()
	}
	return wsfs.AppendFileResult{
		Path:          p.display,
		BytesAppended: int64(len(in.Content)),
		Size:          size,
		Text:          withWarnings("appended "+byteCount(int64(len(in.Content)))+" to "+p.display+" (now "+byteCount(size)+")", warnings),
		Warnings:      warnings,
	}, nil
}

// EditFile implements edit_file.
func (b *Baseline) EditFile(ctx context.Context, in wsfs.EditFileInput) (wsfs.EditFileResult, error) {
	const tool = wsfs.ToolEditFile
	if e := ctxErr(tool, ctx); e != nil {
		return wsfs.EditFileResult{}, e
	}
	if in.OldText == "" {
		return wsfs.EditFileResult{}, bErr(tool, wsfs.CodeInvalidArguments, "old_text is empty")
	}
	p, e := b.parse(tool, in.Path)
	if e != nil {
		return wsfs.EditFileResult{}, e
	}
	loc, e := b.locate(tool, p, false)
	if e != nil {
		return wsfs.EditFileResult{}, e
	}
	defer b.closeDir(loc.dir)
	if e := loc.fileLeaf(tool, p.display, false); e != nil {
		return wsfs.EditFileResult{}, e
	}
	dir, leaf := loc.dir, loc.leaf
	open := func() (*os.File, error) { return dir.OpenFile(leaf, os.O_RDONLY|leafFlags, 0) }
	f, err := open()
	if err != nil {
		return wsfs.EditFileResult{}, ioErr(tool, p.display, err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return wsfs.EditFileResult{}, ioErr(tool, p.display, err)
	}
	if e := requireRegular(tool, p.display, fi); e != nil {
		f.Close()
		return wsfs.EditFileResult{}, e
	}
	f, fi, e = lockCurrent(ctx, tool, p.display, dir, leaf, f, open)
	if e != nil {
		return wsfs.EditFileResult{}, e
	}
	defer f.Close()
	if e := b.checkWrite(tool, p.display, int(fi.Size())); e != nil {
		return wsfs.EditFileResult{}, e
	}
	buf, err := readBounded(ctx, f, fi.Size(), b.limits.MaxWriteBytes+1)
	if err != nil {
		return wsfs.EditFileResult{}, ioErr(tool, p.display, err)
	}
	if e := b.checkWrite(tool, p.display, len(buf)); e != nil {
		return wsfs.EditFileResult{}, e
	}
	if bytes.IndexByte(buf, 0) >= 0 || !utf8.Valid(buf) {
		return wsfs.EditFileResult{}, bErr(tool, wsfs.CodeIOError, "%s is binary or not UTF-8; only text files can be read or edited", p.display)
	}
	old := []byte(in.OldText)
	matches := bytes.Count(buf, old)
	switch {
	case matches == 0:
		return wsfs.EditFileResult{}, bErr(tool, wsfs.CodeEditNotFound, "old_text was not found in %s", p.display)
	case matches > 1 && !in.ReplaceAll:
		return wsfs.EditFileResult{}, bErr(tool, wsfs.CodeAmbiguousEdit, "old_text occurs %d times in %s", matches, p.display)
	}
	updated := bytes.ReplaceAll(buf, old, []byte(in.NewText))
	if e := b.checkWrite(tool, "the edited file", len(updated)); e != nil {
		return wsfs.EditFileResult{}, e
	}
	warnings, e := atomicReplace(ctx, tool, p.display, dir, leaf, updated, fi)
	if e != nil {
		return wsfs.EditFileResult{}, e
	}
	noun := "occurrences"
	if matches == 1 {
		noun = "occurrence"
	}
	return wsfs.EditFileResult{
		Path:     p.display,
		Matches:  matches,
		Replaced: matches,
		Text:     withWarnings("replaced "+strconv.Itoa(matches)+" "+noun+" in "+p.display, warnings),
		Warnings: warnings,
	}, nil
}

// nameHeap is a max-heap of names: the largest kept name is on top.
type nameHeap []string

func (h nameHeap) Len() int           { return len(h) }
func (h nameHeap) Less(i, j int) bool { return h[i] > h[j] }
func (h nameHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *nameHeap) Push(x any)        { *h = append(*h, x.(string)) }
func (h *nameHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// ListDir implements list_dir.
func (b *Baseline) ListDir(ctx context.Context, in wsfs.ListDirInput) (wsfs.ListDirResult, error) {
	const tool = wsfs.ToolListDir
	if e := ctxErr(tool, ctx); e != nil {
		return wsfs.ListDirResult{}, e
	}
	raw := in.Path
	if raw == "" {
		raw = "."
	}
	p, e := b.parse(tool, raw)
	if e != nil {
		return wsfs.ListDirResult{}, e
	}
	dir, err := b.openDir(p.rel, false)
	if err != nil {
		return wsfs.ListDirResult{}, ioErr(tool, p.display, err)
	}
	defer b.closeDir(dir)
	d, err := dir.Open(".")
	if err != nil {
		return wsfs.ListDirResult{}, ioErr(tool, p.display, err)
	}
	defer d.Close()
	keep := b.limits.MaxListEntries
	h := make(nameHeap, 0, min(keep, 4096)+1)
	total := 0
	for {
		if e := ctxErr(tool, ctx); e != nil {
			return wsfs.ListDirResult{}, e
		}
		names, err := d.Readdirnames(1024)
		for _, n := range names {
			total++
			if len(h) < keep {
				heap.Push(&h, n)
			} else if n < h[0] {
				h[0] = n
				heap.Fix(&h, 0)
			}
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return wsfs.ListDirResult{}, ioErr(tool, p.display, err)
		}
	}
	slices.Sort(h)
	entries := make([]wsfs.DirEntry, 0, len(h))
	for _, name := range h {
		fi, err := dir.Lstat(name)
		if err != nil {
			continue // vanished since it was listed
		}
		kind := wsfs.EntryOther
		switch m := fi.Mode(); {
		case m&fs.ModeSymlink != 0:
			kind = wsfs.EntrySymlink
		case m.IsDir():
			kind = wsfs.EntryDir
		case m.IsRegular():
			kind = wsfs.EntryFile
		}
		entries = append(entries, wsfs.DirEntry{Name: name, Type: kind, Size: fi.Size()})
	}
	r := wsfs.ListDirResult{Path: p.display, Entries: entries, Total: total, Truncated: total > keep}
	r.Text = renderList(r)
	return r, nil
}

func renderList(r wsfs.ListDirResult) string {
	var t strings.Builder
	noun := "entries"
	if r.Total == 1 {
		noun = "entry"
	}
	t.Grow(32 + len(r.Entries)*32)
	fmt.Fprintf(&t, "%s (%d %s)\n", r.Path, r.Total, noun)
	for _, e := range r.Entries {
		t.WriteString(e.Name)
		switch e.Type {
		case wsfs.EntryDir:
			t.WriteString("/\n")
		case wsfs.EntrySymlink:
			t.WriteString("@\n")
		case wsfs.EntryFile:
			t.WriteString("  ")
			t.WriteString(byteCount(e.Size))
			t.WriteByte('\n')
		default:
			t.WriteString("  (special file)\n")
		}
	}
	if r.Truncated {
		fmt.Fprintf(&t, "[truncated: showing the first %d of %d entries]", len(r.Entries), r.Total)
	}
	return strings.TrimRight(t.String(), " \t\r\n")
}
