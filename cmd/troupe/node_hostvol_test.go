package main

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/messages"
)

func TestNodeStatusHostVolumes(t *testing.T) {
	f := newFakeAPI(t)
	n := sampleNode()
	n.HostVolumes = map[string]*messages.ClientHostVolume{"data": {Path: "/srv/data"}, "certs": {Path: "/etc/certs", ReadOnly: true}}
	f.nodes[nodeID] = n
	code, out, _ := f.runCLI("node", "status", "-verbose", nodeID)
	require.Equal(t, 0, code)
	require.Regexp(t, `(?m)^Host Volumes\nName\s+ReadOnly\s+Source\ncerts\s+true\s+/etc/certs\ndata\s+false\s+/srv/data$`, out)
	code, out, _ = f.runCLI("node", "status", nodeID)
	require.Equal(t, 0, code)
	require.NotContains(t, out, "Host Volumes", "only -verbose lists them, as Nomad's")
}
