package main

import (
	"os"
	"strings"
	"testing"
)

// TestREADMEShowsThisProgram: go/README.md's MiniClaw code is this
// program's, which the compiler checks.
func TestREADMEShowsThisProgram(t *testing.T) {
	src, err := os.ReadFile("main.go")
	if err != nil {
		t.Fatal(err)
	}
	_, code, _ := strings.Cut(string(src), "\t// README: begin\n")
	code, _, _ = strings.Cut(code, "\t// README: end\n")
	code = strings.ReplaceAll("\n"+code, "\n\t", "\n")[1:]

	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, block, found := strings.Cut(string(readme), "<!-- example: examples/miniclaw/main.go -->\n```go\n")
	block, _, _ = strings.Cut(block, "```\n")
	if !found || block != code {
		t.Fatalf("go/README.md's MiniClaw example is not examples/miniclaw/main.go's code; it should be:\n%s", code)
	}
}
