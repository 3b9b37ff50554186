package wsfs

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
)

// Cancellation. The library stops a call when the call's cancel token is
// cancelled, so a cancellable context needs a token that is cancelled when
// the context is. A context usually makes many calls (an agent run), so the
// token is made on its first call and kept for the context's life: a
// context.AfterFunc, registered once, cancels it when the context is
// cancelled and frees it when no call uses it any more. Every later call of
// that context costs a map lookup. Contexts are told apart by their Done
// channel (contexts derived with WithValue share their parent's, and its
// cancellation). At most maxContextTokens contexts keep a token (one that
// is dropped without ever being cancelled keeps its token until the
// process ends); beyond them, a call takes a token from the pool below and
// watches its context with an AfterFunc of its own.

// contextTokens maps a context's Done channel to its *contextToken.
var (
	contextTokens     sync.Map
	contextTokenCount atomic.Int64
)

const maxContextTokens = 1024

// contextToken is the cancel token of one context.
type contextToken struct {
	token uint64
	fired chan struct{} // closed once the context ended and the token was cancelled
	mu    sync.Mutex
	users int  // calls using the token now
	ended bool // the context ended: the token is freed once users is 0
}

// cancelToken returns the token for a call with the cancellable ctx and the
// channel closed once ctx's end has been passed on to the token. When the
// call is over, the caller calls ct.release(), or release() if ct is nil.
// ok is false if ctx has already ended (nothing to release then).
func cancelToken(ctx context.Context) (token uint64, fired <-chan struct{}, ct *contextToken, release func(), ok bool) {
	done := ctx.Done()
	v, found := contextTokens.Load(done)
	if !found {
		if contextTokenCount.Load() >= maxContextTokens {
			token, fired, release = callToken(ctx)
			return token, fired, nil, release, true
		}
		ct := &contextToken{token: cCancelTokenNew(), fired: make(chan struct{})}
		if v, found = contextTokens.LoadOrStore(done, ct); found {
			cCancelTokenFree(ct.token) // another call of ctx was first
		} else {
			contextTokenCount.Add(1)
			v = ct
			context.AfterFunc(ctx, func() { ct.end(ctx, done) })
		}
	}
	ct = v.(*contextToken)
	ct.mu.Lock()
	if ct.ended {
		ct.mu.Unlock()
		return 0, nil, nil, nil, false
	}
	ct.users++
	ct.mu.Unlock()
	return ct.token, ct.fired, ct, nil, true
}

// end runs when the context ends: the token is cancelled (unless the
// context's deadline passed: the library already enforces the deadline as
// timeout_ms and reports "timeout"), forgotten, and freed once unused.
func (ct *contextToken) end(ctx context.Context, done <-chan struct{}) {
	if !deadlinePassed(ctx) {
		cCancelTokenCancel(ct.token)
	}
	close(ct.fired)
	if contextTokens.CompareAndDelete(done, ct) {
		contextTokenCount.Add(-1)
	}
	ct.mu.Lock()
	ct.ended = true
	unused := ct.users == 0
	ct.mu.Unlock()
	if unused {
		cCancelTokenFree(ct.token)
	}
}

func (ct *contextToken) release() {
	ct.mu.Lock()
	ct.users--
	free := ct.ended && ct.users == 0
	ct.mu.Unlock()
	if free {
		cCancelTokenFree(ct.token)
	}
}

// deadlinePassed reports whether ctx ended because its deadline passed.
func deadlinePassed(ctx context.Context) bool {
	_, hasDeadline := ctx.Deadline()
	return hasDeadline && errors.Is(ctx.Err(), context.DeadlineExceeded)
}

// callToken is cancelToken for one call, when too many contexts keep a
// token: a token from the pool, and an AfterFunc watching ctx for the call.
func callToken(ctx context.Context) (token uint64, fired <-chan struct{}, release func()) {
	token = tokens.get()
	f := make(chan struct{})
	stop := context.AfterFunc(ctx, func() {
		defer close(f)
		if !deadlinePassed(ctx) {
			cCancelTokenCancel(token)
		}
	})
	return token, f, func() {
		if stop() {
			tokens.put(token) // never cancelled: reusable
		} else {
			<-f // the AfterFunc is running: let it finish before freeing
			cCancelTokenFree(token)
		}
	}
}

// tokens keeps cancel tokens that were never cancelled, for reuse by
// callToken. A token is in at most one call at a time, and one that was
// cancelled (or might have been) is freed, never reused. The list is
// bounded; tokens beyond it are freed.
var tokens tokenList

type tokenList struct {
	mu   sync.Mutex
	free []uint64
}

const maxFreeTokens = 64

func (l *tokenList) get() uint64 {
	l.mu.Lock()
	if n := len(l.free); n > 0 {
		t := l.free[n-1]
		l.free = l.free[:n-1]
		l.mu.Unlock()
		return t
	}
	l.mu.Unlock()
	return cCancelTokenNew()
}

func (l *tokenList) put(t uint64) {
	l.mu.Lock()
	if len(l.free) < maxFreeTokens {
		l.free = append(l.free, t)
		l.mu.Unlock()
		return
	}
	l.mu.Unlock()
	cCancelTokenFree(t)
}
