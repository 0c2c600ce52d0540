package httpapi

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/cluster/state"
	"github.com/troupe-dev/troupe/messages"
)

// TestNodeOutputsHideSecret: a node as GET /v1/node/:id, /v1/nodes and
// the event stream's Node events show it carries no SecretID (Nomad's
// Node.Sanitize), and the stored node keeps its own.
func TestNodeOutputsHideSecret(t *testing.T) {
	const secret = "0b6e0a4e-5d1f-4f57-9b5a-2d8c7e6f1a90"
	n := &messages.Node{ID: "n1", SecretID: secret, Name: "n1", Status: "ready"}
	s := &Server{}
	for name, v := range map[string]any{
		"node":  newNodeJSON(n),
		"stub":  nodeStub(n),
		"event": s.eventPayload(state.StreamEvent{Payload: n}),
	} {
		var buf bytes.Buffer
		require.NoError(t, writeJSON(&buf, v, false))
		require.Contains(t, buf.String(), `"n1"`, name)
		require.NotContains(t, buf.String(), secret, "%s shows the node's secret", name)
	}
	require.Equal(t, secret, n.SecretID, "the stored node is not changed")
}
