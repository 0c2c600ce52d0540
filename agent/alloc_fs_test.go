package agent

import (
	"io"
	"testing"
	"time"

	nomad "github.com/hashicorp/nomad/api"
	"github.com/stretchr/testify/require"
)

// TestNomadClientReadsAllocDir: Nomad's Go client lists and reads what a
// real exec task wrote in its task dir, and a link the task planted to a
// host file is refused, not followed.
func TestNomadClientReadsAllocDir(t *testing.T) {
	a := startAgent(t, testConfig(t, t.TempDir()))
	defer a.Shutdown()
	c, err := nomad.NewClient(&nomad.Config{Address: "http://" + a.HTTPAddr()})
	require.NoError(t, err)
	job := loopJob("fs")
	job.TaskGroups[0].Tasks[0].SetConfig("args", []string{"-c",
		`ln -s /etc/passwd "$NOMAD_TASK_DIR/leak"; echo hello > "$NOMAD_TASK_DIR/out.txt"; while true; do sleep 0.2; done`})
	_, _, err = c.Jobs().Register(job, nil)
	require.NoError(t, err)
	stub := waitAllocStatus(t, c, "fs", "running")
	al, _, err := c.Allocations().Info(stub.ID, nil)
	require.NoError(t, err)
	fs := c.AllocFS()

	var names map[string]bool
	require.Eventually(t, func() bool {
		ls, _, err := fs.List(al, "/t", nil)
		require.NoError(t, err)
		names = map[string]bool{}
		for _, fi := range ls {
			names[fi.Name] = true
		}
		return names["out.txt"]
	}, 10*time.Second, 10*time.Millisecond, "the task never wrote out.txt")
	require.True(t, names["stdout.0"], "the task's log files are in its dir")

	rc, err := fs.Cat(al, "/t/out.txt", nil)
	require.NoError(t, err)
	got, err := io.ReadAll(rc)
	rc.Close()
	require.NoError(t, err)
	require.Equal(t, "hello\n", string(got))

	st, _, err := fs.Stat(al, "t/out.txt", nil)
	require.NoError(t, err)
	require.Equal(t, int64(6), st.Size)
	root, _, err := fs.List(al, "/", nil)
	require.NoError(t, err)
	require.NotEmpty(t, root)

	for _, p := range []string{"/t/leak", "../../../../etc/passwd"} {
		_, err = fs.Cat(al, p, nil)
		require.ErrorContains(t, err, "400", p)
	}
	_, err = fs.Cat(&nomad.Allocation{ID: "0000dead-0000-0000-0000-000000000000"}, "/", nil)
	require.ErrorContains(t, err, "404")
}
