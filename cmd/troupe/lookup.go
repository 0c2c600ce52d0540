package main

import (
	"fmt"
	"strings"

	"github.com/troupe-dev/troupe/api"
	"github.com/troupe-dev/troupe/messages"
)

// uuidLen is the length of a full ID; shorter IDs may be prefixes.
const uuidLen = 36

// lookup reads an object by ID. Like Nomad's CLI it accepts a prefix: when
// the read is a 404 and id is shorter than a full ID, it lists the IDs with
// that prefix and reads the single match, or fails naming the matches.
func lookup[T any](what, id string, info func(string) (T, error), list func(string) ([]string, error)) (T, error) {
	v, err := info(id)
	if err == nil || !api.IsNotFound(err) || len(id) >= uuidLen {
		return v, err
	}
	ids, lerr := list(id)
	if lerr != nil {
		return v, lerr
	}
	var matches []string
	for _, full := range ids {
		if strings.HasPrefix(full, id) {
			matches = append(matches, full)
		}
	}
	switch len(matches) {
	case 0:
		return v, fmt.Errorf("%w: no %s with prefix or ID %q", errNoMatch, what, id)
	case 1:
		return info(matches[0])
	default:
		return v, fmt.Errorf("%w: prefix %q matched %d %ss: %s",
			errAmbiguous, id, len(matches), what, strings.Join(matches, ", "))
	}
}

// lookupJob reads the job id names (an ID or a unique prefix) in the
// client's namespace. With "*" it looks in every namespace, and the client
// then addresses the one job found in its own (a later stop or scale goes
// to it).
func lookupJob(c *api.Client, id string) (*messages.Job, error) {
	if c.Namespace() == allNamespaces {
		return lookupJobAnywhere(c, id)
	}
	return lookup("job", id,
		func(id string) (*messages.Job, error) { j, _, err := c.Jobs().Info(id, nil); return j, err },
		func(p string) ([]string, error) {
			stubs, _, err := c.Jobs().List(&api.QueryOptions{Prefix: p})
			return collectIDs(stubs, func(s *api.JobListStub) string { return s.ID }), err
		})
}

func lookupAlloc(c *api.Client, id string) (*messages.Allocation, error) {
	return lookup("allocation", id,
		func(id string) (*messages.Allocation, error) {
			a, _, err := c.Allocations().Info(id, nil)
			return a, err
		},
		func(p string) ([]string, error) {
			stubs, _, err := c.Allocations().List(&api.QueryOptions{Prefix: p})
			return collectIDs(stubs, func(s *api.AllocListStub) string { return s.ID }), err
		})
}

func lookupEval(c *api.Client, id string) (*messages.Evaluation, error) {
	return lookup("evaluation", id,
		func(id string) (*messages.Evaluation, error) {
			e, _, err := c.Evaluations().Info(id, nil)
			return e, err
		},
		func(p string) ([]string, error) {
			evals, _, err := c.Evaluations().List(&api.QueryOptions{Prefix: p})
			return collectIDs(evals, func(e *messages.Evaluation) string { return e.ID }), err
		})
}

func lookupNode(c *api.Client, id string) (*messages.Node, error) {
	return lookup("node", id,
		func(id string) (*messages.Node, error) { n, _, err := c.Nodes().Info(id, nil); return n, err },
		func(p string) ([]string, error) {
			stubs, _, err := c.Nodes().List(&api.QueryOptions{Prefix: p})
			return collectIDs(stubs, func(s *api.NodeListStub) string { return s.ID }), err
		})
}

func collectIDs[T any](items []T, id func(T) string) []string {
	out := make([]string, 0, len(items))
	for _, it := range items {
		out = append(out, id(it))
	}
	return out
}

// allocClient makes the API client and looks up the allocation id names
// (an ID or a unique prefix); when it cannot, code is the exit code of the
// failure it printed.
func (m *meta) allocClient(id string) (c *api.Client, alloc *messages.Allocation, code int, ok bool) {
	c, err := m.client()
	if err != nil {
		return nil, nil, m.fail("creating the API client", err), false
	}
	if alloc, err = lookupAlloc(c, id); err != nil {
		return nil, nil, m.fail("querying allocation", err), false
	}
	return c, alloc, 0, true
}

// allNamespaces is the namespace that names every namespace.
const allNamespaces = "*"

// lookupJobAnywhere is lookupJob across every namespace: a job whose ID is
// id, else the one whose ID starts with it.
func lookupJobAnywhere(c *api.Client, id string) (*messages.Job, error) {
	stubs, _, err := c.Jobs().List(&api.QueryOptions{Prefix: id})
	if err != nil {
		return nil, err
	}
	var exact, prefixed []*api.JobListStub
	for _, s := range stubs {
		switch {
		case s.ID == id:
			exact = append(exact, s)
		case strings.HasPrefix(s.ID, id):
			prefixed = append(prefixed, s)
		}
	}
	matches := exact
	if len(matches) == 0 {
		matches = prefixed
	}
	switch len(matches) {
	case 0:
		return nil, fmt.Errorf("%w: no job with prefix or ID %q in any namespace", errNoMatch, id)
	case 1:
		c.SetNamespace(matches[0].Namespace)
		j, _, err := c.Jobs().Info(matches[0].ID, nil)
		return j, err
	}
	names := make([]string, 0, len(matches))
	for _, s := range matches {
		names = append(names, s.Namespace+"/"+s.ID)
	}
	return nil, fmt.Errorf("%w: %q matched %d jobs: %s (name one namespace with -namespace)",
		errAmbiguous, id, len(matches), strings.Join(names, ", "))
}
