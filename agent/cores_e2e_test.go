package agent

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	nomad "github.com/hashicorp/nomad/api"
	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/actors/node"
)

// cpuList reads a kernel CPU list file ("0-3,8").
func cpuList(t *testing.T, path string) []uint32 {
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	cores, err := node.ParseCores(strings.TrimSpace(string(b)))
	require.NoError(t, err)
	return cores
}

// getInto decodes the JSON answer of GET path into v.
func getInto(t *testing.T, a *Agent, path string, v any) {
	t.Helper()
	resp, err := http.Get("http://" + a.HTTPAddr() + path)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode, path)
	require.NoError(t, json.NewDecoder(resp.Body).Decode(v))
}

// TestExecReservedCoresAreTheCgroupCpuset: the node reports its cpuset,
// less the client's reserved core, as NodeResources.Cpu.ReservableCpuCores;
// each cores = 1 exec task gets a
// core of it in AllocatedResources.Tasks[t].Cpu.ReservedCores, no two
// allocs the same, and its cgroup's cpuset.cpus is exactly that core.
// With every core reserved, one more alloc is not placed: the evaluation
// says the "cores" dimension is exhausted.
func TestExecReservedCoresAreTheCgroupCpuset(t *testing.T) {
	needCgroups(t)
	cfg := testConfig(t, t.TempDir())
	online := cpuList(t, "/sys/devices/system/cpu/online")
	if len(online) > 1 {
		// The client keeps the first core: the exec driver's own pick
		// (the lowest free online core) would be it, the scheduler's
		// reservation never is.
		cfg.ReservedCores = online[:1]
	}
	a := startAgent(t, cfg)
	defer a.Shutdown()
	c, err := nomad.NewClient(&nomad.Config{Address: "http://" + a.HTTPAddr()})
	require.NoError(t, err)

	nodes, _, err := c.Nodes().List(nil)
	require.NoError(t, err)
	require.Len(t, nodes, 1)
	var nd struct {
		NodeResources struct {
			Cpu struct {
				CpuShares          int64
				TotalCpuCores      int
				ReservableCpuCores []uint32
			}
		}
	}
	getInto(t, a, "/v1/node/"+nodes[0].ID, &nd)
	reservable := nd.NodeResources.Cpu.ReservableCpuCores
	require.NotEmpty(t, reservable, "the agent's cpuset")
	if len(cfg.ReservedCores) > 0 {
		require.NotContains(t, reservable, online[0], "the client's reserved core")
	}
	perCore := nd.NodeResources.Cpu.CpuShares / int64(nd.NodeResources.Cpu.TotalCpuCores)

	job := loopJob("pinned")
	job.TaskGroups[0].Count = ptr(len(reservable))
	job.TaskGroups[0].Tasks[0].Resources = &nomad.Resources{Cores: ptr(1), MemoryMB: ptr(32)}
	_, _, err = c.Jobs().Register(job, nil)
	require.NoError(t, err)
	var running []*nomad.AllocationListStub
	require.Eventually(t, func() bool {
		allocs, _, err := c.Jobs().Allocations("pinned", false, nil)
		require.NoError(t, err)
		running = running[:0]
		for _, al := range allocs {
			if al.ClientStatus == "running" {
				running = append(running, al)
			}
		}
		return len(running) == len(reservable)
	}, 60*time.Second, 50*time.Millisecond, "one alloc per core running")

	var held []uint32
	for _, al := range running {
		var alloc struct {
			AllocatedResources struct {
				Tasks map[string]struct {
					Cpu struct {
						CpuShares     int64
						ReservedCores []uint32
					}
				}
			}
		}
		getInto(t, a, "/v1/allocation/"+al.ID, &alloc)
		cpu := alloc.AllocatedResources.Tasks["t"].Cpu
		require.Len(t, cpu.ReservedCores, 1)
		core := cpu.ReservedCores[0]
		require.Contains(t, reservable, core)
		require.NotContains(t, held, core, "a core reserved twice")
		held = append(held, core)
		require.Equal(t, perCore, cpu.CpuShares, "one core's MHz")

		b, err := os.ReadFile(filepath.Join(taskCgroupDir(a, "cpuset", al.ID, "t"), "cpuset.cpus"))
		require.NoError(t, err)
		require.Equal(t, strconv.Itoa(int(core)), strings.TrimSpace(string(b)), "the cgroup's cpuset is the reserved core")
	}
	slices.Sort(held)
	require.Equal(t, reservable, held)

	more := loopJob("one-more")
	more.TaskGroups[0].Tasks[0].Resources = &nomad.Resources{Cores: ptr(1), MemoryMB: ptr(32)}
	resp, _, err := c.Jobs().Register(more, nil)
	require.NoError(t, err)
	var eval *nomad.Evaluation
	require.Eventually(t, func() bool {
		eval, _, err = c.Evaluations().Info(resp.EvalID, nil)
		require.NoError(t, err)
		return eval.Status == "complete"
	}, 30*time.Second, 50*time.Millisecond, "the evaluation of the job that does not fit")
	require.Contains(t, eval.FailedTGAllocs, "g")
	require.Equal(t, 1, eval.FailedTGAllocs["g"].DimensionExhausted["cores"], "%+v", eval.FailedTGAllocs["g"])
}

// TestCoresWithCPURefused: a task that asks for cpu and cores is refused
// with a 400 naming both (Nomad refuses it too); nothing is registered.
func TestCoresWithCPURefused(t *testing.T) {
	a := startAgent(t, testConfig(t, t.TempDir()))
	defer a.Shutdown()
	c, err := nomad.NewClient(&nomad.Config{Address: "http://" + a.HTTPAddr()})
	require.NoError(t, err)
	job := loopJob("both")
	job.TaskGroups[0].Tasks[0].Resources = &nomad.Resources{CPU: ptr(500), Cores: ptr(1), MemoryMB: ptr(32)}
	_, _, err = c.Jobs().Register(job, nil)
	require.ErrorContains(t, err, "400")
	require.ErrorContains(t, err, "a task can ask for cpu or cores, not both (cpu 500, cores 1)")
	_, _, err = c.Jobs().Info("both", nil)
	require.ErrorContains(t, err, "404")
}
