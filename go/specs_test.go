package wsfs

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// TestToolNamesAreTheLibrarys: ToolNames is every tool the library lists,
// in its order, and each has a typed method here.
func TestToolNamesAreTheLibrarys(t *testing.T) {
	specs, err := ToolSpecs()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range specs {
		names = append(names, s.Name)
	}
	if !slices.Equal(ToolNames, names) {
		t.Fatalf("ToolNames = %v, the library's tools are %v", ToolNames, names)
	}
}

func TestToolSpecs(t *testing.T) {
	specs, err := ToolSpecs()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range specs {
		names = append(names, s.Name)
		if s.Description == "" || len(s.Parameters) == 0 {
			t.Errorf("spec %s is incomplete", s.Name)
		}
	}
	if !reflect.DeepEqual(names, ToolNames) {
		t.Fatalf("spec names = %v, want %v", names, ToolNames)
	}
	var again []ToolSpec
	if err := json.Unmarshal([]byte(ToolSpecsJSON()), &again); err != nil || len(again) != len(specs) {
		t.Fatalf("ToolSpecsJSON: %v", err)
	}
}

// TestToolInstructionsSayThePathsRuleOnce: issue 19 item 10. The specs keep
// one clause; the rest is ToolInstructions, which the MCP server sends.
func TestToolInstructionsSayThePathsRuleOnce(t *testing.T) {
	rule := ToolInstructions()
	if !strings.Contains(rule, "'..' above the root and symlinks leading outside the workspace are refused") {
		t.Fatalf("ToolInstructions() = %q", rule)
	}
	if strings.Contains(ToolSpecsJSON(), "above the root and symlinks") {
		t.Fatal("the specs repeat the paths rule")
	}
}
