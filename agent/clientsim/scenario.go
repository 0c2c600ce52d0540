package clientsim

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/troupe-dev/troupe/api"
)

// Scenario is one bench run.
type Scenario struct {
	Nodes int // simulated clients
	Stop  int // clients stopped at once after the steady state
	// Allocs is the count of the service job placed first, one allocation
	// per node (0 = nine in ten nodes, so replacements find room; -1 =
	// no job).
	Allocs int
	// Steady is how long heartbeats are measured once every node holds a
	// TTL for the whole cluster.
	Steady time.Duration
	// Resources of each node (0 = 1000 MHz, 1024 MB); each allocation
	// asks for just over half.
	Resources Resources
	JobID     string        // "" = clientsim
	Poll      time.Duration // how often the state is read (0 = 200 ms)
	// Timeout bounds every wait (0 = 5 min, plus the TTLs for detection).
	Timeout  time.Duration
	Progress io.Writer // one line per phase; nil: none
	Logger   *slog.Logger
}

func (sc *Scenario) defaults() error {
	if sc.Nodes <= 0 || sc.Stop < 0 || sc.Stop > sc.Nodes || sc.Steady < 0 {
		return fmt.Errorf("%w: %d nodes, %d stopped, steady %s", ErrConfig, sc.Nodes, sc.Stop, sc.Steady)
	}
	if sc.Allocs == 0 {
		sc.Allocs = sc.Nodes - sc.Nodes/10
	}
	if sc.Allocs > sc.Nodes {
		return fmt.Errorf("%w: %d allocations on %d nodes (one per node)", ErrConfig, sc.Allocs, sc.Nodes)
	}
	if sc.Resources.CPU <= 0 || sc.Resources.MemoryMB <= 0 {
		sc.Resources = Resources{CPU: 1000, MemoryMB: 1024}
	}
	if sc.JobID == "" {
		sc.JobID = "clientsim"
	}
	sc.Poll = orDefault(sc.Poll, 200*time.Millisecond)
	sc.Timeout = orDefault(sc.Timeout, 5*time.Minute)
	if sc.Progress == nil {
		sc.Progress = io.Discard
	}
	return nil
}

// Run plays the scenario against srv: register every node, place the job
// and wait until its allocations run, wait until every node heartbeated
// with a TTL for the whole cluster, measure the steady state, then stop
// Stop nodes that hold an allocation and wait until the leader marked all
// of them down with their node-update evaluations.
func Run(ctx context.Context, srv *Server, sc Scenario) (*Result, error) {
	if err := sc.defaults(); err != nil {
		return nil, err
	}
	res := &Result{Scenario: sc, Grace: srv.Grace}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	go func() { // a dead agent ends every wait at once
		select {
		case <-srv.done:
			cancel(fmt.Errorf("%w: exited during the run: %v", ErrServer, srv.waitErr))
		case <-ctx.Done():
		}
	}()
	sim, err := New(Config{Server: srv.RPCAddr, Nodes: NewNodes(sc.Nodes, sc.Resources), Logger: sc.Logger})
	if err != nil {
		return nil, err
	}
	defer sim.Close()
	start := time.Now()
	if err := sim.Register(ctx); err != nil {
		return nil, err
	}
	registered := time.Now()
	res.Register = registered.Sub(start)
	fmt.Fprintf(sc.Progress, "registered %d simulated clients in %.1fs\n", sc.Nodes, res.Register.Seconds())
	if err := placeJob(ctx, srv.API, sim, sc); err != nil {
		return nil, err
	}
	res.Place = time.Since(registered)
	fmt.Fprintf(sc.Progress, "%d allocations placed and running in %.1fs\n", max(sc.Allocs, 0), res.Place.Seconds())
	if err := settle(ctx, sim, registered, sc); err != nil {
		return nil, err
	}
	res.TTLMin, res.TTLMax = ttlRange(sim.Nodes())
	fmt.Fprintf(sc.Progress, "every client heartbeats with a TTL for %d nodes (%.1fs..%.1fs); measuring %s of steady state\n",
		sc.Nodes, res.TTLMin.Seconds(), res.TTLMax.Seconds(), sc.Steady)
	if res.Steady, err = measureSteady(ctx, srv, sim, sc.Steady); err != nil {
		return nil, err
	}
	if sc.Stop == 0 {
		return res, nil
	}
	ids := pickStopped(sim.Nodes(), sc.Stop)
	res.Stopped = ids
	stopAt := time.Now()
	sim.Stop(ids)
	fmt.Fprintf(sc.Progress, "stopped %d clients; waiting for the leader to mark them down\n", len(ids))
	limit := sc.Timeout + 2*res.TTLMax + srv.Grace
	if res.Detect, err = watchDown(ctx, srv.API, sim, ids, stopAt, sc, limit); err != nil {
		return res, err
	}
	res.Detect.judge(sim, ids, stopAt, srv.Grace)
	return res, nil
}

