package httpapi

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// fakeFederation knows region "eu", answered by an echo of the request.
type fakeFederation struct{ joined []string }

func (f *fakeFederation) Regions() []string { return []string{"eu", "global"} }

func (f *fakeFederation) JoinWAN(addrs []string) (int, error) {
	f.joined = append(f.joined, addrs...)
	return len(addrs), nil
}

func (f *fakeFederation) RegionHandler(region string) (http.Handler, error) {
	if region != "eu" {
		return nil, fmt.Errorf("%w %q: no server of it is known", ErrNoRegionPath, region)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		fmt.Fprintf(w, "eu answers %s %s %s", r.Method, r.URL.RequestURI(), body)
	}), nil
}

func TestForwardRegion(t *testing.T) {
	euJob := `{"Job":{"ID":"web","Region":"eu"}}`
	for _, tc := range []struct {
		name, method, target, body string
		code                       int
		want                       string
	}{
		{"query region", "GET", "/v1/jobs?region=eu", "", 200, "eu answers GET /v1/jobs?region=eu"},
		{"job region", "PUT", "/v1/jobs", euJob, 200, "eu answers PUT /v1/jobs " + euJob},
		{"job region wins", "PUT", "/v1/job/web?region=global", euJob, 200, "eu answers PUT /v1/job/web?region=global " + euJob},
		{"plan", "POST", "/v1/job/web/plan", euJob, 200, "eu answers POST /v1/job/web/plan " + euJob},
		{"unknown region", "GET", "/v1/job/web?region=mars", "", 500, `No path to region "mars"`},
		{"unknown job region", "PUT", "/v1/jobs", `{"Job":{"ID":"web","Region":"mars"}}`, 500, `No path to region "mars"`},
		{"own region stays", "GET", "/v1/regions?region=global", "", 200, `["eu","global"]`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := newFSMBackend()
			rec := httptest.NewRecorder()
			New(b, nil, Options{Federation: &fakeFederation{}}).ServeHTTP(rec,
				httptest.NewRequest(tc.method, tc.target, strings.NewReader(tc.body)))
			require.Equal(t, tc.code, rec.Code, rec.Body.String())
			require.Equal(t, tc.want, strings.TrimSpace(rec.Body.String()))
			require.Nil(t, b.Store().Snapshot().JobByID("default", "web"), "a forwarded request changed this region")
		})
	}
}

func TestRegionsAndJoin(t *testing.T) {
	f := &fakeFederation{}
	s := New(newFSMBackend(), nil, Options{Federation: f})
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, httptest.NewRequest("PUT", "/v1/agent/join?address=10.0.0.1&address=10.0.0.2:4650", nil))
	require.Equal(t, 200, rec.Code, rec.Body.String())
	var out map[string]any
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &out))
	require.Equal(t, map[string]any{"num_joined": 2.0, "error": ""}, out)
	require.Equal(t, []string{"10.0.0.1", "10.0.0.2:4650"}, f.joined)

	rec = httptest.NewRecorder()
	s.ServeHTTP(rec, httptest.NewRequest("PUT", "/v1/agent/join", nil))
	require.Equal(t, 400, rec.Code)
	require.Contains(t, rec.Body.String(), "missing address")

	rec = httptest.NewRecorder()
	New(newFSMBackend(), nil, Options{Region: "eu"}).ServeHTTP(rec, httptest.NewRequest("GET", "/v1/regions", nil))
	require.JSONEq(t, `["eu"]`, rec.Body.String(), "alone, an agent knows its own region")
}
