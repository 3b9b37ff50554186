package wsfs

import (
	"cmp"
	"context"
	"strconv"
	"strings"
	"unicode/utf8"
	"unsafe"
)

// Tool names, exactly as the C ABI and the agent tools spell them.
const (
	ToolReadFile   = "read_file"
	ToolWriteFile  = "write_file"
	ToolAppendFile = "append_file"
	ToolListDir    = "list_dir"
	ToolEditFile   = "edit_file"
)

var (
	_ = registerTool(ToolReadFile, func(in ReadFileInput) string { return in.Path })
	_ = registerTool(ToolWriteFile, func(in WriteFileInput) string { return in.Path })
	_ = registerTool(ToolAppendFile, func(in AppendFileInput) string { return in.Path })
	_ = registerTool(ToolListDir, func(in ListDirInput) string { return cmp.Or(in.Path, ".") })
	_ = registerTool(ToolEditFile, func(in EditFileInput) string { return in.Path })
)

// The input structs below are both the arguments of the typed methods and
// the argument schemas of the agent tools: fantasy generates the JSON schema
// from the json tags (omitempty marks optional properties) and description
// tags, and Tools then takes the descriptions from wsfs_tool_specs() so the
// model sees exactly the library's wording. Paths are relative to the
// workspace root; absolute paths and paths through symlinks are accepted
// only if they stay inside it.

// ReadFileInput is the argument of read_file.
type ReadFileInput struct {
	Path string `json:"path" description:"File to read, e.g. 'src/main.go'."`
}

// WriteFileInput is the argument of write_file. Mode is WriteOverwrite
// (the default, also for ""), WriteCreate or WriteAppend.
type WriteFileInput struct {
	Path    string `json:"path" description:"File to write, e.g. 'notes/todo.md'."`
	Content string `json:"content" description:"The complete new content of the file."`
	Mode    string `json:"mode,omitempty" enum:"overwrite,create,append" description:"'overwrite' (default) creates the file or replaces it; 'create' only creates it and fails with file_exists if the name is taken; 'append' adds the content to the end, like append_file."`
}

// Modes of WriteFileInput.Mode.
const (
	// WriteOverwrite creates the file or replaces it, atomically.
	WriteOverwrite = "overwrite"
	// WriteCreate creates the file only if the name is free, and never
	// replaces anything: a taken name is CodeFileExists, decided by the
	// kernel at the commit point (of concurrent creators exactly one wins).
	WriteCreate = "create"
	// WriteAppend appends, exactly as AppendFile.
	WriteAppend = "append"
)

// AppendFileInput is the argument of append_file.
type AppendFileInput struct {
	Path    string `json:"path" description:"File to append to, e.g. 'log.txt'."`
	Content string `json:"content" description:"Text to add at the end of the file."`
}

// ListDirInput is the argument of list_dir. An empty Path lists the
// workspace root.
type ListDirInput struct {
	Path string `json:"path,omitempty" description:"Directory to list; defaults to '.', the workspace root."`
}

// EditFileInput is the argument of edit_file.
type EditFileInput struct {
	Path       string `json:"path" description:"File to edit."`
	OldText    string `json:"old_text" description:"The exact text to find; must not be empty."`
	NewText    string `json:"new_text" description:"The text to put in its place (may be empty to delete)."`
	ReplaceAll bool   `json:"replace_all,omitempty" description:"Replace every occurrence instead of requiring exactly one. Default false."`
}

// Every result carries the library's Text (the concise, workspace-relative
// summary a model sees, exactly what the agent tools return) and Warnings
// (for example "file exists, overwriting").
//
// How the results are obtained (none of it changes what they hold): each
// call's envelope is decoded once, by a small reader made for it. ReadFile
// asks the library for the content outside the JSON, unescaped, and builds
// Text itself: it is Content (the same string, no copy), plus the library's
// truncation notice for a cut file, appended in place. WriteFile and
// AppendFile hand the content to the library as a buffer, without copying
// or escaping it. The other results' texts are small and come from the
// library as they are.

