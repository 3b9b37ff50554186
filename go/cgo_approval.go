//go:build cgo

package wsfs

/*
#include <stdint.h>
#include "wsfs.h"
*/
import "C"

import (
	"context"
	"encoding/json"
	"fmt"
	"time"
	"unsafe"
)

// wsfsGoApproval is the C callback behind Workspace.SetApprovalHandler: it
// runs the ApprovalHandler registered under the id in userdata, with a
// context that ends at the call's deadline, and gives its reason through
// wsfs_approval_respond.
//
//export wsfsGoApproval
func wsfsGoApproval(userdata unsafe.Pointer, request *C.char, timeoutMS C.uint64_t, response *C.struct_wsfs_approval_response) C.int32_t {
	handler, ok := lookupApproval(uintptr(userdata))
	if !ok {
		respondApproval(response, "the workspace was closed, and its approval handler with it")
		return C.WSFS_APPROVAL_ERROR
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Duration(timeoutMS)*time.Millisecond)
	defer cancel()
	reason, status := runApproval(ctx, handler, C.GoString(request))
	respondApproval(response, reason)
	return C.int32_t(status)
}

// respondApproval gives the library the handler's reason, if it has one.
func respondApproval(response *C.struct_wsfs_approval_response, reason string) {
	if reason == "" {
		return
	}
	if text, ok := cString(reason); ok {
		C.wsfs_approval_respond(response, text)
		freeCString(text)
	}
}

// runApproval calls handler and maps its answer to a WSFS_APPROVAL_* status
// with its reason. An error or a panic is the handler's failure.
func runApproval(ctx context.Context, handler ApprovalHandler, request string) (reason string, status int) {
	defer func() {
		if r := recover(); r != nil {
			reason, status = fmt.Sprintf("the approval handler panicked: %v", r), int(C.WSFS_APPROVAL_ERROR)
		}
	}()
	var req ApprovalRequest
	if err := json.Unmarshal([]byte(request), &req); err != nil {
		return "the approval request is not JSON: " + err.Error(), int(C.WSFS_APPROVAL_ERROR)
	}
	approved, reason, err := handler(ctx, req)
	switch {
	case err != nil:
		return err.Error(), int(C.WSFS_APPROVAL_ERROR)
	case approved:
		return "", int(C.WSFS_APPROVAL_APPROVE)
	}
	return reason, int(C.WSFS_APPROVAL_DENY)
}
