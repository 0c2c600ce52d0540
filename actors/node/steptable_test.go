package node

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// stepCase is one row of a state machine's table (nodeStatus, Suspicion):
// an input, the effects it must have and the state it leaves.
type stepCase[I, E any, S comparable] struct {
	in    I
	want  E
	state S
}

// runTable feeds each row's input to step and checks the effects and the
// state afterwards.
func runTable[I, E any, S comparable](t *testing.T, steps []stepCase[I, E, S], step func(I) (E, error), state func() S) {
	t.Helper()
	for i, st := range steps {
		eff, err := step(st.in)
		require.NoError(t, err, "step %d %#v", i, st.in)
		require.Equal(t, st.want, eff, "step %d %#v", i, st.in)
		require.Equal(t, st.state, state(), "step %d %#v", i, st.in)
	}
}
