// Package safepath builds and uses host paths from names that came from
// outside the client (allocation IDs, task, group and volume names, log
// types), so that no name makes the agent, running as root, read or write
// outside the directory it meant.
//
// CheckName refuses a name that is not one plain path element (empty, "."
// or "..", a separator or a NUL in it, longer than NAME_MAX).
// Join joins checked names under a base and makes sure the result is still
// beneath it; Rel says where a path lies under its base.
//
// MkdirAll, OpenFile, WriteFileAtomic and RemoveAll work beneath a base
// directory through an os.Root: a symlink planted below the base (say
// <alloc>/<task>/local -> /etc, or the task dir itself a link to /tmp/x)
// is followed only while it stays beneath the base, and an operation whose
// path would leave it fails instead. OpenFile also refuses a link at the
// file itself, wherever it points, and anything that is not a regular
// file (openat with O_NOFOLLOW). The base itself is trusted: it is a
// directory the agent made (its data dir, an allocation dir).
//
// OpenIn, StatIn and LstatIn read beneath a base for a path a user gave
// (alloc fs): CleanRel takes a leading "/" as the base and refuses a path
// climbing out with ".."; a symlink is followed only while it stays
// beneath the base, and one leading out is ErrOutside.
package safepath
