package wsfs

import (
	"context"
	"strconv"
	"strings"
	"unicode/utf8"
	"unsafe"

	jsonv2 "github.com/go-json-experiment/json"
)

// Tool names, exactly as the C ABI and the agent tools spell them.
const (
	ToolReadFile   = "read_file"
	ToolWriteFile  = "write_file"
	ToolAppendFile = "append_file"
	ToolListDir    = "list_dir"
	ToolEditFile   = "edit_file"
)

// The input structs below are both the arguments of the typed methods and
// the argument schemas of the agent tools: fantasy generates the JSON schema
// from the json tags (omitempty marks optional properties) and description
// tags, and Tools then takes the descriptions from wsfs_tool_specs() so the
// model sees exactly the library's wording. Paths are relative to the
// workspace root; absolute paths and paths through symlinks are accepted
// only if they stay inside it.

// ReadFileInput is the argument of read_file. With only Path, the whole
// file is read (up to MaxReadBytes); setting StartLine, MaxLines or
// LineNumbers reads a range of lines instead (see ReadFileResult).
type ReadFileInput struct {
	Path        string `json:"path" description:"File to read, e.g. 'src/main.go'."`
	StartLine   int    `json:"start_line,omitempty" description:"First line to return, 1-based. Giving start_line, max_lines or line_numbers reads a range of lines (from line 1 if start_line is 0 or absent), ending with a hint such as '[lines 1-2000 of 9120; continue with start_line=2001]'."`
	MaxLines    int    `json:"max_lines,omitempty" description:"Most lines to return in a range (0 or absent: 2000; at most 10000). The range also stops at the read limit (256 KiB by default), at a line boundary."`
	LineNumbers bool   `json:"line_numbers,omitempty" description:"Prefix each returned line with its number and '| ' (in the text only). Default false."`
}

