package fantasytools

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	wsfs "github.com/wsfs/wsfs/go"
)

// TestWithMetrics: each response's Metadata holds the call's figures as
// JSON, the log record carries them, and the text the model reads is the
// same as without the option.
func TestWithMetrics(t *testing.T) {
	ws := openTest(t, wsfs.Config{})
	writeFile(t, filepath.Join(ws.Root(), "a.txt"), "one\ntwo\nthree\n")
	h := &recordHandler{}
	read := toolByName(t, Tools(ws, WithMetrics(), WithLogger(slogNew(h))), wsfs.ToolReadFile)
	resp, err := runTool(t, read, bg, `{"path":"a.txt","start_line":2}`)
	if err != nil || resp.IsError || !strings.HasPrefix(resp.Content, "two\nthree\n") {
		t.Fatalf("read_file = %+v, %v", resp, err)
	}
	withMetrics := resp.Content
	var m wsfs.Metrics
	if err := json.Unmarshal([]byte(resp.Metadata), &m); err != nil {
		t.Fatalf("Metadata %q: %v", resp.Metadata, err)
	}
	want := wsfs.Metrics{Tool: "read_file", Path: "a.txt", DurationUS: m.DurationUS, StartLine: 2, LinesRead: 2, BytesRead: 10}
	if m != want {
		t.Fatalf("metrics = %+v, want %+v", m, want)
	}
	records := h.toolRecords()
	if len(records) != 1 || !strings.Contains(records[0]["metrics"], "lines_read=2") {
		t.Fatalf("log records: %v", records)
	}
	// A failure carries the tool and the path too.
	resp, _ = runTool(t, read, bg, `{"path":"nope.txt"}`)
	if !resp.IsError || !strings.Contains(resp.Metadata, `"path":"nope.txt"`) {
		t.Fatalf("failure: %+v", resp)
	}
	// Without the option, no metadata, and the same text.
	plain := toolByName(t, Tools(ws), wsfs.ToolReadFile)
	resp, err = runTool(t, plain, bg, `{"path":"a.txt","start_line":2}`)
	if err != nil || resp.Metadata != "" || resp.Content != withMetrics {
		t.Fatalf("without WithMetrics: %+v, %v", resp, err)
	}
}

// TestProfileToolsLogAndReportMetrics: a profile's tools log through
// WithLogger and, with WithMetrics, report the figures in Metadata while the
// model reads the profile's envelope exactly as without them.
func TestProfileToolsLogAndReportMetrics(t *testing.T) {
	ws := openTest(t, wsfs.Config{Profile: "capability-plan"})
	writeFile(t, filepath.Join(ws.Root(), "a.txt"), "one\ntwo\n")
	h := &recordHandler{}
	read := toolByName(t, Tools(ws, WithMetrics(), WithLogger(slogNew(h))), "file_read")
	resp, err := runTool(t, read, bg, `{"path":"a.txt"}`)
	if err != nil || resp.IsError {
		t.Fatalf("file_read = %+v, %v", resp, err)
	}
	plain, _ := ws.CallRaw(bg, "file_read", `{"path":"a.txt"}`)
	if resp.Content != plain || strings.Contains(resp.Content, `"metrics"`) {
		t.Fatalf("the model's envelope:\n%s\nwithout metrics:\n%s", resp.Content, plain)
	}
	var m wsfs.Metrics
	if err := json.Unmarshal([]byte(resp.Metadata), &m); err != nil || m.Tool != "file_read" || m.LinesRead != 2 {
		t.Fatalf("Metadata %q: %+v, %v", resp.Metadata, m, err)
	}
	records := h.toolRecords()
	if len(records) != 1 || records[0]["tool"] != "file_read" || !strings.Contains(records[0]["metrics"], "lines_read=2") {
		t.Fatalf("log records through WithLogger: %v", records)
	}
}
