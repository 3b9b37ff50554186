package wsfs

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// slowDecode decodes js with parseEnvelope's encoding/json fallback alone.
func slowDecode(js string, data any) (*envelope, error) {
	env := &envelope{}
	if err := decodeSlow(js, env, data); err != nil {
		return nil, err
	}
	return env, nil
}

// fastDecode runs the fast reader alone; ok is false if it gave up.
func fastDecode(js string, data dataDecoder) (*envelope, bool) {
	env := &envelope{}
	d := decoder{s: js}
	d.envelope(env, data)
	return env, !d.bad
}

// newData returns a fresh pointer of the same type as proto.
func newData(proto dataDecoder) dataDecoder {
	return reflect.New(reflect.TypeOf(proto).Elem()).Interface().(dataDecoder)
}

// compareDecoders checks that the fast reader either gives up on js or
// decodes exactly what encoding/json decodes. It reports whether the fast
// reader decoded js.
func compareDecoders(t *testing.T, js string, proto dataDecoder) bool {
	t.Helper()
	return compareAny(t, js, func() any { return newData(proto) })
}

// compareAny is compareDecoders for data of any kind the fast reader takes:
// newData returns a fresh pointer to fill in, or nil for no data.
func compareAny(t *testing.T, js string, newData func() any) bool {
	t.Helper()
	fastData, slowData := newData(), newData()
	fenv := &envelope{}
	d := decoder{s: js}
	d.envelope(fenv, fastData)
	senv, err := slowDecode(js, slowData)
	if d.bad {
		return false
	}
	if err != nil {
		t.Fatalf("fast reader accepted %q, encoding/json: %v", js, err)
	}
	if !reflect.DeepEqual(fenv, senv) {
		t.Fatalf("%q:\nfast envelope %#v\njson envelope %#v", js, fenv, senv)
	}
	if !reflect.DeepEqual(fastData, slowData) {
		t.Fatalf("%q:\nfast data %#v\njson data %#v", js, fastData, slowData)
	}
	return true
}

// readerDecodes are envelopes the fast reader decodes, with the data type
// to decode into.
var readerDecodes = []struct {
	js    string
	proto dataDecoder
}{
	{`{"ok":true,"data":{"path":"a.txt","content":"hi\n","bytes":3,"total_bytes":3,"truncated":false},"text":"hi\n","warnings":[]}`, &ReadFileResult{}},
	// Keys in another order, unknown keys (of every type) skipped, white space.
	{` { "warnings" : [ "w1" , "w\"2" ] , "text":"t", "future":{"a":[1,2.5e3,-0.5,{"b":null}],"c":"}]\\\""} ,"data" : { "truncated" : true , "bytes" : 2 , "path" : "x" , "extra":[true,false,null] } , "ok" : true } `, &ReadFileResult{}},
	// Escapes: every short escape, \u with a surrogate pair, a lone
	// surrogate (U+FFFD, as encoding/json), multi-byte UTF-8.
	{`{"ok":true,"data":{"path":"\"\\\/\b\f\n\r\t\u00e9\ud83d\ude00\ud800x\udc00 ünï","bytes_written":0,"created":true},"text":"a\u0000b","warnings":null}`, &WriteFileResult{}},
	{`{"ok":true,"data":{"path":"l","bytes_appended":9223372036854775807,"size":-9223372036854775808},"warnings":[]}`, &AppendFileResult{}},
	{`{"ok":true,"data":{"path":"d","entries":[{"name":"a","type":"file","size":1},{"name":"b]{","type":"dir","size":4096},{"name":"c","type":"symlink","size":0,"x":1},{"name":"d","type":"other","size":0},{"name":"e","type":"new-kind","size":0},null],"total":6,"truncated":false},"text":"d (6 entries)","warnings":[]}`, &ListDirResult{}},
	{`{"ok":true,"data":{"path":"d","entries":[],"total":0,"truncated":false},"warnings":[]}`, &ListDirResult{}},
	{`{"ok":true,"data":{"path":"e","matches":2,"replaced":2},"text":"replaced 2 occurrences in e","warnings":["w"]}`, &EditFileResult{}},
	{`{"ok":true,"data":null,"text":null,"warnings":null,"error":null}`, &EditFileResult{}},
	{`{"ok":false,"error":{"code":"path_not_found","message":"x does not exist","more":1},"text":"path_not_found: x does not exist"}`, &ReadFileResult{}},
	{`{"ok":false,"error":{"code":"brand_new_code","message":""},"text":""}`, &ReadFileResult{}},
	{`{}`, &ReadFileResult{}},
}

