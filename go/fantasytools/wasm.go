package fantasytools

import (
	"context"
	"encoding/json"
	"slices"

	"charm.land/fantasy"

	wsfs "github.com/wsfs/wsfs/go"
)

// wasmTools returns ws's Wasm tools as agent tools, chosen by the options
// as the built-in ones are. Their arguments are a JSON object whose shape
// only the manifest knows: fantasy decodes it into a map, and the model's
// raw JSON goes to the library, which validates it against the manifest's
// schema.
func wasmTools(ws *wsfs.Workspace, tc toolConfig) []fantasy.AgentTool {
	names := ws.WasmTools()
	if len(names) == 0 {
		return nil
	}
	specs, err := ws.ToolSpecs()
	if err != nil {
		return nil
	}
	var tools []fantasy.AgentTool
	for _, spec := range specs {
		if slices.Contains(names, spec.Name) && tc.chooses(spec) {
			tools = append(tools, wasmTool(ws, spec, tc))
		}
	}
	return tools
}

func wasmTool(ws *wsfs.Workspace, spec wsfs.ToolSpec, tc toolConfig) fantasy.AgentTool {
	name := spec.Name
	return mapTool(spec, tc, func(ctx context.Context, _ map[string]any, call fantasy.ToolCall) (fantasy.ToolResponse, error) {
		return respond(ctx, ws, tc, wsfs.ModelCall{Tool: name, Args: call.Input, Timeout: tc.timeout, Logger: tc.logger})
	})
}

// mapTool is a tool whose arguments only its spec describes (a Wasm tool's
// manifest, a profile's tool): fantasy decodes them into a map, fn gets the
// model's raw JSON in call.Input, and the tool's Info is the spec's
// description and schema. A read-only one is parallel under
// WithParallelReadOnlyTools.
func mapTool(spec wsfs.ToolSpec, tc toolConfig, fn func(context.Context, map[string]any, fantasy.ToolCall) (fantasy.ToolResponse, error)) fantasy.AgentTool {
	newTool := fantasy.NewAgentTool[map[string]any]
	if tc.parallelReads && spec.ReadOnly() {
		newTool = fantasy.NewParallelAgentTool[map[string]any]
	}
	tool := newTool(spec.Name, spec.Description, fn)
	info := tool.Info()
	var params struct {
		Properties map[string]any `json:"properties"`
		Required   []string       `json:"required"`
	}
	if json.Unmarshal(spec.Parameters, &params) == nil {
		info.Parameters = params.Properties
		if info.Parameters == nil {
			info.Parameters = map[string]any{}
		}
		info.Required = params.Required
		if info.Required == nil {
			info.Required = []string{}
		}
	}
	return &specTool{AgentTool: tool, info: info}
}
