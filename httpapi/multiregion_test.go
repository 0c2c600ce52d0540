package httpapi

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/api"
)

// twoRegions is a federation of real API servers over in-memory stores,
// one per region: each server's RegionHandler answers from the other's.
type twoRegions struct {
	servers  map[string]*Server
	backends map[string]*fsmBackend
}

func newTwoRegions() *twoRegions {
	tr := &twoRegions{servers: map[string]*Server{}, backends: map[string]*fsmBackend{}}
	for _, region := range []string{"east", "west"} {
		b := newFSMBackend()
		tr.backends[region] = b
		tr.servers[region] = New(b, nil, Options{Region: region, Federation: tr})
	}
	return tr
}

func (tr *twoRegions) Regions() []string                   { return []string{"east", "west"} }
func (tr *twoRegions) JoinWAN(addrs []string) (int, error) { return 0, nil }
func (tr *twoRegions) RegionHandler(region string) (http.Handler, error) {
	s, ok := tr.servers[region]
	if !ok {
		return nil, fmt.Errorf("%w %q: no server of it is known", ErrNoRegionPath, region)
	}
	return s, nil
}

func (tr *twoRegions) put(t *testing.T, region, body string) *httptest.ResponseRecorder {
	t.Helper()
	rec := httptest.NewRecorder()
	tr.servers[region].ServeHTTP(rec, httptest.NewRequest("PUT", "/v1/jobs", strings.NewReader(body)))
	return rec
}

func multiregionJobJSON(image, regions string) string {
	return `{"Job":{"ID":"web","Type":"service","Datacenters":["dc1"],
	  "Multiregion":{"Regions":[` + regions + `]},
	  "TaskGroups":[{"Name":"g","Count":2,"Tasks":[{"Name":"t","Driver":"exec",
	    "Config":{"command":"/bin/sleep","args":["` + image + `"]}}]}]}}`
}

const eastWest = `{"Name":"east","Count":3,"Datacenters":["east-1"]},{"Name":"west","Meta":{"side":"west"}}`

// TestMultiregionRegistersInEveryRegion: a multiregion job registered in
// one region is registered in both, each with its region's count,
// datacenters and meta, and a new version lands in both with the same
// version number.
func TestMultiregionRegistersInEveryRegion(t *testing.T) {
	tr := newTwoRegions()
	rec := tr.put(t, "west", multiregionJobJSON("60", eastWest))
	require.Equal(t, 200, rec.Code, rec.Body.String())
	for region, want := range map[string]struct {
		count int32
		dcs   []string
		meta  map[string]string
	}{"east": {3, []string{"east-1"}, nil}, "west": {2, []string{"dc1"}, map[string]string{"side": "west"}}} {
		j := tr.backends[region].Store().Snapshot().JobByID("default", "web")
		require.NotNil(t, j, "region %s has no copy", region)
		require.Equal(t, region, j.Region)
		require.Equal(t, want.count, j.TaskGroups[0].Count, region)
		require.Equal(t, want.dcs, j.Datacenters, region)
		require.Equal(t, want.meta, j.Meta, region)
		require.Equal(t, uint64(0), j.Version, region)
		require.NotEmpty(t, tr.backends[region].Store().Snapshot().EvalsByJob("default", "web"), "region %s has no evaluation", region)
	}

	rec = tr.put(t, "east", multiregionJobJSON("61", eastWest))
	require.Equal(t, 200, rec.Code, rec.Body.String())
	for _, region := range []string{"east", "west"} {
		j := tr.backends[region].Store().Snapshot().JobByID("default", "web")
		require.Equal(t, uint64(1), j.Version, region)
	}
}

// TestMultiregionRefusesUnknownRegion: a region that does not exist is a
// 400 naming it, and no region registers anything.
func TestMultiregionRefusesUnknownRegion(t *testing.T) {
	tr := newTwoRegions()
	rec := tr.put(t, "east", multiregionJobJSON("60", `{"Name":"east"},{"Name":"mars"}`))
	require.Equal(t, 400, rec.Code, rec.Body.String())
	require.Contains(t, rec.Body.String(), `multiregion: region "mars" does not exist: known regions are east, west`)
	for _, region := range []string{"east", "west"} {
		require.Nil(t, tr.backends[region].Store().Snapshot().JobByID("default", "web"), region)
	}
}

// TestMultiregionRemoteRefusalKeepsItsCode: a copy the other region
// refuses (an unknown node pool there) answers that region's 400, naming
// the region.
func TestMultiregionRemoteRefusalKeepsItsCode(t *testing.T) {
	tr := newTwoRegions()
	rec := tr.put(t, "east", multiregionJobJSON("60", `{"Name":"east"},{"Name":"west","NodePool":"nope"}`))
	require.Equal(t, 400, rec.Code, rec.Body.String())
	require.Contains(t, rec.Body.String(), `multiregion: region "west"`)
	require.Contains(t, rec.Body.String(), `nope`)
	require.Nil(t, tr.backends["west"].Store().Snapshot().JobByID("default", "web"))
}

