package main

import (
	"flag"
	"fmt"
	"io"
	"strconv"

	"github.com/troupe-dev/troupe/messages"
)

// schedulerGetConfigCommand is `troupe operator scheduler get-config
// [-json]`: the scheduler configuration in force, as Nomad's CLI prints it.
func schedulerGetConfigCommand(args []string, stdout, stderr io.Writer) int {
	m := newMeta("operator scheduler get-config", stdout, stderr, true)
	c, code, ok := m.parseNone(args)
	if !ok {
		return code
	}
	resp, _, err := c.Operator().SchedulerGetConfiguration(nil)
	if err != nil {
		return m.fail("querying scheduler configuration", err)
	}
	if m.json {
		return m.printJSON(resp)
	}
	sc, pc := resp.SchedulerConfig, resp.SchedulerConfig.GetPreemptionConfig()
	b := strconv.FormatBool
	writeKV(m.stdout, []kv{
		{"Scheduler Algorithm", sc.GetSchedulerAlgorithm()},
		{"Memory Oversubscription", b(sc.GetMemoryOversubscriptionEnabled())},
		{"Reject Job Registration", b(sc.GetRejectJobRegistration())},
		{"Pause Eval Broker", b(sc.GetPauseEvalBroker())},
		{"Preemption System Scheduler", b(pc.GetSystemSchedulerEnabled())},
		{"Preemption Service Scheduler", b(pc.GetServiceSchedulerEnabled())},
		{"Preemption Batch Scheduler", b(pc.GetBatchSchedulerEnabled())},
		{"Preemption SysBatch Scheduler", b(pc.GetSysBatchSchedulerEnabled())},
		{"Modify Index", strconv.FormatUint(sc.GetModifyIndex(), 10)},
	})
	return exitOK
}

// optBool is a boolean flag that remembers whether it was given, so that
// set-config changes only what the operator names; a bare -flag is true.
type optBool struct {
	set, v bool
}

func (o *optBool) String() string   { return strconv.FormatBool(o.v) }
func (o *optBool) IsBoolFlag() bool { return true }

func (o *optBool) Set(s string) error {
	v, err := strconv.ParseBool(s)
	if err != nil {
		return fmt.Errorf("want true or false, not %q", s)
	}
	o.set, o.v = true, v
	return nil
}

// merge writes the flag's value into dst when it was given.
func (o *optBool) merge(dst *bool) {
	if o.set {
		*dst = o.v
	}
}

// schedulerSetConfigCommand is `troupe operator scheduler set-config
// [flags]`: the flags given change the configuration read from the
// servers, which is written back with a check-and-set against its
// ModifyIndex (or -check-index), as Nomad's CLI does.
func schedulerSetConfigCommand(args []string, stdout, stderr io.Writer) int {
	m := newMeta("operator scheduler set-config", stdout, stderr, false)
	algo := m.fs.String("scheduler-algorithm", "", `"binpack" or "spread"`)
	checkIndex := m.fs.Uint64("check-index", 0, "update only if the configuration's modify index is this one")
	var memOver, reject, pause, service, batch, system, sysbatch optBool
	for _, f := range []struct {
		v    *optBool
		name string
		help string
	}{
		{&memOver, "memory-oversubscription", "let tasks use their memory_max"},
		{&reject, "reject-job-registration", "refuse job registrations"},
		{&pause, "pause-eval-broker", "stop planning evaluations"},
		{&service, "preempt-service-scheduler", "let service jobs preempt"},
		{&batch, "preempt-batch-scheduler", "let batch jobs preempt"},
		{&system, "preempt-system-scheduler", "let system jobs preempt"},
		{&sysbatch, "preempt-sysbatch-scheduler", "let sysbatch jobs preempt"},
	} {
		m.fs.Var(f.v, f.name, f.help+" (true|false)")
	}
	c, code, ok := m.parseNone(args)
	if !ok {
		return code
	}
	resp, _, err := c.Operator().SchedulerGetConfiguration(nil)
	if err != nil {
		return m.fail("querying for scheduler configuration", err)
	}
	cfg := resp.SchedulerConfig
	if cfg == nil {
		cfg = &messages.SchedulerConfiguration{}
	}
	if cfg.PreemptionConfig == nil {
		cfg.PreemptionConfig = &messages.PreemptionConfig{}
	}
	if *algo != "" {
		cfg.SchedulerAlgorithm = *algo
	}
	memOver.merge(&cfg.MemoryOversubscriptionEnabled)
	reject.merge(&cfg.RejectJobRegistration)
	pause.merge(&cfg.PauseEvalBroker)
	pc := cfg.PreemptionConfig
	service.merge(&pc.ServiceSchedulerEnabled)
	batch.merge(&pc.BatchSchedulerEnabled)
	system.merge(&pc.SystemSchedulerEnabled)
	sysbatch.merge(&pc.SysBatchSchedulerEnabled)
	m.fs.Visit(func(f *flag.Flag) {
		if f.Name == "check-index" {
			cfg.ModifyIndex = *checkIndex
		}
	})
	res, _, err := c.Operator().SchedulerCASConfiguration(cfg, nil)
	if err != nil {
		return m.fail("setting scheduler configuration", err)
	}
	if !res.Updated {
		fmt.Fprintln(m.stdout, "Scheduler configuration could not be atomically updated, please try again")
		return 1
	}
	fmt.Fprintln(m.stdout, "Scheduler configuration updated!")
	return exitOK
}
