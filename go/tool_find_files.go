package wsfs

import (
	"cmp"
	"context"
)

// ToolFindFiles finds files by glob pattern.
const ToolFindFiles = "find_files"

// FindFilesInput is the argument of find_files. Zero values mean the
// library's defaults: Path ".", MaxResults 200, RespectGitignore true.
type FindFilesInput struct {
	Pattern          string `json:"pattern" description:"Glob to match, e.g. '**/*.rs' or 'src/**/test_*.py'. '*' stays within one directory, '**' crosses directories; a pattern without '/' matches file names at any depth."`
	Path             string `json:"path,omitempty" description:"Directory to search; defaults to '.', the workspace root."`
	MaxResults       int    `json:"max_results,omitempty,omitzero" description:"Most files to return (default 200, at most 10000)."`
	IncludeHidden    bool   `json:"include_hidden,omitempty" description:"Include names starting with '.'. Default false."`
	RespectGitignore *bool  `json:"respect_gitignore,omitempty" description:"Leave out what .gitignore files ignore. Default true."`
}

// FindFilesResult is the result of FindFiles.
type FindFilesResult struct {
	// Files are workspace-relative paths in path order (a directory's
	// files right after its name, each directory's names in byte order):
	// regular files and symlinks (never followed).
	Files []string `json:"files"`
	// Truncated is true when more than MaxResults files matched.
	Truncated bool `json:"truncated"`
	// FilesScanned counts the files tested against the pattern.
	FilesScanned int `json:"files_scanned"`
	// Denied counts entries the workspace policy's deny_read left out.
	Denied int `json:"denied"`
	// Protected counts protected system locations (/etc, /proc, ...) left
	// out in unrestricted mode.
	Protected int `json:"protected,omitempty"`
	ToolReply
}

// FindFiles lists the files under in.Path whose path matches in.Pattern.
// Hidden files and what .gitignore files ignore are skipped unless asked.
func (ws *Workspace) FindFiles(ctx context.Context, in FindFilesInput) (FindFilesResult, error) {
	path := cmp.Or(in.Path, ".")
	if e := checkPath(ToolFindFiles, path); e != nil {
		return FindFilesResult{}, ws.reject(ToolFindFiles, path, e)
	}
	return callTyped[FindFilesResult](ctx, ws, ToolFindFiles, in, path)
}
