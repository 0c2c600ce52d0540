package api

import (
	"errors"
	"fmt"
	"net/http"
)

var (
	// ErrNotFound matches (with errors.Is) an *APIError whose status is 404.
	ErrNotFound = errors.New("api: not found")
	// ErrBadAddress is returned by NewClient for an unusable address.
	ErrBadAddress = errors.New("api: bad address")
	// ErrDecode wraps a response body that is not the expected JSON.
	ErrDecode = errors.New("api: cannot decode response")
	// ErrBadSecret is a CSI secret that the X-Nomad-CSI-Secrets header
	// cannot carry (an empty key, a key with "=" or ",", a value with ",").
	ErrBadSecret = errors.New("api: bad CSI secret")
)

// APIError is a non-2xx response.
type APIError struct {
	StatusCode int
	Body       string
}

// Error reads like Nomad's: `Unexpected response code: 400 (reason)`.
func (e *APIError) Error() string {
	return fmt.Sprintf("Unexpected response code: %d (%s)", e.StatusCode, e.Body)
}

// Is makes errors.Is(err, ErrNotFound) true for a 404.
func (e *APIError) Is(target error) bool {
	return target == ErrNotFound && e.StatusCode == http.StatusNotFound
}

// IsNotFound reports whether err is, or wraps, a 404 APIError.
func IsNotFound(err error) bool {
	return errors.Is(err, ErrNotFound)
}
