package fantasytools

import (
	"context"
	"encoding/json"
	"slices"

	"charm.land/fantasy"

	wsfs "github.com/wsfs/wsfs/go"
)

// specFor returns the library's spec of the tool named name.
func specFor(name string) (wsfs.ToolSpec, bool) {
	specs, err := wsfs.ToolSpecs()
	if err == nil {
		for _, s := range specs {
			if s.Name == name {
				return s, true
			}
		}
	}
	return wsfs.ToolSpec{}, false
}

// specTool is a tool made by fantasy.NewAgentTool (which decodes the
// model's arguments into the Go input struct) whose Info is the library's
// spec: its description and parameter schema, exactly as the library
// states them. TestToolSchemasMatchLibrary checks that the schema
// fantasy derives from each input struct agrees with it.
type specTool struct {
	fantasy.AgentTool
	info fantasy.ToolInfo
}

func (t *specTool) Info() fantasy.ToolInfo {
	info := t.info
	// Callers may modify what they get; the schema maps stay ours.
	info.Parameters = cloneJSON(info.Parameters).(map[string]any)
	info.Required = slices.Clone(info.Required)
	return info
}

// cloneJSON deep-copies a value decoded by encoding/json.
func cloneJSON(v any) any {
	switch v := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(v))
		for k, x := range v {
			m[k] = cloneJSON(x)
		}
		return m
	case []any:
		s := make([]any, len(v))
		for i, x := range v {
			s[i] = cloneJSON(x)
		}
		return s
	}
	return v
}

// withSpec builds the tool with fantasy.NewAgentTool and gives it the
// library's description and schema from wsfs_tool_specs(). Without usable
// specs the schema fantasy derives from the input struct stays.
// With parallel, a tool whose spec has readOnlyHint is made with
// fantasy.NewParallelAgentTool (fantasy may run it concurrently with the
// step's other parallel tools); every other tool stays sequential.
func withSpec[T any](name string, parallel bool, fn func(context.Context, T, fantasy.ToolCall) (fantasy.ToolResponse, error)) fantasy.AgentTool {
	spec, ok := specFor(name)
	if !ok {
		return fantasy.NewAgentTool(name, "wsfs tool "+name+" (tool specs unavailable)", fn)
	}
	newTool := fantasy.NewAgentTool[T]
	if parallel && spec.ReadOnly() {
		newTool = fantasy.NewParallelAgentTool[T]
	}
	tool := newTool(name, spec.Description, fn)
	info := tool.Info()
	var params struct {
		Properties map[string]any `json:"properties"`
		Required   []string       `json:"required"`
	}
	if json.Unmarshal(spec.Parameters, &params) == nil && params.Properties != nil {
		info.Parameters = params.Properties
		info.Required = params.Required
		if info.Required == nil {
			info.Required = []string{}
		}
	}
	return &specTool{AgentTool: tool, info: info}
}
