package alloc

import (
	"context"
	"errors"
	"path/filepath"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/troupe-dev/troupe/messages"
	"github.com/troupe-dev/troupe/runtime/artifact"
)

// The artifact step of a task's start: before the driver starts the task,
// its artifacts (the artifact blocks) are fetched into its task dir by
// runtime/artifact, in the start's worker, so the actor never waits on
// the network. A failed fetch is the task's start failure: the event
// "Failed Artifact Download" says why, and the restart policy decides
// (as in Nomad). Once fetched, they are not fetched again for later
// starts of the same task actor.

// Task event types of the artifact step, as Nomad names them.
const (
	eventDownloadingArtifacts = "Downloading Artifacts"
	eventArtifactFailed       = "Failed Artifact Download"
)

// artifactError is a start failure of the artifact step.
type artifactError struct{ err error }

func (e *artifactError) Error() string { return e.err.Error() }
func (e *artifactError) Unwrap() error { return e.err }

// taskArtifacts are the task's artifact blocks with their ${...} resolved
// against the task's environment and the node. A destination that the
// environment made an absolute path beneath the task dir (a raw_exec
// task's ${NOMAD_TASK_DIR}) is taken relative to it.
func taskArtifacts(t *messages.Task, taskDir string, v refs) []artifact.Artifact {
	var out []artifact.Artifact
	for _, a := range t.GetArtifacts() {
		dest := interpolate(a.GetRelativeDest(), v)
		if rel, err := filepath.Rel(taskDir, dest); err == nil && filepath.IsAbs(dest) && filepath.IsLocal(rel) {
			dest = rel
		}
		out = append(out, artifact.Artifact{
			Source: interpolate(a.GetGetterSource(), v), Destination: dest, Mode: a.GetGetterMode(),
			Options: interpolateMap(a.GetGetterOptions(), v), Headers: interpolateMap(a.GetGetterHeaders(), v),
			Insecure: a.GetGetterInsecure(),
		})
	}
	return out
}

func interpolateMap(m map[string]string, v refs) map[string]string {
	if len(m) == 0 {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, s := range m {
		out[k] = interpolate(s, v)
	}
	return out
}

// artifactRun is the task actor's record of its artifact step.
type artifactRun struct {
	fetched bool          // the artifacts are in place
	stop    chan struct{} // closed to cut the fetch in flight short
}

// done records the end of a start: fetched, the artifacts are in place.
func (r *artifactRun) done(fetched bool) {
	r.fetched = r.fetched || fetched
	r.stop = nil
}

// abort cuts the fetch in flight short (a kill came).
func (r *artifactRun) abort() {
	if r.stop != nil {
		close(r.stop)
		r.stop = nil
	}
}

// artifactStep returns what a start's worker runs before the driver: the
// fetch of the task's artifacts, nil when there is none left to fetch. It
// reports the "Downloading Artifacts" event.
func (a *taskActor) artifactStep(ctx actor.Context) func(context.Context) error {
	if a.arts.fetched || len(a.spec.Artifacts) == 0 {
		return nil
	}
	stop := make(chan struct{})
	a.arts.stop = stop
	appendEvent(a.state, newEvent(eventDownloadingArtifacts, "Client is downloading artifacts", a.spec.Clock.Now()))
	a.report(ctx)
	f := a.spec.Fetcher
	if f == nil {
		f = &artifact.Fetcher{}
	}
	target := artifact.Target{TaskDir: a.spec.Start.TaskDir, AllocDir: a.spec.AllocDir}
	arts := a.spec.Artifacts
	return func(life context.Context) error {
		c, cancel := context.WithCancel(life)
		defer cancel()
		go func() {
			select {
			case <-stop:
				cancel()
			case <-c.Done():
			}
		}()
		if err := f.FetchAll(c, target, arts); err != nil {
			return &artifactError{err: err}
		}
		return nil
	}
}

// withArtifacts is a start's worker: the artifact step (fetch, nil for
// none), then start, whose result then says the artifacts are in place.
func withArtifacts(fetch func(context.Context) error, start func(context.Context) *startResult) func(context.Context) any {
	return func(c context.Context) any {
		if fetch != nil {
			if err := fetch(c); err != nil {
				return &startResult{err: err}
			}
		}
		r := start(c)
		r.fetched = true
		return r
	}
}

// startFailedEvent is the event of a start that failed: the artifact
// step's, or the driver's.
func startFailedEvent(err error, now time.Time) *messages.TaskEvent {
	var ae *artifactError
	if errors.As(err, &ae) {
		ev := newEvent(eventArtifactFailed, ae.Error(), now)
		ev.Details = map[string]string{"download_error": ae.Error()}
		return ev
	}
	ev := newEvent(eventDriverFailure, err.Error(), now)
	ev.DriverError = err.Error()
	return ev
}
