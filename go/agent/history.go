package agent

import (
	"context"
	"slices"
	"sync"

	"charm.land/fantasy"
)

// HistoryStore keeps the Runner's session histories, so a host can persist
// them (a file, a database) and bound their size. The Runner calls Load at
// the start of a Run and Append once at its end; turns of one session never
// overlap, but different sessions call concurrently, so a HistoryStore must
// be safe for concurrent use.
//
// A turn is what one Run adds: the user message, then every finished step's
// assistant message (text and tool calls) and tool message (tool results),
// exactly as the model saw them. A store that bounds a history should drop
// whole turns from the front, never part of one: most providers refuse a
// tool result whose tool call is missing.
type HistoryStore interface {
	// Load returns a session's history, oldest first (nil for a session
	// it does not know). The Runner does not modify what it gets.
	Load(ctx context.Context, sessionID string) ([]fantasy.Message, error)
	// Append adds one turn to a session, creating it if needed. The store
	// may keep turn as it is; the Runner does not modify it afterwards.
	Append(ctx context.Context, sessionID string, turn []fantasy.Message) error
	// Delete forgets a session; deleting an unknown session is not an
	// error.
	Delete(ctx context.Context, sessionID string) error
}

// MemoryHistory is the default HistoryStore: histories in memory, lost when
// the process ends. Its zero value keeps every turn; MaxTurns bounds each
// session. It is safe for concurrent use.
type MemoryHistory struct {
	// MaxTurns, if positive, keeps only each session's last MaxTurns turns
	// (older ones are dropped whole). Set it before first use.
	MaxTurns int

	mu       sync.Mutex
	sessions map[string][][]fantasy.Message // session ID -> turns
}

var _ HistoryStore = (*MemoryHistory)(nil)

// Load implements HistoryStore. The result is a new slice.
func (h *MemoryHistory) Load(_ context.Context, sessionID string) ([]fantasy.Message, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	turns, ok := h.sessions[sessionID]
	if !ok {
		return nil, nil
	}
	return slices.Concat(turns...), nil
}

// Append implements HistoryStore.
func (h *MemoryHistory) Append(_ context.Context, sessionID string, turn []fantasy.Message) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.sessions == nil {
		h.sessions = make(map[string][][]fantasy.Message)
	}
	turns := append(h.sessions[sessionID], turn)
	if h.MaxTurns > 0 && len(turns) > h.MaxTurns {
		turns = slices.Delete(turns, 0, len(turns)-h.MaxTurns)
	}
	h.sessions[sessionID] = turns
	return nil
}

// Delete implements HistoryStore.
func (h *MemoryHistory) Delete(_ context.Context, sessionID string) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.sessions, sessionID)
	return nil
}

// Sessions returns the IDs of the sessions that have a history, sorted.
func (h *MemoryHistory) Sessions() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	ids := make([]string, 0, len(h.sessions))
	for id := range h.sessions {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

// sessionLocks serialises the turns of each session. An entry lives while
// a Run or ResetSession uses it, so the map holds only active sessions.
type sessionLocks struct {
	mu      sync.Mutex
	entries map[string]*sessionLock
}

type sessionLock struct {
	turn sync.Mutex // held for a whole Run
	refs int        // guarded by sessionLocks.mu

	mu  sync.Mutex // orders a Run's Append against ResetSession
	gen uint64     // guarded by mu; ResetSession increments it
}

func (l *sessionLocks) acquire(id string) *sessionLock {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.entries == nil {
		l.entries = make(map[string]*sessionLock)
	}
	e, ok := l.entries[id]
	if !ok {
		e = &sessionLock{}
		l.entries[id] = e
	}
	e.refs++
	return e
}

func (l *sessionLocks) release(id string, e *sessionLock) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if e.refs--; e.refs == 0 {
		delete(l.entries, id)
	}
}

// History returns a session's history from the Runner's HistoryStore (nil
// for an unknown session). It does not wait for a Run in progress; that
// Run's turn is added when it ends.
func (r *Runner) History(ctx context.Context, sessionID string) ([]fantasy.Message, error) {
	return r.history.Load(ctx, sessionID)
}

// ResetSession deletes a session's history from the HistoryStore. A Run in
// progress in that session completes, but its turn is not recorded.
func (r *Runner) ResetSession(ctx context.Context, sessionID string) error {
	e := r.locks.acquire(sessionID)
	defer r.locks.release(sessionID, e)
	e.mu.Lock()
	defer e.mu.Unlock()
	e.gen++
	return r.history.Delete(ctx, sessionID)
}

// HistoryStore returns the Runner's history store.
func (r *Runner) HistoryStore() HistoryStore { return r.history }
