package agent

import (
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	nomad "github.com/hashicorp/nomad/api"
	"github.com/stretchr/testify/require"
)

// sampleCount is how many times the sample name was recorded since the
// agent started (0: absent).
func sampleCount(t *testing.T, c *nomad.Client, name string) int {
	t.Helper()
	// The Prometheus text's _count is cumulative; the JSON summary holds
	// the current interval only (100 ms here), and two plans a moment apart
	// fell into two intervals.
	resp, err := http.Get(c.Address() + "/v1/metrics?format=prometheus")
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	prefix := strings.ReplaceAll(name, ".", "_") + "_count"
	n := 0
	for _, line := range strings.Split(string(body), "\n") {
		rest, ok := strings.CutPrefix(line, prefix)
		if !ok || (rest != "" && rest[0] != ' ' && rest[0] != '{') {
			continue
		}
		fields := strings.Fields(rest[strings.LastIndexByte(rest, '}')+1:])
		if len(fields) > 0 {
			v, err := strconv.ParseFloat(fields[0], 64)
			require.NoError(t, err, line)
			n += int(v)
		}
	}
	return n
}

// TestMetricsSchedulerBrokerAndPlans: with the scheduler paused by its
// configuration, two registered jobs wait: nomad.nomad.broker.total_ready
// says 2 and nothing is unacked or waiting (total_waiting is published;
// TestBrokerWaiting counts it). Resumed, the queue drains to 0, and each
// plan is timed where its work happens: the scheduler's run
// (nomad.nomad.worker.invoke_scheduler.service), its submission
// (nomad.nomad.worker.submit_plan, nomad.nomad.plan.submit) and the
// FSM's check of it (nomad.nomad.plan.evaluate). A job that cannot be
// placed is counted in nomad.nomad.blocked_evals.total_blocked.
func TestMetricsSchedulerBrokerAndPlans(t *testing.T) {
	_, c := telemetryAgent(t)
	gaugeIs := func(name string, want float32) {
		t.Helper()
		require.Eventually(t, func() bool {
			v, ok := gauge(t, c, name)
			return ok && v == want
		}, 30*time.Second, 50*time.Millisecond, "%s never %v", name, want)
	}
	gaugeIs("nomad.nomad.broker.total_ready", 0)
	gaugeIs("nomad.nomad.broker.total_waiting", 0)
	gaugeIs("nomad.nomad.plan.queue_depth", 0)

	_, _, err := c.Operator().SchedulerSetConfiguration(&nomad.SchedulerConfiguration{PauseEvalBroker: true, SchedulerAlgorithm: "binpack"}, nil)
	require.NoError(t, err)
	for _, id := range []string{"m1", "m2"} {
		_, _, err := c.Jobs().Register(rawExecJob(id, "sleep 100"), nil)
		require.NoError(t, err)
	}
	gaugeIs("nomad.nomad.broker.total_ready", 2)
	gaugeIs("nomad.nomad.broker.total_unacked", 0)
	gaugeIs("nomad.nomad.broker.total_pending", 0)
	gaugeIs("nomad.nomad.broker.total_waiting", 0)

	_, _, err = c.Operator().SchedulerSetConfiguration(&nomad.SchedulerConfiguration{PauseEvalBroker: false, SchedulerAlgorithm: "binpack"}, nil)
	require.NoError(t, err)
	gaugeIs("nomad.nomad.broker.total_ready", 0)
	for _, name := range []string{"nomad.nomad.worker.invoke_scheduler.service", "nomad.nomad.worker.submit_plan",
		"nomad.nomad.plan.submit", "nomad.nomad.plan.evaluate"} {
		require.Eventually(t, func() bool { return sampleCount(t, c, name) >= 2 }, 30*time.Second, 50*time.Millisecond,
			"%s never timed both plans", name)
	}

	huge := rawExecJob("huge", "sleep 100")
	huge.TaskGroups[0].Tasks[0].Resources.MemoryMB = ptr(1 << 30)
	_, _, err = c.Jobs().Register(huge, nil)
	require.NoError(t, err)
	gaugeIs("nomad.nomad.blocked_evals.total_blocked", 1)
}

// TestMetricsBrokerWaitingOnRescheduleDelay: a batch job whose task fails
// is rescheduled after its reschedule delay (an hour): the follow-up
// evaluation waits in the broker, and nomad.nomad.broker.total_waiting
// says 1 while nothing is ready.
func TestMetricsBrokerWaitingOnRescheduleDelay(t *testing.T) {
	_, c := telemetryAgent(t)
	job := nomad.NewBatchJob("fails", "fails", "global", 50)
	tg := nomad.NewTaskGroup("g", 1)
	tg.RestartPolicy = &nomad.RestartPolicy{Attempts: ptr(0), Mode: ptr("fail"), Interval: ptr(time.Minute), Delay: ptr(time.Second)}
	tg.ReschedulePolicy = &nomad.ReschedulePolicy{Attempts: ptr(1), Interval: ptr(24 * time.Hour), Delay: ptr(time.Hour),
		DelayFunction: ptr("constant"), Unlimited: ptr(false)}
	tg.AddTask(nomad.NewTask("t", "raw_exec").SetConfig("command", "/bin/sh").SetConfig("args", []string{"-c", "exit 1"}).
		Require(&nomad.Resources{CPU: ptr(100), MemoryMB: ptr(32)}))
	job.AddTaskGroup(tg)
	_, _, err := c.Jobs().Register(job, nil)
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		v, ok := gauge(t, c, "nomad.nomad.broker.total_waiting")
		return ok && v == 1
	}, 60*time.Second, 50*time.Millisecond, "the rescheduling evaluation never counted waiting")
	v, _ := gauge(t, c, "nomad.nomad.broker.total_ready")
	require.Zero(t, v)
}
