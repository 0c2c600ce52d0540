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
	appendEvent(a.state, newEvent(eventDownloadingArtifacts, "Client is downloading artifacts", a.spec.Clock.Now()))
	a.report(ctx)
	f := a.spec.Fetcher
	if f == nil {
		f = &artifact.Fetcher{}
	}
	target := artifact.Target{TaskDir: a.spec.Start.TaskDir, AllocDir: a.spec.AllocDir}
	arts := a.spec.Artifacts
	return func(c context.Context) error {
		if err := f.FetchAll(c, target, arts); err != nil {
			return &artifactError{err: err}
		}
		return nil
	}
}

// prestartSteps are what a start's worker runs before the driver, in
// Nomad's order: the artifact step (nil: nothing to fetch), then the
// template step (nil: no template; first: the task's first render).
type prestartSteps struct {
	fetch  func(context.Context) error
	render renderFunc
	first  bool
	// blocked: the render waits on a refused read (templateBlocked).
	blocked func(error)
}

// any reports whether a step is to run.
func (p prestartSteps) any() bool { return p.fetch != nil || p.render != nil }

// withPrestart is a start's worker: the prestart steps, cut short when
// stop closes (a kill came), then start with what the template step
// rendered; the result says the artifacts are in place.
func withPrestart(p prestartSteps, stop chan struct{}, start func(context.Context, *taskRendered) *startResult) func(context.Context) any {
	return func(life context.Context) any {
		var r *taskRendered
		if p.any() {
			c, cancel := context.WithCancel(life)
			defer cancel()
			go func() {
				select {
				case <-stop:
					cancel()
				case <-c.Done():
				}
			}()
			if p.fetch != nil {
				if err := p.fetch(c); err != nil {
					return &startResult{err: err}
				}
			}
			if p.render != nil {
				var err error
				if r, err = p.render(c, p.first, p.blocked); err != nil {
					return &startResult{err: &templateError{err: err}, fetched: true}
				}
			}
		}
		res := start(life, r)
		res.fetched, res.rendered = true, r
		return res
	}
}

// startFailedEvent is the event of a start that failed: the artifact
// step's, the template step's, or the driver's.
func startFailedEvent(err error, now time.Time) *messages.TaskEvent {
	var ae *artifactError
	var te *templateError
	if errors.As(err, &te) {
		return newEvent(eventHookFailed, te.Error(), now)
	}
	if errors.As(err, &ae) {
		ev := newEvent(eventArtifactFailed, ae.Error(), now)
		ev.Details = map[string]string{"download_error": ae.Error()}
		return ev
	}
	ev := newEvent(eventDriverFailure, err.Error(), now)
	ev.DriverError = err.Error()
	return ev
}
