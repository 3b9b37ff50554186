package mcpserver

import (
	"os/exec"
	"strings"
	"testing"
)

// TestServerDoesNotDependOnFantasy: an MCP host needs no agent framework,
// so the server builds without charm.land/fantasy.
func TestServerDoesNotDependOnFantasy(t *testing.T) {
	gocmd, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on PATH to list the package's dependencies")
	}
	out, err := exec.Command(gocmd, "list", "-deps", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps: %v\n%s", err, out)
	}
	for dep := range strings.FieldsSeq(string(out)) {
		if strings.HasPrefix(dep, "charm.land/fantasy") {
			t.Errorf("the MCP server depends on %s", dep)
		}
	}
}
