package wsfs

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
	"unsafe"
)

// libraryText returns the text the library puts in a full envelope for the
// call (what a model sees), and whether the call succeeded.
func libraryText(t *testing.T, ws *Workspace, tool, args string) (string, bool) {
	t.Helper()
	raw, _ := ws.CallRaw(bg, tool, args)
	var env struct {
		OK   bool   `json:"ok"`
		Text string `json:"text"`
	}
	if err := json.Unmarshal([]byte(raw), &env); err != nil {
		t.Fatalf("CallRaw(%s, %s) = %s: %v", tool, args, raw, err)
	}
	return env.Text, env.OK
}

// TestRawReadEdgeCases reads contents that could confuse the split of a raw
// result (newlines anywhere, text that looks like an envelope, nothing at
// all, CRLF) through the typed API, and compares with
// the file and with the library's full envelope.
func TestRawReadEdgeCases(t *testing.T) {
	ws := openTest(t, Config{})
	before := slowDecodes.Load()
	for name, content := range map[string]string{
		"empty":        "",
		"newline":      "\n",
		"newlines":     "\n\n\nx\n\n",
		"lines":        "a\nb\nc\n",
		"no-eol":       "a\nb",
		"crlf":         "line 1\r\nline 2\r\n\r\n",
		"cr":           "a\rb\r",
		"envelope":     `{"ok":false,"error":{"code":"io_error","message":"fake"},"text":"io_error: fake"}`,
		"envelope-nl":  "{\"ok\":true,\"warnings\":[]}\n{\"ok\":true,\"data\":{\"path\":\"x\",\"bytes\":1}}\nmore\n",
		"json-escapes": `"\n\u0000\\" \ud800 "quoted"`,
		"unicode":      "é\u2028\u2029\U0001F600\t\x7f",
		"trailing-ws":  "x \t \n \n",
	} {
		writeFile(t, filepath.Join(ws.Root(), name), content)
		args := pathArgs(name)
		r, err := ws.ReadFile(bg, ReadFileInput{Path: name})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		wantText := content
		if content == "" {
			wantText = emptyFileText
		}
		if r.Content != content || r.Text != wantText || r.Bytes != int64(len(content)) || r.TotalBytes != int64(len(content)) ||
			r.Truncated || r.Path != name || r.Warnings == nil || len(r.Warnings) != 0 {
			t.Fatalf("%s: ReadFile = %+v", name, r)
		}
		text, ok := libraryText(t, ws, ToolReadFile, args)
		if !ok || text != r.Text {
			t.Fatalf("%s: library text %q, typed text %q", name, text, r.Text)
		}
	}
	if n := slowDecodes.Load() - before; n != 0 {
		t.Fatalf("%d envelopes needed encoding/json", n)
	}
}