// TestMultiregionPlanIsThisRegionsCopy: planning a multiregion job plans
// this region's copy (east's count 3, not the group's 2), and registers nothing anywhere.
func TestMultiregionPlanIsThisRegionsCopy(t *testing.T) {
	tr := newTwoRegions()
	rec := httptest.NewRecorder()
	tr.servers["east"].ServeHTTP(rec, httptest.NewRequest("POST", "/v1/job/web/plan",
		strings.NewReader(multiregionJobJSON("60", eastWest))))
	require.Equal(t, 200, rec.Code, rec.Body.String())
	var out api.JobPlanResponse
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &out))
	// No node here: all 3 placements fail, the first and 2 coalesced.
	require.Equal(t, int32(2), out.FailedTGAllocs["g"].CoalescedFailures, rec.Body.String())
	for _, region := range []string{"east", "west"} {
		require.Nil(t, tr.backends[region].Store().Snapshot().JobByID("default", "web"), region)
	}
}

// TestMultiregionGlobalStop: DELETE ?global=true stops the job in every
// region of its block; without it, only in the region asked.
func TestMultiregionGlobalStop(t *testing.T) {
	tr := newTwoRegions()
	require.Equal(t, 200, tr.put(t, "east", multiregionJobJSON("60", eastWest)).Code)
	stopped := func(region string) bool {
		return tr.backends[region].Store().Snapshot().JobByID("default", "web").GetStop()
	}
	rec := httptest.NewRecorder()
	tr.servers["east"].ServeHTTP(rec, httptest.NewRequest("DELETE", "/v1/job/web", nil))
	require.Equal(t, 200, rec.Code, rec.Body.String())
	require.True(t, stopped("east"))
	require.False(t, stopped("west"), "a plain stop reached west")

	rec = httptest.NewRecorder()
	tr.servers["east"].ServeHTTP(rec, httptest.NewRequest("DELETE", "/v1/job/web?global=true&purge=true", nil))
	require.Equal(t, 200, rec.Code, rec.Body.String())
	for _, region := range []string{"east", "west"} {
		require.Nil(t, tr.backends[region].Store().Snapshot().JobByID("default", "web"), "region %s kept the job", region)
	}
}

// TestMultiregionRefusesEnforceIndex: a check-index registration of a
// multiregion job is refused (the index is one region's), changing nothing.
func TestMultiregionRefusesEnforceIndex(t *testing.T) {
	tr := newTwoRegions()
	body := strings.Replace(multiregionJobJSON("60", eastWest), `{"Job":`, `{"EnforceIndex":true,"JobModifyIndex":0,"Job":`, 1)
	rec := tr.put(t, "east", body)
	require.Equal(t, 400, rec.Code, rec.Body.String())
	require.Contains(t, rec.Body.String(), "EnforceIndex is not supported for a multiregion job yet")
	for _, region := range []string{"east", "west"} {
		require.Nil(t, tr.backends[region].Store().Snapshot().JobByID("default", "web"), region)
	}
}

// TestMultiregionCopiesShareARolloutID: every region's copy of one
// registration carries the same rollout ID, a new registration another;
// a rollout ID in the submitted JSON is not taken.
func TestMultiregionCopiesShareARolloutID(t *testing.T) {
	tr := newTwoRegions()
	rollout := func() (string, string) {
		e := tr.backends["east"].Store().Snapshot().JobByID("default", "web").GetMultiregionRollout()
		w := tr.backends["west"].Store().Snapshot().JobByID("default", "web").GetMultiregionRollout()
		return e, w
	}
	body := strings.Replace(multiregionJobJSON("60", eastWest), `"ID":"web"`, `"ID":"web","MultiregionRollout":"mine"`, 1)
	rec := tr.put(t, "west", body)
	require.Equal(t, 200, rec.Code, rec.Body.String())
	e1, w1 := rollout()
	require.NotEmpty(t, e1)
	require.NotEqual(t, "mine", e1, "the submitter's rollout ID is not taken")
	require.Equal(t, e1, w1, "both regions' copies are one rollout")

	rec = tr.put(t, "east", multiregionJobJSON("61", eastWest))
	require.Equal(t, 200, rec.Code, rec.Body.String())
	e2, w2 := rollout()
	require.Equal(t, e2, w2)
	require.NotEqual(t, e1, e2, "a new registration is a new rollout")
}
