// Package benchmarks holds the Go benchmarks of wsfs and the pure-Go
// baseline they are compared with. bench/run.sh runs them (together with the
// Rust bench, benches/layers.rs) and regenerates docs/PERFORMANCE.md.
//
// Every tool is measured through these paths, in the same run and on the same
// fixture files:
//
//   - fantasy: fantasytools.Tools(ws), then tool.Run(ctx, fantasy.ToolCall{Input: json});
//   - typed: the typed Go API (ws.ReadFile(ctx, wsfs.ReadFileInput{...}) ...);
//   - cgo_typed / cgo_fantasy: the library called straight through cgo the
//     way the typed API and the fantasy tools call it (same output mode and
//     content buffer; see CallMode), without the Go package's own work;
//   - baseline: Baseline, a pure-Go implementation of the same contract on
//     os.Root;
//   - baseline_fantasy: the Baseline wrapped with fantasy.NewAgentTool;
//   - floor: Floor, the system calls alone.
//
// The paired measurement (TestPaired, paired.go) also compares the typed API
// with baseline_open_first on the whole-file reads: a Baseline whose
// read_file opens before looking at the leaf (OpenBaselineOpenFirst), which
// does not keep the special-file contract; a reference, not a target.
//
// Run them by hand (after make build) with
//
//	cd go && go test -run '^$' -bench . -benchmem ./internal/benchmarks
//
// which builds a small fixture in a temporary directory (WSFS_BENCH_FULL=1
// adds the 100k- and 1M-entry directories). WSFS_BENCH_DIR points at a
// fixture built by cmd/wsfs-bench-fixtures instead, as bench/run.sh does.
// WSFS_BENCH_RSS_OUT makes TestPeakRSS measure the peak RSS growth of one
// call per case and path, each in a fresh child process.
package benchmarks