// isRange reports whether in asks for a range of lines.
func (in ReadFileInput) isRange() bool {
	return in.StartLine != 0 || in.MaxLines != 0 || in.LineNumbers
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
// workspace root; with only Path set, the listing is one level, every name.
// Depth 2 or more returns ListDirResult.Tree.
type ListDirInput struct {
	Path             string `json:"path,omitempty" description:"Directory to list; defaults to '.', the workspace root."`
	Depth            int    `json:"depth,omitempty,omitzero" description:"Levels to list: 1 (default) lists the directory itself; 2 or more returns a tree, breadth-first (at most 60)."`
	IncludeHidden    *bool  `json:"include_hidden,omitempty" description:"Show names starting with '.'. Default true."`
	MaxEntries       int    `json:"max_entries,omitempty,omitzero" description:"Most entries to return; 0 or absent means the workspace's max_list_entries (500 by default), which is also the most allowed."`
	RespectGitignore bool   `json:"respect_gitignore,omitempty" description:"Leave out what .gitignore files in the listed directories ignore. Default false."`
}

// plain reports whether only Path is set (the library's fast path).
func (in ListDirInput) plain() bool {
	return in.Depth <= 1 && in.IncludeHidden == nil && in.MaxEntries == 0 && !in.RespectGitignore
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
	// boundary. For a range, the lines' bytes as in the file (line endings
	// included, no line numbers).
	Content string `json:"content"`
	// Bytes is len(Content); TotalBytes is the file's size.
	Bytes      int64 `json:"bytes"`
	TotalBytes int64 `json:"total_bytes"`
	// Truncated is true when Bytes < TotalBytes (plain read), or, for a
	// range, when MaxReadBytes cut it short: fewer lines than asked although
	// more follow, or one line longer than the limit cut.
	Truncated bool `json:"truncated"`

	// SHA256 is the lowercase hex SHA-256 of the whole file (the guard the
	// change tools take as file_hash), when the read saw the whole file
	// (a plain read that was not truncated, or a range whose scan reached
	// the end) and it is at most MaxWriteBytes; "" otherwise.
	SHA256 string `json:"sha256,omitempty"`

	// The fields below are set by range reads only (zero in a plain read).

	// StartLine and EndLine are the first and last line returned (1-based;
	// EndLine is StartLine-1 when none is: an empty file).
	StartLine int `json:"start_line,omitempty"`
	EndLine   int `json:"end_line,omitempty"`
	// TotalLines is the file's line count when the whole file was scanned
	// (the range reached its end, or the file is at most 64 MiB or
	// MaxWriteBytes), else nil.
	TotalLines *int `json:"total_lines,omitempty"`
	// NextStartLine is the StartLine to read on with; 0 at the end of the
	// file.
	NextStartLine int `json:"next_start_line,omitempty"`
	// Text is what a model sees. Plain read: Content ("(empty file)" for an
	// empty file), and for a truncated
	// file a line "[truncated: showing the first N of M bytes;
	// max_read_bytes is L]" (after a newline added if Content does not end
	// with one). Range: the lines (each prefixed "N| " with LineNumbers),
	// then a hint line such as "[lines 1-2000 of 9120; continue with
	// start_line=2001]"; "(empty file)" for an empty file.
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
	// Entries are sorted by name in byte order, at most MaxListEntries
	// (empty for a tree: Tree holds the entries).
	Entries []DirEntry `json:"entries"`
	// Total is the number of entries in the directory (those the filters
	// let through, not counting those the workspace policy denies); for a
	// tree, the number of entries in Tree.
	Total int `json:"total"`
	// Truncated is true when entries were left out because of the entry
	// limit.
	Truncated bool `json:"truncated"`
	// Denied is the number of entries left out because the workspace
	// policy denies reading them (Policy.DenyRead); in a tree, those of
	// every listed directory. Denied directories are not entered.
	Denied int `json:"denied"`
	// Tree is the listing as a tree (Depth 2 or more): the listed directory
	// (Name ".") and its entries, breadth-first up to the entry limit.
	Tree     *TreeNode `json:"tree,omitempty"`
	Text     string    `json:"-"`
	Warnings []string  `json:"-"`
}

// TreeNode is one entry of ListDirResult.Tree.
type TreeNode struct {
	Name string `json:"name"`
	// Type is EntryFile, EntryDir, EntrySymlink (never followed) or
	// EntryOther.
	Type string `json:"type"`
	// Size is a regular file's size.
	Size int64 `json:"size,omitempty"`
	// Children are a listed directory's entries, sorted by name; nil for
	// files and for directories that were not listed (the depth limit,
	// .git, the entry limit).
	Children []TreeNode `json:"children,omitempty"`
	// Truncated is true when some of the directory's entries are not
	// shown, or it was not listed because of the entry limit.
	Truncated bool `json:"truncated,omitempty"`
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

// ReadFile reads a UTF-8 text file, or a range of its lines. See Workspace
// for how ctx is honoured.
//
// A plain read's content comes from the library unescaped, outside the JSON
// envelope (output mode "data_raw"), and its Text is built from it exactly
// as the library renders read_file's text: Content itself, with the
// truncation notice added when the file was cut. A range's Text (numbered
// lines and a hint) is the library's own, from a full envelope.
func (ws *Workspace) ReadFile(ctx context.Context, in ReadFileInput) (ReadFileResult, error) {
	const tool = ToolReadFile
	if e := checkPath(tool, in.Path); e != nil {
		return ReadFileResult{}, ws.reject(tool, in.Path, e)
	}
	if in.isRange() {
		return ws.readRange(ctx, in)
	}
	if e := ws.outsideLexically(tool, in.Path); e != nil && ctx.Err() == nil {
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

// readRange reads a range of lines. Its text is not the content (line
// numbers, the hint), so it comes from the library in a full envelope.
func (ws *Workspace) readRange(ctx context.Context, in ReadFileInput) (ReadFileResult, error) {
	const tool = ToolReadFile
	b := make([]byte, 0, len(in.Path)+96)
	b = append(b, `{"path":`...)
	b = appendJSONString(b, in.Path)
	if in.StartLine != 0 {
		b = append(b, `,"start_line":`...)
		b = strconv.AppendInt(b, int64(in.StartLine), 10)
	}
	if in.MaxLines != 0 {
		b = append(b, `,"max_lines":`...)
		b = strconv.AppendInt(b, int64(in.MaxLines), 10)
	}
	if in.LineNumbers {
		b = append(b, `,"line_numbers":true`...)
	}
	b = append(b, '}')
	var r ReadFileResult
	args := unsafe.String(unsafe.SliceData(b), len(b))
	env, err := ws.typedCall(ctx, callSpec{tool: tool, args: args, output: outputFull, data: &r, path: in.Path})
	if err != nil {
		return ReadFileResult{}, err
	}
	if int64(len(r.Content)) != r.Bytes {
		return ReadFileResult{}, newError(tool, CodeIOError, "malformed read_file result from the wsfs library: %d bytes of content, data says %d", len(r.Content), r.Bytes)
	}
	r.Text, r.Warnings = env.Text, env.Warnings
	return r, nil
}

// emptyFileText is the library's text for an empty file.
const emptyFileText = "(empty file)"

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
		if r.Content == "" {
			return emptyFileText
		}
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

// ListDir lists a directory (symlinks not followed): one level, or with
// Depth 2 or more a tree.
func (ws *Workspace) ListDir(ctx context.Context, in ListDirInput) (ListDirResult, error) {
	const tool = ToolListDir
	p := in.Path
	if p == "" {
		p = "."
	}
	if e := checkPath(tool, p); e != nil {
		return ListDirResult{}, ws.reject(tool, p, e)
	}
	if !in.plain() {
		return ws.listFiltered(ctx, in, p)
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

// listFiltered is ListDir with more than a path. Trees are decoded by the
// generic decoder (the fast reader knows flat listings only).
func (ws *Workspace) listFiltered(ctx context.Context, in ListDirInput, p string) (ListDirResult, error) {
	const tool = ToolListDir
	args, err := jsonv2.Marshal(in)
	if err != nil {
		return ListDirResult{}, ws.reject(tool, p, newError(tool, CodeInvalidArguments, "encoding the arguments: %v", err))
	}
	var r ListDirResult
	var raw rawData
	var data any = &r
	if in.Depth > 1 {
		data = &raw
	}
	env, err := ws.typedCall(ctx, callSpec{tool: tool, args: string(args), output: outputFull, data: data, path: p})
	if err != nil {
		return ListDirResult{}, err
	}
	if in.Depth > 1 {
		if err := decodeResult(string(raw), &r); err != nil {
			return ListDirResult{}, newError(tool, CodeIOError, "malformed list_dir result from the wsfs library: %v", err)
		}
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
