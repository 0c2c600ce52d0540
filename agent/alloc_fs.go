package agent

import (
	"fmt"
	"os"

	"github.com/troupe-dev/troupe/httpapi"
	"github.com/troupe-dev/troupe/runtime/safepath"
)

var _ httpapi.AllocDirBackend = (*Agent)(nil)

// AllocDirFor is the directory of an allocation this client runs, for the
// alloc fs routes, or the HTTP address of the agent whose node runs it
// (elsewhere). The routes confine every path beneath the dir.
func (a *Agent) AllocDirFor(allocID string) (string, string, error) {
	if err := safepath.CheckName("allocation ID", allocID); err != nil {
		return "", "", fmt.Errorf("%w %s: %w", ErrUnknownAlloc, safepath.Quote(allocID), err)
	}
	_, _, elsewhere, err := a.AllocForLogs(allocID)
	if err != nil {
		return "", "", err
	}
	if elsewhere != "" {
		return "", elsewhere, nil
	}
	if a.db == nil {
		return "", "", ErrNotClient
	}
	dir, err := safepath.Join(a.AllocDir(), allocID)
	if err != nil {
		return "", "", fmt.Errorf("%w %s: %w", ErrUnknownAlloc, safepath.Quote(allocID), err)
	}
	if fi, err := os.Lstat(dir); err != nil || !fi.IsDir() {
		return "", "", fmt.Errorf("%w %s: no allocation directory on this client", ErrUnknownAlloc, safepath.Quote(allocID))
	}
	return dir, "", nil
}
