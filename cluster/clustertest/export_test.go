package clustertest

import "os"

// LockFile exposes the run's lock file so a test can hand it to another
// process and keep the run alive after the test binary exits.
func (c *Cluster) LockFile() *os.File { return c.lock.f }
