package api

import "net/http"

// System is the /v1/system family.
type System struct{ c *Client }

// System returns the system endpoints.
func (c *Client) System() *System { return &System{c: c} }

// GarbageCollect runs a forced garbage collection on the leader (PUT
// /v1/system/gc) and returns once what it purged is committed.
func (s *System) GarbageCollect() error {
	_, err := s.c.write(http.MethodPut, "/v1/system/gc", nil, nil, nil)
	return err
}
