package wsfs

import (
	"context"

	jsonv2 "github.com/go-json-experiment/json"
)

// ToolReply is what every tool result carries besides its data: the library's
// Text (exactly what a model sees, the agent tools' response) and Warnings.
// Results of the tools added after the first five embed it.
type ToolReply struct {
	Text     string   `json:"-"`
	Warnings []string `json:"-"`
}

func (r *ToolReply) setReply(text string, warnings []string) { r.Text, r.Warnings = text, warnings }

// replier is a pointer to a result that embeds ToolReply.
type replier interface {
	setReply(text string, warnings []string)
}

// callTyped runs tool with in (JSON-encoded; optional fields are omitted
// when zero, so the library applies its defaults) and decodes the
// envelope's data into a new R. path is for the log record only.
func callTyped[R any, PR interface {
	*R
	replier
}](ctx context.Context, ws *Workspace, tool string, in any, path string) (R, error) {
	var r R
	args, err := jsonv2.Marshal(in)
	if err != nil {
		return r, ws.reject(tool, path, newError(tool, CodeInvalidArguments, "encoding the arguments: %v", err))
	}
	var data rawData
	env, err := ws.typedCall(ctx, callSpec{tool: tool, args: string(args), output: outputFull, data: &data, path: path})
	if err != nil {
		return r, err
	}
	if err := decodeResult(string(data), &r); err != nil {
		return r, newError(tool, CodeIOError, "malformed %s result from the wsfs library: %v", tool, err)
	}
	PR(&r).setReply(env.Text, env.Warnings)
	return r, nil
}

// decodeResult decodes a data object into a result. Unknown fields are
// skipped, so a newer library's additions do not break an older package.
func decodeResult(data string, into any) error {
	if data == "" || data == "null" {
		return nil
	}
	return jsonv2.Unmarshal([]byte(data), into, jsonv2.RejectUnknownMembers(false))
}

// The tools' input structs (in tool_<name>.go) are both the arguments of
// the typed methods and the argument schemas of the agent tools: fantasy
// generates the JSON schema from the json tags (omitempty marks optional
// properties) and description tags, and fantasytools.Tools then takes the
// descriptions from wsfs_tool_specs() so the model sees exactly the
// library's wording. Paths are relative to the workspace root; absolute
// paths and paths through symlinks are accepted only if they stay inside
// it.

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
