package state

import (
	"errors"
	"fmt"
	"regexp"
	"strings"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/troupe-dev/troupe/messages"
)

// Namespaces scope jobs, allocations, evaluations, volumes and variables.
// "default" is built in: it always exists and cannot be deleted (its
// description and meta may change, as in Nomad). A namespace with a job
// that is not dead, a volume or a variable cannot be deleted. The FSM
// refuses a job, volume or variable in a namespace that does not exist
// (ErrNamespaceNotFound), whatever order a registration and the delete of
// its namespace reach the log in; the HTTP API checks the same first, to
// answer without a raft round.

// TableNamespaces is the namespaces table (Index and Wait understand it).
const TableNamespaces = "namespaces"

const (
	// NamespaceDefault is the namespace of everything that names none.
	NamespaceDefault = "default"

	namespaceDefaultDescription = "Default shared namespace"
	// maxNamespaceDescription is Nomad's bound on a description.
	maxNamespaceDescription = 256
)

// validNamespaceName is Nomad's rule for a namespace name.
var validNamespaceName = regexp.MustCompile(`^[a-zA-Z0-9-]{1,128}$`)

// NamespaceOrDefault is the namespace named ns: "" means "default".
func NamespaceOrDefault(ns string) string {
	if ns == "" {
		return NamespaceDefault
	}
	return ns
}

// builtInNamespaces are the namespaces every store starts with (raft
// index 1).
func builtInNamespaces() []*messages.Namespace {
	return []*messages.Namespace{
		{Name: NamespaceDefault, Description: namespaceDefaultDescription, CreateIndex: 1, ModifyIndex: 1},
	}
}

func namespaceTable() *memdb.TableSchema {
	return table(TableNamespaces, index(idxID, true, func(o any) []byte { return key1(o.(*messages.Namespace).Name) }))
}

// ValidateNamespaceName checks a namespace name against Nomad's rule.
func ValidateNamespaceName(name string) error {
	if !validNamespaceName.MatchString(name) {
		return fmt.Errorf("%w: invalid name %q, must match regex %s", ErrInvalidNamespace, name, validNamespaceName)
	}
	return nil
}

// CheckUpsertNamespaces checks the namespaces of an UpsertNamespaces: at
// least one; each with a valid name and a description of at most 256
// bytes.
func CheckUpsertNamespaces(nss []*messages.Namespace) error {
	if len(nss) == 0 {
		return fmt.Errorf("%w: must specify at least one namespace", ErrInvalidNamespace)
	}
	var errs []error
	for _, ns := range nss {
		switch {
		case ns == nil:
			errs = append(errs, fmt.Errorf("%w: a namespace is null", ErrInvalidNamespace))
		case len(ns.Description) > maxNamespaceDescription:
			errs = append(errs, fmt.Errorf("%w: namespace %q: description longer than %d", ErrInvalidNamespace, ns.Name, maxNamespaceDescription))
		default:
			errs = append(errs, ValidateNamespaceName(ns.Name))
		}
	}
	return errors.Join(errs...)
}

// CheckDeleteNamespaces checks the names of a DeleteNamespaces against s:
// at least one; each an existing namespace other than "default", with no
// job that is not dead, no volume and no variable. Every problem is
// reported.
func CheckDeleteNamespaces(s *Snap, names []string) error {
	return checkDeletes(s, names, "namespace", ErrInvalidNamespace, checkDeleteNamespace)
}

func checkDeleteNamespace(s *Snap, name string) error {
	switch {
	case name == "":
		return fmt.Errorf("%w: namespace name is empty", ErrInvalidNamespace)
	case name == NamespaceDefault:
		return fmt.Errorf("%w: deleting namespace %q is not allowed", ErrNamespaceBuiltIn, name)
	case s.NamespaceByName(name) == nil:
		return fmt.Errorf("%w: namespace %q not found", ErrNamespaceNotFound, name)
	}
	var errs []error
	var live []string
	for _, j := range s.JobsByNamespace(name) {
		if j.Status != messages.JobStatusDead {
			live = append(live, j.ID)
		}
	}
	if len(live) > 0 {
		errs = append(errs, fmt.Errorf("%w: namespace %q has non-terminal jobs: %s", ErrNamespaceInUse, name, strings.Join(live, ", ")))
	}
	var vols []string
	for _, v := range s.CSIVolumesByNamespace(name) {
		vols = append(vols, v.ID)
	}
	if len(vols) > 0 {
		errs = append(errs, fmt.Errorf("%w: namespace %q has volumes: %s", ErrNamespaceInUse, name, strings.Join(vols, ", ")))
	}
	if vars := s.VariablesByPrefix(name, ""); len(vars) > 0 {
		// As Nomad's, without the paths (a reader of the namespace list
		// may not be one of its variables).
		errs = append(errs, fmt.Errorf("%w: namespace %q has %d variable(s)", ErrNamespaceInUse, name, len(vars)))
	}
	return errors.Join(errs...)
}

// Namespaces returns every namespace, by name.
func (s *Snap) Namespaces() []*messages.Namespace {
	return list[*messages.Namespace](s.txn, TableNamespaces, idxID)
}

// NamespaceByName returns a namespace, or nil.
func (s *Snap) NamespaceByName(name string) *messages.Namespace {
	return first[*messages.Namespace](s.txn, TableNamespaces, idxID, name)
}

// JobsByNamespace returns the current version of the jobs of one
// namespace, by ID.
func (s *Snap) JobsByNamespace(ns string) []*messages.Job {
	return list[*messages.Job](s.txn, TableJobs, idxID+"_prefix", ns)
}