// TestReadTextMatchesLibrary checks ReadFileResult.Text, which the Go side
// builds for a truncated read, against the library's own text.
func TestReadTextMatchesLibrary(t *testing.T) {
	for _, limit := range []int{1, 2, 5, 8, 64, 1000} {
		ws := openTest(t, Config{Limits: Limits{MaxReadBytes: limit}})
		files := map[string]string{
			"eol":       "0123456789\n",
			"eol-cut":   "0123\n6789abcdef", // cut right after a newline for limit 5
			"no-eol":    "abcdefghijklmnopqrstuvwxyz",
			"multibyte": "ééé€€€\U0001F600\U0001F600", // cut back to a UTF-8 boundary
			"lines":     strings.Repeat("line\n", 300),
			"crlf":      strings.Repeat("l\r\n", 10),
			"short":     "x",
			"empty":     "",
		}
		for name, content := range files {
			writeFile(t, filepath.Join(ws.Root(), name), content)
			r, err := ws.ReadFile(bg, ReadFileInput{Path: name})
			if err != nil {
				t.Fatalf("limit %d, %s: %v", limit, name, err)
			}
			if !strings.HasPrefix(content, r.Content) || r.Truncated != (len(content) > limit) || r.TotalBytes != int64(len(content)) {
				t.Fatalf("limit %d, %s: ReadFile = %+v", limit, name, r)
			}
			if sum := sha256.Sum256([]byte(content)); r.Truncated != (r.SHA256 == "") ||
				(!r.Truncated && r.SHA256 != hex.EncodeToString(sum[:])) {
				t.Fatalf("limit %d, %s: sha256 %q for a read that was truncated=%v", limit, name, r.SHA256, r.Truncated)
			}
			text, ok := libraryText(t, ws, ToolReadFile, pathArgs(name))
			if !ok || text != r.Text {
				t.Fatalf("limit %d, %s: typed text %q, library text %q", limit, name, r.Text, text)
			}
			if !strings.HasPrefix(r.Text, r.Content) {
				t.Fatalf("limit %d, %s: text %q does not start with the content %q", limit, name, r.Text, r.Content)
			}
			// The notice is added in place: Text and Content share memory.
			if len(r.Content) > 0 && unsafe.StringData(r.Text) != unsafe.StringData(r.Content) {
				t.Fatalf("limit %d, %s: Text is a copy of Content", limit, name)
			}
		}
	}
	// readText without a buffer to extend (an envelope made elsewhere)
	// copies and gives the same text.
	r := ReadFileResult{Content: "abc", Bytes: 3, TotalBytes: 10, Truncated: true, NextStartLine: 2}
	if got, want := readText(&r, 3, &envelope{}), "abc\n[truncated: line 1 is longer than max_read_bytes (3): only its first 3 of 10 bytes are shown; continue with start_line=2]"; got != want {
		t.Fatalf("readText = %q, want %q", got, want)
	}
}

// TestTypedTextsMatchLibrary: the Text of the other typed results is the
// library's text.
func TestTypedTextsMatchLibrary(t *testing.T) {
	ws := openTest(t, Config{Limits: Limits{MaxListEntries: 2}})
	w, err := ws.WriteFile(bg, WriteFileInput{Path: "a.txt", Content: "x"})
	if err != nil || w.Text != "created a.txt (1 byte)" {
		t.Fatalf("WriteFile = %+v, %v", w, err)
	}
	w, err = ws.WriteFile(bg, WriteFileInput{Path: "a.txt", Content: "xy"})
	if err != nil || w.Text != "overwrote a.txt (2 bytes)" || len(w.Warnings) != 1 {
		t.Fatalf("WriteFile = %+v, %v", w, err)
	}
	a, err := ws.AppendFile(bg, AppendFileInput{Path: "a.txt", Content: "z"})
	if err != nil || a.Text != "appended 1 byte to a.txt (now 3 bytes)" {
		t.Fatalf("AppendFile = %+v, %v", a, err)
	}
	e, err := ws.EditFile(bg, EditFileInput{Path: "a.txt", OldText: "xyz", NewText: "q"})
	if err != nil || e.Text != "replaced 1 occurrence in a.txt" {
		t.Fatalf("EditFile = %+v, %v", e, err)
	}
	writeFile(t, filepath.Join(ws.Root(), "d", "b"), "bb")
	os.Mkdir(filepath.Join(ws.Root(), "d", "c"), 0o755)
	os.Symlink("b", filepath.Join(ws.Root(), "d", "a"))
	for _, p := range []string{"", ".", "d"} {
		l, err := ws.ListDir(bg, ListDirInput{Path: p})
		if err != nil {
			t.Fatal(err)
		}
		args := "{}"
		if p != "" {
			args = pathArgs(p)
		}
		if text, _ := libraryText(t, ws, ToolListDir, args); text != l.Text {
			t.Fatalf("list %q: typed text %q, library text %q", p, l.Text, text)
		}
	}
}

