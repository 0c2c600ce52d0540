package agent

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	nomad "github.com/hashicorp/nomad/api"
	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/runtime/safepath/safepathtest"
)

// hostileRequest is one request of the hostile-input review and the 4xx
// it must get.
type hostileRequest struct {
	name, method, path, body string
	code                     int
	says                     string
}

// escapedTaskDir is where the review's escaping task name pointed.
const escapedTaskDir = "/tmp/x-escaped-task"

func hostileRequests() []hostileRequest {
	task := `{"Name":"t","Driver":"exec","Config":{"command":"/bin/true"},"Resources":{"CPU":100,"MemoryMB":32}}`
	group := `{"Name":"g","Count":1,"Tasks":[` + task + `]}`
	job := func(extra, groups string) string {
		return `{"Job":{"ID":"h"` + extra + `,"TaskGroups":[` + groups + `]}}`
	}
	deep := func(open, close string) string {
		hcl := "job \"x\" {\n group \"g\" {\n count = " + strings.Repeat(open, 60000) + "1" + strings.Repeat(close, 60000) + "\n }\n}\n"
		b, _ := json.Marshal(map[string]any{"JobHCL": hcl})
		return string(b)
	}
	b, _ := json.Marshal(map[string]any{"JobHCL": "job \"x\" {\n meta { a = \"" +
		strings.Repeat("%{if true}", 20000) + strings.Repeat("%{endif}", 20000) + "\" }\n}\n"})
	directives := string(b)
	return []hostileRequest{
		{"hcl nested lists", "POST", "/v1/jobs/parse", deep("[", "]"), 400, "job file too complex"},
		{"hcl nested parentheses", "POST", "/v1/jobs/parse", deep("(", ")"), 400, "job file too complex"},
		{"hcl nested objects", "POST", "/v1/jobs/parse", deep("{a = ", "}"), 400, "job file too complex"},
		{"hcl unary chain", "POST", "/v1/jobs/parse", deep("-", ""), 400, "job file too complex"},
		{"hcl if directives", "POST", "/v1/jobs/parse", directives, 400, "job file too complex"},
		{"hcl too large", "POST", "/v1/jobs/parse", `{"JobHCL":"` + strings.Repeat("#", 600<<10) + `"}`, 400, "job file too large"},
		{"parse with trailing data", "POST", "/v1/jobs/parse", `{"JobHCL":"job \"x\" {}"} garbage`, 400, "invalid request body"},
		{"json nested", "PUT", "/v1/jobs", `{"Job":` + strings.Repeat("[", 100000) + strings.Repeat("]", 100000) + `}`, 400, "nested deeper than 64"},
		{"a billion allocations", "PUT", "/v1/jobs", job("", strings.Replace(group, `"Count":1`, `"Count":1000000000`, 1)), 400, "job_max_count"},
		{"escaping task name", "PUT", "/v1/jobs", job("", strings.Replace(group, `"Name":"t"`, `"Name":"../../../../tmp/x-escaped-task"`, 1)), 400, "must not contain /"},
		{"dot-dot task name", "PUT", "/v1/jobs", job("", strings.Replace(group, `"Name":"t"`, `"Name":".."`, 1)), 400, `must not be ".."`},
		{"slash group name", "PUT", "/v1/jobs", job("", strings.Replace(group, `"Name":"g"`, `"Name":"a/b"`, 1)), 400, "must not contain /"},
		{"newline in id", "PUT", "/v1/jobs", `{"Job":{"ID":"a\nb","TaskGroups":[` + group + `]}}`, 400, "control characters"},
		{"1 MiB id", "PUT", "/v1/jobs", `{"Job":{"ID":"` + strings.Repeat("i", 1<<20) + `","TaskGroups":[` + group + `]}}`, 400, "at most 128"},
		{"null group", "PUT", "/v1/jobs", job("", "null"), 400, "group[0] is missing"},
		{"null task", "PUT", "/v1/jobs", job("", `{"Name":"g","Count":1,"Tasks":[null]}`), 400, "task[0] is missing"},
		{"duplicate key", "PUT", "/v1/jobs", `{"Job":{"ID":"a","ID":"b","TaskGroups":[` + group + `]}}`, 400, `key "ID" appears twice`},
		{"invalid utf-8", "PUT", "/v1/jobs", "{\"Job\":{\"ID\":\"a\xffb\",\"TaskGroups\":[" + group + "]}}", 400, "not valid UTF-8"},
		{"negative cores", "PUT", "/v1/jobs", job("", strings.Replace(group, `"MemoryMB":32`, `"MemoryMB":32,"Cores":-2`, 1)), 400, "Cores -2"},
		{"affinity weight", "PUT", "/v1/jobs", job(`,"Affinities":[{"LTarget":"a","RTarget":"b","Weight":500}]`, group), 400, "Weight 500"},
		{"empty type", "PUT", "/v1/jobs", job(`,"Type":""`, group), 400, "job type must not be empty"},
		{"unknown namespace", "PUT", "/v1/jobs", job(`,"Namespace":"nope"`, group), 400, `namespace "nope" does not exist`},
		{"unknown region", "PUT", "/v1/jobs", job(`,"Region":"mars"`, group), 500, `No path to region "mars"`},
		{"plan a billion", "PUT", "/v1/job/h/plan", job("", strings.Replace(group, `"Count":1`, `"Count":1000000000`, 1)), 400, "job_max_count"},
		{"negative wait", "GET", "/v1/jobs?index=1&wait=-1s", "", 400, "must not be negative"},
		{"negative wait ms", "GET", "/v1/jobs?index=1&wait=-1", "", 400, "must not be negative"},
		{"wait not a duration", "GET", "/v1/jobs?index=1&wait=abc", "", 400, `invalid wait "abc"`},
		{"stale maybe", "GET", "/v1/jobs?stale=maybe", "", 400, `invalid stale "maybe"`},
		{"purge maybe", "DELETE", "/v1/job/h?purge=maybe", "", 400, `invalid purge "maybe"`},
		{"index twice", "GET", "/v1/jobs?index=1&index=2", "", 400, "given 2 times"},
		{"nul in prefix", "GET", "/v1/jobs?prefix=a%00", "", 400, "NUL"},
		{"other region", "GET", "/v1/jobs?region=mars", "", 500, `No path to region "mars"`},
		{"volume duplicate key", "PUT", "/v1/volume/csi/v", `{"Volumes":[{"ID":"v","ID":"w"}]}`, 400, "appears twice"},
		{"drain trailing data", "POST", "/v1/node/nope/drain", `{"DrainSpec":{"Deadline":0}} {}`, 400, "invalid request body"},
	}
}

