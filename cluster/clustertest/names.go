package clustertest

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"regexp"
)

// MaxHosts is the largest cluster New builds (addresses .10 to .209).
const MaxHosts = 200

// netnsDir is where ip(8) keeps named network namespaces.
const netnsDir = "/var/run/netns"

var (
	// nsPattern matches a host namespace name and captures its run id.
	nsPattern = regexp.MustCompile(`^(tt[0-9a-f]{4})h[0-9]{1,3}$`)
	// linkPattern matches a bridge or root-side veth name and captures its run id.
	linkPattern = regexp.MustCompile(`^(tt[0-9a-f]{4})(?:br|v[0-9]{1,3})$`)
	// commentPattern matches the iptables comment of a run's fence rules.
	commentPattern = regexp.MustCompile(`^clustertest-(tt[0-9a-f]{4})$`)
)

// newRunID returns "tt" followed by 4 random hex digits.
func newRunID() (string, error) {
	var b [2]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("clustertest: run id: %w", err)
	}
	return "tt" + hex.EncodeToString(b[:]), nil
}

func nsName(id string, i int) string   { return fmt.Sprintf("%sh%d", id, i) }
func vethName(id string, i int) string { return fmt.Sprintf("%sv%d", id, i) }
func bridgeName(id string) string      { return id + "br" }
func fenceComment(id string) string    { return "clustertest-" + id }
func netnsPath(ns string) string       { return netnsDir + "/" + ns }
func hostName(i int) string            { return fmt.Sprintf("host%d", i) }

// runOfNetns returns the run id of a namespace name made by this package.
func runOfNetns(name string) (string, bool) { return match(nsPattern, name) }

// runOfLink returns the run id of a bridge or veth name made by this package.
func runOfLink(name string) (string, bool) { return match(linkPattern, name) }

// runOfComment returns the run id of a fence rule comment.
func runOfComment(c string) (string, bool) { return match(commentPattern, c) }

func match(re *regexp.Regexp, s string) (string, bool) {
	m := re.FindStringSubmatch(s)
	if m == nil {
		return "", false
	}
	return m[1], true
}