// ReadFileResult is the result of ReadFile.
type ReadFileResult struct {
	// Path is the workspace-relative path that was read.
	Path string `json:"path"`
	// Content is the file content, at most MaxReadBytes, cut at a UTF-8
	// boundary.
	Content string `json:"content"`
	// Bytes is len(Content); TotalBytes is the file's size.
	Bytes      int64 `json:"bytes"`
	TotalBytes int64 `json:"total_bytes"`
	// Truncated is true when Bytes < TotalBytes.
	Truncated bool `json:"truncated"`
	// Text is what a model sees: Content, and for a truncated file a line
	// "[truncated: showing the first N of M bytes; max_read_bytes is L]"
	// (after a newline added if Content does not end with one).
	Text     string   `json:"-"`
	Warnings []string `json:"-"`
}

// WriteFileResult is the result of WriteFile.
type WriteFileResult struct {
	Path         string `json:"path"`
	BytesWritten int64  `json:"bytes_written"`
	// Created is false when an existing file was replaced (or appended to).
	Created bool `json:"created"`
	// ExistedBefore is true when the name held a file when the call changed
	// it (always !Created).
	ExistedBefore bool     `json:"existed_before"`
	Text          string   `json:"-"`
	Warnings      []string `json:"-"`
}

// AppendFileResult is the result of AppendFile.
type AppendFileResult struct {
	Path          string `json:"path"`
	BytesAppended int64  `json:"bytes_appended"`
	// Size is the file's size right after this append.
	Size     int64    `json:"size"`
	Text     string   `json:"-"`
	Warnings []string `json:"-"`
}

// Entry types reported by list_dir.
const (
	EntryFile    = "file"
	EntryDir     = "dir"
	EntrySymlink = "symlink"
	EntryOther   = "other"
)

// DirEntry is one entry of a ListDir result.
type DirEntry struct {
	Name string `json:"name"`
	// Type is EntryFile, EntryDir, EntrySymlink (never followed) or
	// EntryOther.
	Type string `json:"type"`
	// Size is the entry's own size (lstat).
	Size int64 `json:"size"`
}

// ListDirResult is the result of ListDir.
type ListDirResult struct {
	Path string `json:"path"`
	// Entries are sorted by name in byte order, at most MaxListEntries.
	Entries []DirEntry `json:"entries"`
	// Total is the number of entries in the directory, not counting those
	// the workspace policy denies.
	Total     int  `json:"total"`
	Truncated bool `json:"truncated"`
	// Denied is the number of entries left out because the workspace
	// policy denies reading them (Policy.DenyRead).
	Denied   int      `json:"denied"`
	Text     string   `json:"-"`
	Warnings []string `json:"-"`
}

// EditFileResult is the result of EditFile.
type EditFileResult struct {
	Path string `json:"path"`
	// Matches is how often OldText occurred; Replaced how many were
	// replaced.
	Matches  int      `json:"matches"`
	Replaced int      `json:"replaced"`
	Text     string   `json:"-"`
	Warnings []string `json:"-"`
}

// ReadFile reads a UTF-8 text file. See Workspace for how ctx is honoured.
//
// The content comes from the library unescaped, outside the JSON envelope
// (output mode "data_raw"). The result's Text is built from it exactly as
// the library renders read_file's text: Content itself, with the truncation
// notice added when the file was cut.
func (ws *Workspace) ReadFile(ctx context.Context, in ReadFileInput) (ReadFileResult, error) {
	const tool = ToolReadFile
	if e := checkPath(tool, in.Path); e != nil {
		return ReadFileResult{}, ws.reject(tool, in.Path, e)
	}
	var r ReadFileResult
	env, err := ws.typedCall(ctx, callSpec{tool: tool, args: pathArgs(in.Path), output: outputDataRaw,
		data: &r, spare: maxNoticeLen, path: in.Path})
	if err != nil {
		return ReadFileResult{}, err
	}
	if env.HasRaw {
		r.Content = env.Raw
	}
	if int64(len(r.Content)) != r.Bytes {
		return ReadFileResult{}, newError(tool, CodeIOError, "malformed read_file result from the wsfs library: %d bytes of content, data says %d", len(r.Content), r.Bytes)
	}
	r.Text = withWarnings(readText(&r, ws.limits.MaxReadBytes, env), env.Warnings)
	r.Warnings = env.Warnings
	return r, nil
}

// maxNoticeLen bounds the length of readText's truncation notice.
const maxNoticeLen = 128