// TestContentBuffer: WriteFile and AppendFile pass the content as a buffer,
// not as JSON: empty content, NUL bytes, and bytes JSON would escape all
// arrive exactly.
func TestContentBuffer(t *testing.T) {
	ws := openTest(t, Config{})
	root := ws.Root()
	for name, content := range map[string]string{
		"empty":   "",
		"nul":     "a\x00b\x00",
		"allnul":  "\x00",
		"escapes": "\"quoted\" \\back\\ \n\r\t\b\f \x01\x1f </script> \u2028 \U0001F600",
		"json":    `{"path":"other.txt","content":"x"}`,
	} {
		w, err := ws.WriteFile(bg, WriteFileInput{Path: name, Content: content})
		if err != nil || w.BytesWritten != int64(len(content)) || !w.Created || w.Path != name {
			t.Fatalf("%s: WriteFile = %+v, %v", name, w, err)
		}
		if got := readFile(t, filepath.Join(root, name)); got != content {
			t.Fatalf("%s: file holds %q, want %q", name, got, content)
		}
		a, err := ws.AppendFile(bg, AppendFileInput{Path: name, Content: content})
		if err != nil || a.BytesAppended != int64(len(content)) || a.Size != int64(2*len(content)) {
			t.Fatalf("%s: AppendFile = %+v, %v", name, a, err)
		}
		if got := readFile(t, filepath.Join(root, name)); got != content+content {
			t.Fatalf("%s: file holds %q after the append", name, got)
		}
	}
	if _, err := os.Stat(filepath.Join(root, "other.txt")); !os.IsNotExist(err) {
		t.Fatal("content was parsed as arguments")
	}
	// Appending nothing to a missing file creates it, empty.
	a, err := ws.AppendFile(bg, AppendFileInput{Path: "new/empty.log"})
	if err != nil || a.Size != 0 || readFile(t, filepath.Join(root, "new", "empty.log")) != "" {
		t.Fatalf("AppendFile(empty) = %+v, %v", a, err)
	}
	// Paths that need escaping in the arguments JSON.
	for _, p := range []string{`q"uote`, `back\slash`, "tab\tnl\nctl\x01", "ünï \U0001F600", "sub/dir/x"} {
		w, err := ws.WriteFile(bg, WriteFileInput{Path: p, Content: p})
		if err != nil || w.Path != p {
			t.Fatalf("WriteFile(%q) = %+v, %v", p, w, err)
		}
		if got := readFile(t, filepath.Join(root, p)); got != p {
			t.Fatalf("%q holds %q", p, got)
		}
		r, err := ws.ReadFile(bg, ReadFileInput{Path: p})
		if err != nil || r.Content != p || r.Path != p {
			t.Fatalf("ReadFile(%q) = %+v, %v", p, r, err)
		}
		e, err := ws.EditFile(bg, EditFileInput{Path: p, OldText: p, NewText: p + "\x00\"", ReplaceAll: true})
		if err != nil || e.Replaced != 1 || readFile(t, filepath.Join(root, p)) != p+"\x00\"" {
			t.Fatalf("EditFile(%q) = %+v, %v", p, e, err)
		}
	}
	// The library's limit applies to the buffer.
	small := openTest(t, Config{Limits: Limits{MaxWriteBytes: 4}})
	_, err = small.WriteFile(bg, WriteFileInput{Path: "big", Content: "12345"})
	wantCode(t, err, CodeTooLarge)
	_, err = small.AppendFile(bg, AppendFileInput{Path: "big", Content: "12345"})
	wantCode(t, err, CodeTooLarge)
}

