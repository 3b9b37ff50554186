package agent

import (
	"os"
	"strings"
	"testing"
)

// TestREADMEShowsTheMiniClawProgram: go/README.md's MiniClaw code is
// examples/miniclaw's, which the compiler checks. (The test is here, not
// beside the program, to spare the module a test binary.)
func TestREADMEShowsTheMiniClawProgram(t *testing.T) {
	src, err := os.ReadFile("../examples/miniclaw/main.go")
	if err != nil {
		t.Fatal(err)
	}
	_, code, _ := strings.Cut(string(src), "\t// README: begin\n")
	code, _, _ = strings.Cut(code, "\t// README: end\n")
	code = strings.ReplaceAll("\n"+code, "\n\t", "\n")[1:]

	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, block, found := strings.Cut(string(readme), "<!-- example: examples/miniclaw/main.go -->\n```go\n")
	block, _, _ = strings.Cut(block, "```\n")
	if !found || block != code {
		t.Fatalf("go/README.md's MiniClaw example is not examples/miniclaw/main.go's code; it should be:\n%s", code)
	}
}
