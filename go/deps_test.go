package wsfs

import (
	"os/exec"
	"strings"
	"testing"
)

// typedDeps are the only packages outside the standard library that the
// typed package may depend on, with the packages under them: a program that
// uses only the typed API (or the MCP server) builds without fantasy or
// anything else it does not use.
var typedDeps = []string{
	"github.com/go-json-experiment/json", // decoding the results of most tools
	"github.com/wsfs/wsfs/go/internal",   // the test call hook
}

// TestTypedPackageDependsOnNoFramework runs `go list -deps` on this package:
// it must not reach charm.land/fantasy (the agent tools are package
// fantasytools) nor any module outside typedDeps.
func TestTypedPackageDependsOnNoFramework(t *testing.T) {
	gocmd, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on PATH to list the package's dependencies")
	}
	out, err := exec.Command(gocmd, "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps: %v\n%s", err, out)
	}
	for dep := range strings.FieldsSeq(string(out)) {
		if strings.HasPrefix(dep, "charm.land/fantasy") {
			t.Errorf("the typed package depends on %s", dep)
			continue
		}
		allowed := dep == "github.com/wsfs/wsfs/go" // this package
		for _, ok := range typedDeps {
			allowed = allowed || dep == ok || strings.HasPrefix(dep, ok+"/")
		}
		if !allowed {
			t.Errorf("the typed package depends on %s, which is not one of %v", dep, typedDeps)
		}
	}
}
