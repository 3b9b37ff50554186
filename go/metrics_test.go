package wsfs

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestModelCallMetrics: ModelCall.Metrics receives the library's figures;
// CallRaw's envelope carries them as the library's default; the typed
// calls do not ask for them.
func TestModelCallMetrics(t *testing.T) {
	ws := openTest(t, Config{})
	if err := os.WriteFile(filepath.Join(ws.Root(), "a.txt"), []byte("x\ny\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var m Metrics
	text, err := ws.CallForModel(context.Background(), ModelCall{Tool: ToolSearchText, Args: `{"query":"y"}`, Metrics: &m})
	if err != nil || !strings.Contains(text, "a.txt") {
		t.Fatalf("search_text: %q, %v", text, err)
	}
	if m.Tool != ToolSearchText || m.Matches != 1 || m.FilesSearched != 1 || m.DurationUS < 0 {
		t.Fatalf("metrics = %+v", m)
	}
	raw, err := ws.CallRaw(context.Background(), ToolReadFile, `{"path":"a.txt"}`)
	if err != nil || !strings.Contains(raw, `"metrics":{"tool":"read_file","path":"a.txt"`) || !strings.Contains(raw, `"lines_read":2`) {
		t.Fatalf("CallRaw: %s, %v", raw, err)
	}
	// A failure detected in the library fills them too.
	m = Metrics{}
	_, err = ws.CallForModel(context.Background(), ModelCall{Tool: ToolReadFile, Args: `{"path":"none.txt"}`, Metrics: &m})
	wantCode(t, err, CodePathNotFound)
	if m.Tool != ToolReadFile || m.Path != "none.txt" || m.LinesRead != 0 {
		t.Fatalf("failure metrics = %+v", m)
	}
}

// TestTakeMetrics: only the member the library appends last is taken off;
// an envelope without it, or with "metrics" only inside its data, stays as
// it is.
func TestTakeMetrics(t *testing.T) {
	var m Metrics
	env := `{"ok":true,"data":{"path":"a"},"metrics":{"tool":"file_read","duration_us":3,"lines_read":2}}`
	if got := takeMetrics(env, &m); got != `{"ok":true,"data":{"path":"a"}}` || m.Tool != "file_read" || m.LinesRead != 2 {
		t.Fatalf("%s, %+v", got, m)
	}
	for _, env := range []string{
		`{"ok":true,"data":{"path":"a"}}`,
		`{"ok":true,"data":{"x":1,"metrics":{"a":1},"y":2}}`,
		`{"ok":true,"text":"a \",\"metrics\":{ b"}`,
	} {
		m = Metrics{}
		if got := takeMetrics(env, &m); got != env || m != (Metrics{}) {
			t.Fatalf("%s became %s, %+v", env, got, m)
		}
	}
}
