//go:build cgo

package wsfs

/*
#include <stdint.h>
#include "wsfs.h"
*/
import "C"

import (
	"context"
	"errors"
	"time"
	"unsafe"
)

// wsfsGoGateway is the C callback behind Workspace.SetModelGateway: it runs
// the ModelGateway registered under the id in userdata, with a context that
// ends at the tool's deadline, and answers through wsfs_gateway_respond.
//
//export wsfsGoGateway
func wsfsGoGateway(userdata unsafe.Pointer, request *C.char, timeoutMS C.uint64_t, response *C.struct_wsfs_gateway_response) C.int32_t {
	gateway, ok := lookupGateway(uintptr(userdata))
	if !ok {
		return C.WSFS_GATEWAY_ERROR
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Duration(timeoutMS)*time.Millisecond)
	defer cancel()
	answer, status := runGateway(ctx, gateway, C.GoString(request))
	if answer != "" {
		if text, ok := cString(answer); ok {
			C.wsfs_gateway_respond(response, text)
			freeCString(text)
		}
	}
	return C.int32_t(status)
}

// runGateway calls gateway and maps its outcome to a WSFS_GATEWAY_* status
// with the answer or the error's message. A panic is a gateway error.
func runGateway(ctx context.Context, gateway ModelGateway, request string) (answer string, status int) {
	defer func() {
		if r := recover(); r != nil {
			answer, status = "the model gateway panicked", int(C.WSFS_GATEWAY_ERROR)
		}
	}()
	answer, err := gateway(ctx, request)
	switch {
	case err == nil:
		return answer, int(C.WSFS_GATEWAY_OK)
	case errors.Is(err, context.DeadlineExceeded) || ctx.Err() != nil:
		return err.Error(), int(C.WSFS_GATEWAY_TIMEOUT)
	case errors.Is(err, ErrGatewayRequest):
		return err.Error(), int(C.WSFS_GATEWAY_INVALID_REQUEST)
	}
	return err.Error(), int(C.WSFS_GATEWAY_ERROR)
}
