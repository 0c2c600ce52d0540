package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/troupe-dev/troupe/api"
	"github.com/troupe-dev/troupe/messages"
)

// Environment variables naming the namespace of a command's requests when
// -namespace does not: troupe's own first, then Nomad's CLI's.
const (
	namespaceEnv      = "TROUPE_NAMESPACE"
	nomadNamespaceEnv = "NOMAD_NAMESPACE"
	// tokenEnv and nomadTokenEnv hold the ACL token's secret when -token
	// does not.
	tokenEnv      = "TROUPE_TOKEN"
	nomadTokenEnv = "NOMAD_TOKEN"
	// regionEnv and nomadRegionEnv name the region the requests are for
	// (the agent forwards them there) when -region does not.
	regionEnv      = "TROUPE_REGION"
	nomadRegionEnv = "NOMAD_REGION"
)

// meta holds what every command shares: its streams, its flag set with the
// global -address and -namespace flags and, where asked, -json.
type meta struct {
	stdout, stderr io.Writer
	fs             *flag.FlagSet
	address        string
	namespace      string
	token          string
	region         string
	json           bool
	// interspersed lets flags follow the positional arguments.
	interspersed bool
	tls          tlsOpts
}

// newMeta builds the flag set of command name ("job status").
func newMeta(name string, stdout, stderr io.Writer, withJSON bool) *meta {
	m := &meta{stdout: stdout, stderr: stderr}
	m.fs = flag.NewFlagSet("troupe "+name, flag.ContinueOnError)
	m.fs.SetOutput(stderr)
	m.fs.StringVar(&m.address, "address", "", "agent HTTP address (default $TROUPE_ADDR, else "+api.DefaultAddress+")")
	m.fs.StringVar(&m.namespace, "namespace", "", `namespace of the jobs, allocations, evaluations, volumes and variables named `+
		`(default $TROUPE_NAMESPACE, else $NOMAD_NAMESPACE, else "default"; "*" lists every namespace)`)
	m.fs.StringVar(&m.token, "token", "", "the ACL token's secret (default $TROUPE_TOKEN, else $NOMAD_TOKEN)")
	m.fs.StringVar(&m.region, "region", "", "the region the requests are for, forwarded there by the agent (default $TROUPE_REGION, else $NOMAD_REGION, else the agent's)")
	if withJSON {
		m.fs.BoolVar(&m.json, "json", false, "print the API object as JSON")
	}
	m.addTLSFlags()
	return m
}

// parse parses args. It returns the positional args, or ok=false and the
// exit code (0 for -h, 1 for a bad flag).
func (m *meta) parse(args []string) (rest []string, code int, ok bool) {
	if err := m.fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil, 0, false
		}
		return nil, 1, false
	}
	if !m.interspersed {
		return m.fs.Args(), 0, true
	}
	for left := m.fs.Args(); len(left) > 0; left = m.fs.Args() {
		rest = append(rest, left[0])
		if err := m.fs.Parse(left[1:]); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, 0, false
			}
			return nil, 1, false
		}
	}
	return rest, 0, true
}

// usageError reports wrong positional arguments.
func (m *meta) usageError(want string) int {
	fmt.Fprintf(m.stderr, "Error: this command takes %s\nUsage: %s [flags] %s\n", want, m.fs.Name(), want)
	return 1
}

// client builds an API client: -address, else $TROUPE_ADDR, else the
// default address; its requests carry the namespace (nsOf).
func (m *meta) client() (*api.Client, error) {
	addr := m.address
	if addr == "" {
		addr = getenv(api.AddressEnv)
	}
	if addr == "" {
		addr = getenv("NOMAD_ADDR")
	}
	if addr == "" {
		addr = api.DefaultAddress
	}
	hc, _, err := m.httpClient()
	if err != nil {
		return nil, err
	}
	return api.NewClient(&api.Config{Address: addr, Namespace: m.nsOf(), HTTPClient: hc, Token: m.tokenOf(),
		Region: m.regionOf()})
}

// regionOf is the region the command's requests are for: -region, else
// $TROUPE_REGION, else $NOMAD_REGION, else none (the agent's).
func (m *meta) regionOf() string {
	return firstSet(m.region, getenv(regionEnv), getenv(nomadRegionEnv))
}

// firstSet is the first of vals that is not "".
func firstSet(vals ...string) string {
	for _, v := range vals {
		if v != "" {
			return v
		}
	}
	return ""
}

// tokenOf is the ACL token the command sends: -token, else $TROUPE_TOKEN,
// else $NOMAD_TOKEN, else none.
func (m *meta) tokenOf() string {
	for _, t := range []string{m.token, getenv(tokenEnv), getenv(nomadTokenEnv)} {
		if t != "" {
			return t
		}
	}
	return ""
}

// nsOf is the namespace the command's requests name: -namespace, else
// $TROUPE_NAMESPACE, else $NOMAD_NAMESPACE, else none ("default").
func (m *meta) nsOf() string {
	for _, ns := range []string{m.namespace, getenv(namespaceEnv), getenv(nomadNamespaceEnv)} {
		if ns != "" {
			return ns
		}
	}
	return ""
}

// jobNamespace makes a job file's namespace the one its requests name, as
// Nomad's CLI does: a file that names a namespace other than "default"
// wins over -namespace (a parsed file without one reads "default", which
// the flag then replaces).
func jobNamespace(c *api.Client, job *messages.Job) {
	if ns := job.GetNamespace(); ns != "" && ns != "default" {
		c.SetNamespace(ns)
	}
}

// fail prints "Error <what>: <err>" to stderr and returns exit code 1.
func (m *meta) fail(what string, err error) int {
	fmt.Fprintf(m.stderr, "Error %s: %v\n", what, err)
	return 1
}

// printJSON writes v as indented JSON.
func (m *meta) printJSON(v any) int {
	buf, err := json.MarshalIndent(v, "", "    ")
	if err != nil {
		return m.fail("encoding JSON", err)
	}
	fmt.Fprintln(m.stdout, string(buf))
	return 0
}

// parseOne parses args that must leave exactly one positional argument (an
// ID) and makes the API client: the common start of most commands. When ok
// is false the command returns code.
func (m *meta) parseOne(args []string, usage string) (arg string, c *api.Client, code int, ok bool) {
	rest, c, code, ok := m.parseN(args, 1, usage)
	if !ok {
		return "", nil, code, false
	}
	return rest[0], c, 0, true
}

// parseNone is parseOne for a command that takes no positional argument.
func (m *meta) parseNone(args []string) (c *api.Client, code int, ok bool) {
	_, c, code, ok = m.parseN(args, 0, "no arguments")
	return c, code, ok
}

// parseN parses args that must leave n positional arguments and makes the
// API client.
func (m *meta) parseN(args []string, n int, usage string) (rest []string, c *api.Client, code int, ok bool) {
	rest, code, ok = m.parse(args)
	if !ok {
		return nil, nil, code, false
	}
	if len(rest) != n {
		return nil, nil, m.usageError(usage), false
	}
	c, err := m.client()
	if err != nil {
		return nil, nil, m.fail("creating the API client", err), false
	}
	return rest, c, 0, true
}
