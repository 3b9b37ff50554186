package wsfs

import (
	"context"
	"encoding/json"
	"sync"
	"sync/atomic"
)

// ApprovalRequest is what an approval handler is asked about: one call of a
// tool that needs confirming (git_commit), or that only a host is asked about
// (every shell command, a recursive delete_file), with the model's arguments
// as it gave them and why the call needs approval.
type ApprovalRequest struct {
	Tool      string          `json:"tool"`
	Arguments json.RawMessage `json:"arguments"`
	Why       string          `json:"why"`
}

// ApprovalHandler decides the calls that need confirming, instead of the
// model's confirmed: true (a soft gate). approved runs the call whatever its
// confirmed says; otherwise it fails with CodeApprovalDenied and reason. An
// error (its text is the reason), a panic, or an answer after ctx ends (the
// call's deadline) denies the call too. It may be called from several
// goroutines at once.
type ApprovalHandler func(ctx context.Context, req ApprovalRequest) (approved bool, reason string, err error)

// approvalByID holds every handler a workspace was given, by a non-zero id
// that travels through C as the callback's userdata; as gatewayByID, ids are
// forgotten when their workspace is closed, and a call that reaches a
// forgotten one is denied.
var (
	approvalByID sync.Map // uintptr -> ApprovalHandler
	approvalIDs  atomic.Uintptr
)

func lookupApproval(id uintptr) (ApprovalHandler, bool) {
	h, ok := approvalByID.Load(id)
	if !ok {
		return nil, false
	}
	return h.(ApprovalHandler), true
}

// approvals are the ids a workspace registered.
type approvals struct {
	mu  sync.Mutex
	ids []uintptr
}

// SetApprovalHandler sets the workspace's approval handler
// (wsfs_set_approval_handler): from now on it decides every call that needs
// confirming (git_commit), every shell command and every recursive
// delete_file. nil removes it, and confirmed: true is the gate again. A
// workspace where no tool asks it (read-only, exec off) accepts it with a
// warning.
func (ws *Workspace) SetApprovalHandler(h ApprovalHandler) error {
	if ws.closed.Load() {
		return newError("set_approval_handler", CodeInvalidWorkspace, "the workspace is closed")
	}
	var id uintptr
	if h != nil {
		id = approvalIDs.Add(1)
		approvalByID.Store(id, h)
		ws.approvals.mu.Lock()
		ws.approvals.ids = append(ws.approvals.ids, id)
		ws.approvals.mu.Unlock()
	}
	raw := cSetApprovalHandler(ws.handle, id)
	env, perr := parseEnvelope("set_approval_handler", raw, outputFull, nil)
	if perr != nil {
		return perr
	}
	if !env.OK {
		return env.err("set_approval_handler", nil)
	}
	return nil
}

// releaseApprovals forgets the workspace's approval handlers once it is
// closed.
func (ws *Workspace) releaseApprovals() {
	ws.approvals.mu.Lock()
	defer ws.approvals.mu.Unlock()
	for _, id := range ws.approvals.ids {
		approvalByID.Delete(id)
	}
	ws.approvals.ids = nil
}