// readText renders read_file's text as the library does (src/render.rs):
// the content, and for a cut file a newline (unless the content ends with
// one) and "[truncated: showing the first N of M bytes; max_read_bytes is
// L]", L being the workspace's effective MaxReadBytes. TestReadTextMatchesLibrary
// checks it against the library's own text.
//
// The text shares its memory with Content: if the content is the end of
// the library's result (env.buf), the notice is appended to it in place, in
// the room left there, and the text is content and notice. Otherwise it is
// a copy.
func readText(r *ReadFileResult, limit int, env *envelope) string {
	if !r.Truncated {
		return r.Content
	}
	var notice [maxNoticeLen]byte
	n := notice[:0]
	if !strings.HasSuffix(r.Content, "\n") {
		n = append(n, '\n')
	}
	n = append(n, "[truncated: showing the first "...)
	n = strconv.AppendInt(n, r.Bytes, 10)
	n = append(n, " of "...)
	n = strconv.AppendInt(n, r.TotalBytes, 10)
	n = append(n, " bytes; max_read_bytes is "...)
	n = strconv.AppendInt(n, int64(limit), 10)
	n = append(n, ']')
	if b := env.buf; b != nil && env.HasRaw && r.Content == env.Raw && len(r.Content) <= b.Len() &&
		b.Cap()-b.Len() >= len(n) {
		start := b.Len() - len(r.Content)
		b.Write(n) // within the capacity: earlier strings of b stay as they are
		return b.String()[start:]
	}
	return r.Content + string(n)
}

// overwriteWarning is the write_file warning that the library leaves out
// of the text, which already says "overwrote".
const overwriteWarning = "file exists, overwriting"

// withWarnings appends the warnings a model should see to text as
// "warning: ..." lines, as the library does.
func withWarnings(text string, warnings []string) string {
	for _, w := range warnings {
		if w != overwriteWarning {
			text += "\nwarning: " + w
		}
	}
	return text
}

// WriteFile atomically creates or replaces a file with Content, or, by
// Mode, only creates it (CodeFileExists if the name is taken) or appends to
// it. The content is handed to the library as a buffer, in place: it is
// neither copied nor JSON-encoded.
func (ws *Workspace) WriteFile(ctx context.Context, in WriteFileInput) (WriteFileResult, error) {
	const tool = ToolWriteFile
	if e := checkContent(tool, in.Path, in.Content); e != nil {
		return WriteFileResult{}, ws.reject(tool, in.Path, e)
	}
	args := pathArgs(in.Path)
	if in.Mode != "" {
		if !utf8.ValidString(in.Mode) {
			return WriteFileResult{}, ws.reject(tool, in.Path, newError(tool, CodeInvalidArguments, "mode is not valid UTF-8"))
		}
		b := make([]byte, 0, len(args)+len(in.Mode)+12)
		b = append(b, args[:len(args)-1]...)
		b = append(b, `,"mode":`...)
		b = appendJSONString(b, in.Mode)
		b = append(b, '}')
		args = unsafe.String(unsafe.SliceData(b), len(b))
	}
	var r WriteFileResult
	env, err := ws.typedCall(ctx, callSpec{tool: tool, args: args, output: outputFull,
		content: in.Content, hasContent: true, data: &r, path: in.Path})
	if err != nil {
		return WriteFileResult{}, err
	}
	r.Text, r.Warnings = env.Text, env.Warnings
	return r, nil
}

// AppendFile appends Content to a file with one O_APPEND write, creating the
// file if needed. Concurrent appends never interleave or get lost. Like
// WriteFile, the content is passed in place.
func (ws *Workspace) AppendFile(ctx context.Context, in AppendFileInput) (AppendFileResult, error) {
	const tool = ToolAppendFile
	if e := checkContent(tool, in.Path, in.Content); e != nil {
		return AppendFileResult{}, ws.reject(tool, in.Path, e)
	}
	var r AppendFileResult
	env, err := ws.typedCall(ctx, callSpec{tool: tool, args: pathArgs(in.Path), output: outputFull,
		content: in.Content, hasContent: true, data: &r, path: in.Path})
	if err != nil {
		return AppendFileResult{}, err
	}
	r.Text, r.Warnings = env.Text, env.Warnings
	return r, nil
}

// ListDir lists a directory (non-recursive, symlinks not followed).
func (ws *Workspace) ListDir(ctx context.Context, in ListDirInput) (ListDirResult, error) {
	const tool = ToolListDir
	p := in.Path
	if p == "" {
		p = "."
	}
	if e := checkPath(tool, p); e != nil {
		return ListDirResult{}, ws.reject(tool, p, e)
	}
	args := "{}"
	if in.Path != "" {
		args = pathArgs(in.Path)
	}
	var r ListDirResult
	env, err := ws.typedCall(ctx, callSpec{tool: tool, args: args, output: outputFull, data: &r, path: p})
	if err != nil {
		return ListDirResult{}, err
	}
	r.Text, r.Warnings = env.Text, env.Warnings
	return r, nil
}

