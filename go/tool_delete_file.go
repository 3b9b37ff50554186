package wsfs

import "context"

// ToolDeleteFile deletes a file, symlink or directory.
const ToolDeleteFile = "delete_file"

// DeleteFileInput is the argument of delete_file.
type DeleteFileInput struct {
	Path      string `json:"path" description:"File, symlink or directory to delete, e.g. 'build/old.log'."`
	Recursive bool   `json:"recursive,omitempty" description:"Required to delete a directory: deletes it and everything in it. Default false."`
}

// Why a recursive deletion stopped part-way (DeleteFileResult.Stopped).
const (
	// DeleteStoppedTimeout: the deadline passed after something was removed.
	DeleteStoppedTimeout = "timeout"
	// DeleteStoppedCancelled: the context was cancelled after something was
	// removed.
	DeleteStoppedCancelled = "cancelled"
	// DeleteStoppedEntryLimit: one call removes at most 1,000,000 entries.
	DeleteStoppedEntryLimit = "entry_limit"
	// DeleteStoppedNotRemoved: some entries could not be removed (see
	// NotRemoved); everything else was.
	DeleteStoppedNotRemoved = "not_removed"
)

// DeleteFileResult is the result of DeleteFile.
//
// Deletion is not all or nothing: an error means nothing was removed, but a
// recursive deletion that removed something and then stopped returns a
// result with Deleted false (and a nil error). Check Deleted.
type DeleteFileResult struct {
	ToolReply
	Path string `json:"path"`
	// Deleted is true when Path no longer exists: everything was removed.
	Deleted      bool `json:"deleted"`
	WasDirectory bool `json:"was_directory"`
	// EntriesRemoved counts what was removed, the directory itself included
	// (1 for a file or symlink).
	EntriesRemoved int64 `json:"entries_removed"`
	// Stopped says why a recursive deletion stopped part-way (one of the
	// DeleteStopped constants); "" when Deleted is true. Calling again
	// continues.
	Stopped string `json:"stopped,omitempty"`
	// NotRemoved lists the first entries (at most 10) that could not be
	// removed; NotRemovedCount counts them all.
	NotRemoved      []NotRemovedEntry `json:"not_removed,omitempty"`
	NotRemovedCount int64             `json:"not_removed_count,omitempty"`
}

// NotRemovedEntry is an entry a recursive deletion left in place.
type NotRemovedEntry struct {
	// Path is workspace-relative.
	Path   string `json:"path"`
	Reason string `json:"reason"`
}

// DeleteFile deletes in.Path: a file, symlink (never its target) or
// special file, or with Recursive a directory and everything in it
// (ErrRecursiveRequired without it). The workspace root is never deleted.
// See DeleteFileResult for a deletion that stops part-way.
func (ws *Workspace) DeleteFile(ctx context.Context, in DeleteFileInput) (DeleteFileResult, error) {
	if e := checkPath(ToolDeleteFile, in.Path); e != nil {
		return DeleteFileResult{}, ws.reject(ToolDeleteFile, in.Path, e)
	}
	return callTyped[DeleteFileResult](ctx, ws, ToolDeleteFile, in, in.Path)
}