// readerRefuses are inputs the fast reader must refuse (encoding/json then
// decides: it either fails too or, for invalid UTF-8, replaces the bad
// bytes).
var readerRefuses = []string{
	``, `null`, `[]`, `{"ok":true`, `{"ok":true,}`, `{"ok":true "text":""}`, `{,"ok":true}`,
	`{"ok":true}x`, `{"ok":true}{}`, "{\"ok\":true}\x00",
	`{"ok":tru}`, `{"ok":1}`, `{"ok":"true"}`, `{"text":5}`, `{"text":"a` + "\n" + `"}`, `{"text":"\x"}`, `{"text":"\u12"}`,
	"{\"text\":\"\xff\"}", "{\"text\":\"\\n\xff\"}", `{"warnings":"w"}`, `{"warnings":[1]}`, `{"warnings":[,]}`, `{"warnings":["a",]}`,
	`{"data":{"bytes":1.5}}`, `{"data":{"bytes":1e3}}`, `{"data":{"bytes":01}}`, `{"data":{"bytes":-}}`, `{"data":{"bytes":"1"}}`,
	`{"data":{"bytes":9223372036854775808}}`, `{"data":[]}`, `{"data":{"truncated":0}}`, `{"error":"x"}`, `{"error":{"code":1}}`,
	`{"future":tru}`, `{"future":[1 2]}`, `{"future":"abc}`, `{"future":1.2.3}`, `{"future":+1}`,
	// What encoding/json refuses in a value it skips: numbers JSON does not
	// spell so, bad escapes, control characters.
	`{"future":01}`, `{"future":1.}`, `{"future":.5}`, `{"future":1e}`, `{"future":-}`, `{"future":"\x"}`,
	`{"future":"\u12x4"}`, "{\"future\":\"a\x01\"}",
	// Keys encoding/json would match to a field in another case, and keys
	// given twice (encoding/json merges the values into the same field).
	`{"OK":true}`, `{"Text":"t"}`, `{"data":{"Path":"x"}}`, `{"data":{"\u017fha256":"x"}}`, `{"error":{"CODE":"x"}}`,
	`{"ok":true,"ok":false}`, `{"data":{"path":"a","path":"b"}}`, `{"warnings":["a","b"],"warnings":[null]}`,
	`{"error":{"code":"x"},"error":{"message":"m"}}`, `{"error":{"code":"x","code":"y"}}`,
}

func TestDecoderMatchesEncodingJSON(t *testing.T) {
	for _, tc := range readerDecodes {
		if !compareDecoders(t, tc.js, tc.proto) {
			t.Errorf("the fast reader gave up on %s", tc.js)
		}
	}

	for _, js := range readerRefuses {
		if compareDecoders(t, js, &ReadFileResult{}) {
			t.Errorf("the fast reader accepted %q", js)
		}
	}
	for _, js := range []string{
		`{"ok":true,"data":{"entries":[1]}}`,                                  // a number as an entry
		`{"ok":true,"data":{"tree":{"name":"."}}}`,                            // a field the reader does not decode
		`{"ok":true,"data":{"entries":[{"name":"a","name":"b"}]}}`,            // a key given twice
		`{"ok":true,"data":{"entries":[{"name":"a","size":1},{"Name":"b"}]}}`, // a key in another case
	} {
		if compareDecoders(t, js, &ListDirResult{}) {
			t.Errorf("the fast reader accepted %s", js)
		}
	}
}

// TestParseEnvelopeFallback: what the fast reader refuses still decodes
// through encoding/json, from a clean state.
func TestParseEnvelopeFallback(t *testing.T) {
	before := slowDecodes.Load()
	var r ReadFileResult
	env, e := parseEnvelope(ToolReadFile, "{\"data\":{\"path\":\"a\xffb\",\"bytes\":3},\"ok\":true,\"warnings\":[]}\nabc", outputDataRaw, &r)
	if e != nil {
		t.Fatal(e)
	}
	if slowDecodes.Load() != before+1 {
		t.Fatal("the fast reader did not give up on invalid UTF-8")
	}
	if !env.OK || r.Path != "a\uFFFDb" || r.Bytes != 3 || !env.HasRaw || env.Raw != "abc" || env.Warnings == nil {
		t.Fatalf("fallback: %+v %+v", env, r)
	}
	// Garbage is an io_error, not a panic.
	for _, js := range []string{"", "{", "nope", `{"ok":false}`, `{"ok":false,"error":null}`} {
		if _, e := parseEnvelope(ToolReadFile, js, outputFull, &r); e == nil || e.Code != CodeIOError {
			t.Fatalf("parseEnvelope(%q) = %v, want io_error", js, e)
		}
	}
	// Raw modes split at the first newline only, and only in raw modes.
	env, _ = parseEnvelope(ToolReadFile, "{\"ok\":true,\"warnings\":[]}\n\n{\"ok\":false}\n", outputTextRaw, nil)
	if !env.HasRaw || env.Raw != "\n{\"ok\":false}\n" {
		t.Fatalf("raw part %q", env.Raw)
	}
	env, _ = parseEnvelope(ToolReadFile, "{\"ok\":true,\"warnings\":[]}\n", outputTextRaw, nil)
	if !env.HasRaw || env.Raw != "" {
		t.Fatalf("empty raw part: %+v", env)
	}
	// A failure in a raw mode is a plain envelope.
	env, e = parseEnvelope(ToolReadFile, `{"ok":false,"error":{"code":"io_error","message":"m"},"text":"io_error: m"}`, outputDataRaw, &r)
	if e != nil || env.OK || env.HasRaw || env.Error.Code != CodeIOError || env.Text != "io_error: m" {
		t.Fatalf("raw-mode failure: %+v, %v", env, e)
	}
}