// settle waits until every node has heartbeated since all registered, so
// each holds a TTL computed for the whole cluster.
func settle(ctx context.Context, sim *Sim, since time.Time, sc Scenario) error {
	return poll(ctx, sc.Poll, sc.Timeout, "every client's first heartbeat after the registrations", func() (bool, error) {
		for _, n := range sim.Nodes() {
			if !n.LastReply.After(since) || n.Heartbeats == 0 {
				return false, nil
			}
		}
		return true, nil
	})
}

func ttlRange(nodes []NodeInfo) (lo, hi time.Duration) {
	for i, n := range nodes {
		if i == 0 || n.TTL < lo {
			lo = n.TTL
		}
		hi = max(hi, n.TTL)
	}
	return lo, hi
}

// measureSteady measures the agent's CPU, the raft entries written and
// the heartbeat round trips over d.
func measureSteady(ctx context.Context, srv *Server, sim *Sim, d time.Duration) (Steady, error) {
	var st Steady
	cpu0, err := srv.CPU()
	if err != nil {
		return st, err
	}
	idx0, err := srv.RaftIndex()
	if err != nil {
		return st, err
	}
	sim.Record(true)
	start := time.Now()
	select {
	case <-ctx.Done():
		return st, context.Cause(ctx)
	case <-time.After(d):
	}
	cpu1, err := srv.CPU()
	st.Wall = time.Since(start)
	sim.Record(false)
	if err != nil {
		return st, err
	}
	idx1, err := srv.RaftIndex()
	if err != nil {
		return st, err
	}
	st.CPU, st.RaftEntries = cpu1-cpu0, idx1-idx0
	// The heartbeats of the window are those recorded while it was on: a
	// difference of the total counter would also count the ones answered
	// between reading it and turning the recorder on or off.
	st.RTT = sim.RoundTrips()
	st.Heartbeats = int64(len(st.RTT))
	return st, nil
}

// pickStopped chooses n nodes spread over those that hold an allocation
// (then over the others, when too few do).
func pickStopped(nodes []NodeInfo, n int) []string {
	var with, without []string
	for _, in := range nodes {
		if in.Allocs > 0 {
			with = append(with, in.ID)
		} else {
			without = append(without, in.ID)
		}
	}
	pool := append(with, without...)
	step := max(len(with)/max(n, 1), 1)
	if len(with) < n {
		step = 1
	}
	out := make([]string, 0, n)
	for i := 0; len(out) < n && i < len(pool); i += step {
		out = append(out, pool[i])
	}
	return out
}

// poll calls done every interval until it reports true, fails, or limit
// passes.
func poll(ctx context.Context, interval, limit time.Duration, what string, done func() (bool, error)) error {
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		ok, err := done()
		if err != nil || ok {
			return err
		}
		select {
		case <-ctx.Done():
			if cause := context.Cause(ctx); !errors.Is(cause, context.DeadlineExceeded) {
				return cause
			}
			return fmt.Errorf("%w: %s (after %s)", ErrTimeout, what, limit)
		case <-tick.C:
		}
	}
}

// placeJob registers the service job and waits until the Sim has
// reported all its allocations running.
func placeJob(ctx context.Context, c *api.Client, sim *Sim, sc Scenario) error {
	if sc.Allocs <= 0 {
		return nil
	}
	src := JobHCL(sc.JobID, sc.Allocs, sc.Resources.CPU/2+1, sc.Resources.MemoryMB/2+1)
	job, err := c.Jobs().ParseHCL(src, true)
	if err != nil {
		return err
	}
	if _, _, err := c.Jobs().Register(job, nil); err != nil {
		return err
	}
	return poll(ctx, sc.Poll, sc.Timeout, "the job's allocations running", func() (bool, error) {
		return sim.Counters().Reported >= int64(sc.Allocs), nil
	})
}

// JobHCL is a service job of one group of count allocations, each one
// exec task (/bin/true) asking for cpu MHz and memoryMB, in dc1.
func JobHCL(id string, count int, cpu, memoryMB int64) string {
	return fmt.Sprintf(`job %q {
  datacenters = ["dc1"]
  group "g" {
    count = %d
    task "t" {
      driver = "exec"
      config {
        command = "/bin/true"
      }
      resources {
        cpu    = %d
        memory = %d
      }
    }
  }
}`, id, count, cpu, memoryMB)
}
