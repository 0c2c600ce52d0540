package state

import (
	"testing"

	"github.com/hashicorp/raft"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/troupe-dev/troupe/messages"
)

// TestRegisterNodeEvals: a registration carries every evaluation it
// creates in its one entry, and they are ready for the scheduler at once.
func TestRegisterNodeEvals(t *testing.T) {
	h := newHarness(t)
	h.apply(&messages.Command{Cmd: &messages.Command_RegisterNode{RegisterNode: &messages.RegisterNode{
		Node:  testNode("n1", 1000, 1000),
		Evals: []*messages.Evaluation{testEval("e1", "sys1", messages.EvalStatusPending), testEval("e2", "sys2", messages.EvalStatusPending)},
	}}})
	for _, id := range []string{"e1", "e2"} {
		require.NotNil(t, h.snap().EvalByID(id), id)
	}
	require.ElementsMatch(t, []string{"e1", "e2"}, h.lastEvent().EvalsReady)
	require.Equal(t, []string{"n1"}, h.lastEvent().NodeUpdated)
}

// TestRegisterNodeOldEntry applies a RegisterNode entry as the previous
// version wrote it, byte for byte (Node = 1, Eval = 2, no Evals): its
// evaluation is stored.
func TestRegisterNodeOldEntry(t *testing.T) {
	node, err := proto.Marshal(testNode("n1", 1000, 1000))
	require.NoError(t, err)
	eval, err := proto.Marshal(testEval("e-old", "sys", messages.EvalStatusPending))
	require.NoError(t, err)
	var reg []byte
	reg = protowire.AppendTag(reg, 1, protowire.BytesType)
	reg = protowire.AppendBytes(reg, node)
	reg = protowire.AppendTag(reg, 2, protowire.BytesType)
	reg = protowire.AppendBytes(reg, eval)
	var cmd []byte
	cmd = protowire.AppendTag(cmd, registerNodeField(t), protowire.BytesType)
	cmd = protowire.AppendBytes(cmd, reg)

	h := newHarness(t)
	h.index++
	require.Nil(t, h.fsm.Apply(&raft.Log{Index: h.index, Type: raft.LogCommand, Data: cmd}))
	require.NotNil(t, h.snap().NodeByID("n1"))
	require.NotNil(t, h.snap().EvalByID("e-old"))
	require.Equal(t, []string{"e-old"}, h.lastEvent().EvalsReady)
}

// registerNodeField is the field number of Command.RegisterNode.
func registerNodeField(t *testing.T) protowire.Number {
	f := (&messages.Command{}).ProtoReflect().Descriptor().Fields().ByName("RegisterNode")
	require.NotNil(t, f)
	return f.Number()
}
