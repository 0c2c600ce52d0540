package scheduler

import (
	"strconv"
	"strings"

	"github.com/troupe-dev/troupe/messages"
)

// Device failure reasons. A node with no device group that matches a
// request (by name and constraints) with enough healthy instances is
// filtered under filterMissingDevices, as in Nomad. A node whose matching
// groups have too few healthy instances left free by its live allocs and
// this plan is exhausted in DimensionExhausted under dimDevicesPrefix and
// a reason naming the request, e.g. "devices: no device group matches
// nvidia/gpu with 2 free healthy instances".
const (
	filterMissingDevices = "missing devices"
	dimDevicesPrefix     = "devices: "
)

// deviceID is a device group's identity, or as much of it as a request
// names.
type deviceID struct{ vendor, typ, name string }

// parseDeviceName reads a requested device name: "<type>",
// "<vendor>/<type>" or "<vendor>/<type>/<name>" (the name, a model such
// as "NVIDIA H100 80GB HBM3", may itself hold "/").
func parseDeviceName(s string) deviceID {
	parts := strings.SplitN(s, "/", 3)
	switch len(parts) {
	case 1:
		return deviceID{typ: parts[0]}
	case 2:
		return deviceID{vendor: parts[0], typ: parts[1]}
	}
	return deviceID{vendor: parts[0], typ: parts[1], name: parts[2]}
}

// matches reports whether node device group d is what id names.
func (id deviceID) matches(d *messages.NodeDeviceResource) bool {
	return id.typ == d.Type && (id.vendor == "" || id.vendor == d.Vendor) &&
		(id.name == "" || id.name == d.Name)
}

// devTargetKind says where a device constraint target's value comes from.
type devTargetKind uint8

const (
	devLiteral devTargetKind = iota
	devAttr                  // ${device.attr.<name>}
	devModel                 // ${device.model}: the group's Name
	devVendor                // ${device.vendor}
	devType                  // ${device.type}
	devUnknown               // any other interpolation, ${device.ids} included
)

var devTargets = map[string]devTargetKind{
	"${device.model}":  devModel,
	"${device.vendor}": devVendor,
	"${device.type}":   devType,
}

// devTarget is a parsed device constraint or affinity target.
type devTarget struct {
	kind devTargetKind
	key  string // the literal, or the attribute name
	// a literal's value read as a quantity, once
	q     float64
	qkind byte
	qok   bool
}

func parseDevTarget(s string) devTarget {
	if !strings.HasPrefix(s, "${") {
		t := devTarget{kind: devLiteral, key: s}
		t.q, t.qkind, t.qok = parseQuantity(s)
		return t
	}
	if k, ok := devTargets[s]; ok {
		return devTarget{kind: k}
	}
	if inner, ok := strings.CutSuffix(s, "}"); ok {
		if k, ok := strings.CutPrefix(inner, "${device.attr."); ok {
			return devTarget{kind: devAttr, key: k}
		}
	}
	return devTarget{kind: devUnknown}
}

// resolve returns the target's value on device group d.
func (t devTarget) resolve(d *messages.NodeDeviceResource) (string, bool) {
	switch t.kind {
	case devLiteral:
		return t.key, true
	case devAttr:
		v, ok := d.Attributes[t.key]
		return v, ok
	case devModel:
		return d.Name, true
	case devVendor:
		return d.Vendor, true
	case devType:
		return d.Type, true
	}
	return "", false
}

// deviceRule is a parsed device constraint or affinity.
type deviceRule struct {
	op     string
	l, r   devTarget
	weight float64 // affinities only
}

// deviceReq is one device request of one task.
type deviceReq struct {
	task  int // index in deviceAsk.tasks
	id    deviceID
	count int32
	rules []deviceRule
	affs  []deviceRule
	key   string // DimensionExhausted key when too few instances are free
}

// deviceAsk is what a group's tasks ask of a node's devices; nil for a
// group that asks for none, so such groups pay nothing.
type deviceAsk struct {
	tasks     []string
	reqs      []deviceReq
	affWeight float64 // sum of |weight| over every request's affinities
	left      []int32 // scratch: instances left per node group
	pick      []int   // the node group chosen for each request
}

func newDeviceAsk(tg *messages.TaskGroup) *deviceAsk {
	var ask *deviceAsk
	for _, t := range tg.Tasks {
		devs := t.GetResources().GetDevices()
		if len(devs) == 0 {
			continue
		}
		if ask == nil {
			ask = &deviceAsk{}
		}
		ask.tasks = append(ask.tasks, t.Name)
		for _, d := range devs {
			if d != nil {
				ask.reqs = append(ask.reqs, ask.newReq(len(ask.tasks)-1, d))
			}
		}
	}
	if ask == nil || len(ask.reqs) == 0 {
		return nil
	}
	ask.pick = make([]int, len(ask.reqs))
	return ask
}

func (a *deviceAsk) newReq(task int, d *messages.RequestedDevice) deviceReq {
	count := int32(min(max(d.Count, 1), 1<<20)) // jobspec defaults 0 to 1
	r := deviceReq{task: task, id: parseDeviceName(d.Name), count: count,
		key: dimDevicesPrefix + "no device group matches " + d.Name + " with " +
			strconv.Itoa(int(count)) + " free healthy instances"}
	for _, c := range d.Constraints {
		r.rules = append(r.rules, deviceRule{op: c.GetOperand(),
			l: parseDevTarget(c.GetLTarget()), r: parseDevTarget(c.GetRTarget())})
	}
	for _, af := range d.Affinities {
		if af == nil {
			continue
		}
		w := float64(af.Weight)
		r.affs = append(r.affs, deviceRule{op: af.Operand,
			l: parseDevTarget(af.LTarget), r: parseDevTarget(af.RTarget), weight: w})
		a.affWeight += max(w, -w)
	}
	return r
}

