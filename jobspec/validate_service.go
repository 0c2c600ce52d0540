package jobspec

import (
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"

	"github.com/troupe-dev/troupe/messages"
)

// Nomad's rules for native services and their checks.

// serviceNameRE is Nomad's: RFC 1123 labels (letters, digits and dashes,
// not starting or ending with a dash), after interpolation.
var serviceNameRE = regexp.MustCompile(`^(?i:[a-z0-9]|[a-z0-9][a-z0-9\-]{0,61}[a-z0-9])$`)

const minCheckInterval, minCheckTimeout = int64(1e9), int64(1e9)

// validateGroupServices checks a group's services and its tasks'.
func validateGroupServices(c checker, g *messages.TaskGroup) {
	ports := portLabels(g.Networks)
	tasks := map[string]bool{}
	for _, t := range g.Tasks {
		if t != nil {
			tasks[t.Name] = true
		}
	}
	validateServices(c, g.Services, ports, tasks, true)
	for _, t := range g.Tasks {
		if t == nil || len(t.Services) == 0 {
			continue
		}
		tp := portLabels(g.Networks)
		if t.Resources != nil {
			for l := range portLabels(t.Resources.Networks) {
				tp[l] = true
			}
		}
		validateServices(c.at("task %s", shown(t.Name)), t.Services, tp, nil, false)
	}
}

func portLabels(ns []*messages.NetworkResource) map[string]bool {
	out := map[string]bool{}
	for _, n := range ns {
		for _, p := range append(slices.Clone(n.GetReservedPorts()), n.GetDynamicPorts()...) {
			out[p.GetLabel()] = true
		}
	}
	return out
}

func validateServices(c checker, ss []*messages.Service, ports, tasks map[string]bool, group bool) {
	seen := map[string]bool{}
	for i, s := range ss {
		if s == nil {
			c.addf("service[%d] is missing", i)
			continue
		}
		sc := c.at("service %s", shown(s.Name))
		if !hasInterpolation(s.Name) && !serviceNameRE.MatchString(s.Name) {
			sc.addf("service name must be valid per RFC 1123 and can contain only alphanumeric characters or dashes")
		}
		if key := s.Name + "/" + s.PortLabel; seen[key] {
			sc.addf("service is duplicate (same name and port)")
		} else {
			seen[key] = true
		}
		if s.Provider != ServiceProviderNomad {
			sc.addf("provider %s is not supported; troupe registers services itself: use provider = \"nomad\"", shown(s.Provider))
		}
		if !slices.Contains([]string{AddressModeAuto, AddressModeHost, AddressModeAlloc}, s.AddressMode) {
			sc.addf("address_mode %s must be auto, host or alloc", shown(s.AddressMode))
		}
		validatePortLabel(sc, "port", s.PortLabel, ports)
		if s.Address != "" && s.AddressMode != AddressModeAuto {
			sc.addf("address cannot be set with address_mode %q; use address_mode = \"auto\"", s.AddressMode)
		}
		checkStringMap(sc, "meta", s.Meta, c.lim(), false)
		if group && s.TaskName != "" && !tasks[s.TaskName] {
			sc.addf("task %s is not a task of the group", shown(s.TaskName))
		}
		names := map[string]bool{}
		for j, ck := range s.Checks {
			if ck == nil {
				sc.addf("check[%d] is missing", j)
				continue
			}
			cc := sc.at("check %s", shown(ck.Name))
			if names[ck.Name] {
				cc.addf("check name is not unique in the service")
			}
			names[ck.Name] = true
			validateCheck(cc, s, ck, ports, tasks, group)
		}
	}
}

func validatePortLabel(c checker, what, label string, ports map[string]bool) {
	if label == "" || hasInterpolation(label) {
		return
	}
	if n, err := strconv.Atoi(label); err == nil {
		if n < 1 || n > 65535 {
			c.addf("%s %d must be between 1 and 65535", what, n)
		}
		return
	}
	if !ports[label] {
		c.addf("%s label %s does not exist in the group's network (define it in a port block)", what, shown(label))
	}
}

func validateCheck(c checker, s *messages.Service, ck *messages.ServiceCheck, ports, tasks map[string]bool, group bool) {
	switch ck.Type {
	case CheckHTTP:
		if ck.Path == "" {
			c.addf("http type must have http path")
		} else if u, err := url.Parse(ck.Path); err != nil || u.IsAbs() {
			c.addf("path %s must be a relative URL path", shown(ck.Path))
		}
		if !slices.Contains([]string{"http", "https"}, ck.Protocol) {
			c.addf("protocol %s must be http or https", shown(ck.Protocol))
		}
		if !validMethod(ck.Method) {
			c.addf("method %s is not an HTTP method", shown(ck.Method))
		}
	case CheckTCP:
	case CheckScript:
		if ck.Command == "" {
			c.addf("script type must have a valid script path (command)")
		}
		if group && ck.TaskName == "" && s.TaskName == "" {
			c.addf("script checks in group services must set a task")
		}
		if group && ck.TaskName != "" && !tasks[ck.TaskName] {
			c.addf("task %s is not a task of the group", shown(ck.TaskName))
		}
	default:
		c.addf("type %s must be http, tcp or script", shown(ck.Type))
	}
	if ck.Interval == 0 {
		c.addf("missing required value interval")
	} else if ck.Interval < minCheckInterval {
		c.addf("interval cannot be less than 1s")
	}
	if ck.Timeout == 0 {
		c.addf("missing required value timeout")
	} else if ck.Timeout < minCheckTimeout {
		c.addf("timeout cannot be less than 1s")
	}
	if ck.Type != CheckScript {
		label := ck.PortLabel
		if label == "" {
			label = s.PortLabel
		}
		if label == "" && ck.AddressMode != AddressModeAlloc {
			c.addf("%s checks need a port: set port on the check or on the service", ck.Type)
		}
		validatePortLabel(c, "port", ck.PortLabel, ports)
	}
	if ck.AddressMode != "" && !slices.Contains([]string{AddressModeHost, AddressModeAlloc, AddressModeAuto}, ck.AddressMode) {
		c.addf("address_mode %s must be auto, host or alloc", shown(ck.AddressMode))
	}
	if !slices.Contains([]string{"", "passing", "warning", "critical"}, ck.InitialStatus) {
		c.addf("initial_status %s must be passing, warning or critical", shown(ck.InitialStatus))
	}
	if cr := ck.CheckRestart; cr != nil {
		if cr.Limit < 0 {
			c.addf("check_restart.limit must be greater than or equal to 0")
		}
		if cr.Grace < 0 {
			c.addf("check_restart.grace must be greater than or equal to 0")
		}
	}
}

func validMethod(m string) bool {
	return slices.Contains([]string{http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut,
		http.MethodPatch, http.MethodDelete, http.MethodOptions, http.MethodConnect, http.MethodTrace}, m)
}

// hasInterpolation says whether s holds a ${...} that the client fills in.
func hasInterpolation(s string) bool { return interpolationRE.MatchString(s) }

var interpolationRE = regexp.MustCompile(`\$\{[^}]+\}`)
