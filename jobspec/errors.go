package jobspec

import (
	"errors"
	"fmt"
	"strings"
)

// Sentinel errors. Every error returned by this package wraps one of them,
// so callers can classify with errors.Is.
var (
	// ErrParse marks a job file that could not be decoded (syntax, unknown
	// blocks or attributes, wrong value types).
	ErrParse = errors.New("jobspec: parse error")
	// ErrInvalid marks a decoded job that breaks a validation rule.
	ErrInvalid = errors.New("jobspec: invalid job")
	// ErrUnsupported marks a job that sets a Nomad field or block troupe
	// does not implement yet; such errors wrap ErrParse too.
	ErrUnsupported = errors.New("jobspec: not supported yet")
)

// ParseError is a decoding error with the position of its first problem.
// Line and Column are 1-based; they are 0 when the position is unknown.
// Detail says what is wrong; for HCL it is the text of hcl.Diagnostics
// (summary and detail of every error diagnostic, one per line after the
// first, each with its own position).
type ParseError struct {
	Filename string
	Line     int
	Column   int
	Detail   string
}

// Error returns "file:line:col: detail", or "line L, column C: detail"
// when there is no filename (JSON bodies).
func (e *ParseError) Error() string {
	switch {
	case e.Line == 0 && e.Filename == "":
		return e.Detail
	case e.Line == 0:
		return fmt.Sprintf("%s: %s", e.Filename, e.Detail)
	case e.Filename == "":
		return fmt.Sprintf("line %d, column %d: %s", e.Line, e.Column, e.Detail)
	default:
		return fmt.Sprintf("%s:%d:%d: %s", e.Filename, e.Line, e.Column, e.Detail)
	}
}

// Unwrap lets errors.Is(err, ErrParse) match.
func (e *ParseError) Unwrap() error { return ErrParse }

// ValidationError lists every problem Validate found, each naming the
// field path it is about (`group "web": task "server": driver: ...`).
type ValidationError struct {
	Problems []string
}

// Error joins the problems, one per line.
func (e *ValidationError) Error() string {
	return strings.Join(e.Problems, "\n")
}

// Unwrap lets errors.Is(err, ErrInvalid) match.
func (e *ValidationError) Unwrap() error { return ErrInvalid }

// UnsupportedError lists every field of a JSON job that troupe does not
// implement yet, each with its path (`job "x": group "web": task "t":
// Templates is not supported yet`).
type UnsupportedError struct {
	Problems []string
}

// Error joins the problems, one per line.
func (e *UnsupportedError) Error() string {
	return strings.Join(e.Problems, "\n")
}

// Unwrap lets errors.Is match both ErrParse and ErrUnsupported.
func (e *UnsupportedError) Unwrap() []error { return []error{ErrParse, ErrUnsupported} }

// lineCol converts a byte offset into 1-based line and column numbers.
// The column counts bytes, as hcl does.
func lineCol(src []byte, offset int) (line, col int) {
	if offset > len(src) {
		offset = len(src)
	}
	if offset < 0 {
		offset = 0
	}
	line, col = 1, 1
	for _, b := range src[:offset] {
		if b == '\n' {
			line++
			col = 1
			continue
		}
		col++
	}
	return line, col
}
