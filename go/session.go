package wsfs

import (
	"context"
	"encoding/json"
	"runtime"
	"strings"
)

// The host's operations on an overlay session (Config.Mode ModeOverlay):
// look at what the agent changed, commit all or part of it to the base,
// checkpoint and rewind the session, or drop it. They are the host's, not
// the model's: no agent tool calls them. Each one waits for the tool calls
// in flight on the workspace, then runs to its end: a context that is done
// before the call starts returns CodeCancelled or CodeTimeout without
// calling the library, and one that ends during it does not stop it (the
// library's session operations take no deadline). A workspace in host mode
// gets CodeNoSession.

// Session operation names, as SessionCallRaw takes them (the C functions'
// names after "wsfs_session_").
const (
	SessionOpDiff        = "diff"
	SessionOpCommit      = "commit"
	SessionOpCheckpoint  = "checkpoint"
	SessionOpRewind      = "rewind"
	SessionOpCheckpoints = "checkpoints"
	SessionOpDiscard     = "discard"
	SessionOpRefresh     = "refresh"
)

// SessionOps lists the session operations SessionCallRaw runs.
var SessionOps = []string{SessionOpDiff, SessionOpCommit, SessionOpCheckpoint, SessionOpRewind,
	SessionOpCheckpoints, SessionOpDiscard, SessionOpRefresh}

// DiffOptions chooses what SessionDiff shows. The zero value: every change,
// the unified text bounded by the library's default (256 KiB).
type DiffOptions struct {
	// Paths limits the diff to these workspace paths (a directory: every
	// change below it); nil means all.
	Paths []string `json:"paths,omitempty"`
	// MaxBytes bounds DiffResult.Unified (0: the library's default). The
	// list of changes is never cut.
	MaxBytes int `json:"max_bytes,omitempty"`
	// IncludeIgnored lists the changes the workspace's .gitignore files and
	// the built-in cache list ignore too (docs/session-review.md); without
	// it they are left out and counted in DiffResult.Ignored.
	IncludeIgnored bool `json:"include_ignored,omitempty"`
}

// DiffChange.Type of a git repository's changes, one entry at its .git path.
const ChangeGitRepository = "git_repository"

// RepositoryCommit is a commit the session made in a repository.
type RepositoryCommit struct {
	Hash string `json:"hash"`
	// Subject is the message's first line; nil where the repository keeps
	// no reflog.
	Subject *string `json:"subject"`
}

// Change statuses (DiffChange.Status).
const (
	ChangeAdded    = "A"
	ChangeModified = "M"
	ChangeDeleted  = "D"
)

// DiffHunk is one hunk of a text file's change. ID names it in
// CommitOptions.Hunks; it stays the same while the file's change does.
// Line numbers are 1-based, as in a unified diff.
type DiffHunk struct {
	ID       string `json:"id"`
	OldStart int    `json:"old_start"`
	OldLines int    `json:"old_lines"`
	NewStart int    `json:"new_start"`
	NewLines int    `json:"new_lines"`
}

// DiffChange is one changed path of the session against the base.
type DiffChange struct {
	// Path is workspace-relative.
	Path string `json:"path"`
	// Status is ChangeAdded, ChangeModified or ChangeDeleted.
	Status string `json:"status"`
	// Type is the entry's type (EntryFile, EntryDir, EntrySymlink or
	// EntryOther): the new entry's, the old one's for a deletion; or
	// ChangeGitRepository for every change below a .git directory together.
	Type string `json:"type"`
	// Binary: not text on either side (NUL bytes or not UTF-8), so no hunks.
	Binary bool `json:"binary"`
	// ModeOnly: only the file's mode changed.
	ModeOnly bool `json:"mode_only"`
	// BytesBefore and BytesAfter are the sizes in the base and in the
	// session; nil where there is no file (an addition, a deletion, a
	// directory).
	BytesBefore *int64 `json:"bytes_before"`
	BytesAfter  *int64 `json:"bytes_after"`
	// Hunks are the text changes, in file order (none for binary files,
	// directories and symlinks).
	Hunks []DiffHunk `json:"hunks"`
	// ChangedPaths (a repository) is how many paths below it changed.
	ChangedPaths int `json:"changed_paths,omitempty"`
	// Commits (a repository) are the commits the session made, oldest
	// first. Committing the repository carries all its paths together.
	Commits []RepositoryCommit `json:"commits,omitempty"`
}

