// Command wsfs-bench-fixtures builds the benchmark fixture (workspace,
// templates and manifest.json) shared by the Go benchmarks and the Rust
// bench. Used by bench/run.sh.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/wsfs/wsfs/go/internal/benchmarks"
)

func main() {
	dir := flag.String("dir", "", "fixture directory (created if missing)")
	full := flag.Bool("full", false, "full scale (adds the 1M-entry directory)")
	tmpfs := flag.String("tmpfs", "", "a directory on tmpfs for the tmpfs cases (left out if empty)")
	flag.Parse()
	if *dir == "" {
		fmt.Fprintln(os.Stderr, "usage: wsfs-bench-fixtures -dir DIR [-full] [-tmpfs DIR]")
		os.Exit(2)
	}
	if _, err := benchmarks.BuildFixture(*dir, *full, *tmpfs, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "wsfs-bench-fixtures:", err)
		os.Exit(1)
	}
}
