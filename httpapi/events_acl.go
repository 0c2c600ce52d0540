package httpapi

import (
	"net/http"
	"strings"

	"github.com/troupe-dev/troupe/acl"
	"github.com/troupe-dev/troupe/cluster/state"
)

// The event stream with ACLs on. A subscription is checked as Nomad
// checks it (eventsAllowed): every topic it names must be one the token
// may read in ?namespace=. Then every event is checked on its own
// (eventAllowed), so a "*" subscription, or one across namespaces, shows
// a token only what it may read: job, evaluation, allocation, deployment
// and service events of namespaces it can read-job in, node events with
// node read, node pools with node read, CSI volumes with csi-read-volume,
// CSI plugins with plugin read, ACL tokens and policies to management
// tokens only. Nomad refuses a "*" subscription to all but management
// tokens; troupe filters it instead, so the web UI can follow everything
// a token may see on one stream.

// eventsAllowed reports whether a may open the subscription r asks for.
// A "*" (or no) topic needs a token that may read some topic.
func eventsAllowed(a *acl.ACL, r *http.Request) bool {
	if a.IsManagement() {
		return true
	}
	ns := r.URL.Query().Get("namespace")
	if ns == "" {
		ns = state.NamespaceDefault
	}
	topics := r.URL.Query()["topic"]
	if len(topics) == 0 {
		topics = []string{"*"}
	}
	for _, t := range topics {
		topic, _, _ := strings.Cut(t, ":")
		if topic == "*" {
			if !topicAllowed(a, state.TopicJob, ns) && !topicAllowed(a, state.TopicNode, ns) &&
				!topicAllowed(a, state.TopicCSIVolume, ns) && !topicAllowed(a, state.TopicCSIPlugin, ns) {
				return false
			}
			continue
		}
		if !topicAllowed(a, topic, ns) {
			return false
		}
	}
	return true
}

// topicAllowed reports whether a may read topic's events in namespace ns
// ("*": some namespace, each event checked).
func topicAllowed(a *acl.ACL, topic, ns string) bool {
	if cap := eventNsCap(topic); cap != "" {
		return ns == allNamespaces || a.AllowNamespaceOperation(ns, cap)
	}
	return eventLevelAllowed(a, topic)
}

// eventAllowed reports whether a may read e.
func eventAllowed(a *acl.ACL, e *state.StreamEvent) bool {
	if cap := eventNsCap(e.Topic); cap != "" {
		return a.AllowNamespaceOperation(state.NamespaceOrDefault(e.Namespace), cap)
	}
	return eventLevelAllowed(a, e.Topic)
}

// eventNsCap is the namespace capability a topic's events need ("": the
// topic is not in a namespace).
func eventNsCap(topic string) string {
	switch topic {
	case state.TopicJob, state.TopicEvaluation, state.TopicAllocation, state.TopicDeployment, state.TopicService:
		return acl.NsReadJob
	case state.TopicCSIVolume:
		return acl.NsCSIReadVolume
	}
	return ""
}

func eventLevelAllowed(a *acl.ACL, topic string) bool {
	switch topic {
	case state.TopicNode, state.TopicNodePool:
		return a.AllowNodeRead()
	case state.TopicCSIPlugin:
		return a.AllowPluginRead()
	}
	return a.IsManagement() // the ACL topics
}

// allowedBatches keeps the events of batches that a may read, dropping
// the batches left empty.
func allowedBatches(a *acl.ACL, batches []state.EventBatch) []state.EventBatch {
	out := batches[:0:0]
	for _, b := range batches {
		kept := b.Events[:0:0]
		for i := range b.Events {
			if eventAllowed(a, &b.Events[i]) {
				kept = append(kept, b.Events[i])
			}
		}
		if len(kept) > 0 {
			out = append(out, state.EventBatch{Index: b.Index, Events: kept})
		}
	}
	return out
}

// eventACL is the ACL the stream's events are checked against, resolved
// again after each read so a policy changed while the stream is open
// applies to the events written after it (nil: ACLs off). A token gone
// ends the stream with its error.
func (s *Server) eventACL(r *http.Request) (*acl.ACL, error) {
	q := aclOf(r)
	if q == nil {
		return nil, nil
	}
	res, err := s.acls.resolve(r.Context(), s.snapshot(), q.secret, s.b.Now())
	if err != nil {
		return nil, err
	}
	return res.acl, nil
}
