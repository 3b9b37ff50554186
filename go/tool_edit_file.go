package wsfs

import (
	"context"
	"unicode/utf8"
	"unsafe"
)

// ToolEditFile replaces exact text in a file.
const ToolEditFile = "edit_file"

// EditFileInput is the argument of edit_file.
type EditFileInput struct {
	Path       string `json:"path" description:"File to edit."`
	OldText    string `json:"old_text" description:"The exact text to find; must not be empty."`
	NewText    string `json:"new_text" description:"The text to put in its place (may be empty to delete)."`
	ReplaceAll bool   `json:"replace_all,omitempty" description:"Replace every occurrence instead of requiring exactly one. Default false."`
}

// EditFileResult is the result of EditFile.
type EditFileResult struct {
	Path string `json:"path"`
	// Matches is how often OldText occurred; Replaced how many were
	// replaced.
	Matches  int `json:"matches"`
	Replaced int `json:"replaced"`
	// OriginalSize and NewSize are the file's size in bytes before and
	// after; LinesChanged the lines of the original the replaced text
	// touched; FirstChangedLine..LastChangedLine the lines of the new file
	// from the first replacement to the last (1-based, inclusive).
	OriginalSize     int64    `json:"original_size"`
	NewSize          int64    `json:"new_size"`
	LinesChanged     int      `json:"lines_changed"`
	FirstChangedLine int      `json:"first_changed_line"`
	LastChangedLine  int      `json:"last_changed_line"`
	Text             string   `json:"-"`
	Warnings         []string `json:"-"`
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

// editFileKeys are the keys encoding/json decodes into a EditFileResult.
var editFileKeys = jsonKeys[EditFileResult]()

func (r *EditFileResult) decodeData(d *decoder) {
	d.fields(func(key string) {
		switch key {
		case "path":
			r.Path = d.str()
		case "matches":
			r.Matches = int(d.int())
		case "replaced":
			r.Replaced = int(d.int())
		case "original_size":
			r.OriginalSize = d.int()
		case "new_size":
			r.NewSize = d.int()
		case "lines_changed":
			r.LinesChanged = int(d.int())
		case "first_changed_line":
			r.FirstChangedLine = int(d.int())
		case "last_changed_line":
			r.LastChangedLine = int(d.int())
		default:
			d.other(key, editFileKeys)
		}
	})
}
