package scheduler

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/troupe-dev/troupe/messages"
)

func TestDistinctPropertyLimits(t *testing.T) {
	prop := func(limit string) []*messages.Constraint {
		return []*messages.Constraint{{LTarget: "${meta.rack}", Operand: opDistinctProperty, RTarget: limit}}
	}
	cases := []struct {
		name     string
		job      []*messages.Constraint
		group    []*messages.Constraint
		counts   []int    // per group: web, then api
		existing []string // racks already running one web alloc
		noRack   int      // nodes without meta.rack, besides 3 in each of r0 and r1
		placed   int
		perRack  int // the most allocs of one group in one rack
		jobRack  int // the most allocs of the job in one rack
	}{
		{"default limit 1", nil, prop(""), []int{3}, nil, 0, 2, 1, 1},
		{"limit 2", nil, prop("2"), []int{5}, nil, 0, 4, 2, 2},
		{"limit 3 fits all", nil, prop("3"), []int{5}, nil, 0, 5, 3, 3},
		{"existing allocs count", nil, prop("2"), []int{4}, []string{"r0", "r0"}, 0, 2, 2, 2},
		{"a node without the property is filtered", nil, prop("1"), []int{4}, nil, 3, 2, 1, 1},
		{"group level: each group on its own", nil, prop("1"), []int{2, 2}, nil, 0, 4, 1, 2},
		{"job level: across the groups", prop("1"), nil, []int{2, 2}, nil, 0, 2, 1, 1},
		{"job level with a limit", prop("2"), nil, []int{2, 2}, nil, 0, 4, 2, 2},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			nodes := racks(3, "r0", "r1")
			for i := range tc.noRack {
				nodes = append(nodes, rackNode(fmt.Sprint("none-", i), ""))
			}
			job := testJob("web", jobTypeService, int32(tc.counts[0]))
			job.Constraints = tc.job
			job.TaskGroups[0].Constraints = tc.group
			if len(tc.counts) > 1 {
				api := testJob("web", jobTypeService, int32(tc.counts[1])).TaskGroups[0]
				api.Name, api.Constraints = "api", tc.group
				job.TaskGroups = append(job.TaskGroups, api)
			}
			s := newMemSnapshot(nodes, job)
			for i, rack := range tc.existing {
				s.AddAlloc(testAlloc(job, fmt.Sprintf("%s-%d", rack, i), uint32(100+i)))
			}
			job.TaskGroups[0].Count += int32(len(tc.existing))
			plan := mustProcess(t, s, testEval(job), 1)
			require.Len(t, plan.Place, tc.placed)
			rack := map[string]string{}
			for _, n := range nodes {
				rack[n.ID] = n.Meta["rack"]
			}
			byGroup, byJob := map[string]int{}, map[string]int{}
			for _, a := range s.AllocsByJob("default", "web") {
				byGroup[a.TaskGroup+"/"+rack[a.NodeID]]++
				byJob[rack[a.NodeID]]++
			}
			for _, a := range plan.Place {
				require.NotEmpty(t, rack[a.NodeID], "placed on a node without the property")
				byGroup[a.TaskGroup+"/"+rack[a.NodeID]]++
				byJob[rack[a.NodeID]]++
			}
			require.Equal(t, tc.perRack, maxOf(byGroup), "per group and rack: %v", byGroup)
			require.Equal(t, tc.jobRack, maxOf(byJob), "per rack: %v", byJob)
			want := sum(tc.counts) - tc.placed
			if want > 0 {
				queued := int32(0)
				for _, q := range plan.EvalUpdate.QueuedAllocations {
					queued += q
				}
				require.Equal(t, int32(want), queued)
				for _, m := range plan.EvalUpdate.FailedTGAllocs {
					require.Contains(t, m.ConstraintFiltered, "distinct_property: ${meta.rack}")
				}
			}
		})
	}
}

func maxOf(m map[string]int) int {
	best := 0
	for _, v := range m {
		best = max(best, v)
	}
	return best
}
