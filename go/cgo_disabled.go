//go:build !cgo

package wsfs

import "strings"

// This file is compiled only when cgo is off (CGO_ENABLED=0, or a cross
// build without a C compiler). The package calls the Rust library through
// cgo and cannot work without it, so the build stops here, with the one
// error below naming the fix, instead of "undefined: cCall" and friends:
//
//	undefined: wsfs_needs_cgo__build_with_CGO_ENABLED_1_and_a_C_compiler__see_go_README_md
var _ = wsfs_needs_cgo__build_with_CGO_ENABLED_1_and_a_C_compiler__see_go_README_md

// Stand-ins for cgo.go's functions, so the error above is the only one.
// They are never compiled into a binary.

func cVersion() string                                        { panic("wsfs: built without cgo") }
func cToolSpecs() string                                      { panic("wsfs: built without cgo") }
func cToolInstructions() string                               { panic("wsfs: built without cgo") }
func cWorkspaceToolSpecs(uint64) string                       { panic("wsfs: built without cgo") }
func cSetGateway(uint64, uintptr) string                      { panic("wsfs: built without cgo") }
func cSetApprovalHandler(uint64, uintptr) string              { panic("wsfs: built without cgo") }
func cOpen(string) (string, bool)                             { panic("wsfs: built without cgo") }
func cClose(uint64) string                                    { panic("wsfs: built without cgo") }
func cCancelTokenNew() uint64                                 { panic("wsfs: built without cgo") }
func cCancelTokenCancel(uint64)                               { panic("wsfs: built without cgo") }
func cCancelTokenFree(uint64)                                 { panic("wsfs: built without cgo") }
func cSession(uint64, string, string) (string, bool)          { panic("wsfs: built without cgo") }
func cDispatch(*strings.Builder, uint64, string, string) bool { panic("wsfs: built without cgo") }
func cCall(*strings.Builder, uint64, string, string, string, *string, int) bool {
	panic("wsfs: built without cgo")
}

const cMemoryArgs = 64 << 10