// EditFile replaces exact text in a file, atomically. Without ReplaceAll the
// text must occur exactly once (CodeEditNotFound, CodeAmbiguousEdit).
func (ws *Workspace) EditFile(ctx context.Context, in EditFileInput) (EditFileResult, error) {
	const tool = ToolEditFile
	if e := checkPath(tool, in.Path); e != nil {
		return EditFileResult{}, ws.reject(tool, in.Path, e)
	}
	if !utf8.ValidString(in.OldText) || !utf8.ValidString(in.NewText) {
		return EditFileResult{}, ws.reject(tool, in.Path, newError(tool, CodeInvalidArguments, "text argument is not valid UTF-8"))
	}
	b := make([]byte, 0, len(in.Path)+len(in.OldText)+len(in.NewText)+64)
	b = append(b, `{"path":`...)
	b = appendJSONString(b, in.Path)
	b = append(b, `,"old_text":`...)
	b = appendJSONString(b, in.OldText)
	b = append(b, `,"new_text":`...)
	b = appendJSONString(b, in.NewText)
	if in.ReplaceAll {
		b = append(b, `,"replace_all":true`...)
	}
	b = append(b, '}')
	var r EditFileResult
	args := unsafe.String(unsafe.SliceData(b), len(b))
	env, err := ws.typedCall(ctx, callSpec{tool: tool, args: args, output: outputFull, data: &r, path: in.Path})
	if err != nil {
		return EditFileResult{}, err
	}
	r.Text, r.Warnings = env.Text, env.Warnings
	return r, nil
}

// Strings are checked before anything reaches C: a NUL byte or invalid UTF-8
// in the path is CodeInvalidPath; invalid UTF-8 in other text is
// CodeInvalidArguments (JSON encoding would otherwise silently replace the
// bad bytes with U+FFFD, and the library refuses a content buffer that is
// not UTF-8 anyway). NUL bytes in content are passed on, never truncated: as
// they are in write_file's and append_file's content buffer, JSON-escaped in
// edit_file's texts; the library decides what to do with them.

// checkPath checks a path argument.
func checkPath(tool, path string) *Error {
	if strings.IndexByte(path, 0) >= 0 {
		return newError(tool, CodeInvalidPath, "path contains a NUL byte")
	}
	if !utf8.ValidString(path) {
		return newError(tool, CodeInvalidPath, "path is not valid UTF-8")
	}
	return nil
}

// checkContent checks the path and content of write_file and append_file.
func checkContent(tool, path, content string) *Error {
	if e := checkPath(tool, path); e != nil {
		return e
	}
	if !utf8.ValidString(content) {
		return newError(tool, CodeInvalidArguments, "text argument is not valid UTF-8")
	}
	return nil
}

// typedCall runs a typed method's call; a failure is an *Error.
func (ws *Workspace) typedCall(ctx context.Context, cs callSpec) (*envelope, error) {
	_, env, err := ws.call(ctx, cs)
	return env, err
}

// reject logs and returns an error found before calling the library.
func (ws *Workspace) reject(tool, path string, e *Error) error {
	ws.logCall(callSpec{tool: tool, path: path}, e, 0)
	return e
}

// pathArgs returns {"path":<path>}; path must be valid UTF-8.
func pathArgs(path string) string {
	b := make([]byte, 0, len(path)+12)
	b = append(b, `{"path":`...)
	b = appendJSONString(b, path)
	b = append(b, '}')
	return unsafe.String(unsafe.SliceData(b), len(b))
}

// appendJSONString appends s, which must be valid UTF-8, as a JSON string:
// quotes, backslashes and control characters are escaped, everything else
// (including <, > and &) is copied as is.
func appendJSONString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' {
			continue
		}
		b = append(b, s[start:i]...)
		switch c {
		case '"', '\\':
			b = append(b, '\\', c)
		case '\n':
			b = append(b, '\\', 'n')
		case '\r':
			b = append(b, '\\', 'r')
		case '\t':
			b = append(b, '\\', 't')
		default:
			b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
		}
		start = i + 1
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
