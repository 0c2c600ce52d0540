package jobspec

import (
	"regexp"

	"github.com/hashicorp/hcl/v2"

	"github.com/troupe-dev/troupe/messages"
)

// A task's identity blocks (Nomad's WorkloadIdentity): the one without a
// name (or named "default") is the default identity (Task.Identity), the
// others are named (Task.Identities). Nomad's change_mode, change_signal,
// filepath, service_name and extra_claims are refused (hclRefused and
// nomadFields).

// defaultIdentityName is the default identity's name.
const defaultIdentityName = "default"

// MaxIdentities bounds a task's identity blocks.
const MaxIdentities = 16

var (
	identityAttrs = []attrSpec{
		{name: "name", field: "Name"}, {name: "aud", field: "Audience"}, {name: "env", field: "Env"},
		{name: "file", field: "File"}, {name: "ttl", field: "TTL", dur: true},
	}
	identitySchema = schemaOf(identityAttrs)
	// identityName: it names an env variable and a file of the task.
	identityName = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)
)

// identities decodes a task's identity blocks into t.
func (d *hclDecoder) identities(t *messages.Task, blocks hcl.Blocks) {
	for _, b := range blocks {
		id := &messages.TaskIdentity{}
		d.decodeAttrs(d.content(b.Body, identitySchema).Attributes, identityAttrs, id)
		t.Identities = append(t.Identities, id)
	}
	canonIdentities(t)
}

// canonIdentities moves the first unnamed (or "default") identity of
// t.Identities to t.Identity when that is not set, as Nomad does.
func canonIdentities(t *messages.Task) {
	if t.Identity != nil {
		return
	}
	for i, id := range t.Identities {
		if id.GetName() == "" || id.GetName() == defaultIdentityName {
			t.Identity = id
			t.Identities = append(t.Identities[:i:i], t.Identities[i+1:]...)
			return
		}
	}
}

// validateIdentities checks a task's identity blocks: one default
// identity at most, names that can name a file and an env variable, once
// each, no negative ttl.
func validateIdentities(c checker, t *messages.Task) {
	if len(t.Identities) > MaxIdentities {
		c.addf("a task has at most %d identity blocks (it has %d)", MaxIdentities, len(t.Identities))
		return
	}
	if id := t.Identity; id != nil {
		if id.Name != "" && id.Name != defaultIdentityName {
			c.addf("identity: the default identity is named %q or not named (got %s)", defaultIdentityName, shown(id.Name))
		}
		validateIdentity(c.at("identity"), id)
	}
	seen := map[string]bool{}
	for i, id := range t.Identities {
		ic := c.at("identity[%d]", i)
		switch {
		case id == nil:
			ic.addf("must not be null")
			continue
		case id.Name == "" || id.Name == defaultIdentityName:
			ic.addf("a task has one default identity (unnamed or named %q)", defaultIdentityName)
		case !identityName.MatchString(id.Name):
			ic.addf("name %s must be 1-64 letters, digits, '_' or '-'", shown(id.Name))
		case seen[id.Name]:
			ic.addf("name %s is used twice", shown(id.Name))
		}
		seen[id.Name] = true
		validateIdentity(ic, id)
	}
}

func validateIdentity(c checker, id *messages.TaskIdentity) {
	if id.TTL < 0 {
		c.addf("ttl must not be negative")
	}
	for _, a := range id.Audience {
		if p := textProblem(a, c.lim().MaxNameLength); p != "" || a == "" {
			c.addf("aud %s must be a non-empty short string", shown(a))
		}
	}
}
