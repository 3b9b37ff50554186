package wsfs

// This file is the whole cgo binding: every #cgo directive and every call
// into C lives here, and nothing else in the module imports "C" except
// cgo_gateway.go and cgo_approval.go, the Go functions C calls back (the
// model gateway, the approval handler). The
// functions below are deliberately thin: they convert strings, call the
// library and free what it returns. Validation, context handling and JSON
// decoding live in the typed API (workspace.go, tools.go).
//
// Linking. By default the static archive target/release/libwsfs.a is linked
// into the Go binary, so `go build` and `go test` work after `make build`
// without LD_LIBRARY_PATH and the binary has no runtime dependency on the
// library. Build with `-tags wsfs_shared` to link target/release/libwsfs.so
// instead; an rpath to target/release is recorded so the binary still finds
// it without LD_LIBRARY_PATH.
//
// A missing library stops the build with a message saying how to build it,
// not with a linker error: target/release is on the include path (it holds
// no headers), so __has_include can look for the library file there before
// anything is linked. It runs before wsfs.h is included, because a module
// copied out of its checkout (the module cache) has neither. Without cgo,
// cgo_disabled.go stops the build instead.
//
// Go does not track the library file: `make build` also writes
// libwsfs_stamp.go (a hash of libwsfs.a), so a changed library changes this
// package and go build relinks.
//
// A release of the module (make dist, scripts/dist.py) carries the library
// inside it instead, as wasmtime-go does: build/include/wsfs.h and
// build/linux-x86_64/libwsfs.a. make dist writes the release's copy of this
// file with the lines between the two "wsfs:link" markers below replaced by
// directives that link that copy (docs/install.md, "The Go module"); the
// rest of the file is the same in both.

/*
// wsfs:link begin
#cgo CFLAGS: -I${SRCDIR}/../include -I${SRCDIR}/../target/release
#cgo wsfs_shared CFLAGS: -DWSFS_SHARED
#cgo !wsfs_shared LDFLAGS: ${SRCDIR}/../target/release/libwsfs.a -ldl -lm -lpthread -lrt -lgcc_s -lc
#cgo wsfs_shared LDFLAGS: -L${SRCDIR}/../target/release -lwsfs -Wl,-rpath,${SRCDIR}/../target/release
#if defined(WSFS_SHARED)
#  if !__has_include(<libwsfs.so>)
#    error "wsfs: target/release/libwsfs.so not found in the wsfs checkout this Go module is in: run 'make build' there first (the module links the Rust library; see go/README.md, Installing)"
#  endif
#elif !__has_include(<libwsfs.a>)
#  error "wsfs: target/release/libwsfs.a not found in the wsfs checkout this Go module is in: run 'make build' there first (the module links the Rust library; see go/README.md, Installing)"
#endif
// wsfs:link end
#include <stdlib.h>
#include <string.h>
#include "wsfs.h"

// A string returned by the library and its length, so Go copies it without
// scanning for the NUL.
typedef struct {
	char  *s;
	size_t len;
} wsfs_go_string;

// One call of a tool, in one cgo transition: wsfs_call_sized, which also
// gives the result's length. A NULL content with with_content set is passed
// as an empty buffer: Go passes the bytes of a string, the empty string may
// have none, and NULL would mean "no buffer".
static wsfs_go_string wsfs_go_call(uint64_t workspace, const char *tool_name,
		const char *args_json, const char *options_json,
		int with_content, const char *content, size_t content_len) {
	wsfs_go_string r = { NULL, 0 };
	r.s = wsfs_call_sized(workspace, tool_name, args_json, options_json,
		with_content ? (content ? content : "") : NULL, content_len, &r.len);
	return r;
}

// The Go model gateway (cgo_gateway.go exports it; a file with an //export
// may hold declarations only, so the call that passes it lives here).
extern int32_t wsfsGoGateway(void *userdata, char *request_json, uint64_t timeout_ms,
		struct wsfs_gateway_response *response);
static char *wsfs_go_set_gateway(uint64_t workspace, uintptr_t handle) {
	return wsfs_set_model_gateway(workspace,
		handle ? (wsfs_model_gateway_fn)wsfsGoGateway : NULL, (void *)handle);
}

// The Go approval handler (cgo_approval.go exports it), passed the same way.
extern int32_t wsfsGoApproval(void *userdata, char *request_json, uint64_t timeout_ms,
		struct wsfs_approval_response *response);
static char *wsfs_go_set_approval_handler(uint64_t workspace, uintptr_t handle) {
	return wsfs_set_approval_handler(workspace,
		handle ? (wsfs_approval_handler_fn)wsfsGoApproval : NULL, (void *)handle);
}
*/
import "C"