// DiffResult is the result of SessionDiff.
type DiffResult struct {
	// Changes lists the deletions first, always all of them, then the rest;
	// a file copied into the session but unchanged is not a change.
	Changes []DiffChange `json:"changes"`
	// Unified is the changes as a unified diff, bounded by
	// DiffOptions.MaxBytes.
	Unified string `json:"unified"`
	// Truncated: Unified was cut (a note at its end says what is missing).
	Truncated bool `json:"truncated"`
	// Ignored counts the changes left out because .gitignore or the
	// built-in cache list ignores them; they stay in the session
	// (DiffOptions.IncludeIgnored lists them).
	Ignored int `json:"ignored"`
	// Warnings name .gitignore files that could not be applied.
	Warnings []string `json:"warnings"`
	// Text is the library's summary.
	Text string `json:"-"`
}

// CommitOptions chooses what SessionCommit writes to the base. The zero
// value commits every change.
type CommitOptions struct {
	// Paths commits only these paths (a directory: every change below it).
	Paths []string `json:"paths,omitempty"`
	// Hunks commits only these hunks (DiffHunk.ID) of these files: the base
	// gets base + those hunks; the rest stays in the session, shown against
	// the new base.
	Hunks map[string][]string `json:"hunks,omitempty"`
	// Force commits even where the base changed since the session first
	// touched the path (the session's version wins).
	Force bool `json:"force,omitempty"`
	// Merge commits a three-way text merge where the base changed, if the
	// two changes do not overlap.
	Merge bool `json:"merge,omitempty"`
	// IncludeIgnored commits the changes .gitignore and the built-in cache
	// list ignore too; without it they stay in the session
	// (CommitResult.Ignored counts them).
	IncludeIgnored bool `json:"include_ignored,omitempty"`
}

// CommitConflict is a path whose base is no longer what the session first
// saw.
type CommitConflict struct {
	Path string `json:"path"`
	// BaseChanged: the base is not what it was at the session's first touch.
	BaseChanged bool `json:"base_changed"`
	// SessionChanged: the session changed it too.
	SessionChanged bool `json:"session_changed"`
	// Mergeable: a three-way merge succeeds (CommitOptions.Merge commits it).
	Mergeable bool `json:"mergeable"`
}

// CommitResult is the result of SessionCommit. A conflict is not an error:
// Committed is false, Conflicts says why, and nothing was written.
type CommitResult struct {
	Committed bool `json:"committed"`
	// Files are the base paths changed.
	Files []string `json:"files"`
	// Conflicts (empty when Committed).
	Conflicts []CommitConflict `json:"conflicts"`
	// Merged are the paths committed as a three-way merge.
	Merged []string `json:"merged"`
	// Warnings are the library's notes on the commit.
	Warnings []string `json:"warnings"`
	// Ignored counts the ignored changes at the paths given that stayed in
	// the session (CommitOptions.IncludeIgnored commits them).
	Ignored int `json:"ignored"`
	// Text is the library's summary.
	Text string `json:"-"`
}

// CheckpointOptions are SessionCheckpoint's options.
type CheckpointOptions struct {
	// Label is a name for people (Checkpoint.Label); optional.
	Label string `json:"label,omitempty"`
}

// CheckpointResult is the result of SessionCheckpoint.
type CheckpointResult struct {
	// ID names the checkpoint for SessionRewind.
	ID string `json:"id"`
}

// Checkpoint is one of SessionCheckpoints' checkpoints.
type Checkpoint struct {
	ID    string `json:"id"`
	Label string `json:"label"`
	// Time is when it was taken, RFC 3339 UTC.
	Time string `json:"time"`
	// Paths are those whose before-images it holds: the paths changed
	// since the checkpoint before it.
	Paths []string `json:"paths"`
}

// SessionDiff returns the session's changes against the base.
func (ws *Workspace) SessionDiff(ctx context.Context, opts DiffOptions) (DiffResult, error) {
	var r DiffResult
	text, err := ws.sessionTyped(ctx, SessionOpDiff, opts, &r)
	r.Text = text
	return r, err
}

// SessionCommit writes the session's changes (all, some paths or some
// hunks) to the base. Before anything is written every affected path's base
// must still be what the session first saw; otherwise the result has
// Committed false and Conflicts, and nothing changed (unless Force, or
// Merge and a clean merge). Each file is replaced atomically under a
// journal (a crash is rolled back at the next open), keeping its mode; a
// reader of the base may see some files new and others not yet. The
// workspace's policy applies to every base path (with ExecEnabled, less its
// DenyWrite .git/**: git run by the developer tools writes .git in the
// session, as it would in the workspace in host mode).
func (ws *Workspace) SessionCommit(ctx context.Context, opts CommitOptions) (CommitResult, error) {
	var r CommitResult
	text, err := ws.sessionTyped(ctx, SessionOpCommit, opts, &r)
	r.Text = text
	return r, err
}

