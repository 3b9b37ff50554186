package wsfs

import "context"

// ToolMoveFile moves or renames a file, directory or symlink.
const ToolMoveFile = "move_file"

// MoveFileInput is the argument of move_file. Dst is the entry's complete
// new path, never a directory to move into.
type MoveFileInput struct {
	Src       string `json:"src" description:"File, directory or symlink to move, e.g. 'notes/draft.md'."`
	Dst       string `json:"dst" description:"Its new path (the full path, not a directory to move into), e.g. 'notes/final.md'."`
	Overwrite bool   `json:"overwrite,omitempty" description:"Replace an existing file or symlink (or empty directory) at dst. Default false: an existing dst is an error."`
}

// MoveFileResult is the result of MoveFile.
type MoveFileResult struct {
	ToolReply
	MovedFrom string `json:"moved_from"`
	MovedTo   string `json:"moved_to"`
	// Type is what was moved: EntryFile, EntryDir, EntrySymlink or
	// EntryOther. A symlink is moved itself, never what it points to.
	Type string `json:"type"`
	// Replaced is true when Overwrite replaced an existing entry at Dst.
	Replaced bool `json:"replaced"`
	// DirsCreated are the missing parent directories of Dst that were
	// created, outermost first.
	DirsCreated []string `json:"dirs_created"`
}

// MoveFile renames in.Src to in.Dst with one atomic rename (nothing is
// copied). Without Overwrite an existing Dst is ErrFileExists, decided by
// the kernel, so a racing creator is never replaced. With Overwrite a file
// or symlink replaces another and a directory an empty directory. The
// workspace root is never moved, a directory never into itself, and src and
// dst on different file systems is an error, not a copy.
func (ws *Workspace) MoveFile(ctx context.Context, in MoveFileInput) (MoveFileResult, error) {
	path := in.Src + " -> " + in.Dst
	for _, p := range []string{in.Src, in.Dst} {
		if e := checkPath(ToolMoveFile, p); e != nil {
			return MoveFileResult{}, ws.reject(ToolMoveFile, path, e)
		}
	}
	return callTyped[MoveFileResult](ctx, ws, ToolMoveFile, in, path)
}
