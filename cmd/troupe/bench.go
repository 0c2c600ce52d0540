package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/hashicorp/go-uuid"

	"github.com/troupe-dev/troupe/actors/scheduler"
	"github.com/troupe-dev/troupe/agent"
	"github.com/troupe-dev/troupe/agent/clientsim"
	"github.com/troupe-dev/troupe/jobspec"
	"github.com/troupe-dev/troupe/messages"
)

// benchCommand runs `troupe bench schedule`: a server-only agent with a real
// raft log on disk, simulated nodes (no clients), and jobs whose every plan
// is committed through raft by the scheduler actor.
func benchCommand(args []string) int {
	return runBench(args, os.Stdout, os.Stderr)
}

func runBench(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 && args[0] == "clients" {
		return runBenchClients(args[1:], stdout, stderr)
	}
	if len(args) == 0 || args[0] != "schedule" {
		fmt.Fprintln(stderr, "usage: troupe bench schedule [-nodes N] [-allocs N] [-count N]")
		fmt.Fprintln(stderr, "       troupe bench clients [-n N] [-stop N] [-max-heartbeats-per-second R] [-min-ttl D] [-grace D] [-duration D]")
		return 1
	}
	fs := flag.NewFlagSet("bench schedule", flag.ContinueOnError)
	fs.SetOutput(stderr)
	nodes := fs.Int("nodes", 10000, "simulated nodes")
	allocs := fs.Int("allocs", 1000000, "allocations to place in all")
	count := fs.Int("count", 1000, "allocations per job (count of its one group)")
	dir := fs.String("data-dir", "", "data dir (default: a temporary one, removed after)")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile of the placements to this file")
	memProfile := fs.String("memprofile", "", "write a heap profile, taken once every allocation is placed, to this file")
	if err := fs.Parse(args[1:]); err != nil {
		return 1
	}
	if *nodes <= 0 || *allocs <= 0 || *count <= 0 {
		fmt.Fprintln(stderr, "Error: -nodes, -allocs and -count must be positive")
		return 1
	}
	res, err := benchSchedule(*nodes, *allocs, *count, *dir, profiles{cpu: *cpuProfile, mem: *memProfile}, stdout)
	if err != nil {
		fmt.Fprintln(stderr, "Error:", err)
		return 1
	}
	fmt.Fprintf(stdout, "placed %d allocations on %d nodes in %.3fs: %.0f placements/s (committed through raft)\n",
		res.placed, *nodes, res.elapsed.Seconds(), float64(res.placed)/res.elapsed.Seconds())
	fmt.Fprintf(stdout, "peak heap in use %d MiB, peak RSS %d MiB\n", res.peakHeap>>20, peakRSS()>>10)
	return 0
}

type benchResult struct {
	placed   int
	elapsed  time.Duration
	peakHeap uint64
}

// profiles names the files a bench writes its profiles to ("": none).
type profiles struct{ cpu, mem string }

