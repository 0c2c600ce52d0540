package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/troupe-dev/troupe/messages"
)

// followDeployment follows the deployment an evaluation started until it
// ends, as Nomad's `job run` monitor does: exit 0 when it succeeds, 1 with
// its description when it fails or is cancelled.
func (m *monitor) followDeployment(ctx context.Context, id string) (int, error) {
	m.headline("Monitoring deployment %q", shortID(id))
	var index uint64
	for {
		d, qm, err := m.c.Deployments().Info(id, m.query(ctx, index))
		if err != nil {
			return exitError, m.wrapCtx(ctx, "deployment", err)
		}
		if !d.Active() {
			return m.deploymentDone(d)
		}
		if index, err = m.next(ctx, index, qm.LastIndex); err != nil {
			return exitError, m.wrapCtx(ctx, "deployment", err)
		}
	}
}

func (m *monitor) deploymentDone(d *messages.Deployment) (int, error) {
	mark := "✓"
	if d.Status != messages.DeploymentStatusSuccessful {
		mark = "!"
	}
	fmt.Fprintf(m.out, "  %s Deployment %q %s\n\n", mark, shortID(d.ID), d.Status)
	var b strings.Builder
	writeKV(&b, []kv{{"ID", shortID(d.ID)}, {"Job ID", d.JobID},
		{"Job Version", fmt.Sprint(d.JobVersion)}, {"Status", d.Status}, {"Description", d.StatusDescription}})
	for _, line := range strings.SplitAfter(b.String(), "\n") {
		if line != "" {
			fmt.Fprint(m.out, "    "+line)
		}
	}
	fmt.Fprintln(m.out, "\n    Deployed")
	writeDeploymentGroups(m.out, "    ", d)
	if d.Status == messages.DeploymentStatusSuccessful {
		return exitOK, nil
	}
	return exitError, fmt.Errorf("deployment %s %s: %s", shortID(d.ID), d.Status, d.StatusDescription)
}
