package main

import (
	"os"
	"runtime"
	"runtime/pprof"
	"sync"
)

// startCPUProfile starts a CPU profile written to path; stop ends it and
// closes the file (safe to call more than once).
func startCPUProfile(path string) (stop func(), err error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			pprof.StopCPUProfile()
			f.Close()
		})
	}, nil
}

// writeHeapProfile writes the live heap to path, after a collection so
// that it shows what the state keeps, not garbage ("": nothing).
func writeHeapProfile(path string) error {
	if path == "" {
		return nil
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	runtime.GC()
	return pprof.WriteHeapProfile(f)
}