import (
	"strings"
	"unsafe"
)

// cString copies s into C memory. It refuses strings with an embedded NUL
// byte, which C would silently truncate; callers check for NUL bytes first
// and report a proper error, so ok == false here is a programming error that
// is still handled safely.
func cString(s string) (p *C.char, ok bool) {
	if strings.IndexByte(s, 0) >= 0 {
		return nil, false
	}
	return C.CString(s), true
}

func freeCString(p *C.char) {
	if p != nil {
		C.free(unsafe.Pointer(p))
	}
}

// takeString copies a string returned by the library into Go memory and
// releases the original with wsfs_string_free, exactly once.
func takeString(p *C.char) string {
	if p == nil { // the contract says this never happens
		return ""
	}
	s := C.GoString(p)
	C.wsfs_string_free(p)
	return s
}

func cVersion() string   { return takeString(C.wsfs_version()) }
func cToolSpecs() string { return takeString(C.wsfs_tool_specs()) }

// cSetGateway sets (handle != 0) or removes the Go model gateway of a
// workspace; handle is a cgo.Handle of the ModelGateway.
func cSetGateway(workspace uint64, handle uintptr) string {
	return takeString(C.wsfs_go_set_gateway(C.uint64_t(workspace), C.uintptr_t(handle)))
}

// cSetApprovalHandler sets (handle != 0) or removes the Go approval handler
// of a workspace; handle is an id in approvalByID.
func cSetApprovalHandler(workspace uint64, handle uintptr) string {
	return takeString(C.wsfs_go_set_approval_handler(C.uint64_t(workspace), C.uintptr_t(handle)))
}

func cWorkspaceToolSpecs(handle uint64) string {
	return takeString(C.wsfs_workspace_tool_specs(C.uint64_t(handle)))
}

func cToolInstructions() string { return takeString(C.wsfs_tool_instructions()) }

// cOpen calls wsfs_workspace_open. ok is false if configJSON has a NUL byte.
func cOpen(configJSON string) (envelope string, ok bool) {
	cfg, ok := cString(configJSON)
	if !ok {
		return "", false
	}
	defer freeCString(cfg)
	return takeString(C.wsfs_workspace_open(cfg)), true
}

func cClose(handle uint64) string {
	return takeString(C.wsfs_workspace_close(C.uint64_t(handle)))
}

// callStrings holds a call's tool name, arguments and options as three
// NUL-terminated strings in one buffer, which C reads in place: one
// allocation instead of three C.CString copies and three C.free calls.
// Usually the buffer is Go memory (the cgo pointer rules allow it: it holds
// no Go pointers, and the library only reads its arguments during the
// call); above cMemoryArgs bytes (a fantasy write_file whose arguments hold
// the content) it is C memory, which spares the Go heap and its collector,
// and cbuf is then to be freed with C.free. ok is false if any string has a
// NUL byte (nothing is called then).
func callStrings(tool, argsJSON, optionsJSON string) (ctool, cargs, copts *C.char, cbuf unsafe.Pointer, ok bool) {
	for _, s := range [...]string{tool, argsJSON, optionsJSON} {
		if strings.IndexByte(s, 0) >= 0 {
			return nil, nil, nil, nil, false
		}
	}
	n := len(tool) + len(argsJSON) + len(optionsJSON) + 3
	var buf []byte
	if n > cMemoryArgs {
		cbuf = C.malloc(C.size_t(n))
		if cbuf == nil {
			panic("wsfs: out of memory")
		}
		buf = unsafe.Slice((*byte)(cbuf), n)[:0]
	} else {
		buf = make([]byte, 0, n)
	}
	buf = append(append(buf, tool...), 0)
	buf = append(append(buf, argsJSON...), 0)
	buf = append(append(buf, optionsJSON...), 0)
	ctool = (*C.char)(unsafe.Pointer(&buf[0]))
	cargs = (*C.char)(unsafe.Pointer(&buf[len(tool)+1]))
	copts = (*C.char)(unsafe.Pointer(&buf[len(tool)+1+len(argsJSON)+1]))
	return ctool, cargs, copts, cbuf, true
}

