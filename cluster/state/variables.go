package state

import (
	"fmt"
	"regexp"
	"strings"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/troupe-dev/troupe/messages"
)

// Variables (Nomad Variables) are stored sealed: the FSM never sees their
// items, only the ciphertext the leader made with the active root key
// (cluster/keyring). The root keys are a table too, so every server can
// open every variable.

// Tables Index and Wait understand.
const (
	TableVariables = "variables"
	TableRootKeys  = "root_keys"
)

// MaxVariableSize is Nomad's bound on a variable's items: the lengths of
// its keys and values together.
const MaxVariableSize = 64 << 10

// maxSealedSize bounds the ciphertext the FSM accepts: the items, their
// encoding and the GCM tag fit well under twice the plaintext bound.
const maxSealedSize = 2 * MaxVariableSize

// AllNamespaces is Nomad's wildcard for listing every namespace.
const AllNamespaces = "*"

// idxNamespace indexes variables by namespace (sorted by path within).
const idxNamespace = "namespace"

// validVariablePath is Nomad's rule for a variable path.
var validVariablePath = regexp.MustCompile(`^[a-zA-Z0-9-_~/]{1,128}$`)

func variableTables() []*memdb.TableSchema {
	v := func(o any) *messages.Variable { return o.(*messages.Variable) }
	return []*memdb.TableSchema{
		table(TableVariables,
			index(idxID, true, func(o any) []byte { return key2(v(o).Namespace, v(o).Path) }),
			index(idxNamespace, false, func(o any) []byte { return key1(v(o).Namespace) })),
		table(TableRootKeys, index(idxID, true, func(o any) []byte { return key1(o.(*messages.RootKey).KeyID) })),
	}
}

// ValidateVariablePath checks a path by Nomad's rules: 1-128 of
// [a-zA-Z0-9-_~/], and under the reserved "nomad/" only "nomad/jobs..."
// and "nomad/job-templates/NAME".
func ValidateVariablePath(path string) error {
	if path == "" {
		return fmt.Errorf("%w: variable requires path", ErrInvalidVariable)
	}
	if !validVariablePath.MatchString(path) {
		return fmt.Errorf("%w: invalid path %q", ErrInvalidVariable, path)
	}
	parts := strings.Split(path, "/")
	if parts[0] != "nomad" {
		return nil
	}
	switch {
	case len(parts) == 1:
		return fmt.Errorf("%w: %q is a reserved top-level directory path, but you may write variables to \"nomad/jobs\" or below",
			ErrInvalidVariable, "nomad")
	case parts[1] == "jobs", parts[1] == "job-templates" && len(parts) == 3:
		return nil
	case parts[1] == "job-templates":
		return fmt.Errorf("%w: \"nomad/job-templates\" is a reserved directory path, but you may write variables at the level below it",
			ErrInvalidVariable)
	}
	return fmt.Errorf("%w: only paths at \"nomad/jobs\" or \"nomad/job-templates\" and below are valid under the top-level \"nomad\" directory",
		ErrInvalidVariable)
}

// ValidateVariable checks a variable to write before it is sealed: a
// namespace (not the wildcard), a valid path, at least one item, and items
// of at most MaxVariableSize bytes.
func ValidateVariable(namespace, path string, items map[string]string) error {
	switch {
	case namespace == "" || namespace == AllNamespaces:
		return fmt.Errorf("%w: a variable needs a namespace (not %q)", ErrInvalidVariable, namespace)
	case len(items) == 0:
		return fmt.Errorf("%w: empty variables are invalid", ErrInvalidVariable)
	}
	size := 0
	for k, v := range items {
		size += len(k) + len(v)
	}
	if size > MaxVariableSize {
		return fmt.Errorf("%w: variables are limited to 64KiB in total size (this one has %d bytes)", ErrVariableTooLarge, size)
	}
	return ValidateVariablePath(path)
}

// Variable returns the sealed variable at namespace and path, or nil.
func (s *Snap) Variable(namespace, path string) *messages.Variable {
	return first[*messages.Variable](s.txn, TableVariables, idxID, namespace, path)
}

// VariablesByPrefix returns the sealed variables of a namespace (every
// namespace for AllNamespaces) whose path starts with prefix, by namespace
// and path.
func (s *Snap) VariablesByPrefix(namespace, prefix string) []*messages.Variable {
	var all []*messages.Variable
	if namespace == AllNamespaces {
		all = list[*messages.Variable](s.txn, TableVariables, idxID)
	} else {
		all = list[*messages.Variable](s.txn, TableVariables, idxNamespace, namespace)
	}
	out := all[:0]
	for _, v := range all {
		if strings.HasPrefix(v.Path, prefix) {
			out = append(out, v)
		}
	}
	return out
}

// RootKeys returns the keyring, by key ID.
func (s *Snap) RootKeys() []*messages.RootKey {
	return list[*messages.RootKey](s.txn, TableRootKeys, idxID)
}
