package scheduler

import (
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/troupe-dev/troupe/messages"
)

func constraintNode() *messages.Node {
	n := testNode("node-id", 4000, 8192)
	n.Name, n.NodeClass = "host-1", "gpu"
	n.Attributes = map[string]string{
		"kernel.name": "linux", "cpu.numcores": "8", "os.version": "22.04",
		"driver.docker.version": "24.0.5",
	}
	n.Meta = map[string]string{"rack": "r1", "tags": "a, b,c"}
	return n
}

func TestConstraintOperands(t *testing.T) {
	cases := []struct {
		l, op, r string
		want     bool
	}{
		{"${attr.kernel.name}", "=", "linux", true},
		{"${attr.kernel.name}", "==", "linux", true},
		{"${attr.kernel.name}", "is", "linux", true},
		{"${attr.kernel.name}", "=", "windows", false},
		{"${attr.missing}", "=", "", false},
		{"${attr.kernel.name}", "!=", "windows", true},
		{"${attr.kernel.name}", "not", "linux", false},
		{"${attr.missing}", "!=", "x", true},
		{"${attr.cpu.numcores}", ">", "4", true},
		{"${attr.cpu.numcores}", ">=", "8", true},
		{"${attr.cpu.numcores}", "<", "10", true}, // numeric, not lexical
		{"${attr.cpu.numcores}", "<=", "7", false},
		{"${attr.os.version}", ">", "21.10", true},
		{"${attr.kernel.name}", ">", "abc", true}, // lexical
		{"${attr.missing}", "<", "10", false},
		{"${attr.kernel.name}", "regexp", "^lin", true},
		{"${attr.kernel.name}", "regexp", "^win", false},
		{"${attr.kernel.name}", "regexp", "(", false},
		{"${attr.driver.docker.version}", "version", ">= 20.10, < 25", true},
		{"${attr.driver.docker.version}", "version", "> 25", false},
		{"${attr.driver.docker.version}", "version", "not a constraint", false},
		{"${attr.kernel.name}", "version", ">= 1.0", false},
		{"${attr.driver.docker.version}", "semver", ">= 24.0.0", true},
		{"${attr.driver.docker.version}", "semver", "< 24.0.0", false},
		{"${meta.tags}", "set_contains", "a,c", true},
		{"${meta.tags}", "set_contains", "a,d", false},
		{"${meta.tags}", "set_contains_all", "b, c", true},
		{"${meta.tags}", "set_contains_any", "d,c", true},
		{"${meta.tags}", "set_contains_any", "d,e", false},
		{"${meta.rack}", "is_set", "", true},
		{"${meta.none}", "is_set", "", false},
		{"${meta.none}", "is_not_set", "", true},
		{"${meta.rack}", "is_not_set", "", false},
		{"${node.unique.id}", "=", "node-id", true},
		{"${node.unique.name}", "=", "host-1", true},
		{"${node.datacenter}", "=", "dc1", true},
		{"${node.class}", "=", "gpu", true},
		{"${node.region}", "=", "global", true},
		{"${node.pool}", "=", "default", true},
		{"${meta.rack}", "=", "r1", true},
		{"${unknown.thing}", "is_set", "", false},
		{"literal", "=", "literal", true},
		{"${attr.kernel.name}", "bogus", "linux", false},
		{"", "distinct_hosts", "", true},
		{"${meta.rack}", "distinct_property", "1", true},
	}
	m, n := newMatcher(), constraintNode()
	for _, tc := range cases {
		c := &messages.Constraint{LTarget: tc.l, Operand: tc.op, RTarget: tc.r}
		t.Run(constraintString(c), func(t *testing.T) {
			require.Equal(t, tc.want, m.checkNode(c, n))
		})
	}
}

func TestConstraintString(t *testing.T) {
	c := &messages.Constraint{LTarget: "${attr.kernel.name}", Operand: "=", RTarget: "linux"}
	require.Equal(t, "${attr.kernel.name} = linux", constraintString(c))
}

func TestDatacenterGlob(t *testing.T) {
	cases := []struct {
		dcs  []string
		dc   string
		want bool
	}{
		{nil, "dc1", true},
		{[]string{"*"}, "anything", true},
		{[]string{"dc1"}, "dc1", true},
		{[]string{"dc1"}, "dc2", false},
		{[]string{"dc*"}, "dc7", true},
		{[]string{"dc*"}, "us-dc1", false},
		{[]string{"*-east"}, "us-east", true},
		{[]string{"us-*-1"}, "us-west-1", true},
		{[]string{"us-*-1"}, "us-west-2", false},
		{[]string{"eu", "us*"}, "us1", true},
	}
	for _, tc := range cases {
		t.Run(tc.dc, func(t *testing.T) {
			require.Equal(t, tc.want, inDatacenters(tc.dcs, tc.dc), "%v", tc.dcs)
		})
	}
}
