package clustertest

import "errors"

var (
	// ErrCommand is returned when a setup or teardown command (ip, iptables)
	// fails; the wrapped text holds the command line and its output.
	ErrCommand = errors.New("clustertest: command failed")
	// ErrExec is returned by Host.Exec when the command fails or exits
	// non-zero; the wrapped text holds its output.
	ErrExec = errors.New("clustertest: exec failed")
	// ErrTimeout is returned when a bounded wait runs past its deadline.
	ErrTimeout = errors.New("clustertest: timed out")
	// ErrClosed is returned when a cluster is used after Close.
	ErrClosed = errors.New("clustertest: cluster closed")
	// ErrNoSubnet is returned when no free private /24 is left for the bridge.
	ErrNoSubnet = errors.New("clustertest: no free subnet")
	// ErrBadSize is returned for a host count outside 1..MaxHosts.
	ErrBadSize = errors.New("clustertest: bad number of hosts")
	// ErrExited is returned when signalling a process that already exited.
	ErrExited = errors.New("clustertest: process already exited")
	// ErrLeftover is returned by Close when a namespace or link of the run
	// is still present after teardown.
	ErrLeftover = errors.New("clustertest: leftover after teardown")
)
