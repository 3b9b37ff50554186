package wsfs

// This file is the whole cgo binding: every #cgo directive and every call
// into C lives here, and nothing else in the module imports "C". The
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

/*
#cgo CFLAGS: -I${SRCDIR}/../include
#cgo !wsfs_shared LDFLAGS: ${SRCDIR}/../target/release/libwsfs.a -ldl -lm -lpthread -lrt -lgcc_s -lc
#cgo wsfs_shared LDFLAGS: -L${SRCDIR}/../target/release -lwsfs -Wl,-rpath,${SRCDIR}/../target/release
#include <stdlib.h>
#include "wsfs.h"
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

// cCall calls wsfs_call_with_options. ok is false if any argument has a NUL
// byte (nothing is called then).
func cCall(handle uint64, tool, argsJSON, optionsJSON string) (envelope string, ok bool) {
	ctool, ok := cString(tool)
	if !ok {
		return "", false
	}
	defer freeCString(ctool)
	cargs, ok := cString(argsJSON)
	if !ok {
		return "", false
	}
	defer freeCString(cargs)
	copts, ok := cString(optionsJSON)
	if !ok {
		return "", false
	}
	defer freeCString(copts)
	return takeString(C.wsfs_call_with_options(C.uint64_t(handle), ctool, cargs, copts)), true
}

func cCancelTokenNew() uint64         { return uint64(C.wsfs_cancel_token_new()) }
func cCancelTokenCancel(token uint64) { C.wsfs_cancel_token_cancel(C.uint64_t(token)) }
func cCancelTokenFree(token uint64)   { C.wsfs_cancel_token_free(C.uint64_t(token)) }
