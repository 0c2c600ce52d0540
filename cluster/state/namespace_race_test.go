package state

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/messages"
)

// nsObject is a job, volume or variable registration in namespace "team",
// as the race between it and the namespace's delete sees it.
type nsObject struct {
	name     string
	register func(t *testing.T, h *harness, k *messages.RootKey) any
	stored   func(s *Snap) bool
	inUse    string // what the refused delete names
}

func nsObjects() []nsObject {
	return []nsObject{
		{
			name: "job",
			register: func(t *testing.T, h *harness, _ *messages.RootKey) any {
				j := testJob("web", 100, 100)
				j.Namespace = "team"
				return h.apply(registerJob(j, testEval("e1", "web", messages.EvalStatusPending)))
			},
			stored: func(s *Snap) bool { return s.JobByID("team", "web") != nil || s.EvalByID("e1") != nil },
			inUse:  "has non-terminal jobs: web",
		},
		{
			name: "volume",
			register: func(t *testing.T, h *harness, _ *messages.RootKey) any {
				v := testVolume("vol1", false)
				v.Namespace = "team"
				return h.apply(registerVolume(v))
			},
			stored: func(s *Snap) bool { return s.CSIVolumeAnyNamespace("vol1") != nil },
			inUse:  "has volumes: vol1",
		},
		{
			name: "variable",
			register: func(t *testing.T, h *harness, k *messages.RootKey) any {
				return h.apply(varSet(sealed(t, k, "team", "app/db", map[string]string{"k": "v"}), false, 0))
			},
			stored: func(s *Snap) bool { return len(s.VariablesByPrefix(AllNamespaces, "")) > 0 },
			inUse:  "has 1 variable(s)",
		},
	}
}

// TestNamespaceDeleteThenRegisterIsRefused: a registration that reaches
// the log after its namespace's delete is refused by the FSM and changes
// nothing, whatever the HTTP API checked before it proposed it.
func TestNamespaceDeleteThenRegisterIsRefused(t *testing.T) {
	for _, o := range nsObjects() {
		t.Run(o.name, func(t *testing.T) {
			h, k := keyedHarness(t)
			require.Nil(t, h.apply(upsertNamespaces(&messages.Namespace{Name: "team"})))
			require.Nil(t, h.apply(deleteNamespaces("team")))
			before := h.snap()

			err, _ := o.register(t, h, k).(error)
			require.ErrorIs(t, err, ErrNamespaceNotFound)
			require.ErrorContains(t, err, `namespace "team" does not exist`)
			after := h.snap()
			require.False(t, o.stored(after), "nothing of the refused registration is stored")
			require.Equal(t, before.Index(), after.Index(), "no table moved")
		})
	}
}

// TestNamespaceRegisterThenDeleteIsRefused: once the registration is in,
// the delete that follows it is refused, names what holds the namespace,
// and the namespace stays.
func TestNamespaceRegisterThenDeleteIsRefused(t *testing.T) {
	for _, o := range nsObjects() {
		t.Run(o.name, func(t *testing.T) {
			h, k := keyedHarness(t)
			require.Nil(t, h.apply(upsertNamespaces(&messages.Namespace{Name: "team"})))
			res := o.register(t, h, k)
			if err, ok := res.(error); ok {
				require.NoError(t, err)
			}
			require.True(t, o.stored(h.snap()))

			err, _ := h.apply(deleteNamespaces("team")).(error)
			require.ErrorIs(t, err, ErrNamespaceInUse)
			require.ErrorContains(t, err, `namespace "team" `+o.inUse)
			require.NotNil(t, h.snap().NamespaceByName("team"))
			require.True(t, o.stored(h.snap()))
		})
	}
}

// TestRegisterInMissingNamespace: a namespace that never existed is
// refused the same way; "" is "default", which always exists.
func TestRegisterInMissingNamespace(t *testing.T) {
	h := newHarness(t)
	j := testJob("web", 100, 100)
	j.Namespace = "nope"
	err, _ := h.apply(registerJob(j, nil)).(error)
	require.ErrorIs(t, err, ErrNamespaceNotFound)
	require.ErrorContains(t, err, `job "web"`)

	v := testVolume("vol1", false)
	v.Namespace = ""
	require.Nil(t, h.apply(registerVolume(v)))
	require.NotNil(t, h.snap().CSIVolumeByID("default", "vol1"))
}
