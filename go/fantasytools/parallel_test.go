package fantasytools

import (
	"testing"

	wsfs "github.com/wsfs/wsfs/go"
)

func TestParallelReadOnlyToolsInfo(t *testing.T) {
	ws := openTest(t, wsfs.Config{})
	for _, tool := range Tools(ws) {
		if tool.Info().Parallel {
			t.Errorf("%s is parallel without WithParallelReadOnlyTools", tool.Info().Name)
		}
	}
	var parallel int
	for _, tool := range Tools(ws, WithParallelReadOnlyTools()) {
		spec, _ := specFor(tool.Info().Name)
		if tool.Info().Parallel != spec.ReadOnly() {
			t.Errorf("%s: Parallel %v, readOnlyHint %v", tool.Info().Name, tool.Info().Parallel, spec.ReadOnly())
		}
		if tool.Info().Parallel {
			parallel++
		}
	}
	if parallel == 0 {
		t.Fatal("no tool became parallel")
	}
}
