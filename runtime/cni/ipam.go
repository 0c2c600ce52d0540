package cni

import (
	"errors"
	"fmt"
	"io/fs"
	"net/netip"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// host-local keeps one file per reserved address in its data directory
// (IPAMDataDir/<network name>): the file is named after the address and
// holds the container ID (and, since plugins 1.0, a newline and the
// interface name). It also keeps "lock" (flock'ed around every change) and
// "last_reserved_ip.<range>", which stay.

// ipamStore is host-local's directory for one network.
type ipamStore struct{ dir string }

// reservations maps each reserved address to its container ID.
func (s ipamStore) reservations() (map[netip.Addr]string, error) {
	entries, err := os.ReadDir(s.dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	out := map[netip.Addr]string{}
	for _, e := range entries {
		ip, err := netip.ParseAddr(e.Name())
		if err != nil || e.IsDir() {
			continue
		}
		data, err := os.ReadFile(filepath.Join(s.dir, e.Name()))
		if err != nil {
			continue // released meanwhile
		}
		id, _, _ := strings.Cut(strings.TrimSpace(string(data)), "\n")
		out[ip] = strings.TrimSpace(id)
	}
	return out, nil
}

// addrsOf returns the addresses reserved for the container id.
func (s ipamStore) addrsOf(id string) []netip.Addr {
	res, _ := s.reservations()
	var ips []netip.Addr
	for ip, owner := range res {
		if owner == id {
			ips = append(ips, ip)
		}
	}
	return ips
}

// release removes the reservations whose container ID is stale, under
// host-local's lock, and returns the addresses released.
func (s ipamStore) release(stale func(id string) bool) ([]netip.Addr, error) {
	if _, err := os.Stat(s.dir); errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	unlock, err := s.lock()
	if err != nil {
		return nil, err
	}
	defer unlock()
	res, err := s.reservations()
	if err != nil {
		return nil, err
	}
	var released []netip.Addr
	var errs []error
	for ip, id := range res {
		if !stale(id) {
			continue
		}
		err := os.Remove(filepath.Join(s.dir, ip.String()))
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
			continue
		}
		released = append(released, ip)
	}
	return released, errors.Join(errs...)
}

// lock takes host-local's lock on the directory.
func (s ipamStore) lock() (func(), error) {
	f, err := os.OpenFile(filepath.Join(s.dir, "lock"), os.O_RDONLY|os.O_CREATE, 0o640)
	if err != nil {
		return nil, fmt.Errorf("ipam lock: %w", err)
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX); err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("ipam lock: %w", err)
	}
	return func() { _ = f.Close() }, nil
}
