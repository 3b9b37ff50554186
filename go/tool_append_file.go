package wsfs

import "context"

// ToolAppendFile appends to a file.
const ToolAppendFile = "append_file"

// AppendFileInput is the argument of append_file.
type AppendFileInput struct {
	Path    string `json:"path" description:"File to append to, e.g. 'log.txt'."`
	Content string `json:"content" description:"Text to add at the end of the file."`
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

// appendFileKeys are the keys encoding/json decodes into a AppendFileResult.
var appendFileKeys = jsonKeys[AppendFileResult]()

func (r *AppendFileResult) decodeData(d *decoder) {
	d.fields(func(key string) {
		switch key {
		case "path":
			r.Path = d.str()
		case "bytes_appended":
			r.BytesAppended = d.int()
		case "size":
			r.Size = d.int()
		default:
			d.other(key, appendFileKeys)
		}
	})
}