func benchSchedule(nodes, allocs, count int, dir string, prof profiles, progress io.Writer) (*benchResult, error) {
	cpuProfile := prof.cpu
	cfg := agent.DefaultConfig()
	cfg.Client = false
	cfg.HTTPAddr = "127.0.0.1:0"
	cfg.DataDir = dir
	if dir == "" {
		d, err := os.MkdirTemp("", "troupe-bench-")
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(d)
		cfg.DataDir = d
	}
	// Simulated nodes never heartbeat: with the default TTL the leader
	// marks all of them down about a minute in (6 TTLs of failover, then
	// the grace), and a run that lasts longer measures that storm of
	// node-update evaluations instead of placements.
	cfg.HeartbeatTTL = time.Hour
	cfg.SnapshotThreshold = 1 << 30
	cfg.SnapshotInterval = time.Hour
	cfg.Logger = slog.New(slog.NewTextHandler(benchLog(), nil))
	a, err := agent.New(cfg)
	if err != nil {
		return nil, err
	}
	if err := a.Start(); err != nil {
		return nil, err
	}
	defer a.Shutdown()
	ctx := context.Background()
	if err := a.WaitLeader(ctx); err != nil {
		return nil, err
	}
	if err := registerNodes(ctx, a, scheduler.SimulatedNodes(nodes, 1)); err != nil {
		return nil, err
	}
	fmt.Fprintf(progress, "registered %d simulated nodes\n", nodes)

	var peak atomic.Uint64
	stop := make(chan struct{})
	go sampleHeap(&peak, stop)
	defer close(stop)

	if cpuProfile != "" {
		stopProfile, err := startCPUProfile(cpuProfile)
		if err != nil {
			return nil, err
		}
		defer stopProfile()
		// A run stopped early (SIGTERM, SIGINT) still leaves its profile.
		sig := make(chan os.Signal, 1)
		signal.Notify(sig, syscall.SIGTERM, os.Interrupt)
		defer signal.Stop(sig)
		go func() {
			if _, ok := <-sig; ok {
				stopProfile()
				fmt.Fprintf(progress, "stopped with %d placed; profile written\n", countPlaced(a))
				os.Exit(2)
			}
		}()
	}
	jobs := (allocs + count - 1) / count
	start := time.Now()
	for i := 0; i < jobs; i++ {
		n := min(count, allocs-i*count)
		if err := registerBenchJob(ctx, a, fmt.Sprintf("bench-%05d", i), n); err != nil {
			return nil, err
		}
	}
	wait, cancel := context.WithTimeout(ctx, 30*time.Minute)
	defer cancel()
	var index uint64
	last := time.Now()
	for {
		placed := countPlaced(a)
		if time.Since(last) >= 10*time.Second {
			last = time.Now()
			fmt.Fprintf(progress, "%s: %d placed\n", time.Since(start).Round(time.Second), placed)
		}
		if placed >= int64(allocs) {
			if err := writeHeapProfile(prof.mem); err != nil {
				return nil, err
			}
			return &benchResult{placed: int(placed), elapsed: time.Since(start), peakHeap: peak.Load()}, nil
		}
		if wait.Err() != nil {
			return nil, fmt.Errorf("gave up after 30m with %d of %d placed", placed, allocs)
		}
		index = a.Store().Wait(wait, index, "allocs") // wakes on every committed plan
	}
}

// countPlaced is how many allocations the state holds.
func countPlaced(a *agent.Agent) int64 {
	return int64(a.Store().Snapshot().AllocCount())
}

// registerNodes commits the nodes through raft, many proposals at once so
// raft batches them.
func registerNodes(ctx context.Context, a *agent.Agent, nodes []*messages.Node) error {
	var wg sync.WaitGroup
	errs := make(chan error, len(nodes))
	sem := make(chan struct{}, 64)
	for _, n := range nodes {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			if _, _, err := a.Apply(ctx, &messages.Command{Cmd: &messages.Command_RegisterNode{RegisterNode: &messages.RegisterNode{Node: n}}}); err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	return <-errs
}

func registerBenchJob(ctx context.Context, a *agent.Agent, id string, count int) error {
	job, err := jobspec.Parse(id+".hcl", []byte(clientsim.JobHCL(id, count, 10, 16)))
	if err != nil {
		return err
	}
	jobspec.Canonicalize(job)
	evalID, _ := uuid.GenerateUUID()
	eval := &messages.Evaluation{ID: evalID, Namespace: job.Namespace, Priority: job.Priority, Type: job.Type,
		TriggeredBy: "job-register", JobID: job.ID, Status: messages.EvalStatusPending}
	_, _, err = a.Apply(ctx, &messages.Command{Cmd: &messages.Command_RegisterJob{RegisterJob: &messages.RegisterJob{Job: job, Eval: eval}}})
	return err
}

func sampleHeap(peak *atomic.Uint64, stop chan struct{}) {
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	var ms runtime.MemStats
	for {
		select {
		case <-stop:
			return
		case <-t.C:
			runtime.ReadMemStats(&ms)
			if ms.HeapInuse > peak.Load() {
				peak.Store(ms.HeapInuse)
			}
		}
	}
}

// peakRSS reads the process's peak resident set (VmHWM) in KiB.
func peakRSS() uint64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, _ := strconv.ParseUint(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb
		}
	}
	return 0
}

// benchLog is where the bench's agent logs: nowhere, or stderr with
// TROUPE_BENCH_LOG=1 (to see refused plans and the like).
func benchLog() io.Writer {
	if os.Getenv("TROUPE_BENCH_LOG") != "" {
		return os.Stderr
	}
	return io.Discard
}
