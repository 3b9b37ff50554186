package fantasytools

import (
	"slices"
	"testing"

	wsfs "github.com/wsfs/wsfs/go"
)

// TestEveryToolIsAdapted: the adapter table has one entry per tool of the
// typed package, no more (the entries' input types are checked against the
// library's schemas by TestToolSchemasMatchLibrary).
func TestEveryToolIsAdapted(t *testing.T) {
	for _, name := range wsfs.ToolNames {
		if a, ok := adapters[name]; !ok || a.build == nil {
			t.Errorf("%s has no fantasy adapter in adapters.go", name)
		}
	}
	for name := range adapters {
		if !slices.Contains(wsfs.ToolNames, name) {
			t.Errorf("adapters.go adapts %s, which wsfs.ToolNames does not list", name)
		}
	}
}
