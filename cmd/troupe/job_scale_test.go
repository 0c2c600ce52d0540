package main

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/api"
	"github.com/troupe-dev/troupe/messages"
)

func TestJobScale(t *testing.T) {
	f := newFakeAPI(t)
	f.evalID = evalID
	f.jobs["web"] = &messages.Job{ID: "web", Type: "service"}
	code, out, errOut := f.runCLI("job", "scale", "-detach", "web", "g", "4")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "Job scale successful")
	require.Contains(t, out, "Evaluation ID: "+evalID)
	calls := f.callsTo("PUT", "/v1/job/web/scale")
	require.Len(t, calls, 1)
	var req api.ScalingRequest
	require.NoError(t, json.Unmarshal([]byte(calls[0].Body), &req))
	require.EqualValues(t, 4, *req.Count)
	require.Equal(t, map[string]string{"Job": "web", "Group": "g"}, req.Target)

	code, _, errOut = f.runCLI("job", "scale", "-detach", "web", "0")
	require.Equal(t, 0, code, errOut)
	req = api.ScalingRequest{}
	require.NoError(t, json.Unmarshal([]byte(f.callsTo("PUT", "/v1/job/web/scale")[1].Body), &req))
	require.EqualValues(t, 0, *req.Count)
	require.NotContains(t, req.Target, "Group", "the server picks the only group")

	for _, args := range [][]string{{"web"}, {"web", "g", "-1"}, {"web", "g", "x"}, {"web", "a", "b", "1"}} {
		code, _, errOut = f.runCLI(append([]string{"job", "scale"}, args...)...)
		require.Equal(t, 1, code, "%v", args)
		require.Contains(t, errOut, "JOB [GROUP] COUNT")
	}
	require.Len(t, f.callsTo("PUT", "/v1/job/web/scale"), 2, "bad arguments send nothing")
}
