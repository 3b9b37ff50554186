package wsfs

import "strings"

// A path whose first name is ".." leads out of a confined workspace, whatever
// the files are: the library refuses it as outside_workspace before any
// system call (src/resolve.rs, leaves_root), as the kernel's
// openat2(RESOLVE_BENEATH) would. ReadFile and the read_file tool refuse such
// a path here already, with the library's error word for word, which spares
// the call into the library (most of the cost of a refusal). The check only
// ever refuses, and only paths whose every check in the library comes out the
// same way: relative, no escapes (the library decodes "\xNN" names), no
// trailing '/' (read_file refuses that first, as not_a_file), a last name that
// is not a wsfs temp name (refused first, as invalid_path), and only in a
// confined workspace (in an unrestricted one ".." is allowed). Anything else
// goes to the library, which decides. TestOutsideCheckMatchesLibrary compares
// the two.

// maxPathBytes is the library's longest tool path.
const maxPathBytes = 4096

// outsideLexically returns the library's outside_workspace error for path
// if it certainly leads out of the workspace, and nil otherwise.
func (ws *Workspace) outsideLexically(tool, path string) *Error {
	if !ws.restrict || path == "" || len(path) > maxPathBytes || path[0] == '/' ||
		(len(path) > 1 && path[len(path)-1] == '/') || strings.IndexByte(path, '\\') >= 0 {
		return nil
	}
	rest := path
	for { // skip "." and empty names
		name, after, more := strings.Cut(rest, "/")
		if name != "." && name != "" {
			if name != ".." {
				return nil
			}
			break
		}
		if !more {
			return nil
		}
		rest = after
	}
	// The display the library gives: the names without "." and empty ones.
	var b strings.Builder
	b.Grow(len(rest) + len(outsideMessage))
	last := ""
	for name := range strings.SplitSeq(rest, "/") {
		if name == "" || name == "." {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('/')
		}
		b.WriteString(name)
		last = name
	}
	if isTempName(last) {
		return nil
	}
	b.WriteString(outsideMessage)
	return &Error{Tool: tool, Code: CodeOutsideWorkspace, Message: b.String()}
}

const outsideMessage = " leads outside the workspace (through '..', an absolute path or a symlink); use a path inside the workspace"

// isTempName reports whether name is reserved for wsfs's temp files:
// .wsfs-<16 lowercase hex digits>.tmp.
func isTempName(name string) bool {
	digits, ok := strings.CutPrefix(name, ".wsfs-")
	if !ok || len(digits) != 16+len(".tmp") || !strings.HasSuffix(digits, ".tmp") {
		return false
	}
	for _, c := range []byte(digits[:16]) {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// onlyPath returns the path of arguments that are exactly {"path": <string>}
// (white space allowed), as the library would parse them; ok is false for
// anything else (other members, which the library may refuse first).
func onlyPath(argsJSON string) (path string, ok bool) {
	d := decoder{s: argsJSON}
	if !d.object() {
		return "", false
	}
	n := 0
	key, more := d.field(&n)
	if !more || key != "path" || d.peek() != '"' {
		return "", false
	}
	path = d.str()
	if _, more := d.field(&n); more || d.bad || d.peek() != 0 {
		return "", false
	}
	return path, true
}
