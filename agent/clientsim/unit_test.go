package clientsim

import (
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestLatenciesQuantile(t *testing.T) {
	ms := func(v ...int) Latencies {
		var out Latencies
		for _, x := range v {
			out = append(out, time.Duration(x)*time.Millisecond)
		}
		return out
	}
	hundred := make([]int, 100)
	for i := range hundred {
		hundred[i] = i + 1
	}
	tests := []struct {
		name string
		l    Latencies
		q    float64
		want time.Duration
	}{
		{"none", nil, 0.5, 0},
		{"one", ms(7), 0.99, 7 * time.Millisecond},
		{"median of 1..100", ms(hundred...), 0.5, 50 * time.Millisecond},
		{"p99 of 1..100", ms(hundred...), 0.99, 99 * time.Millisecond},
		{"max", ms(hundred...), 1, 100 * time.Millisecond},
		{"min", ms(hundred...), 0, time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { require.Equal(t, tt.want, tt.l.Quantile(tt.q)) })
	}
}

func TestRecorderOnlyWhileOn(t *testing.T) {
	var r recorder
	r.add(time.Second)
	r.record(true)
	r.add(3 * time.Millisecond)
	r.add(time.Millisecond)
	r.record(false)
	r.add(time.Hour)
	require.Equal(t, Latencies{time.Millisecond, 3 * time.Millisecond}, r.samples())
	require.Equal(t, int64(4), r.total.Load(), "every answer counts")
	r.record(true)
	require.Empty(t, r.samples(), "starting again drops the old samples")
}

func TestPickStopped(t *testing.T) {
	nodes := func(allocs ...int) []NodeInfo {
		var out []NodeInfo
		for i, a := range allocs {
			out = append(out, NodeInfo{ID: string(rune('a' + i)), Allocs: a})
		}
		return out
	}
	tests := []struct {
		name  string
		nodes []NodeInfo
		n     int
		want  []string
	}{
		{"spread over nodes with allocations", nodes(1, 0, 1, 1, 1, 0), 2, []string{"a", "d"}},
		{"all with allocations first", nodes(0, 1, 0, 1), 3, []string{"b", "d", "a"}},
		{"none", nodes(1, 1), 0, []string{}},
		{"more than there are", nodes(1), 3, []string{"a"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { require.Equal(t, tt.want, pickStopped(tt.nodes, tt.n)) })
	}
}

func TestProcessCPU(t *testing.T) {
	d, err := ProcessCPU(os.Getpid())
	require.NoError(t, err)
	require.GreaterOrEqual(t, d, time.Duration(0))
	_, err = ProcessCPU(-1)
	require.Error(t, err)
}

func TestScenarioDefaults(t *testing.T) {
	sc := Scenario{Nodes: 10, Stop: 2}
	require.NoError(t, sc.defaults())
	require.Equal(t, 9, sc.Allocs)
	require.Equal(t, Resources{CPU: 1000, MemoryMB: 1024}, sc.Resources)
	for _, bad := range []Scenario{{}, {Nodes: 1, Stop: 2}, {Nodes: 2, Allocs: 3}, {Nodes: 1, Steady: -1}} {
		require.ErrorIs(t, bad.defaults(), ErrConfig, "%+v", bad)
	}
}
