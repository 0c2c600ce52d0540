package safepath

import "errors"

// Sentinel errors of the safepath package.
var (
	// ErrUnsafeName: a name is not one plain path element (empty, "." or
	// "..", a separator or a NUL in it, or too long).
	ErrUnsafeName = errors.New("safepath: unsafe name")
	// ErrOutside: a path does not lie beneath the directory it must stay in.
	ErrOutside = errors.New("safepath: path leaves its directory")
	// ErrSymlink: a path the agent would mount on, or remove beneath, is a
	// symlink.
	ErrSymlink = errors.New("safepath: refusing a symlink")
)
