package membership

import (
	"errors"
	"fmt"
	"strings"
)

// JoinError lists the addresses a Join could not use.
type JoinError struct {
	Tried  int
	Failed []*AddrError
}

func (e *JoinError) Error() string {
	parts := make([]string, len(e.Failed))
	for i, f := range e.Failed {
		parts[i] = f.Error()
	}
	return fmt.Sprintf("%s for %d of %d addresses: %s", ErrJoin, len(e.Failed), e.Tried, strings.Join(parts, "; "))
}

// Unwrap exposes each address's error to errors.Is and errors.As.
func (e *JoinError) Unwrap() []error {
	out := make([]error, len(e.Failed))
	for i, f := range e.Failed {
		out[i] = f
	}
	return out
}

// AddrError is why one address could not be joined. Reason is one of this
// package's refusal sentinels (ErrWrongRegion, ErrDuplicateName,
// ErrDuplicateID, ErrInvalidMeta) when this node refused the cluster it
// reached, nil when the address could not be used (unreachable, timeout).
type AddrError struct {
	Addr   string
	Reason error
	Err    error // memberlist's error
}

func newAddrError(addr string, err error) *AddrError {
	err = flatten(err)
	return &AddrError{Addr: addr, Reason: refusalIn(err), Err: err}
}

func (e *AddrError) Error() string { return e.Addr + ": " + e.Err.Error() }

// Unwrap lets errors.Is match ErrJoin, the refusal reason and the cause.
func (e *AddrError) Unwrap() []error {
	if e.Reason != nil {
		return []error{ErrJoin, e.Reason, e.Err}
	}
	return []error{ErrJoin, e.Err}
}

// refusalIn finds which of this package's refusals caused a memberlist join
// error. memberlist formats the merge delegate's error with %v, which loses
// the error chain but keeps its text, and each refusal's text is unique.
func refusalIn(err error) error {
	msg := err.Error()
	for _, r := range refusals {
		if strings.Contains(msg, r.Error()) {
			return r
		}
	}
	return nil
}

// flatten turns memberlist's one-error multierror into that error, for a
// readable message.
func flatten(err error) error {
	var multi interface{ WrappedErrors() []error }
	if errors.As(err, &multi) {
		if errs := multi.WrappedErrors(); len(errs) == 1 {
			return errs[0]
		}
	}
	return err
}