// send sends one hostile request and checks its answer.
func (h hostileRequest) send(c *http.Client, base string) error {
	req, err := http.NewRequest(h.method, base+h.path, bytes.NewBufferString(h.body))
	if err != nil {
		return err
	}
	resp, err := c.Do(req)
	if err != nil {
		return fmt.Errorf("%s: %w", h.name, err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != h.code || !strings.Contains(string(body), h.says) {
		return fmt.Errorf("%s: got %d %q, want %d with %q", h.name, resp.StatusCode, cut(string(body)), h.code, h.says)
	}
	return nil
}

func cut(s string) string {
	if len(s) > 300 {
		return s[:300] + "..."
	}
	return s
}

// TestHostileInputChangesNothing: each request of the hostile-input review
// gets a 4xx that names the problem, and leaves the state, the agent's
// data dir and the host as they were.
func TestHostileInputChangesNothing(t *testing.T) {
	dir := t.TempDir()
	a := startAgent(t, testConfig(t, dir))
	defer a.Shutdown()
	base := "http://" + a.HTTPAddr()
	_, statErr := os.Stat(escapedTaskDir)
	require.True(t, os.IsNotExist(statErr), "%s exists before the test", escapedTaskDir)
	before, files := a.Store().Snapshot().Index(), safepathtest.Tree(t, filepath.Join(dir, "alloc"))
	for _, h := range hostileRequests() {
		t.Run(h.name, func(t *testing.T) {
			require.NoError(t, h.send(http.DefaultClient, base))
			require.Equal(t, before, a.Store().Snapshot().Index(), "state changed")
		})
	}
	require.Empty(t, a.Store().Snapshot().Jobs())
	require.Equal(t, files, safepathtest.Tree(t, filepath.Join(dir, "alloc")), "files appeared under the allocation dir")
	_, statErr = os.Stat(escapedTaskDir)
	require.True(t, os.IsNotExist(statErr), "%s was created", escapedTaskDir)
}

// TestHostileStreamWhileAJobRuns: 30 goroutines send the hostile requests
// over and over while a real job is placed, runs, is refused a bad stop
// and a bad log read, and stops; every hostile request gets its 4xx and
// the job's life is unchanged by them.
func TestHostileStreamWhileAJobRuns(t *testing.T) {
	a := startAgent(t, testConfig(t, t.TempDir()))
	defer a.Shutdown()
	base := "http://" + a.HTTPAddr()
	c, err := nomad.NewClient(&nomad.Config{Address: base})
	require.NoError(t, err)

	reqs := hostileRequests()
	const workers, rounds = 30, 2
	errs := make(chan error, workers*rounds*len(reqs))
	stop := make(chan struct{})
	var wg sync.WaitGroup
	client := &http.Client{Timeout: time.Minute}
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range rounds * len(reqs) {
				select {
				case <-stop:
					return
				default:
				}
				if err := reqs[(w+i)%len(reqs)].send(client, base); err != nil {
					errs <- err
				}
			}
		}()
	}

	job := nomad.NewServiceJob("steady", "steady", "global", 50)
	tg := nomad.NewTaskGroup("g", 1)
	task := nomad.NewTask("t", "exec").SetConfig("command", "/bin/sh").
		SetConfig("args", []string{"-c", "echo up; while true; do sleep 0.2; done"}).
		Require(&nomad.Resources{CPU: ptr(100), MemoryMB: ptr(32)})
	task.KillTimeout = ptr(2 * time.Second)
	tg.AddTask(task)
	job.AddTaskGroup(tg)
	_, _, err = c.Jobs().Register(job, nil)
	require.NoError(t, err)
	alloc := waitAllocStatus(t, c, "steady", "running")

	for _, h := range []hostileRequest{
		{"purge maybe on a running job", "DELETE", "/v1/job/steady?purge=maybe", "", 400, `invalid purge "maybe"`},
		{"logs of an unknown task", "GET", "/v1/client/fs/logs/" + alloc.ID + "?task=../../etc&type=stdout", "", 404, `unknown task "../../etc" in allocation`},
	} {
		require.NoError(t, h.send(client, base))
	}
	running, _, err := c.Allocations().Info(alloc.ID, nil)
	require.NoError(t, err)
	require.Equal(t, "running", running.ClientStatus)
	require.Equal(t, "run", running.DesiredStatus)

	_, _, err = c.Jobs().Deregister("steady", false, nil)
	require.NoError(t, err)
	done := waitAllocStatus(t, c, "steady", "complete")
	require.Equal(t, alloc.ID, done.ID)
	require.Equal(t, "dead", done.TaskStates["t"].State)

	close(stop)
	wg.Wait()
	close(errs)
	var failed []string
	for err := range errs {
		failed = append(failed, err.Error())
	}
	require.Empty(t, failed)
	allocs, _, err := c.Jobs().Allocations("steady", true, nil)
	require.NoError(t, err)
	require.Len(t, allocs, 1, "hostile requests made no allocation")
	jobs, _, err := c.Jobs().List(nil)
	require.NoError(t, err)
	require.Len(t, jobs, 1, "hostile requests registered no job")
}

