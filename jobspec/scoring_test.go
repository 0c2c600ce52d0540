package jobspec

import (
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/troupe-dev/troupe/messages"
)

const (
	rackSpreadHCL = `spread {
  attribute = "${meta.rack}"
  weight    = 80
  target "r1" {
    percent = 60
  }
  target "r2" {
    percent = 40
  }
}
spread {
  attribute = "${node.datacenter}"
}
`
	affinityHCL = `affinity {
  attribute = "${attr.os.version}"
  operator  = "version"
  value     = ">= 22.04"
  weight    = -30
}
affinity {
  attribute = "${meta.rack}"
  value     = "r1"
}
`
)

var (
	rackSpreads = []*messages.Spread{
		{Attribute: "${meta.rack}", Weight: 80, SpreadTarget: []*messages.SpreadTarget{{Value: "r1", Percent: 60}, {Value: "r2", Percent: 40}}},
		{Attribute: "${node.datacenter}", Weight: 50},
	}
	canonAffinityList = []*messages.Affinity{
		{LTarget: "${attr.os.version}", Operand: "version", RTarget: ">= 22.04", Weight: -30},
		{LTarget: "${meta.rack}", Operand: "=", RTarget: "r1", Weight: 50},
	}
)

func TestParseSpreadsAndAffinities(t *testing.T) {
	cases := []struct {
		name                  string
		jobX, groupX, taskX   string
		jobS, groupS          []*messages.Spread
		jobA, groupA, taskAff []*messages.Affinity
	}{
		{name: "job level", jobX: rackSpreadHCL + affinityHCL, jobS: rackSpreads, jobA: canonAffinityList},
		{name: "group level", groupX: rackSpreadHCL + affinityHCL, groupS: rackSpreads, groupA: canonAffinityList},
		{name: "task level", taskX: affinityHCL, taskAff: canonAffinityList},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			job := canonicalJob(t, tc.jobX, tc.groupX, tc.taskX)
			require.NoError(t, Validate(job))
			g := job.TaskGroups[0]
			for _, p := range []struct{ want, got []*messages.Spread }{{tc.jobS, job.Spreads}, {tc.groupS, g.Spreads}} {
				require.Len(t, p.got, len(p.want))
				for i := range p.want {
					requireProto(t, p.want[i], p.got[i])
				}
			}
			for _, p := range []struct{ want, got []*messages.Affinity }{
				{tc.jobA, job.Affinities}, {tc.groupA, g.Affinities}, {tc.taskAff, g.Tasks[0].Affinities}} {
				require.Len(t, p.got, len(p.want))
				for i := range p.want {
					requireProto(t, p.want[i], p.got[i])
				}
			}
		})
	}
}

func TestParseJSONSpreadsAndAffinities(t *testing.T) {
	src := `{"Job":{"ID":"j","Spreads":[{"Attribute":"${meta.rack}","Weight":80,
  "SpreadTarget":[{"Value":"r1","Percent":60},{"Value":"r2","Percent":40}]},{"Attribute":"${node.datacenter}"}],
  "TaskGroups":[{"Name":"g","Affinities":[{"LTarget":"${attr.os.version}","Operand":"version","RTarget":">= 22.04","Weight":-30},
    {"LTarget":"${meta.rack}","RTarget":"r1"}],
  "Tasks":[{"Name":"t","Driver":"exec","Config":{"command":"/bin/true"},
    "Affinities":[{"LTarget":"${meta.rack}","RTarget":"r1","Weight":50}]}]}]}}`
	job, err := ParseJSON([]byte(src))
	require.NoError(t, err)
	Canonicalize(job)
	require.NoError(t, Validate(job))
	for i := range rackSpreads {
		requireProto(t, rackSpreads[i], job.Spreads[i])
	}
	for i := range canonAffinityList {
		requireProto(t, canonAffinityList[i], job.TaskGroups[0].Affinities[i])
	}
	requireProto(t, canonAffinityList[1], job.TaskGroups[0].Tasks[0].Affinities[0])
}

func TestHCLSpreadBlocksRefused(t *testing.T) {
	cases := []struct {
		name, job, group, task, says string
	}{
		{"spread in a task", "", "", "spread {\n attribute = \"${meta.rack}\"\n}", `Unsupported block type; Blocks of type "spread" are not expected here.`},
		{"unknown spread argument", "spread {\n attribute = \"a\"\n value = \"b\"\n}", "", "", `An argument named "value" is not expected here.`},
		{"target without a value", "", "spread {\n attribute = \"a\"\n target {\n percent = 1\n }\n}", "", "Missing value for target"},
		{"percent not a number", "", "spread {\n attribute = \"a\"\n target \"x\" {\n percent = \"lots\"\n }\n}", "", "a number is required"},
		{"unknown affinity argument", "", "", "affinity {\n attribute = \"a\"\n regexp = \"b\"\n}", `An argument named "regexp" is not expected here.`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("j.hcl", []byte(hclJob(tc.job, tc.group, tc.task)))
			require.ErrorIs(t, err, ErrParse)
			require.ErrorContains(t, err, tc.says)
		})
	}
}

