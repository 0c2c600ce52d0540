//go:build linux

package agent

import (
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	nomad "github.com/hashicorp/nomad/api"
	"github.com/stretchr/testify/require"
)

// httpdJob serves the task's local/ directory with busybox httpd on the
// group's dynamic port "http" (raw_exec), registered as service name
// with the given checks. script runs before the server (it writes the
// files the checks read).
func httpdJob(id, name, script string, checks ...nomad.ServiceCheck) *nomad.Job {
	job := nomad.NewServiceJob(id, id, "global", 50)
	tg := nomad.NewTaskGroup("g", 1)
	tg.Networks = []*nomad.NetworkResource{{DynamicPorts: []nomad.Port{{Label: "http"}}}}
	tg.Services = []*nomad.Service{{Name: name, PortLabel: "http", Provider: "nomad", Tags: []string{"web", "v1"},
		Checks: checks}}
	task := nomad.NewTask("t", "raw_exec").SetConfig("command", "/bin/sh").
		SetConfig("args", []string{"-c", script + `; exec busybox httpd -f -p "$NOMAD_PORT_http" -h "$NOMAD_TASK_DIR"`}).
		Require(&nomad.Resources{CPU: ptr(100), MemoryMB: ptr(32)})
	task.KillTimeout = ptr(2 * time.Second)
	tg.AddTask(task)
	job.AddTaskGroup(tg)
	return job
}

func needBusybox(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("busybox"); err != nil {
		t.Skip("the service tasks serve HTTP with busybox httpd")
	}
}

// waitServices waits for service name to have n registrations.
func waitServices(t *testing.T, c *nomad.Client, name string, n int) []*nomad.ServiceRegistration {
	t.Helper()
	var regs []*nomad.ServiceRegistration
	require.Eventually(t, func() bool {
		var err error
		regs, _, err = c.Services().Get(name, nil)
		return err == nil && len(regs) == n
	}, 20*time.Second, 20*time.Millisecond, "service %q never had %d registrations (last: %d)", name, n, len(regs))
	return regs
}

// TestServiceRegistrationEndToEnd: a raw_exec task serving HTTP registers
// its group's service with the allocation's host address and port; it is
// listed with its tags; after an agent restart the same registration is
// there once, unchanged (same indexes); stopping the job deregisters it.
func TestServiceRegistrationEndToEnd(t *testing.T) {
	needBusybox(t)
	dir := t.TempDir()
	cfg := testConfig(t, dir)
	cfg.RawExecEnabled = true
	a := startAgent(t, cfg)
	c, err := nomad.NewClient(&nomad.Config{Address: "http://" + a.HTTPAddr()})
	require.NoError(t, err)

	_, _, err = c.Jobs().Register(httpdJob("svc", "svc-web", "echo ok > $NOMAD_TASK_DIR/health"), nil)
	require.NoError(t, err)
	stub := waitAllocStatus(t, c, "svc", "running")
	regs := waitServices(t, c, "svc-web", 1)
	r := regs[0]
	full, _, err := c.Allocations().Info(stub.ID, nil)
	require.NoError(t, err)
	port := full.AllocatedResources.Shared.Networks[0].DynamicPorts[0].Value
	require.Equal(t, stub.ID, r.AllocID)
	require.Equal(t, "svc", r.JobID)
	require.Equal(t, a.Node().GetID(), r.NodeID)
	require.Equal(t, "default", r.Namespace)
	require.Equal(t, port, r.Port)
	require.Equal(t, []string{"web", "v1"}, r.Tags)
	require.Equal(t, fmt.Sprintf("_nomad-task-%s-group-g-svc-web-http", stub.ID), r.ID)
	require.Eventually(t, func() bool { return httpGetOK(fmt.Sprintf("http://%s:%d/health", r.Address, r.Port)) },
		10*time.Second, 20*time.Millisecond, "the registered address %s:%d serves the task: %s", r.Address, r.Port,
		readLog(filepath.Join(a.AllocDir(), stub.ID, "alloc", "logs", "t.stderr"))+readLog(filepath.Join(a.AllocDir(), stub.ID, "alloc", "logs", "t.stdout")))
	list, _, err := c.Services().List(nil)
	require.NoError(t, err)
	require.Len(t, list, 1)
	require.Equal(t, "svc-web", list[0].Services[0].ServiceName)
	require.Equal(t, []string{"v1", "web"}, list[0].Services[0].Tags)

	crash(t, a)
	b := startAgent(t, cfg)
	defer b.Shutdown()
	c, err = nomad.NewClient(&nomad.Config{Address: "http://" + b.HTTPAddr()})
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		full, _, err := c.Allocations().Info(stub.ID, nil)
		if err != nil {
			return false
		}
		evs := full.TaskStates["t"].Events
		return full.ClientStatus == "running" && len(evs) > 0 && evs[len(evs)-1].Type == "Reattached"
	}, 20*time.Second, 20*time.Millisecond)
	again := waitServices(t, c, "svc-web", 1)
	require.Equal(t, r.ID, again[0].ID)
	require.Equal(t, r.CreateIndex, again[0].CreateIndex, "re-registered without a change")
	require.Equal(t, r.ModifyIndex, again[0].ModifyIndex)

	_, _, err = c.Jobs().Deregister("svc", false, nil)
	require.NoError(t, err)
	waitAllocStatus(t, c, "svc", "complete")
	waitServices(t, c, "svc-web", 0)
	list, _, err = c.Services().List(nil)
	require.NoError(t, err)
	require.Empty(t, list)
}

