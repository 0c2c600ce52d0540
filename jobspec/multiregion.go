package jobspec

import (
	"maps"

	"github.com/hashicorp/hcl/v2"
	"google.golang.org/protobuf/proto"

	"github.com/troupe-dev/troupe/messages"
)

// Multiregion jobs (Nomad Enterprise's multiregion block): one job
// registered in every region it names, each copy with that region's
// count, datacenters, node pool and meta.

// The values of a multiregion strategy's on_failure.
const (
	MultiregionFailDefault = ""
	MultiregionFailAll     = "fail_all"
	MultiregionFailLocal   = "fail_local"
)

var (
	multiregionSchema = schemaOf(nil, blockSpec{name: "strategy"}, blockSpec{"region", []string{"name"}})
	mrStrategyAttrs   = []attrSpec{{name: "max_parallel", field: "MaxParallel"}, {name: "on_failure", field: "OnFailure"}}
	mrStrategySchema  = schemaOf(mrStrategyAttrs)
	mrRegionAttrs     = []attrSpec{{name: "count", field: "Count"}, {name: "datacenters", field: "Datacenters"},
		{name: "node_pool", field: "NodePool"}}
	mrRegionSchema = schemaOf(mrRegionAttrs, blockSpec{name: "meta"})
)

func (d *hclDecoder) multiregion(b *hcl.Block) *messages.Multiregion {
	if b == nil {
		return nil
	}
	c := d.content(b.Body, multiregionSchema)
	m := &messages.Multiregion{}
	if sb := d.single(c, "strategy"); sb != nil {
		m.Strategy = &messages.MultiregionStrategy{}
		d.decodeAttrs(d.content(sb.Body, mrStrategySchema).Attributes, mrStrategyAttrs, m.Strategy)
	}
	for _, rb := range c.Blocks.OfType("region") {
		r := &messages.MultiregionRegion{Name: rb.Labels[0]}
		rc := d.content(rb.Body, mrRegionSchema)
		d.decodeAttrs(rc.Attributes, mrRegionAttrs, r)
		if mb := d.single(rc, "meta"); mb != nil {
			r.Meta = d.stringMap(mb)
		}
		m.Regions = append(m.Regions, r)
	}
	return m
}

// validateMultiregion applies Nomad's rules: at least one region, each
// named once, counts and max_parallel not negative, a known on_failure.
func validateMultiregion(c checker, job *messages.Job) {
	m := job.GetMultiregion()
	if m == nil {
		return
	}
	mc := c.at("multiregion")
	l := c.lim()
	if len(m.GetRegions()) == 0 {
		mc.addf("must name at least one region")
	}
	if job.GetPeriodic().GetEnabled() || job.GetParameterizedJob() != nil {
		mc.addf("a periodic or parameterized job can not be multiregion")
	}
	if s := m.GetStrategy(); s != nil {
		if s.MaxParallel < 0 {
			mc.addf("strategy: max_parallel %d must not be negative", s.MaxParallel)
		}
		switch s.OnFailure {
		case MultiregionFailDefault, MultiregionFailAll, MultiregionFailLocal:
		default:
			mc.addf("strategy: on_failure %q must be %q, %q or unset", s.OnFailure, MultiregionFailAll, MultiregionFailLocal)
		}
	}
	seen := map[string]bool{}
	for i, r := range m.GetRegions() {
		rc := mc.at("region %s", shown(r.GetName()))
		switch {
		case r.GetName() == "":
			rc = mc.at("region[%d]", i)
			rc.addf("name must not be empty")
		case nameProblem(r.GetName(), l.MaxNameLength) != "":
			rc = mc.at("region[%d]", i)
			rc.addf("name %s %s", shown(r.GetName()), nameProblem(r.GetName(), l.MaxNameLength))
		case seen[r.GetName()]:
			rc.addf("region is named more than once")
		}
		seen[r.GetName()] = true
		if r.GetCount() < 0 {
			rc.addf("count %d must not be negative", r.GetCount())
		}
		for j, dc := range r.GetDatacenters() {
			if dc == "" {
				rc.addf("datacenters[%d] must not be empty", j)
			}
		}
		checkStringMap(rc, "meta", r.GetMeta(), l, false)
	}
}

// MultiregionRegions lists the regions a multiregion job names, in
// rollout order (nil for a single-region job).
func MultiregionRegions(job *messages.Job) []string {
	var out []string
	for _, r := range job.GetMultiregion().GetRegions() {
		out = append(out, r.GetName())
	}
	return out
}

// ForRegion returns the copy of a multiregion job that region runs
// (Nomad's rule): Region set to it, its count over every group's (when
// set), its datacenters and node pool over the job's (when set), and its
// meta merged over the job's. The multiregion block stays, so that each
// region knows the job is one of a set. ok is false when the job does
// not name region.
func ForRegion(job *messages.Job, region string) (*messages.Job, bool) {
	for _, r := range job.GetMultiregion().GetRegions() {
		if r.GetName() != region {
			continue
		}
		out := proto.Clone(job).(*messages.Job)
		out.Region = region
		if len(r.GetDatacenters()) > 0 {
			out.Datacenters = append([]string(nil), r.GetDatacenters()...)
		}
		if r.GetNodePool() != "" {
			out.NodePool = r.GetNodePool()
		}
		if len(r.GetMeta()) > 0 {
			meta := maps.Clone(out.Meta)
			if meta == nil {
				meta = map[string]string{}
			}
			maps.Copy(meta, r.GetMeta())
			out.Meta = meta
		}
		if r.GetCount() > 0 {
			for _, g := range out.TaskGroups {
				g.Count = r.GetCount()
			}
		}
		return out, true
	}
	return nil, false
}
