package benchmarks

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Floor performs, for each tool, only the system calls the contract needs,
// with preallocated buffers and no validation, sorting, JSON or error
// mapping. It is the limit no implementation of the contract can beat on
// this machine (short of dropping a guarantee):
//
//   - read_file: openat, fstat, read (up to MaxReadBytes+1), close; for a
//     range of lines: openat, fstat, reads of 64 KiB to the end of the file
//     (the contract counts every line of a file up to 64 MiB), newlines
//     counted and the range's bytes copied out, close;
//   - write_file: openat + flock + fstat of the existing file, openat of an
//     unnamed temp file (O_TMPFILE), write, fchown, fchmod, fsync, linkat
//     under a temp name, close, renameat, openat + fsync + close of the
//     directory, close;
//   - append_file: openat(O_APPEND), fstat, flock, write, fdatasync, close;
//   - edit_file: openat, fstat, flock, read, the write_file sequence for the
//     new content (the replacement is a copy at a known offset: no search);
//   - list_dir: openat(O_DIRECTORY), getdents64 until the end, newfstatat of
//     the first MaxListEntries names returned (no sorting), close;
//   - a refusal of a path that leaves the workspace ("../x"): no system
//     call at all (a lexical check).
//
// The time spent in fsync and fdatasync by the last call is kept
// (LastFsync), for the fsync share of the writes.
//
// Confinement is not part of the floor: openat resolves the multi-component
// path in one call without RESOLVE_BENEATH.
type Floor struct {
	root   int
	rbuf   []byte // read_file
	ebuf   []byte // edit_file
	dbuf   []byte // getdents64
	arena  []byte // NUL-terminated names to lstat
	offs   []int
	limits struct{ read, write, list int }
	fsync  time.Duration // spent in fsync/fdatasync by the last call
}

// LastFsync is the time the last call spent in fsync and fdatasync.
func (f *Floor) LastFsync() time.Duration { return f.fsync }

// timedSync runs fsync or fdatasync and adds its time to f.fsync.
func (f *Floor) timedSync(sync func(int) error, fd int) error {
	t := time.Now()
	err := sync(fd)
	f.fsync += time.Since(t)
	return err
}

// Refuse refuses rel if it starts with "..": what a lexical pre-check costs.
func (f *Floor) Refuse(rel string) error {
	if rel == ".." || strings.HasPrefix(rel, "../") {
		return nil
	}
	return fmt.Errorf("floor: %s is not certainly outside", rel)
}

// OpenFloor opens dir as the floor's root directory.
func OpenFloor(dir string) (*Floor, error) {
	fd, err := syscall.Open(dir, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	f := &Floor{root: fd}
	f.limits.read, f.limits.write, f.limits.list = DefaultMaxReadBytes, DefaultMaxWriteBytes, DefaultMaxListEntries
	f.rbuf = make([]byte, f.limits.read+1)
	f.ebuf = make([]byte, f.limits.write+1)
	f.dbuf = make([]byte, 64<<10)
	f.arena = make([]byte, 0, f.limits.list*256)
	f.offs = make([]int, 0, f.limits.list)
	return f, nil
}

// Close closes the root.
func (f *Floor) Close() error { return syscall.Close(f.root) }

const openRead = syscall.O_RDONLY | syscall.O_NONBLOCK | syscall.O_NOCTTY | syscall.O_CLOEXEC

func readFull(fd int, buf []byte) (int, error) {
	n := 0
	for n < len(buf) {
		m, err := syscall.Read(fd, buf[n:])
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return n, err
		}
		if m == 0 {
			break
		}
		n += m
	}
	return n, nil
}

func writeFull(fd int, buf []byte) error {
	for len(buf) > 0 {
		m, err := syscall.Write(fd, buf)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return err
		}
		buf = buf[m:]
	}
	return nil
}

// Read reads at most MaxReadBytes+1 bytes of rel and returns how many.
func (f *Floor) Read(rel string) (int, error) {
	fd, err := syscall.Openat(f.root, rel, openRead, 0)
	if err != nil {
		return 0, err
	}
	defer syscall.Close(fd)
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil {
		return 0, err
	}
	return readFull(fd, f.rbuf)
}

// ReadRange reads rel to its end in 64 KiB steps, counting newlines, and
// copies lines start..start+n-1 (1-based) out. It returns their length.
func (f *Floor) ReadRange(rel string, start, n int) (int, error) {
	fd, err := syscall.Openat(f.root, rel, openRead, 0)
	if err != nil {
		return 0, err
	}
	defer syscall.Close(fd)
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil {
		return 0, err
	}
	chunk := f.ebuf[:64<<10]
	out := f.rbuf[:0]
	line := 1 // the line the next byte belongs to
	for {
		m, err := readFull(fd, chunk)
		if err != nil {
			return 0, err
		}
		if m == 0 {
			return len(out), nil
		}
		c := chunk[:m]
		if line+bytes.Count(c, []byte{'\n'}) < start || line >= start+n {
			line += bytes.Count(c, []byte{'\n'})
			continue
		}
		for len(c) > 0 {
			i := bytes.IndexByte(c, '\n')
			piece := c
			if i >= 0 {
				piece = c[:i+1]
			}
			if line >= start && line < start+n && len(out)+len(piece) <= cap(out) {
				out = append(out, piece...)
			}
			c = c[len(piece):]
			if i >= 0 {
				line++
			}
		}
	}
}

