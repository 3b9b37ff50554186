package wsfs

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	jsonv2 "github.com/go-json-experiment/json"
)

// The envelope decoders compared (issue 8): this package's reader, and for
// reference encoding/json and go-json-experiment v2's Unmarshal into the
// same result types. Run by bench/run.sh (TestDecodeBench with
// WSFS_DECODE_OUT) and by hand (BenchmarkDecode).

// decodeCase is one library envelope and a fresh result to decode it into.
type decodeCase struct {
	name, raw, output string
	data              func() any
}

// decodeCases makes the envelopes in a new workspace: a 50-entry list_dir
// ("full" output), a 4 KiB read ("data_raw": the JSON head) and a write.
func decodeCases(tb testing.TB) []decodeCase {
	tb.Helper()
	dir := tb.TempDir()
	ws, err := Open(Config{Root: dir})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { ws.Close() })
	for i := range 50 {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("entry-%07d.txt", i)), []byte("x"), 0o644); err != nil {
			tb.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "f.txt"), []byte(strings.Repeat("x", 4095)+"\n"), 0o644); err != nil {
		tb.Fatal(err)
	}
	call := func(tool, args, output string, content *string) string {
		var b strings.Builder
		cCall(&b, ws.handle, tool, args, `{"output":"`+output+`"}`, content, 0)
		return b.String()
	}
	content := strings.Repeat("y", 4096)
	return []decodeCase{
		{"list_dir, 50 entries", call(ToolListDir, `{}`, outputFull, nil), outputFull, func() any { return new(ListDirResult) }},
		{"read_file 4 KiB (data_raw head)", call(ToolReadFile, `{"path":"f.txt"}`, outputDataRaw, nil), outputDataRaw, func() any { return new(ReadFileResult) }},
		{"write_file", call(ToolWriteFile, `{"path":"w.txt"}`, outputFull, &content), outputFull, func() any { return new(WriteFileResult) }},
	}
}

// decoders are the ways of decoding an envelope (the JSON part) into env
// and data; ok is false on failure.
var decoders = []struct {
	name string
	run  func(js string, env *envelope, data any) bool
}{
	{"wsfs reader (hand-written)", func(js string, env *envelope, data any) bool {
		d := decoder{s: js}
		d.envelope(env, data)
		return !d.bad
	}},
	{"jsontext tokens + hand dispatch", jtEnvelope},
	{"encoding/json Unmarshal", func(js string, env *envelope, data any) bool {
		return decodeSlow(js, env, data) == nil
	}},
	{"json v2 Unmarshal", func(js string, env *envelope, data any) bool {
		v := struct {
			OK       bool      `json:"ok"`
			Data     any       `json:"data"`
			Text     string    `json:"text"`
			Warnings []string  `json:"warnings"`
			Error    *envError `json:"error"`
		}{Data: data}
		if err := jsonv2.Unmarshal([]byte(js), &v, jsonv2.RejectUnknownMembers(false)); err != nil {
			return false
		}
		env.OK, env.Text, env.Warnings, env.Error = v.OK, v.Text, v.Warnings, v.Error
		return true
	}},
}

func jsonPart(c decodeCase) string {
	if c.output == outputDataRaw {
		js, _, _ := strings.Cut(c.raw, "\n")
		return js
	}
	return c.raw
}

// TestDecodersAgree: every decoder gives the same envelope and data.
func TestDecodersAgree(t *testing.T) {
	for _, c := range decodeCases(t) {
		js := jsonPart(c)
		var want any
		var wantEnv envelope
		for i, d := range decoders {
			var env envelope
			data := c.data()
			if !d.run(js, &env, data) {
				t.Fatalf("%s: %s failed on %s", c.name, d.name, js)
			}
			if i == 0 {
				want, wantEnv = data, env
				continue
			}
			if !reflect.DeepEqual(data, want) || !reflect.DeepEqual(env, wantEnv) {
				t.Fatalf("%s: %s decoded\n%+v %+v\nwant\n%+v %+v", c.name, d.name, env, data, wantEnv, want)
			}
		}
	}
}

// TestDecodeBench measures every decoder on every case, in rounds that
// alternate the decoders (each round times a batch of decodes per decoder),
// and writes JSON lines to $WSFS_DECODE_OUT: ns per decode per round, and
// the heap allocated per decode.
func TestDecodeBench(t *testing.T) {
	out := os.Getenv("WSFS_DECODE_OUT")
	if out == "" {
		t.Skip("set WSFS_DECODE_OUT")
	}
	budget := 2 * time.Second
	if os.Getenv("WSFS_BENCH_SHORT") == "1" {
		budget = 0
	}
	w, err := os.OpenFile(out, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	for _, c := range decodeCases(t) {
		js := jsonPart(c)
		ns := make([][]float64, len(decoders))
		const batch = 100
		start := time.Now()
		for round := 0; round < 5 || time.Since(start) < budget; round++ {
			for k := range decoders {
				d := decoders[(k+round)%len(decoders)]
				t0 := time.Now()
				for range batch {
					var env envelope
					d.run(js, &env, c.data())
				}
				ns[(k+round)%len(decoders)] = append(ns[(k+round)%len(decoders)], float64(time.Since(t0).Nanoseconds())/batch)
			}
		}
		for k, d := range decoders {
			allocs := testing.AllocsPerRun(50, func() {
				var env envelope
				d.run(js, &env, c.data())
			})
			line, _ := json.Marshal(map[string]any{"case": c.name, "decoder": d.name, "ns": ns[k],
				"allocs": allocs, "bytes": len(js), "load": loadAvg()})
			fmt.Fprintln(w, string(line))
			s := append([]float64(nil), ns[k]...)
			sort.Float64s(s)
			t.Logf("%s / %s: %.2f us, %.0f allocs", c.name, d.name, s[len(s)/2]/1e3, allocs)
		}
	}
}

func loadAvg() string {
	b, _ := os.ReadFile("/proc/loadavg")
	return strings.Join(strings.Fields(string(b))[:3], " ")
}

// BenchmarkDecode is TestDecodeBench for go test -bench.
func BenchmarkDecode(b *testing.B) {
	for _, c := range decodeCases(b) {
		js := jsonPart(c)
		for _, d := range decoders {
			b.Run(c.name+"/"+d.name, func(b *testing.B) {
				b.ReportAllocs()
				for range b.N {
					var env envelope
					d.run(js, &env, c.data())
				}
			})
		}
	}
}
