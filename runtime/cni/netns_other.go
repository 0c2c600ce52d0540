//go:build !linux

package cni

import (
	"errors"
	"fmt"
	"os"
)

var errNoNetns = fmt.Errorf("%w: %w (network namespaces are Linux only)", ErrNetns, errors.ErrUnsupported)

func prepareNetnsDir(string) error { return errNoNetns }
func createNetns(string) error     { return errNoNetns }
func netnsExists(string) bool      { return false }
func removeNetns(path string) error {
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}
