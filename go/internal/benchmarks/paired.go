package benchmarks

import (
	"fmt"
	"os"
	"runtime"
	"slices"
	"strings"
	"time"
)

// Paired measurement. On a shared machine the speed of every path drifts
// with the load from one second to the next, so medians measured one path
// after another compare different moments. Here the two sides of a
// comparison are called back to back, one call each, alternating which goes
// first, and each such pair gives one ratio: the load changes little within
// a pair, and the median of many per-pair ratios (with its spread) is what
// docs/PERFORMANCE.md reports. A round makes one pair of every comparison
// of a case (and one call of each path measured alone), in a rotating
// order, so no path always follows the same one.

// Comparison is a pair of paths compared by per-pair ratios: A / B.
type Comparison struct{ A, B string }

// Name is "A/B".
func (c Comparison) Name() string { return c.A + "/" + c.B }

// Comparisons of every case: the typed API and the fantasy tools against
// the baseline, and the baseline against itself (the A/A control, which
// shows what ratio the noise alone gives).
var Comparisons = []Comparison{
	{PathTyped, PathBaseline},
	{PathFantasy, PathBaselineFantasy},
	{PathBaselineAA, PathBaseline},
}

// ContextComparisons measure what a cancellable context costs: on read_4k,
// and alone on the probe case (Case.Probe).
var ContextComparisons = []Comparison{
	{PathTyped, PathTypedBackground},
	{PathFantasy, PathFantasyBackground},
}

// OpenFirstComparisons are measured on OpenFirstCases only, for reference:
// the typed API against a Baseline whose read_file opens the path before
// looking at it (OpenBaselineOpenFirst): fewer system calls than the
// contract allows, which has special files refused unopened.
var OpenFirstComparisons = []Comparison{{PathTyped, PathBaselineOpenFirst}}

// OpenFirstCases are the whole-file reads the open-first variant is measured
// on: a 4 KiB file, where the system calls it saves weigh most, and 256 KiB
// of a 1 MiB file.
var OpenFirstCases = []string{"read_4k", "read_1m_capped"}

// Singles are measured in every round too, alone: the floor and the cgo
// layers.
var Singles = []string{PathFloor, PathCgoTyped, PathCgoFantasy}

// PairedResult is one case's measurement (one line of WSFS_BENCH_PAIRED_OUT).
type PairedResult struct {
	Case   string `json:"case"`
	Rep    int    `json:"rep"`
	Rounds int    `json:"rounds"`
	// Pairs are the per-pair times (ns) of each comparison: [A, B] per round.
	Pairs map[string][][2]int64 `json:"pairs"`
	// Singles are the per-round times (ns) of the paths measured alone.
	Singles map[string][]int64 `json:"singles"`
	// FsyncNs is the time the floor spent in fsync/fdatasync, per call.
	FsyncNs []int64 `json:"fsync_ns,omitempty"`
	// Mem is heap allocated per call by each Go path: bytes and count.
	Mem map[string][2]float64 `json:"mem"`
	// Load is /proc/loadavg's 1-minute load when the case started.
	Load    string  `json:"load"`
	Seconds float64 `json:"seconds"`
}

// PairedOptions bound a case's measurement.
type PairedOptions struct {
	Budget    time.Duration // time to spend on rounds (after the warm-up)
	MinRounds int           // rounds made even past the budget
	MaxRounds int
	Rep       int
}

// unit is one step of a round: a pair (B != "") or a single path.
type unit struct{ a, b string }

