package wsfs

import (
	"context"
	"strings"
)

// ToolApplyPatch is the apply_patch tool's name.
const ToolApplyPatch = "apply_patch"

// ApplyPatchInput is the argument of apply_patch: a Patch (a unified diff or
// a "*** Begin Patch" patch) or Files (line-range replacements), not both.
// All files of one call change together or not at all.
type ApplyPatchInput struct {
	Patch  string           `json:"patch,omitempty" description:"The patch, as a unified diff ('--- a/path' and '+++ b/path' lines, then '@@ -l,n +l,n @@' hunks; '/dev/null' for added or deleted files; several files in one patch) or in the '*** Begin Patch' format ('*** Update File: path', '*** Add File: path', '*** Delete File: path', '*** Move to: path', '@@ anchor' lines, ' '/'-'/'+' lines, '*** End Patch'). Give patch or files, not both."`
	Files  []PatchFileEdits `json:"files,omitempty" description:"Instead of a patch: line-range replacements in files, by the line numbers read_file shows."`
	DryRun bool             `json:"dry_run,omitempty" description:"Check the patch and return the diff it would make, without writing anything. Default false."`
	// Strict is nil for the default, true.
	Strict *bool `json:"strict,omitempty" description:"If true (default), any rejected hunk means nothing is written. If false, the files whose hunks all applied are written and the rest are reported."`
}

// PatchFileEdits is one file of ApplyPatchInput.Files.
type PatchFileEdits struct {
	Path     string           `json:"path" description:"File to change (it must exist)."`
	FileHash string           `json:"file_hash,omitempty" description:"The file's sha256 as get_path_info shows it (read_file's data.sha256 also has it); if the file changed since, its hunks are rejected as stale. Optional."`
	Hunks    []PatchLineRange `json:"hunks" description:"The replacements, in any order; they must not overlap."`
}

// PatchLineRange replaces lines StartLine..EndLine (1-based, inclusive) with
// ReplaceWith; EndLine = StartLine-1 inserts before StartLine.
type PatchLineRange struct {
	StartLine   int    `json:"start_line" description:"First line replaced, 1-based."`
	EndLine     int    `json:"end_line" description:"Last line replaced, inclusive; start_line - 1 replaces nothing and inserts before start_line."`
	ReplaceWith string `json:"replace_with" description:"The new lines ('' deletes the range); a final newline is optional."`
}

// ApplyPatchResult is the result of ApplyPatch. A patch that does not apply
// is not an error: Applied is false, RejectedHunks says why, and nothing was
// written (with Strict false, the files whose hunks all applied were).
type ApplyPatchResult struct {
	ToolReply
	// Applied reports whether FilesChanged were written (with DryRun: would be).
	Applied       bool                `json:"applied"`
	FilesChanged  []PatchFileChanged  `json:"files_changed"`
	RejectedHunks []PatchRejectedHunk `json:"rejected_hunks"`
	// Diff is a unified diff of what was (or would be) applied, cut at
	// max_read_bytes.
	Diff string `json:"diff"`
}

// PatchFileChanged is one file an apply_patch call changed.
type PatchFileChanged struct {
	Path string `json:"path"`
	// Action is "add", "update", "delete" or "move".
	Action string `json:"action"`
	// From is a move's source path.
	From         string `json:"from"`
	AddedLines   int    `json:"added_lines"`
	RemovedLines int    `json:"removed_lines"`
}

// PatchRejectedHunk is a hunk (Hunk 0: a whole file section) that was not
// applied. Reason is one of "context_not_found", "ambiguous", "stale",
// "out_of_range", "file_not_found", "file_exists", "overlap".
type PatchRejectedHunk struct {
	Path   string `json:"path"`
	Hunk   int    `json:"hunk"`
	Reason string `json:"reason"`
	// Expected holds the lines the hunk looked for.
	Expected []string `json:"expected"`
	// NearestLine is the 1-based line of the most similar place, 0 if none.
	NearestLine int `json:"nearest_line"`
}

// ApplyPatch applies a patch to one or more files, all together or not at
// all (see docs/patch_vs_write.md for when to prefer it to EditFile or
// WriteFile).
func (ws *Workspace) ApplyPatch(ctx context.Context, in ApplyPatchInput) (ApplyPatchResult, error) {
	return callTyped[ApplyPatchResult](ctx, ws, ToolApplyPatch, in, in.paths())
}

// paths names the call's files for its log record.
func (in ApplyPatchInput) paths() string {
	if len(in.Files) == 0 {
		return "(patch)"
	}
	names := make([]string, len(in.Files))
	for i, f := range in.Files {
		names[i] = f.Path
	}
	return strings.Join(names, " ")
}