// scratch returns a.left sized n.
func (a *deviceAsk) scratch(n int) []int32 {
	if cap(a.left) < n {
		a.left = make([]int32, n)
	}
	a.left = a.left[:n]
	return a.left
}

// matches reports whether group d is what r names and meets its
// constraints.
func (a *deviceAsk) matches(m *matcher, r *deviceReq, d *messages.NodeDeviceResource) bool {
	if !r.id.matches(d) {
		return false
	}
	for i := range r.rules {
		if !m.checkDevice(&r.rules[i], d) {
			return false
		}
	}
	return true
}

// affinity is the sum of the weights of r's affinities that d meets.
func (a *deviceAsk) affinity(m *matcher, r *deviceReq, d *messages.NodeDeviceResource) float64 {
	s := 0.0
	for i := range r.affs {
		if m.checkDevice(&r.affs[i], d) {
			s += r.affs[i].weight
		}
	}
	return s
}

// fitsNode reports whether node n has, for each request in turn, a
// matching group with enough healthy instances not taken by the requests
// before it (Nomad's device checker). What allocs hold is left to ranking.
func (a *deviceAsk) fitsNode(m *matcher, n *messages.Node) bool {
	devs := n.GetNodeResources().GetDevices()
	if len(devs) == 0 {
		return false
	}
	if len(a.reqs) == 1 { // the common case: count only as far as needed
		r := &a.reqs[0]
		for _, d := range devs {
			if a.matches(m, r, d) && healthyAtLeast(d, r.count) {
				return true
			}
		}
		return false
	}
	left := a.scratch(len(devs))
	for i, d := range devs {
		left[i] = 0
		for _, in := range d.Instances {
			if in.Healthy {
				left[i]++
			}
		}
	}
	for i := range a.reqs {
		r := &a.reqs[i]
		g := -1
		for j, d := range devs {
			if left[j] >= r.count && a.matches(m, r, d) {
				g = j
				break
			}
		}
		if g < 0 {
			return false
		}
		left[g] -= r.count
	}
	return true
}

func healthyAtLeast(d *messages.NodeDeviceResource, n int32) bool {
	for _, in := range d.Instances {
		if in.Healthy {
			if n--; n <= 0 {
				return true
			}
		}
	}
	return false
}

// checkDevice resolves both sides of a device rule on group d and checks
// the operand. Values that both read as quantities ("40", "81559 MiB",
// "40 GiB", "1.5 GHz") of one kind compare as numbers for the ordering
// and equality operands; everything else is the node constraint check.
func (m *matcher) checkDevice(r *deviceRule, d *messages.NodeDeviceResource) bool {
	l, lok := r.l.resolve(d)
	rv, rok := r.r.resolve(d)
	if lok && rok {
		switch r.op {
		case opLess, opLessEqual, opGreater, opGreaterEqual, opEqual, opEqualEqual, opIs,
			opNotEqual, opNot:
			if rq, rkind, ok := r.r.quantity(rv); ok {
				if lq, lkind, ok := r.l.quantity(l); ok && lkind == rkind {
					return compareQuantity(r.op, lq, rq)
				}
			}
		}
	}
	return m.check(r.op, l, rv, lok, rok)
}

// quantity is v, the target's resolved value, read as a quantity.
func (t *devTarget) quantity(v string) (float64, byte, bool) {
	if t.kind == devLiteral {
		return t.q, t.qkind, t.qok
	}
	return parseQuantity(v)
}

func compareQuantity(op string, l, r float64) bool {
	switch op {
	case opEqual, opEqualEqual, opIs:
		return l == r
	case opNotEqual, opNot:
		return l != r
	}
	return order(op, cmpFloat(l, r))
}

// unit is a unit's kind and its size in the kind's base unit.
type unit struct {
	kind  byte
	scale float64
}

// units are those Nomad's device plugins report attributes in.
var units = map[string]unit{
	"B": {'B', 1}, "KB": {'B', 1e3}, "kB": {'B', 1e3}, "KiB": {'B', 1 << 10},
	"MB": {'B', 1e6}, "MiB": {'B', 1 << 20}, "GB": {'B', 1e9}, "GiB": {'B', 1 << 30},
	"TB": {'B', 1e12}, "TiB": {'B', 1 << 40},
	"Hz": {'H', 1}, "kHz": {'H', 1e3}, "KHz": {'H', 1e3}, "MHz": {'H', 1e6}, "GHz": {'H', 1e9},
	"mW": {'W', 1e-3}, "W": {'W', 1}, "kW": {'W', 1e3}, "KW": {'W', 1e3},
}

// parseQuantity reads a number with an optional unit of units; a plain
// number has kind 0.
func parseQuantity(s string) (float64, byte, bool) {
	s = strings.TrimSpace(s)
	end := 0
	for end < len(s) && strings.IndexByte("0123456789.+-", s[end]) >= 0 {
		end++
	}
	if end == 0 {
		return 0, 0, false
	}
	v, err := strconv.ParseFloat(s[:end], 64)
	if err != nil {
		return 0, 0, false
	}
	name := strings.TrimSpace(s[end:])
	if name == "" {
		return v, 0, true
	}
	u, ok := units[name]
	if !ok {
		return 0, 0, false
	}
	return v * u.scale, u.kind, true
}
