package benchmarks

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"math/rand/v2"
	"os"
	"path"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"

	wsfs "github.com/wsfs/wsfs/go"
	"golang.org/x/sys/unix"
)

// The Baseline's change tools: write_file, append_file and edit_file.

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
// the leaf name, following a symlinked leaf while it stays relative: a write
// through a symlink replaces its target and keeps the link.
func (b *Baseline) locate(tool string, p bpath, create bool) (located, *wsfs.Error) {
	if e := refuseTrailing(tool, p); e != nil {
		return located{}, e
	}
	rel := p.rel
	for range 40 {
		if e := refuseGitWrite(tool, p.display, rel); e != nil {
			return located{}, e
		}
		dirRel, leaf := path.Split(rel)
		dirRel = strings.TrimSuffix(dirRel, "/")
		if leaf == "." || leaf == ".." {
			return located{}, bErr(tool, wsfs.CodeNotAFile, "%s is a directory, not a file; use list_dir", p.display)
		}
		if e := refuseTempName(tool, leaf); e != nil {
			return located{}, e
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
			return located{}, outside(tool, p.display)
		}
		rel = path.Join(dirRel, target)
		if rel == ".." || strings.HasPrefix(rel, "../") {
			return located{}, outside(tool, p.display)
		}
	}
	return located{}, bErr(tool, wsfs.CodeInvalidPath, "%s: too many levels of symbolic links", p.display)
}

