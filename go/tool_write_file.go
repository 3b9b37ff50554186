package wsfs

import (
	"context"
	"unicode/utf8"
	"unsafe"
)

// ToolWriteFile creates or replaces a file, atomically.
const ToolWriteFile = "write_file"

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

// WriteFileResult is the result of WriteFile.
type WriteFileResult struct {
	Path         string `json:"path"`
	BytesWritten int64  `json:"bytes_written"`
	// Created is false when an existing file was replaced (or appended to).
	Created bool `json:"created"`
	// ExistedBefore is true when the name held a file when the call changed
	// it (always !Created).
	ExistedBefore bool `json:"existed_before"`
	// Mode is the mode used (WriteOverwrite, WriteCreate or WriteAppend).
	Mode     string   `json:"mode"`
	Text     string   `json:"-"`
	Warnings []string `json:"-"`
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

// writeFileKeys are the keys encoding/json decodes into a WriteFileResult.
var writeFileKeys = jsonKeys[WriteFileResult]()

func (r *WriteFileResult) decodeData(d *decoder) {
	d.fields(func(key string) {
		switch key {
		case "path":
			r.Path = d.str()
		case "bytes_written":
			r.BytesWritten = d.int()
		case "created":
			r.Created = d.bool()
		case "existed_before":
			r.ExistedBefore = d.bool()
		case "mode":
			r.Mode = d.str()
		default:
			d.other(key, writeFileKeys)
		}
	})
}
