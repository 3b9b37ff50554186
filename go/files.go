package wsfs

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"unicode/utf8"
)

// Tool names, exactly as the C ABI and the agent tools spell them.
const (
	ToolReadFile   = "read_file"
	ToolWriteFile  = "write_file"
	ToolAppendFile = "append_file"
	ToolListDir    = "list_dir"
	ToolEditFile   = "edit_file"
)

// ToolNames lists the five tools in their canonical order.
var ToolNames = []string{ToolReadFile, ToolWriteFile, ToolAppendFile, ToolListDir, ToolEditFile}

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

// WriteFileInput is the argument of write_file.
type WriteFileInput struct {
	Path    string `json:"path" description:"File to write, e.g. 'notes/todo.md'."`
	Content string `json:"content" description:"The complete new content of the file."`
}

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
// summary a model sees) and Warnings (for example "file exists,
// overwriting").

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
	Truncated bool     `json:"truncated"`
	Text      string   `json:"-"`
	Warnings  []string `json:"-"`
}

// WriteFileResult is the result of WriteFile.
type WriteFileResult struct {
	Path         string `json:"path"`
	BytesWritten int64  `json:"bytes_written"`
	// Created is false when an existing file was replaced.
	Created  bool     `json:"created"`
	Text     string   `json:"-"`
	Warnings []string `json:"-"`
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
	// Total is the number of entries in the directory.
	Total     int      `json:"total"`
	Truncated bool     `json:"truncated"`
	Text      string   `json:"-"`
	Warnings  []string `json:"-"`
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
func (ws *Workspace) ReadFile(ctx context.Context, in ReadFileInput) (ReadFileResult, error) {
	var r ReadFileResult
	env, err := ws.typedCall(ctx, ToolReadFile, in.Path, in, &r, in.Path)
	if err != nil {
		return ReadFileResult{}, err
	}
	r.Text, r.Warnings = env.Text, env.Warnings
	return r, nil
}

// WriteFile atomically creates or replaces a file with Content.
func (ws *Workspace) WriteFile(ctx context.Context, in WriteFileInput) (WriteFileResult, error) {
	var r WriteFileResult
	env, err := ws.typedCall(ctx, ToolWriteFile, in.Path, in, &r, in.Content)
	if err != nil {
		return WriteFileResult{}, err
	}
	r.Text, r.Warnings = env.Text, env.Warnings
	return r, nil
}

// AppendFile appends Content to a file with one O_APPEND write, creating the
// file if needed. Concurrent appends never interleave or get lost.
func (ws *Workspace) AppendFile(ctx context.Context, in AppendFileInput) (AppendFileResult, error) {
	var r AppendFileResult
	env, err := ws.typedCall(ctx, ToolAppendFile, in.Path, in, &r, in.Content)
	if err != nil {
		return AppendFileResult{}, err
	}
	r.Text, r.Warnings = env.Text, env.Warnings
	return r, nil
}

// ListDir lists a directory (non-recursive, symlinks not followed).
func (ws *Workspace) ListDir(ctx context.Context, in ListDirInput) (ListDirResult, error) {
	var r ListDirResult
	p := in.Path
	if p == "" {
		p = "."
	}
	env, err := ws.typedCall(ctx, ToolListDir, p, in, &r)
	if err != nil {
		return ListDirResult{}, err
	}
	r.Text, r.Warnings = env.Text, env.Warnings
	return r, nil
}

// EditFile replaces exact text in a file, atomically. Without ReplaceAll the
// text must occur exactly once (CodeEditNotFound, CodeAmbiguousEdit).
func (ws *Workspace) EditFile(ctx context.Context, in EditFileInput) (EditFileResult, error) {
	var r EditFileResult
	env, err := ws.typedCall(ctx, ToolEditFile, in.Path, in, &r, in.OldText, in.NewText)
	if err != nil {
		return EditFileResult{}, err
	}
	r.Text, r.Warnings = env.Text, env.Warnings
	return r, nil
}

// typedCall validates the Go strings, encodes in, calls the tool with the
// full envelope and decodes its data into out.
//
// Strings are checked before anything reaches C: a NUL byte or invalid UTF-8
// in the path is CodeInvalidPath; invalid UTF-8 in other text is
// CodeInvalidArguments (JSON encoding would otherwise silently replace the
// bad bytes with U+FFFD). NUL bytes in content are passed on JSON-escaped,
// never truncated; the library decides what to do with them.
func (ws *Workspace) typedCall(ctx context.Context, tool, path string, in any, out any, texts ...string) (*envelope, error) {
	if strings.IndexByte(path, 0) >= 0 {
		return ws.reject(tool, path, newError(tool, CodeInvalidPath, "path contains a NUL byte"))
	}
	if !utf8.ValidString(path) {
		return ws.reject(tool, path, newError(tool, CodeInvalidPath, "path is not valid UTF-8"))
	}
	for _, t := range texts {
		if !utf8.ValidString(t) {
			return ws.reject(tool, path, newError(tool, CodeInvalidArguments, "text argument is not valid UTF-8"))
		}
	}
	args, err := marshalArgs(in)
	if err != nil {
		return ws.reject(tool, path, newError(tool, CodeInvalidArguments, "encoding arguments: %v", err))
	}
	_, env, err := ws.call(ctx, callSpec{tool: tool, args: args, output: outputFull, path: path})
	if err != nil {
		return nil, err
	}
	if len(env.Data) > 0 {
		if err := json.Unmarshal(env.Data, out); err != nil {
			return nil, newError(tool, CodeIOError, "malformed %s data from the wsfs library: %v", tool, err)
		}
	}
	return env, nil
}

// reject logs and returns an error found before calling the library.
func (ws *Workspace) reject(tool, path string, e *Error) (*envelope, error) {
	ws.logCall(callSpec{tool: tool, path: path}, e, 0)
	return nil, e
}

// marshalArgs encodes v without escaping <, > and & (smaller, and the exact
// text is what the library sees).
func marshalArgs(v any) (string, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return "", err
	}
	return strings.TrimSuffix(b.String(), "\n"), nil
}
