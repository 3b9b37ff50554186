package fantasytools

import (
	"context"
	"slices"
	"strconv"
	"strings"

	"charm.land/fantasy"

	wsfs "github.com/wsfs/wsfs/go"
)

// profileTools returns the tools of a workspace opened with a profile
// (wsfs.Config.Profile other than "wsfs"): the profile's own tool set, as
// the workspace offers it (ws.ToolSpecs(): the profile's names, schemas and
// descriptions), chosen by the options as the native tools are. Each call
// goes to the library with the model's arguments as sent (CallRaw), and the
// result is the profile's envelope as the library made it: a text response
// for a success, an error response for a failure ({"ok": false} or
// {"success": false}), which the model can react to.
func profileTools(ws *wsfs.Workspace, tc toolConfig) []fantasy.AgentTool {
	specs, err := ws.ToolSpecs()
	if err != nil {
		return nil
	}
	var offered []string
	for _, spec := range specs {
		offered = append(offered, spec.Name)
	}
	for _, n := range tc.names {
		if !slices.Contains(offered, n) {
			panic("fantasytools.Tools: the " + strconv.Quote(ws.Profile()) + " profile has no tool named " + strconv.Quote(n) + "; its tools are " + strings.Join(offered, ", "))
		}
	}
	var tools []fantasy.AgentTool
	for _, spec := range specs {
		if tc.chooses(spec) {
			tools = append(tools, profileTool(ws, spec, tc))
		}
	}
	return tools
}

func profileTool(ws *wsfs.Workspace, spec wsfs.ToolSpec, tc toolConfig) fantasy.AgentTool {
	name := spec.Name
	return mapTool(spec, tc, func(ctx context.Context, _ map[string]any, call fantasy.ToolCall) (fantasy.ToolResponse, error) {
		if tc.timeout > 0 {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, tc.timeout)
			defer cancel()
		}
		var metrics wsfs.Metrics
		rc := wsfs.RawCall{Tool: name, Args: call.Input, Logger: tc.logger}
		if tc.metrics {
			rc.Metrics = &metrics
		}
		raw, err := ws.CallRawWith(ctx, rc)
		if err != nil {
			// Detected in Go (a NUL byte, a closed workspace, the run's context
			// ended): fatal as for the native tools, else the model's to fix.
			return fantasy.NewTextErrorResponse(raw), fatal(ctx, err)
		}
		resp := fantasy.NewTextResponse(raw)
		if failed, code := wsfs.EnvelopeFailed(raw); failed {
			if code == wsfs.CodeInvalidWorkspace {
				// The workspace was closed under the run: stop it.
				return fantasy.NewTextErrorResponse(raw), &wsfs.Error{Tool: name, Code: wsfs.CodeInvalidWorkspace,
					Message: "the workspace is closed"}
			}
			resp = fantasy.NewTextErrorResponse(raw)
		}
		withMetadata(&resp, metrics)
		return resp, nil
	})
}
