package benchmarks

import (
	"context"
	"errors"

	"charm.land/fantasy"
	wsfs "github.com/wsfs/wsfs/go"
)

// BaselineTools wraps the Baseline as fantasy agent tools built with
// fantasy.NewAgentTool, the way a Go program without wsfs would offer these
// tools to a model: fantasy decodes the JSON arguments into the input struct,
// the tool runs, and the response text is what wsfs's tools return (the
// rendered Text on success, "<code>: <message>" as an error response on a
// recoverable failure).
func BaselineTools(b *Baseline) []fantasy.AgentTool {
	return []fantasy.AgentTool{
		fantasy.NewAgentTool(wsfs.ToolReadFile, "Read a UTF-8 text file in the workspace.",
			func(ctx context.Context, in wsfs.ReadFileInput, _ fantasy.ToolCall) (fantasy.ToolResponse, error) {
				r, err := b.ReadFile(ctx, in)
				return respond(r.Text, err)
			}),
		fantasy.NewAgentTool(wsfs.ToolWriteFile, "Create or overwrite a text file in the workspace.",
			func(ctx context.Context, in wsfs.WriteFileInput, _ fantasy.ToolCall) (fantasy.ToolResponse, error) {
				r, err := b.WriteFile(ctx, in)
				return respond(r.Text, err)
			}),
		fantasy.NewAgentTool(wsfs.ToolAppendFile, "Append text to a file in the workspace, creating it if missing.",
			func(ctx context.Context, in wsfs.AppendFileInput, _ fantasy.ToolCall) (fantasy.ToolResponse, error) {
				r, err := b.AppendFile(ctx, in)
				return respond(r.Text, err)
			}),
		fantasy.NewAgentTool(wsfs.ToolListDir, "List one directory in the workspace.",
			func(ctx context.Context, in wsfs.ListDirInput, _ fantasy.ToolCall) (fantasy.ToolResponse, error) {
				r, err := b.ListDir(ctx, in)
				return respond(r.Text, err)
			}),
		fantasy.NewAgentTool(wsfs.ToolEditFile, "Replace exact text in a file in the workspace.",
			func(ctx context.Context, in wsfs.EditFileInput, _ fantasy.ToolCall) (fantasy.ToolResponse, error) {
				r, err := b.EditFile(ctx, in)
				return respond(r.Text, err)
			}),
	}
}

func respond(text string, err error) (fantasy.ToolResponse, error) {
	if err == nil {
		return fantasy.NewTextResponse(text), nil
	}
	var e *wsfs.Error
	if errors.As(err, &e) {
		if e.Code == wsfs.CodeCancelled || e.Code == wsfs.CodeTimeout {
			return fantasy.NewTextErrorResponse(e.Text()), err
		}
		return fantasy.NewTextErrorResponse(e.Text()), nil
	}
	return fantasy.NewTextErrorResponse(err.Error()), err
}