func TestValidateSpreadsAndAffinities(t *testing.T) {
	g := func(j *messages.Job) *messages.TaskGroup { return j.TaskGroups[0] }
	tk := func(j *messages.Job) *messages.Task { return j.TaskGroups[0].Tasks[0] }
	spread := func(attr string, w int32, ts ...*messages.SpreadTarget) []*messages.Spread {
		return []*messages.Spread{{Attribute: attr, Weight: w, SpreadTarget: ts}}
	}
	tgt := func(v string, p int32) *messages.SpreadTarget { return &messages.SpreadTarget{Value: v, Percent: p} }
	aff := func(l, op, r string, w int32) []*messages.Affinity {
		return []*messages.Affinity{{LTarget: l, Operand: op, RTarget: r, Weight: w}}
	}
	cases := []struct {
		name   string
		mutate func(*messages.Job)
		want   string
	}{
		{"spread attribute", func(j *messages.Job) { j.Spreads = spread("", 50) }, "spread[0]: attribute must be set"},
		{"spread weight", func(j *messages.Job) { g(j).Spreads = spread("${meta.rack}", 101) },
			`group "g": spread[0]: weight 101 must be between 1 and 100`},
		{"negative spread weight", func(j *messages.Job) { j.Spreads = spread("${meta.rack}", -1) }, "spread[0]: weight -1 must be between 1 and 100"},
		{"target percent", func(j *messages.Job) { g(j).Spreads = spread("${meta.rack}", 50, tgt("r1", 101)) },
			`group "g": spread[0]: target "r1": percent 101 must be between 0 and 100`},
		{"target percents sum", func(j *messages.Job) { j.Spreads = spread("${meta.rack}", 50, tgt("r1", 60), tgt("r2", 50)) },
			"spread[0]: the target percents add up to 110, over 100"},
		{"target twice", func(j *messages.Job) { j.Spreads = spread("${meta.rack}", 50, tgt("r1", 10), tgt("r1", 10)) },
			`spread[0]: target "r1": value is given more than once`},
		{"nil spread", func(j *messages.Job) { j.Spreads = []*messages.Spread{nil} }, "spread[0]: is missing"},
		{"unknown affinity operator", func(j *messages.Job) { j.Affinities = aff("${meta.rack}", "~", "r1", 50) },
			`affinity[0]: unknown operator "~"`},
		{"distinct operator in an affinity", func(j *messages.Job) { g(j).Affinities = aff("${meta.rack}", "distinct_hosts", "", 50) },
			`group "g": affinity[0]: operator "distinct_hosts" is not allowed in an affinity`},
		{"affinity attribute", func(j *messages.Job) { tk(j).Affinities = aff("", "=", "r1", 50) },
			`group "g": task "t": affinity[0]: attribute must be set for operator "="`},
		{"affinity value", func(j *messages.Job) { j.Affinities = aff("${meta.rack}", "=", "", 50) },
			`affinity[0]: operator "=" requires a value`},
		{"affinity regexp", func(j *messages.Job) { g(j).Affinities = aff("${meta.rack}", "regexp", "(", 50) },
			`group "g": affinity[0]: regexp "(" does not compile`},
		{"affinity weight", func(j *messages.Job) { tk(j).Affinities = aff("${meta.rack}", "=", "r1", -101) },
			`group "g": task "t": affinity[0]: weight -101 must be between -100 and 100 and not 0`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { requireInvalid(t, tc.mutate, tc.want) })
	}
}

func TestCanonicalizeSpreadAndAffinityDefaults(t *testing.T) {
	job := &messages.Job{ID: "j", Spreads: []*messages.Spread{{Attribute: "${meta.rack}"}, nil},
		Affinities: []*messages.Affinity{{LTarget: "${meta.rack}", RTarget: "r1"}, nil},
		TaskGroups: []*messages.TaskGroup{{Name: "g", Spreads: []*messages.Spread{{Attribute: "a", Weight: 5}},
			Affinities: []*messages.Affinity{{LTarget: "a", Operand: "!=", RTarget: "b", Weight: -5}},
			Tasks:      []*messages.Task{{Name: "t", Affinities: []*messages.Affinity{{LTarget: "a", RTarget: "b"}}}}}}}
	Canonicalize(job)
	require.EqualValues(t, 50, job.Spreads[0].Weight)
	require.Equal(t, "=", job.Affinities[0].Operand)
	require.EqualValues(t, 50, job.Affinities[0].Weight)
	g := job.TaskGroups[0]
	require.EqualValues(t, 5, g.Spreads[0].Weight, "given weights are kept")
	require.Equal(t, "!=", g.Affinities[0].Operand)
	require.EqualValues(t, -5, g.Affinities[0].Weight)
	require.EqualValues(t, 50, g.Tasks[0].Affinities[0].Weight)
	require.Equal(t, "=", g.Tasks[0].Affinities[0].Operand)
}
