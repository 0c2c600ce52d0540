package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/troupe-dev/troupe/agent/clientsim"
)

// runBenchClients runs `troupe bench clients`: a server agent as a child
// process on loopback, and N simulated clients in this process that
// register and heartbeat over the gRPC actor transport; then some of them
// stop at once.
func runBenchClients(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("bench clients", flag.ContinueOnError)
	fs.SetOutput(stderr)
	n := fs.Int("n", 10000, "simulated clients")
	stop := fs.Int("stop", 100, "clients stopped at once after the steady state")
	allocs := fs.Int("allocs", 0, "allocations of the service job placed first, one per node (0: nine in ten nodes; -1: none)")
	rate := fs.Float64("max-heartbeats-per-second", 50, "the agent's heartbeat budget: TTLs grow with the cluster to stay under it")
	minTTL := fs.Duration("min-ttl", 10*time.Second, "the agent's least heartbeat TTL")
	grace := fs.Duration("grace", 10*time.Second, "the agent's heartbeat grace")
	steady := fs.Duration("duration", time.Minute, "steady state measured once every client holds a TTL for the whole cluster")
	cpuProfile := fs.String("cpuprofile", "", "write the agent's CPU profile (its whole run) to this file")
	agentLog := fs.String("agent-log", "", "keep the agent's log in this file (default: in its temporary data dir)")
	if err := fs.Parse(args); err != nil {
		return 1
	}
	if *n <= 0 || *stop < 0 || *stop > *n || *rate <= 0 || *minTTL <= 0 || *grace < 0 || *steady <= 0 {
		fmt.Fprintln(stderr, "Error: -n, -max-heartbeats-per-second, -min-ttl and -duration must be positive, -stop within -n")
		return 1
	}
	exe, err := os.Executable()
	if err != nil {
		fmt.Fprintln(stderr, "Error:", err)
		return 1
	}
	base := max(*minTTL, time.Duration(float64(*n) / *rate * float64(time.Second)))
	fmt.Fprintf(stdout, "settings: -n %d -stop %d -max-heartbeats-per-second %g -min-ttl %s -grace %s -duration %s: TTL base max(min-ttl, n/rate) = %s, each TTL base + up to base (Nomad's spread), so a stopped client is down within %s (2 x base + grace)\n",
		*n, *stop, *rate, *minTTL, *grace, *steady, base, 2*base+*grace)
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer cancel()
	srv, err := clientsim.StartServer(ctx, clientsim.ServerConfig{Exe: exe, Args: []string{"agent"}, LogFile: *agentLog,
		MinTTL: *minTTL, Grace: *grace, MaxHeartbeatsPerSecond: *rate, CPUProfile: *cpuProfile})
	if err != nil {
		fmt.Fprintln(stderr, "Error:", err)
		return 1
	}
	fmt.Fprintf(stdout, "agent: pid %d, rpc %s, http %s\n", srv.PID(), srv.RPCAddr, srv.HTTPAddr)
	res, err := clientsim.Run(ctx, srv, clientsim.Scenario{Nodes: *n, Stop: *stop, Allocs: *allocs, Steady: *steady, Progress: stdout})
	if stopErr := srv.Stop(); stopErr != nil {
		fmt.Fprintln(stderr, "Warning: stopping the agent:", stopErr)
	}
	if res != nil {
		res.Print(stdout)
	}
	if err != nil {
		fmt.Fprintln(stderr, "Error:", err)
		return 1
	}
	return 0
}
