// Package artifact fetches a task's artifacts (Nomad's artifact block)
// into its task directory before the task starts, with
// hashicorp/go-getter v2 (the library Nomad uses; v2's root module
// leaves S3 and GCS, whose SDKs are large to link and slow to
// initialise, to modules of their own).
//
// A Fetcher fetches one Artifact at a time into a Target (the task
// directory, and the allocation directory that local sources must lie
// in):
//
//	f := artifact.Fetcher{Limits: artifact.DefaultLimits()}
//	err := f.Fetch(ctx, artifact.Target{TaskDir: dir, AllocDir: allocDir}, a)
//
// Sources are http(s) URLs, local files and directories (a relative path
// is taken from the task directory; any local path must resolve beneath
// the allocation directory, so that a job cannot copy the host's files),
// and git repositories ("git::https://...", github.com/..., only when a
// git binary is on the agent's PATH). S3, GCS and Mercurial are not
// offered. Options become go-getter's query parameters: checksum =
// "type:hex" (md5, sha1, sha256, sha512) is verified, archive = false
// keeps an archive packed, and archives (tar, tar.gz, tgz, zip, ...) are
// unpacked otherwise. Headers go with every HTTP request.
//
// The destination is relative to the task directory ("local/" when
// empty; a leading "/" names the task directory too) and never leaves it:
// a ".." that climbs out is ErrDestinationEscapes. The artifact is
// fetched into a fresh directory beneath the task directory and then
// moved into place through an os.Root, so a symlink that a task left in
// its directory cannot redirect the write out of it. In mode "file" the
// destination is the file's path; in "dir" and "any" it is a directory
// the fetched files are merged into.
//
// Limits bound what a hostile source can cost the agent: the time of one
// fetch, the bytes of an HTTP body, and the files and bytes an archive
// may unpack to (go-getter's LimitedDecompressors).
//
// Errors name the source; a checksum that differs is ErrChecksumMismatch
// (the message says what was expected and what came).
package artifact