// TestRawModeErrors: failures in the raw output modes are plain error
// envelopes; the typed API reports them as before.
func TestRawModeErrors(t *testing.T) {
	ws := openTest(t, Config{})
	writeFile(t, filepath.Join(ws.Root(), "bin"), "a\x00b\n")
	writeFile(t, filepath.Join(ws.Root(), "dir", "x"), "x")
	for _, tc := range []struct {
		path string
		code Code
	}{
		{"missing.txt", CodePathNotFound},
		{"bin", CodeIOError},
		{"dir", CodeNotAFile},
		{"../outside", CodeOutsideWorkspace},
		{"", CodeInvalidPath},
	} {
		_, err := ws.ReadFile(bg, ReadFileInput{Path: tc.path})
		e := wantCode(t, err, tc.code)
		text, ok := libraryText(t, ws, ToolReadFile, pathArgs(tc.path))
		if ok || text != e.Text() {
			t.Fatalf("%q: library text %q, error text %q", tc.path, text, e.Text())
		}
		// The raw envelope itself.
		var buf strings.Builder
		cCall(&buf, ws.handle, ToolReadFile, pathArgs(tc.path), `{"output":"data_raw"}`, nil, 0)
		if strings.Contains(buf.String(), "\n") || !strings.HasPrefix(buf.String(), `{"ok":false`) {
			t.Fatalf("%q: raw-mode failure %q", tc.path, buf.String())
		}
	}
	// A buffer for a tool that takes none is refused by the library.
	c := ""
	var buf strings.Builder
	cCall(&buf, ws.handle, ToolReadFile, `{"path":"bin"}`, `{"output":"data_raw"}`, &c, 0)
	env, e := parseEnvelope(ToolReadFile, buf.String(), outputDataRaw, nil)
	if e != nil || env.OK || env.Error.Code != CodeInvalidArguments {
		t.Fatalf("buffer for read_file: %s", buf.String())
	}
	// Content both in the arguments and as a buffer is refused too.
	c = "x"
	buf.Reset()
	cCall(&buf, ws.handle, ToolWriteFile, `{"path":"w","content":"y"}`, `{}`, &c, 0)
	if env, e := parseEnvelope(ToolWriteFile, buf.String(), outputFull, nil); e != nil || env.OK || env.Error.Code != CodeInvalidArguments {
		t.Fatalf("content twice: %s", buf.String())
	}
}

// tokenUsable reports whether the library knows tok and it is not cancelled.
func tokenUsable(ws *Workspace, tok uint64) bool {
	var buf strings.Builder
	cCall(&buf, ws.handle, ToolListDir, `{}`, `{"output":"text","cancel_token":`+strconv.FormatUint(tok, 10)+`}`, nil, 0)
	return strings.HasPrefix(buf.String(), `{"ok":true`)
}

// freeTokensUsable checks that every cancel token kept for reuse is known
// to the library and not cancelled.
func freeTokensUsable(t *testing.T, ws *Workspace) int {
	t.Helper()
	tokens.mu.Lock()
	free := append([]uint64(nil), tokens.free...)
	tokens.mu.Unlock()
	for _, tok := range free {
		if !tokenUsable(ws, tok) {
			t.Fatalf("kept cancel token %d is unknown or cancelled", tok)
		}
	}
	return len(free)
}

// contextTokenOf is the cancel token kept for ctx (0 if none).
func contextTokenOf(ctx context.Context) uint64 {
	if v, ok := contextTokens.Load(ctx.Done()); ok {
		return v.(*contextToken).token
	}
	return 0
}

// TestContextTokens: a cancellable context gets one cancel token for all its
// calls, cancelled with the context and then freed; a context that ends by
// its deadline does not cancel it; nothing is kept for an ended context.
func TestContextTokens(t *testing.T) {
	ws := openTest(t, Config{})
	before := contextTokenCount.Load()
	ctx, cancel := context.WithCancel(bg)
	for range 3 {
		if _, err := ws.ListDir(ctx, ListDirInput{}); err != nil {
			t.Fatal(err)
		}
	}
	tok := contextTokenOf(ctx)
	if tok == 0 || !tokenUsable(ws, tok) || contextTokenCount.Load() != before+1 {
		t.Fatalf("token %d kept for the context (count %d -> %d)", tok, before, contextTokenCount.Load())
	}
	vctx := context.WithValue(ctx, struct{}{}, 1) // same Done channel, same token
	if _, err := ws.ListDir(vctx, ListDirInput{}); err != nil || contextTokenOf(vctx) != tok {
		t.Fatalf("derived context: %v, token %d", err, contextTokenOf(vctx))
	}
	cancel()
	v, _ := contextTokens.Load(ctx.Done())
	if v != nil {
		<-v.(*contextToken).fired
	}
	for contextTokenOf(ctx) != 0 { // CompareAndDelete follows the channel's close
		runtime.Gosched()
	}
	if tokenUsable(ws, tok) || contextTokenCount.Load() != before {
		t.Fatalf("token %d still usable after its context was cancelled", tok)
	}
	_, err := ws.ListDir(ctx, ListDirInput{})
	wantCode(t, err, CodeCancelled)
	if contextTokenOf(ctx) != 0 {
		t.Fatal("a token was kept for an ended context")
	}

	// Cancelled during calls: each call reports cancelled, and no token
	// outlives its context.
	var cancelNow context.CancelFunc
	hookBefore(t, func(_ string, tokenDone <-chan struct{}) {
		if cancelNow != nil {
			cancelNow()
			<-tokenDone
		}
	})
	for range 5 {
		var ctx context.Context
		ctx, cancelNow = context.WithCancel(bg)
		_, err := ws.ListDir(ctx, ListDirInput{})
		wantCode(t, err, CodeCancelled)
	}
	cancelNow = nil
	for contextTokenCount.Load() != before {
		runtime.Gosched()
	}

	// A context that ends by its deadline leaves the token uncancelled (the
	// library reports the timeout itself) and frees it.
	dctx, dcancel := context.WithTimeout(bg, 50*time.Millisecond)
	defer dcancel()
	if _, err := ws.ListDir(dctx, ListDirInput{}); err != nil {
		t.Fatal(err)
	}
	dtok := contextTokenOf(dctx)
	<-dctx.Done()
	for contextTokenOf(dctx) != 0 {
		runtime.Gosched()
	}
	if dtok == 0 || tokenUsable(ws, dtok) {
		t.Fatalf("deadline context's token %d: still usable after the context ended", dtok)
	}
}