// SessionCheckpoint records a checkpoint of the session. Its cost follows
// what changed since the previous checkpoint, never the size of the tree.
func (ws *Workspace) SessionCheckpoint(ctx context.Context, opts CheckpointOptions) (CheckpointResult, error) {
	var r CheckpointResult
	_, err := ws.sessionTyped(ctx, SessionOpCheckpoint, opts, &r)
	return r, err
}

// SessionRewind brings the session back to checkpoint id and removes the
// newer checkpoints; the base is not touched. An unknown id is
// CodeInvalidArguments.
func (ws *Workspace) SessionRewind(ctx context.Context, id string) error {
	_, err := ws.sessionTyped(ctx, SessionOpRewind, struct {
		ID string `json:"id"`
	}{id}, nil)
	return err
}

// SessionCheckpoints lists the session's checkpoints, oldest first.
func (ws *Workspace) SessionCheckpoints(ctx context.Context) ([]Checkpoint, error) {
	var r struct {
		Checkpoints []Checkpoint `json:"checkpoints"`
	}
	_, err := ws.sessionTyped(ctx, SessionOpCheckpoints, nil, &r)
	return r.Checkpoints, err
}

// SessionDiscard drops every change and checkpoint of the session and goes
// on in a new, empty session of the same name: the workspace shows the base.
func (ws *Workspace) SessionDiscard(ctx context.Context) error {
	_, err := ws.sessionTyped(ctx, SessionOpDiscard, nil, nil)
	return err
}

// SessionRefresh makes the session's view show the base as it is now. A
// host that changed the base itself calls it before the next tool call;
// changes made outside show within Config.SessionRefreshMs on their own.
func (ws *Workspace) SessionRefresh(ctx context.Context) error {
	_, err := ws.sessionTyped(ctx, SessionOpRefresh, nil, nil)
	return err
}

// SessionCallRaw runs session operation op (one of SessionOps) with
// optionsJSON ("" for none) and returns the library's envelope as it is,
// like CallRaw (a failure is also an *Error).
func (ws *Workspace) SessionCallRaw(ctx context.Context, op, optionsJSON string) (envelopeJSON string, err error) {
	raw, _, err := ws.sessionCall(ctx, op, optionsJSON, nil)
	return raw, err
}

// sessionTyped runs op with opts (nil: no options) JSON-encoded and decodes
// the envelope's data into data (nil: skip it); it returns the envelope's
// text.
func (ws *Workspace) sessionTyped(ctx context.Context, op string, opts any, data any) (string, error) {
	optionsJSON := ""
	if opts != nil {
		b, err := json.Marshal(opts)
		if err != nil {
			return "", newError("session_"+op, CodeInvalidArguments, "encoding options: %v", err)
		}
		optionsJSON = string(b)
	}
	_, env, err := ws.sessionCall(ctx, op, optionsJSON, data)
	if err != nil {
		return "", err
	}
	return env.Text, nil
}

func (ws *Workspace) sessionCall(ctx context.Context, op, optionsJSON string, data any) (string, *envelope, error) {
	name := "session_" + op
	if strings.IndexByte(optionsJSON, 0) >= 0 {
		return failure(newError(name, CodeInvalidArguments, "options contain a NUL byte"))
	}
	known := false
	for _, o := range SessionOps {
		known = known || o == op
	}
	if !known {
		return failure(newError(name, CodeInvalidArguments, "unknown session operation %q: one of %s", op, strings.Join(SessionOps, ", ")))
	}
	if ctx.Err() != nil {
		return failure(ctxError(name, ctx))
	}
	raw, _ := cSession(ws.handle, op, optionsJSON) // NUL bytes and unknown ops were refused above
	runtime.KeepAlive(ws)
	var rd rawData
	env, perr := parseEnvelope(name, raw, outputFull, &rd)
	if perr != nil {
		return failure(perr)
	}
	if !env.OK {
		return raw, env, env.err(name, nil)
	}
	if data != nil {
		if err := decodeResult(string(rd), data); err != nil {
			return failure(newError(name, CodeIOError, "malformed %s data from the wsfs library: %v", name, err))
		}
	}
	return raw, env, nil
}
