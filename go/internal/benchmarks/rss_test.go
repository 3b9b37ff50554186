package benchmarks

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
)

// RSSPaths are the paths whose peak RSS growth TestPeakRSS measures.
var RSSPaths = []string{PathFloor, PathBaseline, PathBaselineFantasy, PathTyped, PathFantasy}

// RSSResult is one peak-RSS measurement (one line of WSFS_BENCH_RSS_OUT).
type RSSResult struct {
	Case       string `json:"case"`
	Path       string `json:"path"`
	BeforeKiB  int64  `json:"rss_before_kib"`
	PeakKiB    int64  `json:"hwm_kib"`
	GrowthKiB  int64  `json:"growth_kib"`
	Error      string `json:"error,omitempty"`
	Lang       string `json:"lang"`
	HWMResetOK bool   `json:"hwm_reset_ok"`
}

// procStatus returns VmRSS and VmHWM in KiB.
func procStatus() (rss, hwm int64, err error) {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, 0, err
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 2 {
			continue
		}
		switch f[0] {
		case "VmRSS:":
			rss, _ = strconv.ParseInt(f[1], 10, 64)
		case "VmHWM:":
			hwm, _ = strconv.ParseInt(f[1], 10, 64)
		}
	}
	return rss, hwm, nil
}

// resetPeakRSS resets VmHWM to the current RSS (Linux: clear_refs 5).
func resetPeakRSS() error {
	return os.WriteFile("/proc/self/clear_refs", []byte("5"), 0)
}

// TestPeakRSS spawns one child process per case and path (TestPeakRSSChild)
// and writes their measurements as JSON lines to $WSFS_BENCH_RSS_OUT.
func TestPeakRSS(t *testing.T) {
	out := os.Getenv("WSFS_BENCH_RSS_OUT")
	if out == "" {
		t.Skip("set WSFS_BENCH_RSS_OUT to measure peak RSS growth")
	}
	f := fixture(t)
	w, err := os.Create(out)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	for _, c := range f.Manifest.Cases {
		if c.FS == FSTmpfs || c.Probe {
			continue // the memory of its twin on disk; a probe reads nothing
		}
		for _, p := range RSSPaths {
			cmd := exec.Command(os.Args[0], "-test.run=^TestPeakRSSChild$", "-test.count=1", "-test.v")
			cmd.Env = append(os.Environ(), "WSFS_BENCH_RSS_CHILD="+c.Name+"/"+p, "WSFS_BENCH_DIR="+f.Dir, "WSFS_BENCH_RSS_OUT=")
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			stdout, err := cmd.Output()
			if err != nil {
				t.Fatalf("%s/%s: %v\n%s%s", c.Name, p, err, stdout, stderr.Bytes())
			}
			var line string
			for _, l := range strings.Split(string(stdout), "\n") {
				if rest, ok := strings.CutPrefix(l, "WSFS-RSS "); ok {
					line = rest
				}
			}
			if line == "" {
				t.Fatalf("%s/%s: no measurement in\n%s", c.Name, p, stdout)
			}
			var r RSSResult
			if err := json.Unmarshal([]byte(line), &r); err != nil {
				t.Fatalf("%s/%s: %v", c.Name, p, err)
			}
			if r.Error != "" {
				t.Errorf("%s/%s: %s", c.Name, p, r.Error)
			}
			fmt.Fprintln(w, line)
			t.Logf("%s/%s: +%d KiB", c.Name, p, r.GrowthKiB)
		}
	}
}

// TestPeakRSSChild is the child of TestPeakRSS: it warms the path up with
// the case's small counterpart, then measures one call.
func TestPeakRSSChild(t *testing.T) {
	spec := os.Getenv("WSFS_BENCH_RSS_CHILD")
	if spec == "" {
		t.Skip("run by TestPeakRSS")
	}
	name, path, _ := strings.Cut(spec, "/")
	r := RSSResult{Case: name, Path: path, Lang: "go"}
	defer func() {
		b, _ := json.Marshal(r)
		fmt.Printf("\nWSFS-RSS %s\n", b)
	}()
	f, err := LoadFixture(os.Getenv("WSFS_BENCH_DIR"))
	if err != nil {
		r.Error = err.Error()
		return
	}
	e, err := NewEnv(f)
	if err != nil {
		r.Error = err.Error()
		return
	}
	defer e.Close()
	c, ok := f.Case(name)
	warm, ok2 := f.Case(c.Warm)
	if !ok || !ok2 {
		r.Error = "unknown case " + name
		return
	}
	for _, step := range []Case{warm, c} {
		if err := f.Reset(step, path); err != nil {
			r.Error = err.Error()
			return
		}
	}
	warmRun, err := e.Runner(warm, path)
	if err == nil {
		err = warmRun(0)
	}
	if err == nil {
		err = f.Reset(c, path)
	}
	run, err2 := e.Runner(c, path)
	if err != nil || err2 != nil {
		r.Error = fmt.Sprint(err, err2)
		return
	}
	runtime.GC()
	debug.FreeOSMemory()
	r.HWMResetOK = resetPeakRSS() == nil
	r.BeforeKiB, _, _ = procStatus()
	err = run(0)
	_, r.PeakKiB, _ = procStatus()
	r.GrowthKiB = r.PeakKiB - r.BeforeKiB
	if err != nil {
		r.Error = err.Error()
	}
	if !r.HWMResetOK {
		r.Error = "cannot reset VmHWM (/proc/self/clear_refs)"
	}
}
