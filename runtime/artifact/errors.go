package artifact

import "errors"

// Sentinel errors of the artifact package.
var (
	// ErrDestinationEscapes: the destination leaves the task directory.
	ErrDestinationEscapes = errors.New("artifact: destination escapes the task directory")
	// ErrSourceOutside: a local source lies outside the allocation directory.
	ErrSourceOutside = errors.New("artifact: local source outside the allocation directory")
	// ErrBadMode: the mode is none of any, file and dir.
	ErrBadMode = errors.New("artifact: mode must be any, file or dir")
	// ErrNoSource: the source is empty.
	ErrNoSource = errors.New("artifact: source is required")
	// ErrChecksumMismatch: the fetched file's checksum is not the one given.
	ErrChecksumMismatch = errors.New("artifact: checksum mismatch")
	// ErrUnsupportedSource: a git source on a host without git, or a git
	// source on the local file system.
	ErrUnsupportedSource = errors.New("artifact: unsupported source")
	// ErrTooLarge: an HTTP body is larger than Limits.HTTPMaxBytes.
	ErrTooLarge = errors.New("artifact: larger than the size limit")
	// ErrFetch wraps every other failure to fetch or place an artifact.
	ErrFetch = errors.New("artifact: fetch failed")
)
