package template

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"sort"
)

// Service is one registration as nomadService gives it (consul-template's
// NomadService).
type Service struct {
	ID         string
	Name       string
	Namespace  string
	NodeID     string
	Datacenter string
	JobID      string
	AllocID    string
	Tags       []string
	Address    string
	Port       int
}

// ServiceSummary is one service as nomadServices lists it: its name and
// the tags of all its registrations.
type ServiceSummary struct {
	Name      string
	Namespace string
	Tags      []string
}

func (s *ServiceSummary) String() string { return s.Name }

// ServiceSource reads service registrations; a Source that also is one
// gives templates nomadService and nomadServices.
type ServiceSource interface {
	Services(ctx context.Context, ns, name string) ([]*Service, error)
	AllServices(ctx context.Context, ns string) ([]*Service, error)
}

// serviceQuery is consul-template's "[tag.]name[@namespace]".
var serviceQuery = regexp.MustCompile(`^(?:([\w\-]+)\.)?([\w\-/]+)(?:@([\w.\-/]+))?$`)

func (r *renderer) services() (ServiceSource, error) {
	src, err := r.source()
	if err != nil {
		return nil, err
	}
	ss, ok := src.(ServiceSource)
	if !ok {
		return nil, fmt.Errorf("template: this client reads no services")
	}
	return ss, nil
}

// nomadService is the registrations of a service, sorted by ID: with a
// tag, only those that carry it.
func (r *renderer) nomadService(query string) ([]*Service, error) {
	ss, err := r.services()
	if err != nil {
		return nil, err
	}
	m := serviceQuery.FindStringSubmatch(query)
	if m == nil {
		return nil, fmt.Errorf("nomadService: %q is not [tag.]name[@namespace]", query)
	}
	tag, name, ns := m[1], m[2], m[3]
	if ns == "" {
		ns = r.spec.Namespace
	}
	all, err := ss.Services(r.ctx, ns, name)
	if err != nil {
		return nil, fmt.Errorf("nomadService %q: %w", query, err)
	}
	var out []*Service
	for _, s := range all {
		if tag == "" || slices.Contains(s.Tags, tag) {
			out = append(out, s)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

// nomadServices lists the namespace's services by name, each with the
// union of its registrations' tags.
func (r *renderer) nomadServices(ns ...string) ([]*ServiceSummary, error) {
	ss, err := r.services()
	if err != nil {
		return nil, err
	}
	namespace := r.spec.Namespace
	if len(ns) == 1 {
		namespace = ns[0]
	}
	all, err := ss.AllServices(r.ctx, namespace)
	if err != nil {
		return nil, fmt.Errorf("nomadServices: %w", err)
	}
	byName := map[string]*ServiceSummary{}
	for _, s := range all {
		sum := byName[s.Name]
		if sum == nil {
			sum = &ServiceSummary{Name: s.Name, Namespace: s.Namespace}
			byName[s.Name] = sum
		}
		for _, t := range s.Tags {
			if !slices.Contains(sum.Tags, t) {
				sum.Tags = append(sum.Tags, t)
			}
		}
	}
	out := make([]*ServiceSummary, 0, len(byName))
	for _, s := range byName {
		sort.Strings(s.Tags)
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}
