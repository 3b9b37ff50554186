package wsfs

import (
	"slices"
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