// TestLibraryEnvelopesDecodeFast runs every tool in every output mode the
// package uses, successes and failures, and checks that the fast reader
// decodes each envelope exactly as encoding/json does, without giving up.
func TestLibraryEnvelopesDecodeFast(t *testing.T) {
	ws := openTest(t, Config{Limits: Limits{MaxReadBytes: 64, MaxListEntries: 3}})
	root := ws.Root()
	writeFile(t, filepath.Join(root, "a.txt"), "hello \"world\"\n\ttab \\ back\u00e9\U0001F600\n")
	writeFile(t, filepath.Join(root, "long.txt"), strings.Repeat("line\n", 40))
	writeFile(t, filepath.Join(root, "bin"), "a\x00b")
	for i := range 5 {
		writeFile(t, filepath.Join(root, "d", fmt.Sprintf("f\"%d\\\n", i)), "x")
	}
	os.Symlink("a.txt", filepath.Join(root, "d", "link"))
	os.Mkdir(filepath.Join(root, "d", "sub"), 0o755)

	calls := []struct {
		tool, args string
		proto      dataDecoder
	}{
		{ToolReadFile, `{"path":"a.txt"}`, &ReadFileResult{}},
		{ToolReadFile, `{"path":"long.txt"}`, &ReadFileResult{}},
		{ToolReadFile, `{"path":"bin"}`, &ReadFileResult{}},
		{ToolReadFile, `{"path":"../x"}`, &ReadFileResult{}},
		{ToolReadFile, `{"path":"long.txt","start_line":3,"max_lines":4,"line_numbers":true}`, &ReadFileResult{}},
		{ToolReadFile, `{"path":"long.txt","start_line":30}`, &ReadFileResult{}},
		{ToolReadFile, `{"path":"a.txt","start_line":1}`, &ReadFileResult{}},
		{ToolReadFile, `{"path":"long.txt","start_line":99}`, &ReadFileResult{}},
		{ToolWriteFile, `{"path":"w.txt","content":"x\ny"}`, &WriteFileResult{}},
		{ToolWriteFile, `{"path":"w.txt","content":"x\ny"}`, &WriteFileResult{}},
		{ToolAppendFile, `{"path":"w.txt","content":"z"}`, &AppendFileResult{}},
		{ToolListDir, `{"path":"d"}`, &ListDirResult{}},
		{ToolListDir, `{}`, &ListDirResult{}},
		{ToolListDir, `{"path":"a.txt"}`, &ListDirResult{}},
		{ToolEditFile, `{"path":"w.txt","old_text":"x","new_text":"\"q\""}`, &EditFileResult{}},
		{ToolEditFile, `{"path":"w.txt","old_text":"nope","new_text":""}`, &EditFileResult{}},
		{ToolEditFile, `{"path":"w.txt","bogus":1}`, &EditFileResult{}},
	}
	before := slowDecodes.Load()
	for _, c := range calls {
		for _, mode := range []string{outputFull, outputText, "data", outputTextRaw, outputDataRaw} {
			var buf strings.Builder
			cCall(&buf, ws.handle, c.tool, c.args, `{"output":"`+mode+`"}`, nil, 0)
			raw := buf.String()
			js := raw
			if i := strings.IndexByte(raw, '\n'); i >= 0 {
				if mode != outputTextRaw && mode != outputDataRaw {
					t.Fatalf("%s %s %s: a raw newline in %q", c.tool, c.args, mode, raw)
				}
				js = raw[:i]
			}
			if !compareDecoders(t, js, c.proto) {
				t.Fatalf("%s %s %s: the fast reader gave up on %s", c.tool, c.args, mode, js)
			}
			if _, e := parseEnvelope(c.tool, raw, mode, newData(c.proto)); e != nil {
				t.Fatalf("%s %s %s: %v", c.tool, c.args, mode, e)
			}
		}
	}
	if n := slowDecodes.Load() - before; n != 0 {
		t.Fatalf("%d library envelopes needed encoding/json", n)
	}
}

func TestAppendJSONString(t *testing.T) {
	for _, s := range []string{"", "plain", `"quoted" \back\ slash`, "ctl \x00\x01\x1f\x7f \b\f\n\r\t", "<&> ünï \U0001F600 \u2028", "\\u0000"} {
		got := appendJSONString(nil, s)
		var back string
		if err := json.Unmarshal(got, &back); err != nil || back != s {
			t.Fatalf("appendJSONString(%q) = %s: %q, %v", s, got, back, err)
		}
		if strings.ContainsAny(string(got), "\x00\n") {
			t.Fatalf("appendJSONString(%q) = %q has a raw NUL or newline", s, got)
		}
	}
	if got := pathArgs(`a"b`); got != `{"path":"a\"b"}` {
		t.Fatalf("pathArgs = %s", got)
	}
}
