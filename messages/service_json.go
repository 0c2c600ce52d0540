package messages

import "encoding/json"

// MarshalJSON writes a header's values as Nomad does: the bare list.
func (h *HeaderValues) MarshalJSON() ([]byte, error) {
	if h == nil || h.Values == nil {
		return []byte("[]"), nil
	}
	return json.Marshal(h.Values)
}

// UnmarshalJSON reads a header's values from the bare list Nomad writes.
func (h *HeaderValues) UnmarshalJSON(b []byte) error {
	var vs []string
	if err := json.Unmarshal(b, &vs); err != nil {
		return err
	}
	h.Values = vs
	return nil
}
