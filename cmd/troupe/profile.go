package main

import (
	"os"
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
