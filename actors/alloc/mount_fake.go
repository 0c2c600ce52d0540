package alloc

import (
	"fmt"
	"slices"
	"sync"
)

// fakeMounter is an in-memory Mounter for tests: it keeps the set of
// mounted paths, records every call as "Bind dst", "Unmount path" or
// "Mounted path" (Ops), and fails chosen calls (FailNext).
type fakeMounter struct {
	mu      sync.Mutex
	mounted map[string]string // dst -> src
	ops     []string
	fail    map[string][]error // op -> errors to return, in order
	onOp    func(op string)
}

var _ Mounter = (*fakeMounter)(nil)

// newFakeMounter returns a fakeMounter with nothing mounted.
func newFakeMounter() *fakeMounter {
	return &fakeMounter{mounted: map[string]string{}, fail: map[string][]error{}}
}

// OnOp sets a function called with every op as it is recorded (tests
// use it to merge the mounter's calls into a wider log).
func (f *fakeMounter) OnOp(fn func(op string)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.onOp = fn
}

// SetMounted marks path as mounted (or not), as if something else had
// mounted it (a plugin's publish, or a mount left from before a restart).
func (f *fakeMounter) SetMounted(path string, mounted bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if mounted {
		f.mounted[path] = "(external)"
	} else {
		delete(f.mounted, path)
	}
}

// FailNext makes the next call of op ("Bind", "Unmount" or "Mounted")
// fail with err.
func (f *fakeMounter) FailNext(op string, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.fail[op] = append(f.fail[op], err)
}

// IsMounted reports whether path is mounted, without recording a call.
func (f *fakeMounter) IsMounted(path string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	_, ok := f.mounted[path]
	return ok
}

// Source is what is bound on dst ("" when nothing is).
func (f *fakeMounter) Source(dst string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.mounted[dst]
}

// Ops is every call so far, in order.
func (f *fakeMounter) Ops() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.ops)
}

// Count is how many calls of op were made.
func (f *fakeMounter) Count(op string) int {
	n := 0
	for _, o := range f.Ops() {
		if len(o) > len(op) && o[:len(op)+1] == op+" " {
			n++
		}
	}
	return n
}

// record logs a call and returns its injected error; f.mu is held.
func (f *fakeMounter) record(op, path string) error {
	entry := op + " " + path
	f.ops = append(f.ops, entry)
	if f.onOp != nil {
		f.onOp(entry)
	}
	if errs := f.fail[op]; len(errs) > 0 {
		f.fail[op] = errs[1:]
		return errs[0]
	}
	return nil
}

// Bind implements Mounter.
func (f *fakeMounter) Bind(src, dst string, _ bool) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.record("Bind", dst); err != nil {
		return err
	}
	if src == "" || dst == "" {
		return fmt.Errorf("fake mounter: bind %q on %q", src, dst)
	}
	f.mounted[dst] = src
	return nil
}

// Unmount implements Mounter.
func (f *fakeMounter) Unmount(path string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.record("Unmount", path); err != nil {
		return err
	}
	delete(f.mounted, path)
	return nil
}

// Mounted implements Mounter.
func (f *fakeMounter) Mounted(path string) (bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.record("Mounted", path); err != nil {
		return false, err
	}
	_, ok := f.mounted[path]
	return ok, nil
}
