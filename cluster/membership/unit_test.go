package membership

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/memberlist"
	"github.com/stretchr/testify/require"
)

func TestMetaRoundTrip(t *testing.T) {
	tests := []struct {
		name    string
		meta    Meta
		leaving bool
	}{
		{"server", testMeta("s1", RoleServer, "global"), false},
		{"client leaving", testMeta("c1", RoleClient, "eu"), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			buf, err := encodeMeta(tt.meta, tt.leaving)
			require.NoError(t, err)
			require.Less(t, len(buf), 250, "compact: %s", buf)
			got, leaving, err := decodeMeta(buf)
			require.NoError(t, err)
			require.Equal(t, tt.meta, got)
			require.Equal(t, tt.leaving, leaving)
		})
	}
}

func TestDecodeMetaFromNewerVersion(t *testing.T) {
	got, _, err := decodeMeta([]byte(`{"v":2,"ro":"client","rg":"global","dc":"dc1","id":"x","nm":"c1","new":[1,2]}`))
	require.NoError(t, err)
	require.Equal(t, Meta{Role: RoleClient, Region: "global", Datacenter: "dc1", NodeID: "x", NodeName: "c1"}, got)

	_, _, err = decodeMeta([]byte(`{"ro":"client"}`))
	require.ErrorIs(t, err, ErrInvalidMeta, "no version")
}

func TestMetaLeavingFlagFitsWhenChecked(t *testing.T) {
	meta := testMeta("s1", RoleServer, "global")
	base, err := encodeMeta(meta, false)
	require.NoError(t, err)
	meta.Build += strings.Repeat("x", metaLimit(false)-len(base))
	buf, err := encodeMeta(meta, false)
	require.NoError(t, err)
	require.Len(t, buf, metaLimit(false))
	buf, err = encodeMeta(meta, true)
	require.NoError(t, err, "largest accepted meta still fits with the leave flag")
	require.LessOrEqual(t, len(buf), MetaMaxSize)
	meta.Build += "x"
	_, err = encodeMeta(meta, false)
	require.ErrorIs(t, err, ErrMetaTooLarge)
}

func TestTags(t *testing.T) {
	tests := []struct {
		name string
		meta Meta
		want map[string]string
	}{
		{"server", testMeta("s1", RoleServer, "global"), map[string]string{
			"role": "server", "region": "global", "dc": "dc1", "id": "id-s1", "name": "s1",
			"rpc_addr": "127.0.0.1:4647", "http_addr": "127.0.0.1:4646", "build": "0.1.0",
			"voter": "true", "bootstrap_expect": "3",
		}},
		{"client, empty fields left out", Meta{Role: RoleClient, Region: "eu", Datacenter: "a", NodeID: "i", NodeName: "c"},
			map[string]string{"role": "client", "region": "eu", "dc": "a", "id": "i", "name": "c"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.want, tt.meta.Tags())
		})
	}
}

func TestEventQueueDropsOldest(t *testing.T) {
	q := newEventQueue(2)
	for i := range 5 {
		q.push(Event{Type: EventUpdate, Member: Member{Name: string(rune('a' + i))}})
	}
	require.Equal(t, uint64(3), q.droppedCount())
	require.Equal(t, "d", (<-q.ch).Member.Name)
	require.Equal(t, "e", (<-q.ch).Member.Name)
	q.close()
	q.close()
	q.push(Event{}) // ignored, does not panic
	_, ok := <-q.ch
	require.False(t, ok)
}

func TestEventTypeString(t *testing.T) {
	tests := map[EventType]string{EventJoin: "join", EventLeave: "leave", EventUpdate: "update", EventFailed: "failed", 9: "unknown", -1: "unknown"}
	for typ, want := range tests {
		t.Run(want, func(t *testing.T) { require.Equal(t, want, typ.String()) })
	}
}

func TestRegistryStatusesAndReap(t *testing.T) {
	now := time.Unix(1000, 0)
	r := newRegistry(func() time.Time { return now }, time.Hour)
	for _, name := range []string{"a", "b", "c"} {
		_, err := r.alive(node(t, testMeta(name, RoleClient, "global")), EventJoin)
		require.NoError(t, err)
	}
	leavingB := node(t, testMeta("b", RoleClient, "global"))
	leavingB.Meta, _ = encodeMeta(testMeta("b", RoleClient, "global"), true)
	ev, err := r.alive(leavingB, EventUpdate)
	require.NoError(t, err)
	require.Equal(t, StatusLeaving, ev.Member.Status)

	ev, ok := r.gone("a")
	require.True(t, ok)
	require.Equal(t, EventFailed, ev.Type)
	ev, ok = r.gone("b")
	require.True(t, ok)
	require.Equal(t, EventLeave, ev.Type)
	require.Equal(t, StatusLeft, ev.Member.Status)
	_, ok = r.gone("b")
	require.False(t, ok, "already gone")
	_, ok = r.gone("unknown")
	require.False(t, ok)

	now = now.Add(time.Hour)
	require.Len(t, r.list(nil), 3, "kept for ReapAfter")
	now = now.Add(time.Second)
	got := r.list(nil)
	require.Len(t, got, 1, "left and failed reaped, alive kept")
	require.Equal(t, "c", got[0].Name)

	_, err = r.alive(&memberlist.Node{Name: "x", Meta: []byte("junk")}, EventJoin)
	require.ErrorIs(t, err, ErrInvalidMeta)
}

func TestParseLogLine(t *testing.T) {
	tests := []struct {
		line  string
		level slog.Level
		msg   string
	}{
		{"[DEBUG] memberlist: Stream connection from=1\n", slog.LevelDebug, "Stream connection from=1"},
		{"[INFO] memberlist: Marking n as failed\n", slog.LevelDebug, "Marking n as failed"},
		{"[WARN] memberlist: Refuting a dead message\n", slog.LevelWarn, "Refuting a dead message"},
		{"[ERR] memberlist: Push/Pull with n failed\n", slog.LevelWarn, "Push/Pull with n failed"},
		{"Err: Could not set the deadline\n", slog.LevelDebug, "Err: Could not set the deadline"},
	}
	for _, tt := range tests {
		t.Run(tt.msg, func(t *testing.T) {
			level, msg := parseLogLine(tt.line)
			require.Equal(t, tt.level, level)
			require.Equal(t, tt.msg, msg)
		})
	}
}

func TestMemberlistLogsQuietAtInfo(t *testing.T) {
	var buf bytes.Buffer
	l := newStdLogger(slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelInfo})))
	l.Printf("[DEBUG] memberlist: a")
	l.Printf("[INFO] memberlist: b")
	require.Empty(t, buf.String())
	l.Printf("[WARN] memberlist: c")
	require.Contains(t, buf.String(), "level=WARN msg=c")
}