// Paired measures case c: rounds of every comparison (and ContextComparisons
// for read_4k, OpenFirstComparisons for OpenFirstCases) and every single
// path, until the budget is spent.
func (e *Env) Paired(c Case, o PairedOptions) (*PairedResult, error) {
	comps, singles := Comparisons, Singles
	if c.Probe {
		comps, singles = ContextComparisons, nil
	}
	if c.Name == "read_4k" {
		comps = append(append([]Comparison(nil), comps...), ContextComparisons...)
	}
	if slices.Contains(OpenFirstCases, c.Name) {
		comps = append(append([]Comparison(nil), comps...), OpenFirstComparisons...)
	}
	var units []unit
	for _, cmp := range comps {
		units = append(units, unit{cmp.A, cmp.B})
	}
	for _, s := range singles {
		units = append(units, unit{a: s})
	}
	runs := map[string]func() (time.Duration, error){}
	for _, u := range units {
		for _, p := range []string{u.a, u.b} {
			if p == "" || runs[p] != nil {
				continue
			}
			if err := e.Fx.Reset(c, p); err != nil {
				return nil, err
			}
			run, err := e.Runner(c, p)
			if err != nil {
				return nil, err
			}
			calls := 0
			runs[p] = func() (time.Duration, error) {
				t := time.Now()
				err := run(calls)
				d := time.Since(t)
				calls++
				return d, err
			}
		}
	}
	m, err := e.on(c)
	if err != nil {
		return nil, err
	}
	res := &PairedResult{Case: c.Name, Rep: o.Rep, Pairs: map[string][][2]int64{},
		Singles: map[string][]int64{}, Mem: map[string][2]float64{}, Load: loadAvg()}
	start := time.Now()
	// Warm-up rounds (not recorded): one, plus one more if a round is quick.
	warm := 1
	for r := 0; ; r++ {
		roundStart := time.Now()
		recorded := r >= warm
		for k := range units {
			u := units[(k+r)%len(units)]
			if u.b == "" {
				d, err := runs[u.a]()
				if err != nil {
					return nil, fmt.Errorf("%s/%s: %w", c.Name, u.a, err)
				}
				if recorded {
					res.Singles[u.a] = append(res.Singles[u.a], int64(d))
					if u.a == PathFloor && isWrite(c) {
						res.FsyncNs = append(res.FsyncNs, int64(m.Floor.LastFsync()))
					}
				}
				continue
			}
			first, second := u.a, u.b
			if r%2 == 1 {
				first, second = second, first
			}
			d1, err := runs[first]()
			if err != nil {
				return nil, fmt.Errorf("%s/%s: %w", c.Name, first, err)
			}
			d2, err := runs[second]()
			if err != nil {
				return nil, fmt.Errorf("%s/%s: %w", c.Name, second, err)
			}
			if r%2 == 1 {
				d1, d2 = d2, d1
			}
			if recorded {
				name := Comparison{u.a, u.b}.Name()
				res.Pairs[name] = append(res.Pairs[name], [2]int64{int64(d1), int64(d2)})
			}
		}
		if r == 0 && time.Since(roundStart) < 20*time.Millisecond {
			warm = 2
		}
		if recorded {
			res.Rounds++
		}
		spent := time.Since(start)
		if res.Rounds >= o.MaxRounds || (res.Rounds >= o.MinRounds && spent >= o.Budget) {
			break
		}
	}
	res.Seconds = time.Since(start).Seconds()
	for p, run := range runs {
		if p == PathFloor || o.Rep > 1 { // allocations do not vary: the first run has them
			continue
		}
		bytes, allocs, err := allocsPerCall(run)
		if err != nil {
			return nil, fmt.Errorf("%s/%s: %w", c.Name, p, err)
		}
		res.Mem[p] = [2]float64{bytes, allocs}
	}
	return res, nil
}

func isWrite(c Case) bool {
	return c.Tool == "write_file" || c.Tool == "append_file" || c.Tool == "edit_file"
}

// allocsPerCall is the Go heap allocated by one call of run (averaged over
// a few calls), outside the timed rounds.
func allocsPerCall(run func() (time.Duration, error)) (bytes, allocs float64, err error) {
	calls := 4
	if d, err := run(); err != nil {
		return 0, 0, err
	} else if d > 20*time.Millisecond {
		calls = 1
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range calls {
		if _, err := run(); err != nil {
			return 0, 0, err
		}
	}
	runtime.ReadMemStats(&after)
	n := float64(calls)
	return float64(after.TotalAlloc-before.TotalAlloc) / n, float64(after.Mallocs-before.Mallocs) / n, nil
}

// loadAvg is /proc/loadavg's three load averages ("?" if unreadable).
func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}
