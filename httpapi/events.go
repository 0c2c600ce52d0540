package httpapi

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/troupe-dev/troupe/cluster/state"
	"github.com/troupe-dev/troupe/messages"
)

// defaultEventHeartbeat is how long the event stream stays quiet before
// an empty frame, {}, keeps it open (Nomad's 10 s).
const defaultEventHeartbeat = 10 * time.Second

// eventTopics are the topics a subscription may name ("*": all).
var eventTopics = []string{state.TopicJob, state.TopicEvaluation, state.TopicAllocation, state.TopicDeployment,
	state.TopicNode, state.TopicNodePool, state.TopicCSIVolume, state.TopicCSIPlugin, state.TopicService,
	state.TopicACLToken, state.TopicACLPolicy}

func (s *Server) eventRoutes(m *http.ServeMux) {
	m.HandleFunc("GET /v1/event/stream", s.eventStream)
	s.metricsRoutes(m)
	s.monitorRoutes(m)
}

// eventFrame is one line of the stream: one raft index's events.
type eventFrame struct {
	Index  uint64
	Events []eventJSON
}

type eventJSON struct {
	Topic      string
	Type       string
	Key        string
	Namespace  string
	FilterKeys []string
	Index      uint64
	Payload    map[string]any
}

// eventStream serves GET /v1/event/stream?topic=T[:key]&index=N&namespace=
// as newline-delimited JSON frames, {} when quiet for the heartbeat; a
// reader that falls behind what the buffer holds gets an {"Error": ...}
// frame and the stream ends.
func (s *Server) eventStream(w http.ResponseWriter, r *http.Request) {
	match, err := eventFilter(r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	tokenACL, err := s.eventACL(r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	// What the token may read is checked after each read (refresh), with
	// its policies as they are then.
	sub := s.b.Store().SubscribeEvents(optsOf(r).index, match)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	flush := func() {
		if f, ok := w.(http.Flusher); ok {
			f.Flush()
		}
	}
	flush()
	beat := s.opts.EventHeartbeat
	if beat <= 0 {
		beat = defaultEventHeartbeat
	}
	// refresh resolves the token again (its policies may have changed) and
	// keeps of batches what it may read now; a token gone ends the stream.
	refresh := func(batches []state.EventBatch) ([]state.EventBatch, error) {
		if tokenACL == nil {
			return batches, nil
		}
		var err error
		if tokenACL, err = s.eventACL(r); err != nil {
			return nil, err
		}
		return allowedBatches(tokenACL, batches), nil
	}
	for {
		ctx, cancel := context.WithTimeout(r.Context(), beat)
		batches, err := sub.Next(ctx)
		cancel()
		if err == nil {
			batches, err = refresh(batches)
		}
		switch {
		case r.Context().Err() != nil:
			return
		case errors.Is(err, context.DeadlineExceeded):
			_, err = w.Write([]byte("{}\n"))
		case err != nil:
			_ = writeJSON(w, map[string]string{"Error": err.Error()}, false)
			flush()
			return
		case len(batches) == 0:
			continue // nothing the token may read now
		default:
			err = s.writeEventBatches(w, batches)
		}
		if err != nil {
			return // the reader went away
		}
		flush()
	}
}

func (s *Server) writeEventBatches(w http.ResponseWriter, batches []state.EventBatch) error {
	for _, b := range batches {
		f := eventFrame{Index: b.Index, Events: make([]eventJSON, len(b.Events))}
		for i, e := range b.Events {
			f.Events[i] = eventJSON{Topic: e.Topic, Type: e.Type, Key: e.Key, Namespace: e.Namespace,
				FilterKeys: e.FilterKeys, Index: e.Index, Payload: s.eventPayload(e)}
		}
		if err := writeJSON(w, f, false); err != nil {
			return err
		}
	}
	return nil
}

// eventPayload is an event's object under Nomad's payload key, in the
// shape the API's GET of that object answers.
func (s *Server) eventPayload(e state.StreamEvent) map[string]any {
	switch p := e.Payload.(type) {
	case *messages.Job:
		out := map[string]any{"Job": p}
		if e.Deleted {
			out["Deleted"] = true
		}
		return out
	case *messages.Allocation:
		return map[string]any{"Allocation": newAllocJSON(p)}
	case *messages.Evaluation:
		return map[string]any{"Evaluation": p}
	case *messages.Deployment:
		return map[string]any{"Deployment": p}
	case *messages.Node:
		return map[string]any{"Node": newNodeJSON(p)}
	case *messages.NodePool:
		return map[string]any{"NodePool": p}
	case *messages.CSIVolume:
		return map[string]any{"Volume": newVolumeJSON(s.b.Store().Snapshot(), p)}
	case *messages.CSIPlugin:
		return map[string]any{"Plugin": p}
	case *messages.ServiceRegistration:
		return map[string]any{"Service": p}
	case *messages.ACLToken:
		return map[string]any{"ACLToken": s.tokenOut(p, "")} // never the secret
	case *messages.ACLPolicy:
		return map[string]any{"ACLPolicy": policyOut(p)}
	}
	return map[string]any{e.Topic: e.Payload}
}

// eventFilter reads ?topic= (repeated; Topic, Topic:key, "*", "*:*"; none:
// every topic) and ?namespace= ("default" when absent, "*" for all;
// events of objects outside namespaces, nodes and pools, always pass).
func eventFilter(r *http.Request) (func(*state.StreamEvent) bool, error) {
	keys := map[string][]string{} // topic: keys ("*" any)
	for _, t := range r.URL.Query()["topic"] {
		topic, key, found := strings.Cut(t, ":")
		if !found || key == "" {
			key = "*"
		}
		if topic != "*" && !slices.Contains(eventTopics, topic) {
			return nil, codeErr(http.StatusBadRequest, "unknown event topic %q: want one of %s or *", topic, strings.Join(eventTopics, ", "))
		}
		keys[topic] = append(keys[topic], key)
	}
	if len(keys) == 0 {
		keys["*"] = []string{"*"}
	}
	ns := r.URL.Query().Get("namespace")
	if ns == "" {
		ns = state.NamespaceDefault
	}
	return func(e *state.StreamEvent) bool {
		if ns != allNamespaces && e.Namespace != "" && e.Namespace != ns {
			return false
		}
		return keyMatches(keys[e.Topic], e) || keyMatches(keys["*"], e)
	}, nil
}

func keyMatches(keys []string, e *state.StreamEvent) bool {
	for _, k := range keys {
		if k == "*" || k == e.Key || slices.Contains(e.FilterKeys, k) {
			return true
		}
	}
	return false
}