// refuseGitWrite is wsfs's default policy (deny_write [".git/**"]) checked
// the lean way: on the path as given and on each symlink target followed,
// lexically ('..' cleaned). wsfs matches the path the kernel resolved, which
// also catches a symlinked directory leading into .git; this check costs less.
func refuseGitWrite(tool, display, rel string) *wsfs.Error {
	if tool == wsfs.ToolReadFile {
		return nil
	}
	clean := path.Clean(rel)
	if clean != ".git" && !strings.HasPrefix(clean, ".git/") {
		return nil
	}
	shown := display
	if clean != display {
		shown = display + " (which resolves to " + clean + ")"
	}
	return bErr(tool, wsfs.CodePolicyDenied, "%s is closed to changing by the workspace policy (deny_write rule '.git/**'). The host set this rule; retrying will not help. It can still be read if reading is allowed; change other files", shown)
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

// atomicReplace stages content in an unnamed O_TMPFILE file in dir (locked,
// as wsfs locks its temp files so an open-time sweep never takes a live
// one), keeps the old file's owner and mode, fsyncs it, links it to leaf
// (a new file) or under a temp name renamed over leaf, and fsyncs dir.
func atomicReplace(ctx context.Context, tool, display string, dir *os.Root, leaf string, content []byte, keep fs.FileInfo) ([]string, *wsfs.Error) {
	t, err := dir.OpenFile(".", os.O_WRONLY|unix.O_TMPFILE, 0o644)
	if err != nil {
		return nil, ioErr(tool, display, err)
	}
	defer t.Close()
	tfd := int(t.Fd())
	_ = syscall.Flock(tfd, syscall.LOCK_EX|syscall.LOCK_NB)
	if _, err := t.Write(content); err != nil {
		return nil, ioErr(tool, display, err)
	}
	if keep != nil {
		if st, ok := keep.Sys().(*syscall.Stat_t); ok {
			_ = t.Chown(int(st.Uid), int(st.Gid)) // best effort, as wsfs
		}
		if err := t.Chmod(keep.Mode() & (fs.ModePerm | fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky)); err != nil {
			return nil, ioErr(tool, display, err)
		}
	}
	if err := t.Sync(); err != nil {
		return nil, ioErr(tool, display, err)
	}
	d, err := dir.Open(".")
	if err != nil {
		return nil, ioErr(tool, display, err)
	}
	defer d.Close()
	if e := ctxErr(tool, ctx); e != nil {
		return nil, e
	}
	dfd, magic := int(d.Fd()), "/proc/self/fd/"+strconv.Itoa(tfd)
	link := func(name string) error {
		return unix.Linkat(unix.AT_FDCWD, magic, dfd, name, unix.AT_SYMLINK_FOLLOW)
	}
	if keep == nil {
		err = link(leaf) // the commit point of a new file
	}
	if keep != nil || errors.Is(err, fs.ErrExist) {
		name := ""
		for range 64 {
			hexName := strconv.FormatUint(rand.Uint64(), 16)
			name = ".wsfs-" + strings.Repeat("0", 16-len(hexName)) + hexName + ".tmp"
			if err = link(name); !errors.Is(err, fs.ErrExist) {
				break
			}
		}
		if err == nil {
			if err = dir.Rename(name, leaf); err != nil { // the commit point
				dir.Remove(name)
			}
		}
	}
	if err != nil {
		return nil, ioErr(tool, display, err)
	}
	if err := d.Sync(); err != nil {
		return []string{"written, but syncing the directory failed: " + err.Error()}, nil
	}
	return nil, nil
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

// checkText refuses text arguments that are not UTF-8 (the contract's
// strings are JSON strings).
func checkText(tool string, texts ...string) *wsfs.Error {
	for _, t := range texts {
		if !utf8.ValidString(t) {
			return bErr(tool, wsfs.CodeInvalidArguments, "text argument is not valid UTF-8")
		}
	}
	return nil
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
	p, e := b.parse(tool, in.Path)
	if e != nil {
		return wsfs.WriteFileResult{}, e
	}
	if e := checkText(tool, in.Content); e != nil {
		return wsfs.WriteFileResult{}, e
	}
	if e := b.checkWrite(tool, "content", len(in.Content)); e != nil {
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
		Mode:          wsfs.WriteOverwrite,
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
	p, e := b.parse(tool, in.Path)
	if e != nil {
		return wsfs.AppendFileResult{}, e
	}
	if e := checkText(tool, in.Content); e != nil {
		return wsfs.AppendFileResult{}, e
	}
	if e := b.checkWrite(tool, "content", len(in.Content)); e != nil {
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
	// The commit point: one write(2) with O_APPEND; a short write is undone.
	if n, err := f.WriteString(in.Content); err != nil {
		if n > 0 {
			_ = f.Truncate(fi.Size())
		}
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

func syncDir(dir *os.Root) error {
	d, err := dir.Open(".")
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// EditFile implements edit_file.
func (b *Baseline) EditFile(ctx context.Context, in wsfs.EditFileInput) (wsfs.EditFileResult, error) {
	const tool = wsfs.ToolEditFile
	if e := ctxErr(tool, ctx); e != nil {
		return wsfs.EditFileResult{}, e
	}
	switch {
	case in.OldText == "":
		return wsfs.EditFileResult{}, bErr(tool, wsfs.CodeInvalidArguments, "old_text is empty")
	case in.OldText == in.NewText:
		return wsfs.EditFileResult{}, bErr(tool, wsfs.CodeInvalidArguments, "old_text and new_text are equal: no change")
	}
	if e := checkText(tool, in.OldText, in.NewText); e != nil {
		return wsfs.EditFileResult{}, e
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
	buf, err := readBounded(ctx, f, fi.Size(), b.limits.MaxWriteBytes+1, 0)
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
	updated, lines, first, last := replaceCounting(buf, old, []byte(in.NewText))
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
		// The library's change statistics, computed as it does.
		OriginalSize:     int64(len(buf)),
		NewSize:          int64(len(updated)),
		LinesChanged:     lines,
		FirstChangedLine: first,
		LastChangedLine:  last,
		Text:             withWarnings("replaced "+strconv.Itoa(matches)+" "+noun+" in "+p.display, warnings),
		Warnings:         warnings,
	}, nil
}

// replaceCounting is bytes.ReplaceAll(buf, old, repl) that also returns
// edit_file's statistics: the lines of buf the matches touched (each once)
// and the lines of the result from the first replacement to the last.
func replaceCounting(buf, old, repl []byte) (out []byte, lines, first, last int) {
	out = make([]byte, 0, len(buf)+(len(repl)-len(old))*bytes.Count(buf, old))
	from, line, counted := 0, 1, 0
	firstAt, lastStart, lastEnd := -1, 0, 0
	for {
		i := bytes.Index(buf[from:], old)
		if i < 0 {
			break
		}
		at := from + i
		line += bytes.Count(buf[from:at], []byte{'\n'})
		end := line + bytes.Count(buf[at:at+len(old)-1], []byte{'\n'})
		if low := max(line, counted+1); end >= low {
			lines += end - low + 1
		}
		counted = max(counted, end)
		line += bytes.Count(buf[at:at+len(old)], []byte{'\n'})
		out = append(out, buf[from:at]...)
		if firstAt < 0 {
			firstAt = len(out)
		}
		lastStart = len(out)
		out = append(out, repl...)
		lastEnd = len(out)
		from = at + len(old)
	}
	out = append(out, buf[from:]...)
	if firstAt >= 0 {
		first = 1 + bytes.Count(out[:firstAt], []byte{'\n'})
		last = 1 + bytes.Count(out[:max(lastEnd-1, lastStart)], []byte{'\n'})
	}
	return out, lines, first, last
}
