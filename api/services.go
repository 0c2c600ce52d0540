package api

import (
	"net/http"

	"github.com/troupe-dev/troupe/messages"
)

// ServiceRegistrationListStub is one namespace's services in GET
// /v1/services (Nomad's shape).
type ServiceRegistrationListStub struct {
	Namespace string
	Services  []*ServiceRegistrationStub
}

// ServiceRegistrationStub is one service: its name and the union of its
// registrations' tags.
type ServiceRegistrationStub struct {
	ServiceName string
	Tags        []string
}

// AllocCheckStatus is the latest result of one check of an allocation
// (GET /v1/client/allocation/:id/checks answers them keyed by ID, as
// Nomad's AllocCheckStatuses). Mode is "healthiness" or "readiness";
// Status "pending", "success" or "failure"; Timestamp unix seconds.
type AllocCheckStatus struct {
	ID         string
	Check      string
	Group      string
	Mode       string
	Output     string
	Service    string
	Task       string
	Status     string
	StatusCode int
	Timestamp  int64
}

// Services is the /v1/services and /v1/service/:name family.
type Services struct{ c *Client }

// Services returns the service endpoints.
func (c *Client) Services() *Services { return &Services{c: c} }

// List lists the services of the client's namespace ("*": every one) with
// their tags (GET /v1/services).
func (s *Services) List(q *QueryOptions) ([]*ServiceRegistrationListStub, *QueryMeta, error) {
	var out []*ServiceRegistrationListStub
	qm, err := s.c.query("/v1/services", &out, q)
	if err != nil {
		return nil, nil, err
	}
	return out, qm, nil
}

// Get reads the registrations of one service (GET /v1/service/:name).
func (s *Services) Get(name string, q *QueryOptions) ([]*messages.ServiceRegistration, *QueryMeta, error) {
	var out []*messages.ServiceRegistration
	qm, err := s.c.query("/v1/service/"+escape(name), &out, q)
	if err != nil {
		return nil, nil, err
	}
	return out, qm, nil
}

// Delete removes one registration (DELETE /v1/service/:name/:id).
func (s *Services) Delete(name, id string, w *WriteOptions) (*WriteMeta, error) {
	return s.c.write(http.MethodDelete, "/v1/service/"+escape(name)+"/"+escape(id), nil, nil, w)
}

// Checks reads the latest results of an allocation's checks (GET
// /v1/client/allocation/:id/checks).
func (a *Allocations) Checks(allocID string, q *QueryOptions) (map[string]*AllocCheckStatus, error) {
	out := map[string]*AllocCheckStatus{}
	_, err := a.c.query("/v1/client/allocation/"+escape(allocID)+"/checks", &out, q)
	return out, err
}
