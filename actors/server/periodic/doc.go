// Package periodic launches periodic jobs' children on the leader.
//
// A periodic job (Nomad's periodic block, batch jobs only) is a template:
// registering it creates no evaluation. At each time its cron expressions
// name, in its time zone, the leader registers a child job
// "<id>/periodic-<unix seconds>" (ParentID the parent's ID, no periodic
// block) with its evaluation, and records the launch in the same raft
// command (RegisterJob.Launch). The FSM refuses a launch that is not later
// than the stored one, so two leaders, or one replaying its work, never
// launch the same time twice.
//
// The Dispatcher actor ("server/periodic") is started with the leader's
// other actors. It keeps each periodic job's next launch time, computed
// from its stored last launch (or, for a job never launched, from when it
// was registered), and one timer, on the injected clock, for the soonest.
// Times missed while there was no leader are launched once, as the latest
// of them, when a leader starts: a cron every minute over an hour without
// a leader gives one launch, not sixty. With prohibit_overlap a launch is
// skipped, as Nomad does, while a child of the job is not dead.
//
// Force (POST /v1/job/:id/periodic/force, `troupe job periodic force`)
// launches a child at the current time through the same command.
package periodic
