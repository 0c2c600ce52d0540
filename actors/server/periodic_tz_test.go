package server

import (
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
	_ "time/tzdata" // the zones below, on a machine without zoneinfo too

	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/actors/server/periodic"
	"github.com/troupe-dev/troupe/messages"
)

// Periodic launches in a time zone other than UTC, across daylight saving
// changes, on the injected clock. hashicorp/cronexpr (and so Nomad, since
// hashicorp/nomad#7894 and hashicorp/cronexpr#1) evaluates a cron in the
// block's time zone: a wall time that does not exist on the spring-forward
// day (02:30 in New York or Berlin) matches nothing that day, so the day
// has no launch; a wall time that happens twice on the fall-back day
// (01:30 in New York, 02:30 in Berlin) matches both instants, an hour
// apart; an hourly cron launches every real hour, 25 on the long day.

// zoneJob is a periodic job with specs evaluated in time zone tz.
func zoneJob(id, tz string, specs ...string) *messages.Job {
	j := periodicJob(id, false, specs...)
	j.Periodic.TimeZone = tz
	return j
}

// utc parses an RFC 3339 time in UTC: the launch instants below are
// written in UTC, since a wall time that happens twice or not at all
// does not name one instant.
func utc(t *testing.T, s string) time.Time {
	t.Helper()
	at, err := time.Parse(time.RFC3339, s)
	require.NoError(t, err)
	return at
}

// zone loads a time zone from the tz database.
func zone(t *testing.T, name string) *time.Location {
	t.Helper()
	loc, err := time.LoadLocation(name)
	require.NoError(t, err)
	return loc
}

// clockTo advances the clock to at.
func (h *harness) clockTo(at time.Time) {
	h.t.Helper()
	require.False(h.t, at.Before(h.clock.Now()), "the clock only moves forward")
	h.clock.Advance(at.Sub(h.clock.Now()))
}

// awaitTimer waits until the dispatcher has armed its timer for at: the
// next launch it computed is exactly at.
func (h *harness) awaitTimer(at time.Time) {
	h.t.Helper()
	require.Eventually(h.t, func() bool { return h.clock.TimerAt(at) }, 5*time.Second, time.Millisecond,
		"the dispatcher's next launch is %s", at.UTC())
}

// launchEach drives the clock through want, the job's launches in order:
// before each, the dispatcher waits for exactly that time (it computed no
// launch before it and skipped none); at it, one child named after it is
// launched. then is the launch it must wait for after the last.
func (h *harness) launchEach(id string, want []time.Time, then time.Time) {
	h.t.Helper()
	before := len(h.children(id))
	for i, at := range want {
		h.awaitTimer(at)
		h.clockTo(at)
		h.waitChildren(id, before+i+1)
		require.Contains(h.t, h.children(id), periodic.ChildID(id, at))
	}
	h.awaitTimer(then)
	ids := make([]string, len(want))
	for i, at := range want {
		ids[i] = periodic.ChildID(id, at)
	}
	sort.Strings(ids)
	require.Equal(h.t, ids, h.children(id), "exactly these launches, none doubled")
}

// launchTime is the launch a periodic child's ID names.
func launchTime(t *testing.T, parent, child string) time.Time {
	t.Helper()
	unix, err := strconv.ParseInt(strings.TrimPrefix(child, parent+"/periodic-"), 10, 64)
	require.NoError(t, err, child)
	return time.Unix(unix, 0)
}

// zoneCase is a cron in a zone, registered at start, and its launches:
// want as UTC instants, local as the zone shows them.
type zoneCase struct {
	name, tz, spec string
	start          string
	want, local    []string
	then           string
}

