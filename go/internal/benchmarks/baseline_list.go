package benchmarks

import (
	"container/heap"
	"context"
	"fmt"
	"io"
	"io/fs"
	"slices"
	"strings"
	"unicode/utf8"

	wsfs "github.com/wsfs/wsfs/go"
)

// The Baseline's list_dir.

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

// ListDir implements list_dir (one level, every name).
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
			if isTempName(n) {
				continue
			}
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
		entries = append(entries, wsfs.DirEntry{Name: shownName(name), Type: kind, Size: fi.Size()})
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

// shownName is a file name as wsfs shows it (docs/tools.md, "File names that
// are not UTF-8"): as it is when it is UTF-8 and does not look like the escaped
// form of another name; otherwise bytes that are not UTF-8 as \xNN and each
// backslash doubled. The usual name (UTF-8, no backslash) costs one scan.
func shownName(name string) string {
	if utf8.ValidString(name) && shownLiterally(name) {
		return name
	}
	var b strings.Builder
	for len(name) > 0 {
		r, n := utf8.DecodeRuneInString(name)
		switch {
		case r == utf8.RuneError && n <= 1:
			fmt.Fprintf(&b, `\x%02x`, name[0])
		case r == '\\':
			b.WriteString(`\\`)
		default:
			b.WriteString(name[:n])
		}
		name = name[n:]
	}
	return b.String()
}

// shownLiterally: unescaping repeatedly (while the result is UTF-8 with a
// backslash) never ends in bytes that are not UTF-8.
func shownLiterally(s string) bool {
	for strings.IndexByte(s, '\\') >= 0 {
		u, ok := unescapeName(s)
		if !ok {
			return true
		}
		if !utf8.ValidString(u) {
			return false
		}
		s = u
	}
	return true
}

// unescapeName reads \\ as \ and \xNN as the byte NN; false if any other
// backslash occurs.
func unescapeName(s string) (string, bool) {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' {
			b.WriteByte(s[i])
			continue
		}
		switch {
		case i+1 < len(s) && s[i+1] == '\\':
			b.WriteByte('\\')
			i++
		case i+3 < len(s) && s[i+1] == 'x' && isHex(s[i+2]) && isHex(s[i+3]):
			b.WriteByte(hexVal(s[i+2])<<4 | hexVal(s[i+3]))
			i += 3
		default:
			return "", false
		}
	}
	return b.String(), true
}

func isHex(c byte) bool { return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' }

func hexVal(c byte) byte {
	switch {
	case c >= 'a':
		return c - 'a' + 10
	case c >= 'A':
		return c - 'A' + 10
	}
	return c - '0'
}
