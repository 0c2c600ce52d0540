package jobspec

import (
	"sort"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
)

// hclRefused lists, for each body, the blocks and arguments of Nomad's
// job specification that troupe does not implement yet (the HCL side of
// nomadFields). They are refused with an error that names them and their
// line, instead of hcl's generic "Unsupported block type". Names that are
// in no list and not in the body's schema are still errors, from hcl.
var hclRefused = map[*hcl.BodySchema][]string{
	jobSchema: {"reschedule", "migrate",
		"vault", "consul", "ui", "all_at_once", "consul_namespace", "vault_namespace",
		"vault_token", "consul_token"},
	groupSchema: {"ephemeral_disk", "scaling", "consul", "shutdown_delay",
		"max_client_disconnect", "prevent_reschedule_on_lost", "max_run_duration"},
	taskSchema: {"vault", "consul",
		"scaling", "secret", "action", "schedule",
		"shutdown_delay", "kind"},
	resourcesSchema: {"iops", "secrets", "numa"},
	templateSchema:  {"wait", "vault_grace"},
	networkSchema:   {"dns", "cni", "hostname"},
	artifactSchema:  {"chown"},
	identitySchema:  {"change_mode", "change_signal", "filepath", "service_name", "extra_claims"},
}

var hclRefusedSet = func() map[*hcl.BodySchema]map[string]bool {
	out := map[*hcl.BodySchema]map[string]bool{}
	for s, names := range hclRefused {
		out[s] = map[string]bool{}
		for _, n := range names {
			out[s][n] = true
		}
	}
	return out
}()

// refuseUnsupported records an error for every refused block or argument
// of body, in source order, and returns where they start, so that hcl's
// own diagnostics about the same items can be dropped.
func (d *hclDecoder) refuseUnsupported(body hcl.Body, schema *hcl.BodySchema) map[hcl.Pos]bool {
	names := hclRefusedSet[schema]
	sb, ok := body.(*hclsyntax.Body)
	if !ok || len(names) == 0 {
		return nil
	}
	type item struct {
		r    hcl.Range
		kind string
		name string
	}
	var items []item
	for name, a := range sb.Attributes {
		if names[name] {
			items = append(items, item{a.NameRange, "argument", name})
		}
	}
	for _, b := range sb.Blocks {
		if names[b.Type] {
			items = append(items, item{b.TypeRange, "block", b.Type})
		}
	}
	sort.Slice(items, func(i, j int) bool { return items[i].r.Start.Byte < items[j].r.Start.Byte })
	at := map[hcl.Pos]bool{}
	for _, it := range items {
		d.errorf(it.r, "Not supported yet", "The %q %s is not supported yet by troupe; remove it.", it.name, it.kind)
		at[it.r.Start] = true
	}
	return at
}

// dropAt removes the diagnostics whose subject starts at one of at.
func dropAt(diags hcl.Diagnostics, at map[hcl.Pos]bool) hcl.Diagnostics {
	if len(at) == 0 {
		return diags
	}
	var out hcl.Diagnostics
	for _, dg := range diags {
		if dg.Subject != nil && at[dg.Subject.Start] {
			continue
		}
		out = append(out, dg)
	}
	return out
}