func (tc zoneCase) run(t *testing.T) {
	loc := zone(t, tc.tz)
	h := newHarness(t, nil)
	h.lead()
	h.clockTo(utc(t, tc.start))
	h.registerAt(zoneJob("tz", tc.tz, tc.spec))
	var want []time.Time
	for i, s := range tc.want {
		at := utc(t, s)
		require.Equal(t, tc.local[i], at.In(loc).Format("2006-01-02 15:04 MST"), "the case's own arithmetic")
		want = append(want, at)
	}
	h.launchEach("tz", want, utc(t, tc.then))
	for _, id := range h.children("tz") {
		require.Equal(t, "tz", h.store.Snapshot().JobByID("default", id).GetParentID())
	}
}

// TestPeriodicZoneSpringForward: a daily cron at 02:30 local, a time the
// spring-forward day does not have, launches the day before at 02:30
// standard time, nothing that day (no crash, no launch at 03:30 or
// doubled the next day), and the day after at 02:30 daylight time.
func TestPeriodicZoneSpringForward(t *testing.T) {
	for _, tc := range []zoneCase{{
		// 2026-03-08 02:00 EST -> 03:00 EDT.
		name: "America/New_York", tz: "America/New_York", spec: "30 2 * * *", start: "2026-03-06T05:00:00Z",
		want:  []string{"2026-03-06T07:30:00Z", "2026-03-07T07:30:00Z", "2026-03-09T06:30:00Z", "2026-03-10T06:30:00Z"},
		local: []string{"2026-03-06 02:30 EST", "2026-03-07 02:30 EST", "2026-03-09 02:30 EDT", "2026-03-10 02:30 EDT"},
		then:  "2026-03-11T06:30:00Z",
	}, {
		// 2026-03-29 02:00 CET -> 03:00 CEST.
		name: "Europe/Berlin", tz: "Europe/Berlin", spec: "30 2 * * *", start: "2026-03-26T23:00:00Z",
		want:  []string{"2026-03-27T01:30:00Z", "2026-03-28T01:30:00Z", "2026-03-30T00:30:00Z", "2026-03-31T00:30:00Z"},
		local: []string{"2026-03-27 02:30 CET", "2026-03-28 02:30 CET", "2026-03-30 02:30 CEST", "2026-03-31 02:30 CEST"},
		then:  "2026-04-01T00:30:00Z",
	}} {
		t.Run(tc.name, tc.run)
	}
}

// TestPeriodicZoneFallBack: a daily cron at a wall time the fall-back day
// has twice launches at both instants, an hour apart, as Nomad does, and
// once a day otherwise; each instant once.
func TestPeriodicZoneFallBack(t *testing.T) {
	for _, tc := range []zoneCase{{
		// 2026-11-01 02:00 EDT -> 01:00 EST.
		name: "America/New_York", tz: "America/New_York", spec: "30 1 * * *", start: "2026-10-31T04:00:00Z",
		want:  []string{"2026-10-31T05:30:00Z", "2026-11-01T05:30:00Z", "2026-11-01T06:30:00Z", "2026-11-02T06:30:00Z"},
		local: []string{"2026-10-31 01:30 EDT", "2026-11-01 01:30 EDT", "2026-11-01 01:30 EST", "2026-11-02 01:30 EST"},
		then:  "2026-11-03T06:30:00Z",
	}, {
		// 2026-10-25 03:00 CEST -> 02:00 CET.
		name: "Europe/Berlin", tz: "Europe/Berlin", spec: "30 2 * * *", start: "2026-10-23T22:00:00Z",
		want:  []string{"2026-10-24T00:30:00Z", "2026-10-25T00:30:00Z", "2026-10-25T01:30:00Z", "2026-10-26T01:30:00Z"},
		local: []string{"2026-10-24 02:30 CEST", "2026-10-25 02:30 CEST", "2026-10-25 02:30 CET", "2026-10-26 02:30 CET"},
		then:  "2026-10-27T01:30:00Z",
	}} {
		t.Run(tc.name, tc.run)
	}
}

