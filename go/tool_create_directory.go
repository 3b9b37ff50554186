package wsfs

import "context"

// ToolCreateDirectory creates a directory and, by default, its missing
// parents.
const ToolCreateDirectory = "create_directory"

// CreateDirectoryInput is the argument of create_directory. A nil Parents
// means the library's default, true.
type CreateDirectoryInput struct {
	Path    string `json:"path" description:"Directory to create, e.g. 'src/utils'."`
	Parents *bool  `json:"parents,omitempty" description:"Also create missing parent directories, like 'mkdir -p'. Default true; with false a missing parent is path_not_found."`
}

// CreateDirectoryResult is the result of CreateDirectory.
type CreateDirectoryResult struct {
	// Path is the workspace-relative path of the directory.
	Path string `json:"path"`
	// Created is false when the directory already existed (nothing
	// changed: the call is idempotent).
	Created bool `json:"created"`
	// ParentsCreated counts the missing parent directories created on the
	// way.
	ParentsCreated int `json:"parents_created"`
	ToolReply
}

// CreateDirectory creates a directory (like mkdir -p unless Parents is
// Bool(false)). An existing directory is success with Created false;
// anything else in the way is CodeNotADirectory. Every directory created is
// fsynced into its parent; a failed call removes the parents it created.
func (ws *Workspace) CreateDirectory(ctx context.Context, in CreateDirectoryInput) (CreateDirectoryResult, error) {
	if e := checkPath(ToolCreateDirectory, in.Path); e != nil {
		return CreateDirectoryResult{}, ws.reject(ToolCreateDirectory, in.Path, e)
	}
	return callTyped[CreateDirectoryResult](ctx, ws, ToolCreateDirectory, in, in.Path)
}