// cMemoryArgs is the size above which callStrings uses C memory.
const cMemoryArgs = 64 << 10

// cCall calls wsfs_call_sized (wsfs_call_with_options, or
// wsfs_call_with_content with *content as the buffer if content is not nil,
// with the result's length). The content is passed in
// place (zero copy; it may contain NUL bytes). The result is copied into
// result, an empty builder, with room for spare more bytes, so the caller
// can extend it without copying it again (ReadFile's truncation notice). ok
// is false if tool, argsJSON or optionsJSON has a NUL byte (nothing is
// called then).
func cCall(result *strings.Builder, handle uint64, tool, argsJSON, optionsJSON string, content *string, spare int) (ok bool) {
	ctool, cargs, copts, cbuf, ok := callStrings(tool, argsJSON, optionsJSON)
	if !ok {
		return false
	}
	if cbuf != nil {
		defer C.free(cbuf)
	}
	var withContent C.int
	var cp *C.char // NULL for "": the C wrapper passes an empty buffer instead
	var clen C.size_t
	if content != nil {
		withContent = 1
		if len(*content) > 0 {
			cp = (*C.char)(unsafe.Pointer(unsafe.StringData(*content)))
			clen = C.size_t(len(*content))
		}
	}
	r := C.wsfs_go_call(C.uint64_t(handle), ctool, cargs, copts, withContent, cp, clen)
	if r.s == nil { // the contract says this never happens
		return true
	}
	// strings.Builder allocates without zeroing the memory first.
	result.Grow(int(r.len) + spare)
	result.Write(unsafe.Slice((*byte)(unsafe.Pointer(r.s)), int(r.len)))
	C.wsfs_string_free(r.s)
	return true
}

// cDispatch calls wsfs_dispatch and copies the result into result, an
// empty builder. ok is false if callJSON or optionsJSON has a NUL byte
// (nothing is called then).
func cDispatch(result *strings.Builder, handle uint64, callJSON, optionsJSON string) (ok bool) {
	_, ccall, copts, cbuf, ok := callStrings("", callJSON, optionsJSON)
	if !ok {
		return false
	}
	if cbuf != nil {
		defer C.free(cbuf)
	}
	result.WriteString(takeString(C.wsfs_dispatch(C.uint64_t(handle), ccall, copts)))
	return true
}

func cCancelTokenNew() uint64         { return uint64(C.wsfs_cancel_token_new()) }
func cCancelTokenCancel(token uint64) { C.wsfs_cancel_token_cancel(C.uint64_t(token)) }
func cCancelTokenFree(token uint64)   { C.wsfs_cancel_token_free(C.uint64_t(token)) }

// cSession calls one of the wsfs_session_* functions: op is its name after
// the prefix ("diff", "commit", ...); optionsJSON "" passes NULL (no
// options). ok is false if optionsJSON has a NUL byte or op is unknown
// (nothing is called then).
func cSession(handle uint64, op, optionsJSON string) (envelope string, ok bool) {
	var opts *C.char
	if optionsJSON != "" {
		if opts, ok = cString(optionsJSON); !ok {
			return "", false
		}
		defer freeCString(opts)
	}
	h := C.uint64_t(handle)
	switch op {
	case "diff":
		return takeString(C.wsfs_session_diff(h, opts)), true
	case "commit":
		return takeString(C.wsfs_session_commit(h, opts)), true
	case "checkpoint":
		return takeString(C.wsfs_session_checkpoint(h, opts)), true
	case "rewind":
		return takeString(C.wsfs_session_rewind(h, opts)), true
	case "checkpoints":
		return takeString(C.wsfs_session_checkpoints(h)), true
	case "discard":
		return takeString(C.wsfs_session_discard(h)), true
	case "refresh":
		return takeString(C.wsfs_session_refresh(h)), true
	}
	return "", false
}