// TestAgentRegionAndLimits: on an agent of region "eu" with a
// job_max_count of 5, a job file without a region is parsed and
// registered for "eu", another region has no path, and a scale past the
// limit is a 400 that changes nothing.
func TestAgentRegionAndLimits(t *testing.T) {
	cfg := testConfig(t, t.TempDir())
	cfg.Region = "eu"
	cfg.JobLimits.JobMaxCount = 5
	a := startAgent(t, cfg)
	defer a.Shutdown()
	c, err := nomad.NewClient(&nomad.Config{Address: "http://" + a.HTTPAddr(), Region: "eu"})
	require.NoError(t, err)
	hcl := "job \"r\" {\n  group \"g\" {\n    count = 0\n    task \"t\" {\n      driver = \"exec\"\n      config { command = \"/bin/true\" }\n    }\n  }\n}\n"
	job, err := c.Jobs().ParseHCLOpts(&nomad.JobsParseRequest{JobHCL: hcl, Canonicalize: true})
	require.NoError(t, err)
	require.Equal(t, "eu", *job.Region)
	_, _, err = c.Jobs().Register(job, nil)
	require.NoError(t, err)
	stored := a.Store().Snapshot().JobByID("default", "r")
	evals := len(a.Store().Snapshot().EvalsByJob("default", "r"))

	_, _, err = c.Jobs().Scale("r", "g", ptr(6), "", false, nil, nil)
	require.ErrorContains(t, err, "over the job_max_count limit of 5")
	job.Region = ptr("global")
	_, _, err = c.Jobs().Register(job, nil)
	require.ErrorContains(t, err, `No path to region "global"`) // no server of it is known
	after := a.Store().Snapshot().JobByID("default", "r")
	require.Equal(t, stored.GetJobModifyIndex(), after.GetJobModifyIndex(), "refused requests changed the job")
	require.Equal(t, "eu", after.GetRegion())
	require.Len(t, a.Store().Snapshot().EvalsByJob("default", "r"), evals, "refused requests made evaluations")
	_, _, err = c.Jobs().Scale("r", "g", ptr(5), "", false, nil, nil)
	require.NoError(t, err)
}