// TestPeriodicZoneHourlyFallBack: an hourly cron over the 25-hour
// fall-back day in New York launches every real hour: 25 launches that
// local day, 01:00 twice (EDT, then EST), none doubled or lost.
func TestPeriodicZoneHourlyFallBack(t *testing.T) {
	ny := zone(t, "America/New_York")
	h := newHarness(t, nil)
	h.lead()
	day := utc(t, "2026-11-01T04:00:00Z") // 00:00 EDT
	h.clockTo(day.Add(-30 * time.Minute))
	h.registerAt(zoneJob("hourly", "America/New_York", "0 * * * *"))
	var want []time.Time
	for at := day; at.In(ny).Day() == 1; at = at.Add(time.Hour) {
		want = append(want, at)
	}
	require.Len(t, want, 25, "the local day has 25 hours")
	h.launchEach("hourly", want, utc(t, "2026-11-02T05:00:00Z")) // 00:00 EST
	var ones []string
	for _, id := range h.children("hourly") {
		if l := launchTime(t, "hourly", id).In(ny); l.Hour() == 1 {
			ones = append(ones, l.Format("15:04 MST"))
		}
	}
	sort.Strings(ones)
	require.Equal(t, []string{"01:00 EDT", "01:00 EST"}, ones)
}

// TestPeriodicZoneMissedAcrossFallBack: launches missed while no server
// led, across both 01:30s of the fall-back day, are launched once, as
// the latest (01:30 EST), when a server leads.
func TestPeriodicZoneMissedAcrossFallBack(t *testing.T) {
	h := newHarness(t, nil)
	h.clockTo(utc(t, "2026-11-01T04:00:00Z")) // 00:00 EDT
	h.registerAt(zoneJob("nightly", "America/New_York", "30 1 * * *"))
	h.clockTo(utc(t, "2026-11-01T08:00:00Z")) // 03:00 EST
	h.lead()
	h.waitChildren("nightly", 1)
	require.Equal(t, []string{periodic.ChildID("nightly", utc(t, "2026-11-01T06:30:00Z"))}, h.children("nightly"))
	h.awaitTimer(utc(t, "2026-11-02T06:30:00Z"))
	require.Len(t, h.children("nightly"), 1)
}

// TestPeriodicZoneDailyAtNine: "0 9 * * *" launches at 09:00 local every
// day over a week, before and after the zone's daylight saving change:
// the child IDs name those instants (the UTC hour moves by one).
func TestPeriodicZoneDailyAtNine(t *testing.T) {
	for _, tc := range []struct {
		tz         string
		first      time.Time // a local midnight, days before the change
		days       int
		before, at string // the UTC time of 09:00 before and after
	}{
		{"Europe/Berlin", time.Date(2026, 3, 26, 0, 0, 0, 0, zone(t, "Europe/Berlin")), 7, "08:00", "07:00"},
		{"America/New_York", time.Date(2026, 10, 29, 0, 0, 0, 0, zone(t, "America/New_York")), 7, "13:00", "14:00"},
	} {
		t.Run(tc.tz, func(t *testing.T) {
			loc := zone(t, tc.tz)
			h := newHarness(t, nil)
			h.lead()
			h.clockTo(tc.first)
			h.registerAt(zoneJob("report", tc.tz, "0 9 * * *"))
			var want []time.Time
			for d := range tc.days {
				y, m, day := tc.first.AddDate(0, 0, d).Date()
				want = append(want, time.Date(y, m, day, 9, 0, 0, 0, loc))
			}
			y, m, day := tc.first.AddDate(0, 0, tc.days).Date()
			h.launchEach("report", want, time.Date(y, m, day, 9, 0, 0, 0, loc))
			utcHours := map[string]int{}
			for _, id := range h.children("report") {
				l := launchTime(t, "report", id)
				require.Equal(t, "09:00:00", l.In(loc).Format(time.TimeOnly), id)
				utcHours[l.UTC().Format("15:04")]++
			}
			require.Len(t, utcHours, 2, "the change falls inside the week: %v", utcHours)
			require.Positive(t, utcHours[tc.before])
			require.Positive(t, utcHours[tc.at])
			require.Equal(t, tc.days, utcHours[tc.before]+utcHours[tc.at])
		})
	}
}
