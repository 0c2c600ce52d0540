package httpapi

import (
	"errors"
	"net/http"

	"github.com/troupe-dev/troupe/cluster/state"
	"github.com/troupe-dev/troupe/messages"
)

// Namespaces in requests, as Nomad's HTTP API reads them:
//
//   - Jobs, volumes and variables are named by namespace and ID: their
//     endpoints read and write the request's ?namespace= ("default" when
//     it names none), so one in another namespace is a 404 like a missing
//     one. "*" names no single namespace there: a 400 (oneNamespace).
//   - Lists (jobs, allocations, evaluations, volumes, variables) answer
//     the request's namespace, every namespace for "*" (inNamespace).
//   - Allocations and evaluations are named by a UUID alone. As in Nomad,
//     whose namespace check on them is only its ACLs' (which troupe does
//     not have), they are found whatever ?namespace= says: an allocation's
//     get, stop, exec, fs, logs, signal and restart, an evaluation and its
//     allocations.

// allNamespaces is the ?namespace= value that lists every namespace.
const allNamespaces = "*"

// namespace is the request's namespace for an endpoint that names one
// object (a job, a volume): ?namespace=, else "default". oneNamespace
// has refused "*" before the handler runs.
func namespace(r *http.Request) string {
	if ns := r.URL.Query().Get("namespace"); ns != "" && ns != allNamespaces {
		return ns
	}
	return state.NamespaceDefault
}

// oneNamespace refuses "*" on an endpoint that names one namespace's
// object (a job, a volume, a variable) with a 400 saying so.
func oneNamespace(h handler) handler {
	return func(w http.ResponseWriter, r *http.Request) (any, error) {
		if r.URL.Query().Get("namespace") == allNamespaces {
			return nil, codeErr(http.StatusBadRequest,
				"namespace %q names every namespace: %s %s reads or writes one namespace's object", allNamespaces, r.Method, r.URL.Path)
		}
		return h(w, r)
	}
}

// inNamespace reports whether an object in namespace ns belongs to the
// answer of a list request: the request's ?namespace= ("default" when it
// names none; "*" matches every namespace).
func inNamespace(r *http.Request, ns string) bool {
	want := r.URL.Query().Get("namespace")
	return (want == allNamespaces || state.NamespaceOrDefault(want) == state.NamespaceOrDefault(ns)) && aclAllowsNs(r, ns)
}

// requestNamespace is the namespace of a job or volume in a write
// request, by Nomad's rule: the request's ?namespace= (which Nomad's
// client sends from WriteOptions.Namespace or its own configuration)
// when it names one, else the object's own (ns; "" becomes "default" when
// canonicalized). Nomad's CLI sends a job file's namespace as the
// request's.
func requestNamespace(r *http.Request, ns string) string {
	if q := r.URL.Query().Get("namespace"); q != "" {
		return q
	}
	return ns
}

// checkNamespace refuses a job, volume or variable (what: `job "web"`) in
// a namespace that does not exist, with a 400 that names it. The FSM
// checks the same again when it applies the write (namespaceRefused).
func (s *Server) checkNamespace(what, ns string) error {
	ns = state.NamespaceOrDefault(ns)
	if s.b.Store().Snapshot().NamespaceByName(ns) == nil {
		return codeErr(http.StatusBadRequest, "namespace %q does not exist: %s cannot be in it", ns, what)
	}
	return nil
}

// checkVolumeNamespaces refuses volumes in a namespace that does not
// exist.
func (s *Server) checkVolumeNamespaces(vols []*messages.CSIVolume) error {
	for _, v := range vols {
		if err := s.checkNamespace("volume "+quote(v.GetID()), v.GetNamespace()); err != nil {
			return err
		}
	}
	return nil
}

// namespaceRefused is err as a 400 when the FSM refused a write because
// its namespace does not exist (deleted after checkNamespace passed), here
// or on the leader the command was forwarded to; else err as it is.
func namespaceRefused(err error) error {
	var coded interface{ ErrorCode() messages.ErrorCode }
	if errors.Is(err, state.ErrNamespaceNotFound) ||
		(errors.As(err, &coded) && coded.ErrorCode() == messages.CodeInvalid) {
		return codeErr(http.StatusBadRequest, "%v", err)
	}
	return err
}

// volumeInNamespace refuses, with a 404 like a missing volume's, an
// operator request (deregister, detach, delete) for volume id when it is
// not in the request's namespace: the leader's volume manager names
// volumes by ID alone. It runs on the leader (writeToLeader), whose state
// is current.
func (s *Server) volumeInNamespace(r *http.Request, id string) error {
	ns := namespace(r)
	if s.b.Store().Snapshot().CSIVolumeByID(ns, id) == nil {
		return codeErr(http.StatusNotFound, "volume not found: %q in namespace %q", id, ns)
	}
	return nil
}
