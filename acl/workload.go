package acl

import "strings"

// Workload is the task a workload identity names. Its ACL grants only
// Nomad's implicit workload rules: read and list of the variables at
// nomad/jobs/<job>, nomad/jobs/<job>/<group> and
// nomad/jobs/<job>/<group>/<task> (and of the prefixes above them, so
// that it can list them) in its own namespace, and read of the services
// of its namespace.
type Workload struct {
	Namespace, Job, Group, Task string
}

// ForWorkload is the ACL of a workload identity of w.
func ForWorkload(w Workload) *ACL { return &ACL{workload: &w} }

// IsWorkload reports whether a is a workload identity's ACL.
func (a *ACL) IsWorkload() bool { return a != nil && a.workload != nil }

// allowsVar: read or list of a path, or a prefix, of nomad/jobs/<job>/<group>/<task>.
func (w *Workload) allowsVar(ns, path, cap string) bool {
	if ns != w.Namespace || cap != VarRead && cap != VarList {
		return false
	}
	want := []string{"nomad", "jobs", w.Job, w.Group, w.Task}
	parts := strings.Split(path, "/")
	if len(parts) > len(want) {
		return false
	}
	for i, p := range parts {
		if p != want[i] {
			return false
		}
	}
	return true
}

// AllowServiceRead reports whether a may list and read the service
// registrations of namespace ns: with read-job there, or as a workload of
// ns.
func (a *ACL) AllowServiceRead(ns string) bool {
	if a.IsWorkload() {
		return a.workload.Namespace == ns
	}
	return a.AllowNamespaceOperation(ns, NsReadJob)
}
