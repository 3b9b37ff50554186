package wsfs

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
)

// ModelGateway is how a workspace's Wasm tools reach a model: only through
// the host. A tool with the model_access capability calls the host import
// model_generate with a JSON object; the gateway answers with JSON. The
// request's shape is between the tool and the host (the example tool
// tools/ask_model sends {"prompt": "..."}; fantasytools.ModelGateway takes
// {"prompt", "system"?, "max_output_tokens"?}).
//
// ctx ends at the tool's deadline: an answer after it makes the tool's call
// CodeTimeout. An error wrapping ErrGatewayRequest reaches the tool as
// invalid_arguments, one ending with ctx as timeout, any other as
// gateway_error, with the error's text as the message. It may be called from
// several goroutines at once.
type ModelGateway func(ctx context.Context, requestJSON string) (responseJSON string, err error)

// ErrGatewayRequest marks a request the gateway refuses as malformed.
var ErrGatewayRequest = errors.New("invalid model request")

// gatewayByID holds every gateway a workspace was given, by a non-zero id
// that travels through C as the callback's userdata. A call in flight may
// still use one that was replaced, so ids are forgotten only when their
// workspace is closed; a call that comes after gets gateway_error, never a
// crash.
var (
	gatewayByID sync.Map // uintptr -> ModelGateway
	gatewayIDs  atomic.Uintptr
)

func lookupGateway(id uintptr) (ModelGateway, bool) {
	g, ok := gatewayByID.Load(id)
	if !ok {
		return nil, false
	}
	return g.(ModelGateway), true
}

// gateways are the ids a workspace registered.
type gateways struct {
	mu  sync.Mutex
	ids []uintptr
}

// SetModelGateway sets the model gateway of the workspace's Wasm tools
// (wsfs_set_model_gateway); nil removes it, and tools then get
// gateway_error. A workspace without Wasm tools accepts it with a warning
// (nothing calls it).
func (ws *Workspace) SetModelGateway(g ModelGateway) error {
	if ws.closed.Load() {
		return newError("set_model_gateway", CodeInvalidWorkspace, "the workspace is closed")
	}
	var id uintptr
	if g != nil {
		id = gatewayIDs.Add(1)
		gatewayByID.Store(id, g)
		ws.gateways.mu.Lock()
		ws.gateways.ids = append(ws.gateways.ids, id)
		ws.gateways.mu.Unlock()
	}
	raw := cSetGateway(ws.handle, id)
	env, perr := parseEnvelope("set_model_gateway", raw, outputFull, nil)
	if perr != nil {
		return perr
	}
	if !env.OK {
		return env.err("set_model_gateway", nil)
	}
	return nil
}

// releaseGateways forgets the workspace's gateways once it is closed.
func (ws *Workspace) releaseGateways() {
	ws.gateways.mu.Lock()
	defer ws.gateways.mu.Unlock()
	for _, id := range ws.gateways.ids {
		gatewayByID.Delete(id)
	}
	ws.gateways.ids = nil
}
