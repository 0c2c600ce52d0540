package httpapi

import (
	"context"
	"encoding/binary"
	"errors"
	"hash/fnv"
	"net/http"
	"sort"
	"strconv"
	"strings"

	"github.com/troupe-dev/troupe/api"
	"github.com/troupe-dev/troupe/cluster/state"
	"github.com/troupe-dev/troupe/messages"
)

// Service endpoints, in the shapes of Nomad's native service discovery:
// GET /v1/services (per namespace, each service with its tags), GET
// /v1/service/:name (its registrations; ?choose=N|key picks N of them by
// rendezvous hashing on key, so every caller with the same key gets the
// same ones while the set holds), DELETE /v1/service/:name/:id, and the
// client's GET /v1/client/allocation/:id/checks.

var serviceTables = []string{state.TableServices}

// ChecksBackend is a Backend whose client runs service checks; without it
// the checks endpoint is a 501.
type ChecksBackend interface {
	// AllocChecks are the latest results of the checks of allocation
	// allocID, which this client runs, keyed by check ID.
	AllocChecks(ctx context.Context, allocID string) (map[string]*api.AllocCheckStatus, error)
}

func (s *Server) serviceRoutes(m *http.ServeMux) {
	m.HandleFunc("GET /v1/services", s.wrap(s.serviceList))
	m.HandleFunc("GET /v1/service/{name}", s.wrap(oneNamespace(s.serviceGet)))
	m.HandleFunc("DELETE /v1/service/{name}/{id}", s.wrap(oneNamespace(s.serviceDelete)))
	m.HandleFunc("GET /v1/client/allocation/{alloc}/checks", s.wrap(s.allocChecks))
}

// serviceList handles GET /v1/services[?namespace=]: each namespace's
// services by name, with the tags of all their registrations, sorted and
// once each.
func (s *Server) serviceList(w http.ResponseWriter, r *http.Request) (any, error) {
	return s.query(w, r, serviceTables, func(snap *state.Snap) (any, error) {
		return listServices(r, snap.Services()), nil
	})
}

func listServices(r *http.Request, regs []*messages.ServiceRegistration) []*api.ServiceRegistrationListStub {
	byNS := map[string]map[string]map[string]bool{}
	for _, reg := range regs {
		if !inNamespace(r, reg.Namespace) {
			continue
		}
		if byNS[reg.Namespace] == nil {
			byNS[reg.Namespace] = map[string]map[string]bool{}
		}
		tags := byNS[reg.Namespace][reg.ServiceName]
		if tags == nil {
			tags = map[string]bool{}
			byNS[reg.Namespace][reg.ServiceName] = tags
		}
		for _, t := range reg.Tags {
			tags[t] = true
		}
	}
	out := []*api.ServiceRegistrationListStub{}
	for _, ns := range sortedKeys(byNS) {
		stub := &api.ServiceRegistrationListStub{Namespace: ns}
		for _, name := range sortedKeys(byNS[ns]) {
			stub.Services = append(stub.Services, &api.ServiceRegistrationStub{
				ServiceName: name, Tags: sortedKeys(byNS[ns][name])})
		}
		out = append(out, stub)
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// serviceGet handles GET /v1/service/:name[?choose=N|key][&tag=]: the
// service's registrations in the namespace ([] when there are none, as
// Nomad answers).
func (s *Server) serviceGet(w http.ResponseWriter, r *http.Request) (any, error) {
	n, key, err := parseChoose(r.URL.Query().Get("choose"))
	if err != nil {
		return nil, err
	}
	tag := r.URL.Query().Get("tag")
	return s.query(w, r, serviceTables, func(snap *state.Snap) (any, error) {
		out := []*messages.ServiceRegistration{}
		for _, reg := range snap.ServicesByName(namespace(r), r.PathValue("name")) {
			if tag == "" || containsString(reg.Tags, tag) {
				out = append(out, reg)
			}
		}
		if n > 0 {
			out = chooseServices(out, n, key)
		}
		return out, nil
	})
}

func containsString(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// parseChoose reads ?choose=N|key: N > 0 registrations for key. "" is no
// choice (0).
func parseChoose(v string) (int, string, error) {
	if v == "" {
		return 0, "", nil
	}
	num, key, ok := strings.Cut(v, "|")
	n, err := strconv.Atoi(num)
	if !ok || err != nil || n < 1 || key == "" {
		return 0, "", codeErr(http.StatusBadRequest, "choose %q must be <number>|<key> with a number of at least 1 and a key", v)
	}
	return n, key, nil
}

// chooseServices is rendezvous (highest random weight) hashing: each
// registration scores the hash of key and its ID, and the n highest win,
// highest first. Adding or removing one registration moves only the
// callers that had it.
func chooseServices(regs []*messages.ServiceRegistration, n int, key string) []*messages.ServiceRegistration {
	score := func(id string) uint64 {
		h := fnv.New64a()
		_, _ = h.Write([]byte(key))
		_, _ = h.Write([]byte{0})
		_, _ = h.Write([]byte(id))
		return binary.BigEndian.Uint64(h.Sum(nil))
	}
	sorted := append([]*messages.ServiceRegistration(nil), regs...)
	sort.SliceStable(sorted, func(i, j int) bool { return score(sorted[i].ID) > score(sorted[j].ID) })
	return sorted[:min(n, len(sorted))]
}

// serviceDelete handles DELETE /v1/service/:name/:id: 404 when the
// service has no such registration.
func (s *Server) serviceDelete(w http.ResponseWriter, r *http.Request) (any, error) {
	if s.writeToLeader(w, r) {
		return nil, errProxied
	}
	ns, name, id := namespace(r), r.PathValue("name"), r.PathValue("id")
	if reg := s.b.Store().Snapshot().ServiceByID(ns, id); reg == nil || reg.ServiceName != name {
		return nil, codeErr(http.StatusNotFound, "service registration not found: %q of service %q", id, name)
	}
	_, index, err := s.apply(r, &messages.Command{Cmd: &messages.Command_DeleteServiceRegistrationByID{
		DeleteServiceRegistrationByID: &messages.DeleteServiceRegistrationByID{Namespace: ns, ID: id}}})
	if errors.Is(err, state.ErrServiceNotFound) {
		return nil, codeErr(http.StatusNotFound, "%v", err)
	}
	if err != nil {
		return nil, err
	}
	setIndex(w, index)
	return nil, nil
}

// allocChecks handles GET /v1/client/allocation/:alloc/checks: the latest
// result of each of the allocation's checks, keyed by check ID (Nomad's
// AllocCheckStatuses; {} when it has none). An allocation another client
// runs is passed to that client's agent.
func (s *Server) allocChecks(w http.ResponseWriter, r *http.Request) (any, error) {
	a, _, err := s.allocOpTarget(w, r)
	if err != nil {
		return nil, err
	}
	cb, ok := s.b.(ChecksBackend)
	if !ok {
		return nil, codeErr(http.StatusNotImplemented, "this agent does not run service checks")
	}
	out, err := cb.AllocChecks(r.Context(), a.GetID())
	if err != nil {
		return nil, err
	}
	if out == nil {
		out = map[string]*api.AllocCheckStatus{}
	}
	return out, nil
}
