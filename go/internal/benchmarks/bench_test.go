package benchmarks

import (
	"context"
	"fmt"
	"os"
	"sync"
	"testing"
)

var (
	fxOnce  sync.Once
	fx      *Fixture
	fxErr   error
	fxTemp  string // removed by TestMain when we created it
	fxTmpfs string // likewise, on tmpfs

	envOnce sync.Once
	env     *Env
	envErr  error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if env != nil {
		env.Close()
	}
	for _, d := range []string{fxTemp, fxTmpfs} {
		if d != "" {
			os.RemoveAll(d)
		}
	}
	os.Exit(code)
}

// fixture returns the fixture in $WSFS_BENCH_DIR (built there if missing,
// full scale if WSFS_BENCH_FULL=1), or a small one in a temporary directory.
// A temporary fixture has tmpfs cases if WSFS_BENCH_TMPFS names a directory
// on tmpfs (such as /dev/shm).
func fixture(tb testing.TB) *Fixture {
	tb.Helper()
	fxOnce.Do(func() {
		dir := os.Getenv("WSFS_BENCH_DIR")
		tmpfs := ""
		if dir == "" {
			if dir, fxErr = os.MkdirTemp("", "wsfs-bench-"); fxErr != nil {
				return
			}
			fxTemp = dir
			if t := os.Getenv("WSFS_BENCH_TMPFS"); t != "" {
				if tmpfs, fxErr = os.MkdirTemp(t, "wsfs-bench-"); fxErr != nil {
					return
				}
				fxTmpfs = tmpfs
			}
		}
		fx, fxErr = BuildFixture(dir, os.Getenv("WSFS_BENCH_FULL") == "1", tmpfs, os.Stderr)
	})
	if fxErr != nil {
		tb.Fatalf("fixture: %v", fxErr)
	}
	return fx
}

func benchEnv(tb testing.TB) *Env {
	tb.Helper()
	f := fixture(tb)
	envOnce.Do(func() { env, envErr = NewEnv(f) })
	if envErr != nil {
		tb.Fatalf("env: %v", envErr)
	}
	return env
}

// BenchmarkTools runs every case through every path:
// BenchmarkTools/<case>/<path>. Each timed run starts from the case's initial
// file state, and every call's outcome is checked.
func BenchmarkTools(b *testing.B) {
	e := benchEnv(b)
	for _, c := range e.Fx.Manifest.Cases {
		b.Run(c.Name, func(b *testing.B) {
			for _, p := range GoPaths {
				if c.Probe && p == PathFloor {
					continue // a probe is a refused call: it has no system calls to floor
				}
				b.Run(p, func(b *testing.B) {
					run, err := e.Runner(c, p)
					if err != nil {
						b.Fatal(err)
					}
					if err := e.Fx.Reset(c, p); err != nil {
						b.Fatal(err)
					}
					b.ReportAllocs()
					b.ResetTimer()
					for i := range b.N {
						if err := run(i); err != nil {
							b.Fatal(fmt.Errorf("call %d: %w", i, err))
						}
					}
				})
			}
		})
	}
}

// BenchmarkContext measures what a cancellable context costs the typed API
// and the fantasy tools (a cancel token per call, created, watched with
// context.AfterFunc and freed) against context.Background(), on read_4k.
func BenchmarkContext(b *testing.B) {
	e := benchEnv(b)
	c, ok := e.Fx.Case("read_4k")
	if !ok {
		b.Fatal("no read_4k case")
	}
	ctxs := []struct {
		name string
		ctx  context.Context
	}{{"background", context.Background()}, {"cancellable", e.Ctx}}
	for _, p := range []string{PathTyped, PathFantasy} {
		for _, cx := range ctxs {
			b.Run(c.Name+"/"+p+"_"+cx.name, func(b *testing.B) {
				run, err := e.RunnerCtx(cx.ctx, c, p)
				if err != nil {
					b.Fatal(err)
				}
				b.ReportAllocs()
				b.ResetTimer()
				for i := range b.N {
					if err := run(i); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