// Write replaces rel with content.
func (f *Floor) Write(rel string, content []byte) error {
	f.fsync = 0
	lfd, err := syscall.Openat(f.root, rel, openRead, 0)
	var st *syscall.Stat_t
	if err == nil {
		defer syscall.Close(lfd)
		if err := syscall.Flock(lfd, syscall.LOCK_EX); err != nil {
			return err
		}
		st = new(syscall.Stat_t)
		if err := syscall.Fstat(lfd, st); err != nil {
			return err
		}
	}
	return f.replace(rel, content, st)
}

func (f *Floor) replace(rel string, content []byte, keep *syscall.Stat_t) error {
	dir := path.Dir(rel)
	tmp := path.Join(dir, ".floor.tmp")
	// An unnamed temp file, as the contract asks (a crash before the commit
	// leaves nothing), linked under a temp name and renamed over rel.
	tfd, err := syscall.Openat(f.root, dir, syscall.O_WRONLY|unix.O_TMPFILE|syscall.O_CLOEXEC, 0o644)
	if err != nil {
		return err
	}
	err = writeFull(tfd, content)
	if err == nil && keep != nil {
		_ = syscall.Fchown(tfd, int(keep.Uid), int(keep.Gid))
		err = syscall.Fchmod(tfd, keep.Mode&0o7777)
	}
	if err == nil {
		err = f.timedSync(syscall.Fsync, tfd)
	}
	if err == nil {
		err = unix.Linkat(unix.AT_FDCWD, "/proc/self/fd/"+strconv.Itoa(tfd), f.root, tmp, unix.AT_SYMLINK_FOLLOW)
	}
	syscall.Close(tfd)
	if err == nil {
		err = syscall.Renameat(f.root, tmp, f.root, rel)
	}
	if err != nil {
		syscall.Unlinkat(f.root, tmp)
		return err
	}
	dfd, err := syscall.Openat(f.root, dir, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer syscall.Close(dfd)
	return f.timedSync(syscall.Fsync, dfd)
}

// Append appends content to rel with O_APPEND.
func (f *Floor) Append(rel string, content []byte) error {
	f.fsync = 0
	fd, err := syscall.Openat(f.root, rel, syscall.O_WRONLY|syscall.O_APPEND|syscall.O_CREAT|syscall.O_NONBLOCK|syscall.O_NOCTTY|syscall.O_CLOEXEC, 0o644)
	if err != nil {
		return err
	}
	defer syscall.Close(fd)
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil {
		return err
	}
	if err := syscall.Flock(fd, syscall.LOCK_EX); err != nil {
		return err
	}
	if err := writeFull(fd, content); err != nil {
		return err
	}
	return f.timedSync(syscall.Fdatasync, fd)
}

// Edit copies replacement over rel's bytes at offset and writes the file back
// atomically. The caller knows the offset (found once, outside the timing).
func (f *Floor) Edit(rel string, offset int, replacement []byte) error {
	f.fsync = 0
	fd, err := syscall.Openat(f.root, rel, openRead, 0)
	if err != nil {
		return err
	}
	defer syscall.Close(fd)
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil {
		return err
	}
	if err := syscall.Flock(fd, syscall.LOCK_EX); err != nil {
		return err
	}
	n, err := readFull(fd, f.ebuf)
	if err != nil {
		return err
	}
	if offset+len(replacement) > n {
		return fmt.Errorf("floor edit: offset %d beyond %d bytes", offset, n)
	}
	copy(f.ebuf[offset:], replacement)
	return f.replace(rel, f.ebuf[:n], &st)
}

// List reads every entry of rel and lstats the first MaxListEntries. It
// returns the number of entries and of entries lstatted.
func (f *Floor) List(rel string) (total, listed int, err error) {
	dfd, err := syscall.Openat(f.root, rel, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return 0, 0, err
	}
	defer syscall.Close(dfd)
	f.arena, f.offs = f.arena[:0], f.offs[:0]
	for {
		n, err := syscall.Getdents(dfd, f.dbuf)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return 0, 0, err
		}
		if n <= 0 {
			break
		}
		for off := 0; off < n; {
			// struct linux_dirent64 { u64 d_ino; s64 d_off; u16 d_reclen; u8 d_type; char d_name[]; }
			reclen := int(*(*uint16)(unsafe.Pointer(&f.dbuf[off+16])))
			name := f.dbuf[off+19 : off+reclen]
			name = name[:bytes.IndexByte(name, 0)]
			off += reclen
			if (len(name) == 1 && name[0] == '.') || (len(name) == 2 && name[0] == '.' && name[1] == '.') {
				continue
			}
			total++
			if len(f.offs) < f.limits.list {
				f.offs = append(f.offs, len(f.arena))
				f.arena = append(f.arena, name...)
				f.arena = append(f.arena, 0)
			}
		}
	}
	var st syscall.Stat_t
	for _, o := range f.offs {
		_, _, e := syscall.Syscall6(syscall.SYS_NEWFSTATAT, uintptr(dfd), uintptr(unsafe.Pointer(&f.arena[o])),
			uintptr(unsafe.Pointer(&st)), uintptr(_AT_SYMLINK_NOFOLLOW), 0, 0)
		if e != 0 {
			return 0, 0, e
		}
		listed++
	}
	return total, listed, nil
}

const _AT_SYMLINK_NOFOLLOW = 0x100

// floorMarkerOffset finds the edit marker in a template (outside timing).
func floorMarkerOffset(template string) (int, error) {
	b, err := os.ReadFile(template)
	if err != nil {
		return 0, err
	}
	i := bytes.Index(b, []byte(markerA))
	if i < 0 {
		return 0, errors.New("no marker in " + template)
	}
	return i, nil
}