func httpGetOK(url string) bool {
	cl := &http.Client{Timeout: 2 * time.Second}
	resp, err := cl.Get(url)
	if err != nil {
		return false
	}
	_ = resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// TestServiceChecksEndToEnd: an http, a tcp and a script check of a
// raw_exec task serving HTTP pass (Nomad's client reads them from
// /v1/client/allocation/:id/checks); when the served file goes, the http
// and script checks fail, and after check_restart.limit failures the task
// is restarted (its start writes the file again), after which every
// check passes again.
func TestServiceChecksEndToEnd(t *testing.T) {
	needBusybox(t)
	a, c := rawExecAgent(t)
	var err error
	grace := time.Second
	job := httpdJob("chk", "chk-web", "echo ok > $NOMAD_TASK_DIR/health",
		nomad.ServiceCheck{Name: "http", Type: "http", Path: "/health", Interval: time.Second, Timeout: time.Second,
			CheckRestart: &nomad.CheckRestart{Limit: 2, Grace: &grace}},
		nomad.ServiceCheck{Name: "tcp", Type: "tcp", Interval: time.Second, Timeout: time.Second},
		nomad.ServiceCheck{Name: "script", Type: "script", Command: "/bin/sh", TaskName: "t",
			Args: []string{"-c", `test -e "$NOMAD_TASK_DIR/health"`}, Interval: time.Second, Timeout: time.Second})
	_, _, err = c.Jobs().Register(job, nil)
	require.NoError(t, err)
	stub := waitAllocStatus(t, c, "chk", "running")
	statuses := func() map[string]string {
		checks, err := c.Allocations().Checks(stub.ID, nil)
		if err != nil {
			return nil
		}
		out := map[string]string{}
		for _, st := range checks {
			out[st.Check] = st.Status
		}
		return out
	}
	allPass := map[string]string{"http": "success", "tcp": "success", "script": "success"}
	var last map[string]string
	require.Eventually(t, func() bool { last = statuses(); return fmt.Sprint(last) == fmt.Sprint(allPass) },
		20*time.Second, 50*time.Millisecond, "the checks never all passed: %v", last)
	checks, err := c.Allocations().Checks(stub.ID, nil)
	require.NoError(t, err)
	for id, st := range checks {
		require.Equal(t, id, st.ID)
		require.Equal(t, "chk-web", st.Service)
		require.Equal(t, "g", st.Group)
		require.Equal(t, "healthiness", st.Mode)
		if st.Check == "http" {
			require.Equal(t, 200, st.StatusCode)
		}
	}

	require.NoError(t, os.Remove(filepath.Join(a.AllocDir(), stub.ID, "t", "local", "health")))
	require.Eventually(t, func() bool {
		last = statuses()
		return last["http"] == "failure" && last["script"] == "failure" && last["tcp"] == "success"
	}, 10*time.Second, 20*time.Millisecond, "the http and script checks never failed: %v", last)
	require.Eventually(t, func() bool {
		full, _, err := c.Allocations().Info(stub.ID, nil)
		if err != nil {
			return false
		}
		for _, ev := range full.TaskStates["t"].Events {
			if ev.Type == "Restart Signaled" && strings.Contains(ev.DisplayMessage+ev.RestartReason, `healthcheck: check "http" unhealthy`) {
				return true
			}
		}
		return false
	}, 20*time.Second, 50*time.Millisecond, "check_restart never restarted the task")
	require.Eventually(t, func() bool { last = statuses(); return fmt.Sprint(last) == fmt.Sprint(allPass) },
		20*time.Second, 50*time.Millisecond, "the checks never passed again after the restart: %v", last)
	_, err = os.Stat(filepath.Join(a.AllocDir(), stub.ID, "t", "local", "health"))
	require.NoError(t, err, "the restarted task wrote its file again")
}
