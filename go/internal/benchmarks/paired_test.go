package benchmarks

import (
	"encoding/json"
	"os"
	"regexp"
	"strconv"
	"testing"
	"time"
)

// TestPaired runs the paired measurement of every case (see paired.go) and
// writes one JSON line per case to $WSFS_BENCH_PAIRED_OUT (appended).
// WSFS_BENCH_PAIRED_MS is the time budget of a case (default 1500),
// WSFS_BENCH_PAIRED_REP the repetition number recorded, WSFS_BENCH_CASES a
// regular expression choosing cases, and WSFS_BENCH_SHORT=1 makes one round
// of each case (bench/run.sh --short: nothing is timed meaningfully).
func TestPaired(t *testing.T) {
	out := os.Getenv("WSFS_BENCH_PAIRED_OUT")
	if out == "" {
		t.Skip("set WSFS_BENCH_PAIRED_OUT to run the paired measurement")
	}
	o := PairedOptions{Budget: 1500 * time.Millisecond, MinRounds: 5, MaxRounds: 20000}
	if ms, err := strconv.Atoi(os.Getenv("WSFS_BENCH_PAIRED_MS")); err == nil {
		o.Budget = time.Duration(ms) * time.Millisecond
	}
	o.Rep, _ = strconv.Atoi(os.Getenv("WSFS_BENCH_PAIRED_REP"))
	if os.Getenv("WSFS_BENCH_SHORT") == "1" {
		o = PairedOptions{MinRounds: 1, MaxRounds: 1}
	}
	filter := regexp.MustCompile(os.Getenv("WSFS_BENCH_CASES"))
	e := benchEnv(t)
	w, err := os.OpenFile(out, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	for _, c := range e.Fx.Manifest.Cases {
		if !filter.MatchString(c.Name) {
			continue
		}
		res, err := e.Paired(c, o)
		if err != nil {
			t.Fatal(err)
		}
		line, err := json.Marshal(res)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write(append(line, '\n')); err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: %d rounds in %.1fs (load %s)", c.Name, res.Rounds, res.Seconds, res.Load)
	}
}