// TestCancelTokenReuse: past maxContextTokens contexts, calls take tokens
// from a pool; tokens of calls that were not cancelled are kept and reused,
// a token that was cancelled never is.
func TestCancelTokenReuse(t *testing.T) {
	ws := openTest(t, Config{})
	contextTokenCount.Add(maxContextTokens)
	defer contextTokenCount.Add(-maxContextTokens)
	ctx, cancel := context.WithCancel(bg)
	defer cancel()
	for range 3 {
		if _, err := ws.ListDir(ctx, ListDirInput{}); err != nil {
			t.Fatal(err)
		}
	}
	if contextTokenOf(ctx) != 0 {
		t.Fatal("a token was kept for a context past the limit")
	}
	if freeTokensUsable(t, ws) == 0 {
		t.Fatal("no cancel token was kept for reuse")
	}

	// Cancel during calls until the free list is empty and beyond: the
	// cancelled tokens must not come back.
	var cancelNow context.CancelFunc
	hookBefore(t, func(_ string, tokenDone <-chan struct{}) {
		if cancelNow != nil {
			cancelNow()
			<-tokenDone
		}
	})
	for range maxFreeTokens + 2 {
		var ctx context.Context
		ctx, cancelNow = context.WithCancel(bg)
		_, err := ws.ListDir(ctx, ListDirInput{})
		wantCode(t, err, CodeCancelled)
	}
	cancelNow = nil
	freeTokensUsable(t, ws)
	// A context that is done because of its deadline does not cancel the
	// token, and calls after it still work.
	dctx, dcancel := context.WithTimeout(bg, time.Hour)
	defer dcancel()
	if _, err := ws.ListDir(dctx, ListDirInput{}); err != nil {
		t.Fatal(err)
	}
	freeTokensUsable(t, ws)
}

// TestLargeArguments: arguments above cMemoryArgs are passed from C memory.
func TestLargeArguments(t *testing.T) {
	ws := openTest(t, Config{})
	big := strings.Repeat("0123456789abcdef\n", cMemoryArgs/16)
	writeFile(t, filepath.Join(ws.Root(), "big.txt"), big)
	e, err := ws.EditFile(bg, EditFileInput{Path: "big.txt", OldText: big, NewText: big + "x"})
	if err != nil || e.Replaced != 1 || readFile(t, filepath.Join(ws.Root(), "big.txt")) != big+"x" {
		t.Fatalf("EditFile = %+v, %v", e, err)
	}
	_, err = ws.CallRaw(bg, ToolAppendFile, `{"path":"big.txt","content":`+string(appendJSONString(nil, big))+`}`)
	if err != nil || readFile(t, filepath.Join(ws.Root(), "big.txt")) != big+"x"+big {
		t.Fatalf("CallRaw append_file: %v", err)
	}
}
