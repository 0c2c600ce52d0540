package artifact

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	getter "github.com/hashicorp/go-getter/v2"

	"github.com/troupe-dev/troupe/runtime/safepath"
)

// Modes of an artifact (go-getter's client modes).
const (
	ModeAny  = "any"
	ModeFile = "file"
	ModeDir  = "dir"
)

// DefaultDestination is where an artifact goes when none is given.
const DefaultDestination = "local/"

// Artifact is one artifact block of a task, with its interpolations done.
type Artifact struct {
	Source      string
	Destination string // relative to the task dir; "" is DefaultDestination
	Mode        string // any (""), file or dir
	Options     map[string]string
	Headers     map[string]string
	Insecure    bool // skip TLS verification (Nomad's insecure)
}

// Target is where an artifact goes.
type Target struct {
	// TaskDir is the task's directory: destinations are relative to it,
	// and relative local sources too.
	TaskDir string
	// AllocDir is the allocation's directory: a local source must resolve
	// beneath it. Empty: no local sources.
	AllocDir string
}

// Limits bound one fetch.
type Limits struct {
	// Timeout bounds one artifact's whole fetch (download, git clone,
	// unpacking).
	Timeout time.Duration
	// HTTPReadTimeout bounds an HTTP request and the read of its body.
	HTTPReadTimeout time.Duration
	// HTTPMaxBytes bounds an HTTP response body.
	HTTPMaxBytes int64
	// GitTimeout bounds each git command.
	GitTimeout time.Duration
	// DecompressionFileCount bounds the files an archive unpacks to;
	// DecompressionSize the bytes.
	DecompressionFileCount int
	DecompressionSize      int64
}

// DefaultLimits are Nomad's client defaults for artifacts, with one
// overall bound on a fetch: 30 minutes for a read or a git command and
// for the fetch, 100 GB of body or unpacked bytes, 4096 unpacked files.
func DefaultLimits() Limits {
	return Limits{
		Timeout: 30 * time.Minute, HTTPReadTimeout: 30 * time.Minute, HTTPMaxBytes: 100e9,
		GitTimeout: 30 * time.Minute, DecompressionFileCount: 4096, DecompressionSize: 100e9,
	}
}

// Fetcher fetches artifacts. The zero value uses DefaultLimits; a zero
// field of Limits takes its default.
type Fetcher struct {
	Limits Limits
}

func (f *Fetcher) limits() Limits {
	l, d := f.Limits, DefaultLimits()
	if l.Timeout <= 0 {
		l.Timeout = d.Timeout
	}
	if l.HTTPReadTimeout <= 0 {
		l.HTTPReadTimeout = d.HTTPReadTimeout
	}
	if l.HTTPMaxBytes <= 0 {
		l.HTTPMaxBytes = d.HTTPMaxBytes
	}
	if l.GitTimeout <= 0 {
		l.GitTimeout = d.GitTimeout
	}
	if l.DecompressionFileCount <= 0 {
		l.DecompressionFileCount = d.DecompressionFileCount
	}
	if l.DecompressionSize <= 0 {
		l.DecompressionSize = d.DecompressionSize
	}
	return l
}

// FetchAll fetches the artifacts in order; the first failure ends it.
func (f *Fetcher) FetchAll(ctx context.Context, t Target, arts []Artifact) error {
	for _, a := range arts {
		if err := f.Fetch(ctx, t, a); err != nil {
			return err
		}
	}
	return nil
}

// Fetch fetches one artifact into t (see the package doc).
func (f *Fetcher) Fetch(ctx context.Context, t Target, a Artifact) error {
	if strings.TrimSpace(a.Source) == "" {
		return ErrNoSource
	}
	mode, err := clientMode(a.Mode)
	if err != nil {
		return err
	}
	dest := a.Destination
	if dest == "" {
		dest = DefaultDestination
	}
	rel, err := safepath.CleanRel(dest)
	if err != nil {
		return fmt.Errorf("%w: %q", ErrDestinationEscapes, a.Destination)
	}
	if mode == getter.ModeFile && rel == "." {
		return fmt.Errorf("%w: mode file needs a file as destination, not the task directory", ErrFetch)
	}
	lim := f.limits()
	ctx, cancel := context.WithTimeout(ctx, lim.Timeout)
	defer cancel()

	tmp, err := os.MkdirTemp(t.TaskDir, ".artifact-")
	if err != nil {
		return fmt.Errorf("%w: %v", ErrFetch, err)
	}
	defer os.RemoveAll(tmp)
	got := filepath.Join(tmp, "got")
	c := &getter.Client{
		DisableSymlinks: true,
		Getters:         getters(lim, a.Headers, t.AllocDir, a.Insecure),
		Decompressors:   getter.LimitedDecompressors(lim.DecompressionFileCount, lim.DecompressionSize),
	}
	req := &getter.Request{Src: sourceURL(a.Source, a.Options), Dst: got, Pwd: t.TaskDir, GetMode: mode, Copy: true}
	if _, err := c.Get(ctx, req); err != nil {
		return fetchError(ctx, a.Source, err)
	}
	if err := place(t.TaskDir, filepath.Join(filepath.Base(tmp), "got"), rel); err != nil {
		return fmt.Errorf("%w: placing %s in %s: %w", ErrFetch, redact(a.Source), dest, err)
	}
	return nil
}

func clientMode(m string) (getter.Mode, error) {
	switch m {
	case "", ModeAny:
		return getter.ModeAny, nil
	case ModeFile:
		return getter.ModeFile, nil
	case ModeDir:
		return getter.ModeDir, nil
	}
	return 0, fmt.Errorf("%w: %q", ErrBadMode, m)
}

// sourceURL adds the options to the source as go-getter's query
// parameters, in key order.
func sourceURL(src string, opts map[string]string) string {
	if len(opts) == 0 {
		return src
	}
	keys := make([]string, 0, len(opts))
	for k := range opts {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	q := make([]string, 0, len(keys))
	for _, k := range keys {
		q = append(q, url.QueryEscape(k)+"="+url.QueryEscape(opts[k]))
	}
	sep := "?"
	if strings.Contains(src, "?") {
		sep = "&"
	}
	return src + sep + strings.Join(q, "&")
}

// fetchError says why a fetch failed, on one line.
func fetchError(ctx context.Context, src string, err error) error {
	var ce *getter.ChecksumError
	switch {
	case errors.As(err, &ce):
		return fmt.Errorf("%w for %s: expected %x, got %x", ErrChecksumMismatch, redact(src), ce.Expected, ce.Actual)
	case errors.Is(err, ErrSourceOutside), errors.Is(err, ErrUnsupportedSource):
		return fmt.Errorf("fetching %s: %w", redact(src), err)
	case ctx.Err() != nil && errors.Is(ctx.Err(), context.DeadlineExceeded):
		return fmt.Errorf("%w: fetching %s: timed out: %s", ErrFetch, redact(src), oneLine(err))
	}
	return fmt.Errorf("%w: fetching %s: %s", ErrFetch, redact(src), oneLine(err))
}

func oneLine(err error) string {
	return strings.Join(strings.Fields(err.Error()), " ")
}

// redact hides a password in the source's URL.
func redact(src string) string {
	u, err := url.Parse(src)
	if err != nil || u.User == nil {
		return fmt.Sprintf("%q", src)
	}
	return fmt.Sprintf("%q", u.Redacted())
}
