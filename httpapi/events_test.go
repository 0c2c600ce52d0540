package httpapi

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	nomad "github.com/hashicorp/nomad/api"
	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/messages"
)

func eventTestJob(id string) *messages.Job {
	return &messages.Job{ID: id, Name: id, Namespace: "default", Type: "service", Priority: 50, Datacenters: []string{"dc1"},
		TaskGroups: []*messages.TaskGroup{{Name: "g", Count: 1, Tasks: []*messages.Task{{Name: "t", Driver: "raw_exec",
			Resources: &messages.Resources{CPU: 10, MemoryMB: 10}}}}}}
}

func registerEventJob(t *testing.T, b *fsmBackend, id string) {
	b.mustApply(t, &messages.Command{Time: 1, Cmd: &messages.Command_RegisterJob{RegisterJob: &messages.RegisterJob{Job: eventTestJob(id)}}})
}

// nextEvents reads the next frame from Nomad's client's stream.
func nextEvents(t *testing.T, ch <-chan *nomad.Events) *nomad.Events {
	t.Helper()
	select {
	case ev, ok := <-ch:
		require.True(t, ok, "stream closed")
		require.NoError(t, ev.Err)
		return ev
	case <-time.After(10 * time.Second):
		t.Fatal("no event within 10s")
		return nil
	}
}

func TestEventStreamNomadClientTopicKeyAndReconnect(t *testing.T) {
	b := newFSMBackend()
	c := nomadAgainst(t, b)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ch, err := c.EventStream().Stream(ctx, map[nomad.Topic][]string{nomad.TopicJob: {"web"}}, 0, nil)
	require.NoError(t, err)
	registerEventJob(t, b, "db")
	registerEventJob(t, b, "web")

	got := nextEvents(t, ch)
	require.Len(t, got.Events, 1)
	ev := got.Events[0]
	require.Equal(t, nomad.TopicJob, ev.Topic)
	require.Equal(t, "JobRegistered", ev.Type)
	require.Equal(t, "web", ev.Key)
	job, err := ev.Job()
	require.NoError(t, err)
	require.Equal(t, "web", *job.ID)
	require.Equal(t, "g", *job.TaskGroups[0].Name)

	// Reconnect after the last index seen: the next change only, once.
	cancel()
	registerEventJob(t, b, "web2")
	ctx2, cancel2 := context.WithCancel(context.Background())
	defer cancel2()
	ch2, err := c.EventStream().Stream(ctx2, map[nomad.Topic][]string{nomad.TopicJob: {"*"}}, got.Index+1, nil)
	require.NoError(t, err)
	again := nextEvents(t, ch2)
	require.Equal(t, got.Index+1, again.Index)
	require.Len(t, again.Events, 1)
	require.Equal(t, "web2", again.Events[0].Key)
}

func TestEventStreamHeartbeatAndLostIndex(t *testing.T) {
	b := newFSMBackend()
	b.Store().SetEventBufferSize(2)
	srv := httptest.NewServer(New(b, nil, Options{EventHeartbeat: 20 * time.Millisecond}))
	t.Cleanup(srv.Close)
	for i := range 5 {
		registerEventJob(t, b, fmt.Sprintf("j%d", i))
	}
	readLine := func(url string) string {
		resp, err := http.Get(url)
		require.NoError(t, err)
		defer resp.Body.Close()
		require.Equal(t, http.StatusOK, resp.StatusCode)
		line, err := bufio.NewReader(resp.Body).ReadString('\n')
		require.NoError(t, err)
		return line
	}
	require.Equal(t, "{}\n", readLine(srv.URL+"/v1/event/stream?index=100"))
	require.Contains(t, readLine(srv.URL+"/v1/event/stream?index=1"), `"Error":"state: events lost: events from index 1 are no longer held (oldest held: 4)"`)

	resp, err := http.Get(srv.URL + "/v1/event/stream?topic=Jobs")
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusBadRequest, resp.StatusCode)
}
