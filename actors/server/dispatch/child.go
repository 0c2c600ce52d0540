package dispatch

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/golang/snappy"
	"google.golang.org/protobuf/proto"

	"github.com/troupe-dev/troupe/actors/server/evals"
	"github.com/troupe-dev/troupe/cluster/state"
	"github.com/troupe-dev/troupe/jobspec"
	"github.com/troupe-dev/troupe/messages"
)

// PayloadLimit is the largest payload a dispatch carries (Nomad's).
const PayloadLimit = 16 * 1024

// maxTemplate bounds an id prefix template, so a child's ID stays a
// sensible length.
const maxTemplate = 128

// Request is one dispatch of a parameterized job.
type Request struct {
	Payload          []byte
	Meta             map[string]string
	IDPrefixTemplate string
	IdempotencyToken string
	// Priority, when not 0, is the child's priority instead of the
	// parent's (1 to 100).
	Priority int
}

// Check applies Nomad's rules for dispatching parent with r: parent is a
// parameterized job that is not stopped, the payload is given when
// required, absent when forbidden and at most PayloadLimit bytes before
// compression, every
// required meta key is set and every key set is required or optional.
// Its errors wrap ErrInvalid.
func Check(parent *messages.Job, r *Request) error {
	p := parent.GetParameterizedJob()
	switch {
	case !parent.IsParameterized():
		return fmt.Errorf("%w: job %q is not a parameterized job", ErrInvalid, parent.GetID())
	case parent.GetStop():
		return fmt.Errorf("%w: job %q is stopped", ErrInvalid, parent.GetID())
	}
	has := len(r.Payload) > 0
	switch {
	case p.GetPayload() == jobspec.DispatchPayloadRequired && !has:
		return fmt.Errorf("%w: payload is not provided but required by parameterized job", ErrInvalid)
	case p.GetPayload() == jobspec.DispatchPayloadForbidden && has:
		return fmt.Errorf("%w: payload provided but forbidden by parameterized job", ErrInvalid)
	case len(r.Payload) > PayloadLimit:
		return fmt.Errorf("%w: payload exceeds maximum size; %d > %d", ErrInvalid, len(r.Payload), PayloadLimit)
	}
	var unpermitted, missing []string
	for k := range r.Meta {
		if !slices.Contains(p.GetMetaRequired(), k) && !slices.Contains(p.GetMetaOptional(), k) {
			unpermitted = append(unpermitted, k)
		}
	}
	for _, k := range p.GetMetaRequired() {
		if _, ok := r.Meta[k]; !ok {
			missing = append(missing, k)
		}
	}
	switch {
	case len(unpermitted) > 0:
		slices.Sort(unpermitted)
		return fmt.Errorf("%w: dispatch request included unpermitted metadata keys: %v", ErrInvalid, unpermitted)
	case len(missing) > 0:
		return fmt.Errorf("%w: dispatch did not provide required meta keys: %v", ErrInvalid, missing)
	}
	if r.Priority != 0 && (r.Priority < 1 || r.Priority > 100) {
		return fmt.Errorf("%w: priority %d must be between 1 and 100", ErrInvalid, r.Priority)
	}
	return checkTemplate(r.IDPrefixTemplate)
}

// checkTemplate refuses an id prefix template that would make a bad ID.
func checkTemplate(t string) error {
	switch {
	case len(t) > maxTemplate:
		return fmt.Errorf("%w: id prefix template is longer than %d characters", ErrInvalid, maxTemplate)
	case strings.ContainsFunc(t, func(r rune) bool { return r < 0x21 || r == 0x7f }):
		return fmt.Errorf("%w: id prefix template %q must not contain spaces or control characters", ErrInvalid, t)
	}
	return nil
}

// ChildID is the ID of parent's child dispatched at now with id prefix
// template tmpl and random suffix suffix (8 hex digits).
func ChildID(parentID, tmpl string, now time.Time, suffix string) string {
	id := parentID + state.DispatchChildInfix
	if tmpl != "" {
		id += tmpl + "-"
	}
	return id + strconv.FormatInt(now.Unix(), 10) + "-" + suffix
}

// Child is the job that dispatching parent with r at now creates: a copy
// named after the dispatch, with the payload snappy-compressed (as Nomad
// stores it: the job's JSON carries the compressed bytes, and the client
// decompresses them into dispatch_payload's file), the parent's meta
// merged with the request's, and no parameterized block.
func Child(parent *messages.Job, r *Request, now time.Time, suffix string) *messages.Job {
	c := proto.Clone(parent).(*messages.Job)
	messages.ClearServerFields(c)
	c.ParentID = parent.GetID()
	c.ID = ChildID(parent.GetID(), r.IDPrefixTemplate, now, suffix)
	c.Name = c.ID
	c.ParameterizedJob = nil
	c.Dispatched = true
	c.DispatchIdempotencyToken = r.IdempotencyToken
	if r.Priority != 0 {
		c.Priority = int32(r.Priority)
	}
	if len(r.Payload) > 0 {
		c.Payload = snappy.Encode(nil, r.Payload)
	}
	if len(r.Meta) > 0 {
		if c.Meta == nil {
			c.Meta = map[string]string{}
		}
		maps.Copy(c.Meta, r.Meta)
	}
	return c
}

// Command is the one raft command of a dispatch: the child and its
// evaluation.
func Command(parent *messages.Job, r *Request, now time.Time) *messages.Command {
	child := Child(parent, r, now, randomSuffix())
	return &messages.Command{Time: now.UnixNano(), Cmd: &messages.Command_DispatchJob{DispatchJob: &messages.DispatchJob{
		Job: child, Eval: evals.ForJob(child, evals.JobRegister, now),
	}}}
}

func randomSuffix() string {
	var b [4]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err) // crypto/rand failed: nothing sensible to do
	}
	return hex.EncodeToString(b[:])
}
