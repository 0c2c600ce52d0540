package main

import (
	"fmt"
	"maps"
	"os"
	"strings"

	"github.com/troupe-dev/troupe/api"
	"github.com/troupe-dev/troupe/messages"
)

// jobVars are the input variables of `job run` and `job plan`: repeated
// -var NAME=VALUE flags and a -var-file.
type jobVars struct {
	flags varFlags
	file  string
}

// varFlags collects repeated -var NAME=VALUE flags.
type varFlags map[string]string

func (v varFlags) String() string { return "" }

func (v varFlags) Set(s string) error {
	k, val, ok := strings.Cut(s, "=")
	if !ok || k == "" {
		return fmt.Errorf("%q is not NAME=VALUE", s)
	}
	v[k] = val
	return nil
}

func jobVarFlags(m *meta) *jobVars {
	v := &jobVars{flags: varFlags{}}
	m.fs.Var(v.flags, "var", "set an input variable of the job file: NAME=VALUE (repeatable)")
	m.fs.StringVar(&v.file, "var-file", "", "a file of input variable values (NAME = value lines)")
	m.interspersed = true // job run FILE -var x=y
	return v
}

// readHCLJob has the agent parse an HCL job file with vars.
func readHCLJob(c *api.Client, src []byte, vars *jobVars) (*messages.Job, *messages.JobSubmission, error) {
	sub := &messages.JobSubmission{Source: string(src), Format: "hcl2"}
	if len(vars.flags) > 0 {
		sub.VariableFlags = maps.Clone(map[string]string(vars.flags))
	}
	if vars.file != "" {
		b, err := os.ReadFile(vars.file)
		if err != nil {
			return nil, nil, fmt.Errorf("%w: -var-file: %v", errBadJobFile, err)
		}
		sub.Variables = string(b)
	}
	job, err := c.Jobs().ParseHCLRequest(&api.JobsParseRequest{JobHCL: sub.Source, Canonicalize: true,
		Variables: sub.Variables, VariableFlags: sub.VariableFlags})
	if err != nil {
		return nil, nil, err
	}
	return job, sub, nil
}
