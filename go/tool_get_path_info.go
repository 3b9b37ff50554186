package wsfs

import (
	"context"
	"time"
)

// ToolGetPathInfo describes one path without reading it out.
const ToolGetPathInfo = "get_path_info"

// GetPathInfoInput is the argument of get_path_info.
type GetPathInfoInput struct {
	Path string `json:"path" description:"File, directory or symlink to describe, e.g. 'src/main.go'."`
}

// GetPathInfoResult is the result of GetPathInfo. A path that does not
// exist is Exists false with only Path set (not an error). Everything is
// about the name itself (lstat): a symlink is described, never followed.
type GetPathInfoResult struct {
	ToolReply
	Path   string `json:"path"`
	Exists bool   `json:"exists"`
	// Type is EntryFile, EntryDir, EntrySymlink or EntryOther.
	Type string `json:"type,omitempty"`
	Size int64  `json:"size,omitempty"`
	// Modified is the modification time, in UTC, to the second (zero if
	// the library could not write it as RFC 3339).
	Modified time.Time `json:"modified,omitzero"`
	// Mode is the permission bits in octal, such as "0644".
	Mode string `json:"mode,omitempty"`
	// Readable and Writable are the kernel's access checks for this process
	// on the name itself (for a symlink, the link: normally both true).
	Readable bool `json:"readable,omitempty"`
	Writable bool `json:"writable,omitempty"`
	// SymlinkTarget is where a symlink leads, workspace-relative, when that
	// is inside the workspace; "" otherwise.
	SymlinkTarget string `json:"symlink_target,omitempty"`
	// LineCount is a UTF-8 text file's line count when it is at most
	// MaxReadBytes; nil otherwise.
	LineCount *int `json:"line_count,omitempty"`
	// SHA256 is a regular file's lowercase hex SHA-256 when it is at most
	// MaxWriteBytes (what the change tools take as a guard); "" otherwise.
	SHA256 string `json:"sha256,omitempty"`
}

// GetPathInfo describes a path: whether it exists, its type, size, time,
// mode and access, a symlink's target, a text file's line count and SHA-256.
func (ws *Workspace) GetPathInfo(ctx context.Context, in GetPathInfoInput) (GetPathInfoResult, error) {
	return callTyped[GetPathInfoResult](ctx, ws, ToolGetPathInfo, in, in.Path)
}
