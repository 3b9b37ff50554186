package benchmarks

// The "cgo" layer: the library called straight through cgo the way the wsfs
// package calls it (go/cgo.go: tool, arguments and options in one Go buffer
// read in place, write_file/append_file content passed in place, the call
// made with wsfs_call_sized, which gives the result's length, and the result
// copied once), but without the package's validation, context handling and
// decoding. The difference between this layer and the Rust bench's C ABI
// layer is the cost of cgo itself; the difference between it and the typed
// Go API (or the fantasy tools) is the Go package's own work.

/*
#cgo CFLAGS: -I${SRCDIR}/../../../include
#cgo !wsfs_shared LDFLAGS: ${SRCDIR}/../../../target/release/libwsfs.a -ldl -lm -lpthread -lrt -lgcc_s -lc
#cgo wsfs_shared LDFLAGS: -L${SRCDIR}/../../../target/release -lwsfs -Wl,-rpath,${SRCDIR}/../../../target/release
#include <stdlib.h>
#include <string.h>
#include "wsfs.h"

typedef struct {
	char  *s;
	size_t len;
} bench_string;

static bench_string bench_call(uint64_t workspace, const char *tool, const char *args,
		const char *options, int with_content, const char *content, size_t content_len) {
	bench_string r = { NULL, 0 };
	r.s = wsfs_call_sized(workspace, tool, args, options,
		with_content ? (content ? content : "") : NULL, content_len, &r.len);
	return r;
}
*/
import "C"

import (
	"encoding/json"
	"fmt"
	"strings"
	"unsafe"
)

// RawWorkspace is a workspace handle used through cgo directly.
type RawWorkspace struct {
	handle uint64
}

// OpenRaw opens a workspace with wsfs_workspace_open (default limits).
func OpenRaw(root string) (*RawWorkspace, error) {
	cfg, err := json.Marshal(map[string]any{"root": root})
	if err != nil {
		return nil, err
	}
	c := C.CString(string(cfg))
	defer C.free(unsafe.Pointer(c))
	env := take(C.wsfs_workspace_open(c))
	var out struct {
		OK   bool `json:"ok"`
		Data struct {
			Workspace uint64 `json:"workspace"`
		} `json:"data"`
	}
	if err := json.Unmarshal([]byte(env), &out); err != nil || !out.OK || out.Data.Workspace == 0 {
		return nil, fmt.Errorf("wsfs_workspace_open: %s", env)
	}
	return &RawWorkspace{handle: out.Data.Workspace}, nil
}

// Close closes the handle.
func (w *RawWorkspace) Close() {
	take(C.wsfs_workspace_close(C.uint64_t(w.handle)))
}

// Call runs one tool with wsfs_call_with_options, or with
// wsfs_call_with_content when content is not nil, and returns the result.
func (w *RawWorkspace) Call(tool, args, options string, content *string) string {
	buf := make([]byte, 0, len(tool)+len(args)+len(options)+3)
	buf = append(append(buf, tool...), 0)
	buf = append(append(buf, args...), 0)
	buf = append(append(buf, options...), 0)
	ctool := (*C.char)(unsafe.Pointer(&buf[0]))
	cargs := (*C.char)(unsafe.Pointer(&buf[len(tool)+1]))
	copts := (*C.char)(unsafe.Pointer(&buf[len(tool)+1+len(args)+1]))
	var with C.int
	var cp *C.char
	var clen C.size_t
	if content != nil {
		with = 1
		if len(*content) > 0 {
			cp = (*C.char)(unsafe.Pointer(unsafe.StringData(*content)))
			clen = C.size_t(len(*content))
		}
	}
	r := C.bench_call(C.uint64_t(w.handle), ctool, cargs, copts, with, cp, clen)
	var out strings.Builder
	out.Grow(int(r.len))
	out.Write(unsafe.Slice((*byte)(unsafe.Pointer(r.s)), int(r.len)))
	C.wsfs_string_free(r.s)
	return out.String()
}

func take(p *C.char) string {
	s := C.GoString(p)
	C.wsfs_string_free(p)
	return s
}
