package clustertest

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// stateDir holds one lock file per live run (flocked for the run's lifetime)
// and the setup lock that serialises subnet choice and stale cleanup.
var stateDir = "/run/troupe-clustertest"

// setupLockWait bounds the wait for another run's setup.
const setupLockWait = 30 * time.Second

// runLock is the exclusive flock a live run holds on stateDir/<id>.lock.
type runLock struct {
	f    *os.File
	path string
}

// acquireRun creates and locks the lock file of a new run id. It fails with
// os.ErrExist when the id is already taken.
func acquireRun(id string) (*runLock, error) {
	if err := os.MkdirAll(stateDir, 0o700); err != nil {
		return nil, fmt.Errorf("clustertest: state dir: %w", err)
	}
	path := filepath.Join(stateDir, id+".lock")
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, fmt.Errorf("clustertest: run lock: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("clustertest: run lock %s: %w", path, err)
	}
	return &runLock{f: f, path: path}, nil
}

// release removes the lock file, then drops the lock.
func (l *runLock) release() {
	if l == nil {
		return
	}
	_ = os.Remove(l.path)
	_ = l.f.Close()
}

// probeRun reports whether run id is dead (no lock file, or a lock file no
// process holds). For a dead run it returns the lock it took, which the
// caller releases after removing the run's leftovers.
func probeRun(id string) (dead bool, l *runLock, err error) {
	path := filepath.Join(stateDir, id+".lock")
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if errors.Is(err, os.ErrNotExist) {
		return true, nil, nil
	}
	if err != nil {
		return false, nil, fmt.Errorf("clustertest: probe %s: %w", path, err)
	}
	err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		_ = f.Close()
		return false, nil, nil
	}
	if err != nil {
		_ = f.Close()
		return false, nil, fmt.Errorf("clustertest: probe %s: %w", path, err)
	}
	return true, &runLock{f: f, path: path}, nil
}

// withSetupLock runs fn while holding the machine-wide setup lock, polling
// for it until setupLockWait has passed.
func withSetupLock(fn func() error) error {
	if err := os.MkdirAll(stateDir, 0o700); err != nil {
		return fmt.Errorf("clustertest: state dir: %w", err)
	}
	f, err := os.OpenFile(filepath.Join(stateDir, "setup.lock"), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("clustertest: setup lock: %w", err)
	}
	defer func() { _ = f.Close() }()
	if err := pollFlock(f, setupLockWait); err != nil {
		return err
	}
	return fn()
}

// pollFlock takes an exclusive flock on f, retrying until wait has passed.
func pollFlock(f *os.File, wait time.Duration) error {
	deadline := time.Now().Add(wait)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			return fmt.Errorf("clustertest: setup lock: %w", err)
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%w: setup lock held by another run for %s", ErrTimeout, wait)
		}
		<-tick.C
	}
}
