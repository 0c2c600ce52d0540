package jobspec

import (
	"fmt"
	"time"

	"github.com/hashicorp/cronexpr"
	"github.com/hashicorp/hcl/v2"

	"github.com/troupe-dev/troupe/messages"
)

// Periodic jobs (Nomad's periodic block): cron expressions, parsed by
// hashicorp/cronexpr (Nomad's own choice, so an expression means here
// what it means there), evaluated in the block's time zone.

// PeriodicSpecCron is the one spec type: cron expressions.
const PeriodicSpecCron = "cron"

var (
	periodicAttrs = []attrSpec{
		{name: "crons", field: "Specs"}, {name: "cron", field: "Spec"},
		{name: "prohibit_overlap", field: "ProhibitOverlap"}, {name: "time_zone", field: "TimeZone"},
		{name: "enabled", field: "Enabled"},
	}
	periodicSchema = schemaOf(periodicAttrs)
)

func (d *hclDecoder) periodic(b *hcl.Block) *messages.PeriodicConfig {
	if b == nil {
		return nil
	}
	p := &messages.PeriodicConfig{}
	if !d.decodeAttrs(d.content(b.Body, periodicSchema).Attributes, periodicAttrs, p).has("Enabled") {
		p.Enabled = true // Nomad's default for a block without enabled
	}
	return p
}

// canonPeriodic fills Nomad's defaults: cron specs in UTC.
func canonPeriodic(p *messages.PeriodicConfig) {
	if p == nil {
		return
	}
	setDefault(&p.SpecType, PeriodicSpecCron)
	setDefault(&p.TimeZone, "UTC")
}

// PeriodicSpecs are the block's cron expressions: Specs, and Spec (the
// older single one) when set.
func PeriodicSpecs(p *messages.PeriodicConfig) []string {
	out := append([]string(nil), p.GetSpecs()...)
	if p.GetSpec() != "" {
		out = append(out, p.GetSpec())
	}
	return out
}

// PeriodicNext is the first launch time of p strictly after t, in p's
// time zone; the zero time when no expression names one (a date in the
// past), or an error when p does not parse.
func PeriodicNext(p *messages.PeriodicConfig, t time.Time) (time.Time, error) {
	loc, err := periodicLocation(p)
	if err != nil {
		return time.Time{}, err
	}
	var next time.Time
	for _, spec := range PeriodicSpecs(p) {
		e, err := cronexpr.Parse(spec)
		if err != nil {
			return time.Time{}, fmt.Errorf("cron %q: %w", spec, err)
		}
		n := e.Next(t.In(loc))
		if !n.IsZero() && (next.IsZero() || n.Before(next)) {
			next = n
		}
	}
	return next, nil
}

func periodicLocation(p *messages.PeriodicConfig) (*time.Location, error) {
	tz := p.GetTimeZone()
	if tz == "" {
		return time.UTC, nil
	}
	loc, err := time.LoadLocation(tz)
	if err != nil {
		return nil, fmt.Errorf("time_zone %q: %w", tz, err)
	}
	return loc, nil
}

// validatePeriodic applies Nomad's rules: batch jobs only, cron specs
// that parse, a time zone that exists.
func validatePeriodic(c checker, job *messages.Job) {
	p := job.GetPeriodic()
	if p == nil {
		return
	}
	pc := c.at("periodic")
	if job.Type != TypeBatch {
		pc.addf("can only be used with %q jobs, not %q", TypeBatch, job.Type)
	}
	if p.SpecType != PeriodicSpecCron {
		pc.addf("spec type %q must be %q", p.SpecType, PeriodicSpecCron)
	}
	specs := PeriodicSpecs(p)
	if len(specs) == 0 && p.Enabled {
		pc.addf("crons must list at least one cron expression")
	}
	for _, spec := range specs {
		if p := textProblem(spec, c.lim().MaxNameLength); p != "" {
			pc.addf("cron %s", p)
			continue
		}
		if _, err := cronexpr.Parse(spec); err != nil {
			pc.addf("cron %q does not parse: %v", spec, err)
		}
	}
	if _, err := periodicLocation(p); err != nil {
		pc.addf("%v", err)
	}
}
