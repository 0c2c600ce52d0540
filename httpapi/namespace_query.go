package httpapi

import (
	"net/http"

	"github.com/troupe-dev/troupe/cluster/state"
	"github.com/troupe-dev/troupe/messages"
)

// allNamespaces is the ?namespace= value that lists every namespace.
const allNamespaces = "*"

// inNamespace reports whether an object in namespace ns belongs to the
// answer of a list request: the request's ?namespace= ("default" when it
// names none; "*" matches every namespace).
func inNamespace(r *http.Request, ns string) bool {
	want := r.URL.Query().Get("namespace")
	return want == allNamespaces || state.NamespaceOrDefault(want) == state.NamespaceOrDefault(ns)
}

// requestNamespace is the namespace of a job or volume in a write
// request: its own (ns), else the request's ?namespace= (which Nomad's
// client sends from WriteOptions.Namespace), else "" (which
// canonicalizing makes "default").
func requestNamespace(r *http.Request, ns string) string {
	if q := r.URL.Query().Get("namespace"); ns == "" && q != allNamespaces {
		return q
	}
	return ns
}

// checkNamespace refuses a job, volume or variable (what: `job "web"`) in
// a namespace that does not exist, with a 400 that names it.
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
