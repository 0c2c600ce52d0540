package httpapi

import (
	"reflect"
	"testing"

	"github.com/hashicorp/go-bexpr"
	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/api"
	"github.com/troupe-dev/troupe/messages"
)

// TestFastFilterAnswersAsTheJSONEvaluation: an expression of == and !=
// on top-level string fields keeps the same allocation rows checked on
// the rows themselves as against their JSON; any other is left to the
// JSON evaluation.
func TestFastFilterAnswersAsTheJSONEvaluation(t *testing.T) {
	var stubs []*api.AllocListStub
	for i, a := range []*messages.Allocation{
		{ID: "a1", JobID: "web", NodeID: "n1", ClientStatus: "running", TaskGroup: "g", Name: `web.g[0]`},
		{ID: "a2", JobID: "web", NodeID: "n2", ClientStatus: "failed", TaskGroup: "g"},
		{ID: "a3", JobID: "db", NodeID: "n1", ClientStatus: "running", TaskGroup: "h", Name: `back\slash`},
		{ID: "a4", JobID: "", NodeID: "n2", ClientStatus: "pending"},
	} {
		a.CreateIndex = uint64(i + 1)
		stubs = append(stubs, api.NewAllocListStub(a))
	}
	stubType := reflect.TypeFor[*api.AllocListStub]()
	for _, expr := range []string{
		`JobID == "web"`, `JobID != "web"`, `JobID == ""`, `JobID == "nope"`,
		`JobID == "web" and ClientStatus == "running"`, `NodeID == "n2" or TaskGroup == "h"`,
		`not (NodeID == "n1") and JobID != "db"`, `Name == "back\\slash"`, `Name == "web.g[0]"`,
	} {
		require.NotNil(t, fastFilter(expr, stubType), expr)
		ev, err := bexpr.CreateEvaluator(expr)
		require.NoError(t, err)
		viaJSON, err := filtered(requestWith(listQuery{filter: ev}), stubs)
		require.NoError(t, err)
		fast, err := filtered(requestWith(listQuery{filter: ev, expr: expr}), stubs)
		require.NoError(t, err)
		require.Equal(t, viaJSON, fast, expr)
	}
	for _, expr := range []string{
		`JobVersion == 0`, `JobID contains "we"`, `JobID matches "w.*"`, `TaskStates.t.State == "running"`,
		`"web" in JobID`, `JobID is empty`, `/JobID == "web"`,
	} {
		require.Nil(t, fastFilter(expr, stubType), "%s needs the JSON evaluation", expr)
	}
}
