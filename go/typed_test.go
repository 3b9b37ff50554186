package wsfs

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
)

// listing is list_dir's data as a result type of the generic path, which
// the tools after the first five use.
type listing struct {
	Path    string     `json:"path"`
	Entries []DirEntry `json:"entries"`
	Total   int        `json:"total"`
	ToolReply
}

func TestCallTypedDecodesDataTextAndWarnings(t *testing.T) {
	ws := openTest(t, Config{})
	writeFile(t, filepath.Join(ws.Root(), "b.txt"), "12345")
	writeFile(t, filepath.Join(ws.Root(), "a.txt"), "1")
	r, err := callTyped[listing](context.Background(), ws, ToolListDir, struct {
		Path string `json:"path"`
	}{"."}, ".")
	if err != nil {
		t.Fatal(err)
	}
	if r.Path != "." || r.Total != 2 || len(r.Entries) != 2 || r.Entries[1] != (DirEntry{Name: "b.txt", Type: EntryFile, Size: 5}) {
		t.Fatalf("result %+v", r)
	}
	if r.Text != ". (2 entries)\na.txt  1 byte\nb.txt  5 bytes" || r.Warnings == nil {
		t.Fatalf("text %q, warnings %#v", r.Text, r.Warnings)
	}
	_, err = callTyped[listing](context.Background(), ws, ToolListDir, struct {
		Path string `json:"path"`
	}{"../x"}, "../x")
	if code := errorCode(err); code != CodeOutsideWorkspace {
		t.Fatalf("escape: %v", err)
	}
}

func TestDecodeResultTakesTheSlowPathToo(t *testing.T) {
	var data rawData
	env, perr := parseEnvelope("list_dir", `{"ok":true,"data":{"path":"x","total":3,"new_field":[1]},"text":"t","warnings":[]}`, outputFull, &data)
	if perr != nil || !env.OK {
		t.Fatal(perr)
	}
	var r listing
	if err := decodeResult(string(data), &r); err != nil || r.Path != "x" || r.Total != 3 {
		t.Fatalf("%+v %v", r, err)
	}
	// Invalid JSON inside data makes the fast reader give up; encoding/json
	// must then keep the raw value too (and reject it).
	if _, perr := parseEnvelope("list_dir", `{"ok":true,"data":{"path":"x",},"text":"t"}`, outputFull, &data); perr == nil {
		t.Fatal("malformed data accepted")
	}
}

// errorCode is err's wsfs code, "" if it is not an *Error.
func errorCode(err error) Code {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return ""
}
