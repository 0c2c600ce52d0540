package jobspec

import (
	"slices"
	"strings"

	"github.com/troupe-dev/troupe/messages"
)

func validateNetworks(c checker, ns []*messages.NetworkResource) {
	for i, n := range ns {
		nc := c.at("network[%d]", i)
		if n == nil {
			nc.addf("is missing")
			continue
		}
		switch {
		case n.Mode == "", n.Mode == "host", n.Mode == "bridge", n.Mode == "none":
		case strings.HasPrefix(n.Mode, "cni/") && len(n.Mode) > len("cni/"):
		default:
			nc.addf("mode %q must be host, bridge, none or cni/<name>", n.Mode)
		}
		if n.MBits < 0 {
			nc.addf("mbits must not be negative")
		}
		labels := map[string]bool{}
		for _, p := range append(slices.Clone(n.ReservedPorts), n.DynamicPorts...) {
			validatePort(nc, p, labels)
		}
	}
}

func validatePort(c checker, p *messages.Port, labels map[string]bool) {
	if p == nil {
		return
	}
	pc := c.at("port %s", shown(p.Label))
	if p.Label == "" {
		pc.addf("label must not be empty")
	} else if prob := nameProblem(p.Label, c.lim().MaxNameLength); prob != "" {
		pc.addf("label %s", prob)
	} else if strings.Contains(p.Label, "=") {
		pc.addf("label must not contain = (it names the NOMAD_PORT_<label> variable)")
	} else if labels[p.Label] {
		pc.addf("label is not unique")
	}
	labels[p.Label] = true
	if p.Value < 0 || p.Value > 65535 {
		pc.addf("static %d must be between 0 and 65535", p.Value)
	}
	if p.To < -1 || p.To > 65535 {
		pc.addf("to %d must be between -1 and 65535", p.To)
	}
}
