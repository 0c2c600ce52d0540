package acl

import (
	"errors"
	"strings"
	"testing"
)

func mustParse(t *testing.T, rules string) *Policy {
	t.Helper()
	p, err := Parse(rules)
	if err != nil {
		t.Fatalf("parse %q: %v", rules, err)
	}
	return p
}

func TestParseRefusesUnknown(t *testing.T) {
	for _, tc := range []struct{ rules, want string }{
		{`namespace "a" { policy = "admin" }`, `unknown policy "admin"`},
		{`namespace "a" { capabilities = ["fly"] }`, `unknown capability "fly"`},
		{"namespace \"a\" {\n variables {\n path \"*\" { capabilities = [\"peek\"] }\n }\n}", `unknown capability "peek"`},
		{`namespace "a" { colour = "red" }`, `colour`},
		{`nodes { policy = "read" }`, `nodes`},
		{`node { policy = "scale" }`, `node: unknown policy "scale"`},
		{`plugin { policy = "write" }`, `plugin: unknown policy "write"`},
		{`host_volume "x" { capabilities = ["mount-all"] }`, `unknown capability "mount-all"`},
		{`namespace "a" {`, `rules.hcl`},
	} {
		t.Run(tc.rules, func(t *testing.T) {
			_, err := Parse(tc.rules)
			if !errors.Is(err, ErrBadPolicy) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want ErrBadPolicy naming %q", err, tc.want)
			}
		})
	}
}

func TestNamespaceOperations(t *testing.T) {
	a := Compile(mustParse(t, `
namespace "default" { policy = "read" }
namespace "prod-*" { policy = "write" }
namespace "prod-secret-*" { policy = "deny" }
namespace "ops" { capabilities = ["read-logs"] }
namespace "*" { capabilities = ["list-jobs"] }
`), mustParse(t, `
namespace "ops" { capabilities = ["alloc-exec"] }
namespace "default" { capabilities = ["submit-job"] }
namespace "frozen" { policy = "write" }
`), mustParse(t, `namespace "frozen" { capabilities = ["deny"] }`))
	for _, tc := range []struct {
		ns, cap string
		want    bool
	}{
		{"default", NsReadJob, true},
		{"default", NsSubmitJob, true}, // merged from the second policy
		{"default", NsAllocExec, false},
		{"prod-web", NsSubmitJob, true},
		{"prod-web", NsReadLogs, true},
		{"prod-secret-db", NsReadJob, false}, // closer glob denies
		{"ops", NsReadLogs, true},
		{"ops", NsAllocExec, true},
		{"ops", NsListJobs, false}, // exact match wins over "*"
		{"other", NsListJobs, true},
		{"other", NsReadJob, false},
		{"frozen", NsReadJob, false}, // deny wins
	} {
		if got := a.AllowNamespaceOperation(tc.ns, tc.cap); got != tc.want {
			t.Errorf("AllowNamespaceOperation(%q, %q) = %v, want %v", tc.ns, tc.cap, got, tc.want)
		}
	}
	if a.AllowNamespace("frozen") || !a.AllowNamespace("other") || !a.AllowNamespace("prod-x") {
		t.Errorf("AllowNamespace: frozen %v other %v prod-x %v", a.AllowNamespace("frozen"), a.AllowNamespace("other"), a.AllowNamespace("prod-x"))
	}
}

func TestPolicyExpansion(t *testing.T) {
	for _, tc := range []struct {
		level string
		allow []string
		deny  []string
	}{
		{"read", []string{NsListJobs, NsReadJob, NsCSIReadVolume}, []string{NsSubmitJob, NsReadLogs, NsScaleJob}},
		{"write", []string{NsSubmitJob, NsReadLogs, NsReadFS, NsAllocExec, NsAllocLifecycle, NsReadJob, NsScaleJob, NsDispatchJob}, []string{NsAllocNodeExec}},
		{"scale", []string{NsScaleJob, NsReadJobScaling}, []string{NsReadJob, NsSubmitJob}},
		{"deny", nil, []string{NsReadJob}},
	} {
		t.Run(tc.level, func(t *testing.T) {
			a := Compile(mustParse(t, `namespace "n" { policy = "`+tc.level+`" }`))
			for _, c := range tc.allow {
				if !a.AllowNamespaceOperation("n", c) {
					t.Errorf("%s does not allow %s", tc.level, c)
				}
			}
			for _, c := range tc.deny {
				if a.AllowNamespaceOperation("n", c) {
					t.Errorf("%s allows %s", tc.level, c)
				}
			}
		})
	}
}

func TestVariableOperations(t *testing.T) {
	a := Compile(mustParse(t, `
namespace "default" {
  variables {
    path "*" { capabilities = ["list"] }
    path "app/*" { capabilities = ["read", "list"] }
    path "app/secret/*" { capabilities = ["deny"] }
    path "app/mine" { capabilities = ["write", "read", "destroy"] }
  }
}
namespace "other" { policy = "write" }
`))
	for _, tc := range []struct {
		ns, path, cap string
		want          bool
	}{
		{"default", "x", VarList, true},
		{"default", "x", VarRead, false},
		{"default", "app/a", VarRead, true},
		{"default", "app/a", VarWrite, false},
		{"default", "app/secret/k", VarRead, false},
		{"default", "app/mine", VarWrite, true},
		{"default", "app/mine", VarList, false}, // exact path wins
		{"other", "x", VarRead, false},          // no variables block
		{"none", "x", VarRead, false},
	} {
		if got := a.AllowVariableOperation(tc.ns, tc.path, tc.cap); got != tc.want {
			t.Errorf("AllowVariableOperation(%q, %q, %q) = %v, want %v", tc.ns, tc.path, tc.cap, got, tc.want)
		}
	}
}

func TestLevels(t *testing.T) {
	a := Compile(mustParse(t, `node { policy = "read" }
agent { policy = "write" }
operator { policy = "write" }
plugin { policy = "list" }`), mustParse(t, `operator { policy = "deny" }
node { policy = "write" }`))
	checks := []struct {
		name      string
		got, want bool
	}{
		{"node read", a.AllowNodeRead(), true},
		{"node write", a.AllowNodeWrite(), true},
		{"agent read", a.AllowAgentRead(), true},
		{"agent write", a.AllowAgentWrite(), true},
		{"operator read", a.AllowOperatorRead(), false},
		{"operator write", a.AllowOperatorWrite(), false},
		{"plugin list", a.AllowPluginList(), true},
		{"plugin read", a.AllowPluginRead(), false},
		{"quota read", a.AllowQuotaRead(), false},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
	var none *ACL
	if none.AllowNodeRead() || none.AllowNamespaceOperation("default", NsReadJob) || Compile().AllowAgentRead() {
		t.Error("an empty ACL allows something")
	}
	if !Management.AllowOperatorWrite() || !Management.AllowVariableOperation("x", "y", VarDestroy) || !Management.IsManagement() {
		t.Error("management refuses something")
	}
}

func TestHostVolumes(t *testing.T) {
	a := Compile(mustParse(t, `host_volume "data-*" { policy = "write" }
host_volume "data-ro" { policy = "read" }`))
	if !a.AllowHostVolumeOperation("data-x", HostVolMountRW) || a.AllowHostVolumeOperation("data-ro", HostVolMountRW) ||
		!a.AllowHostVolumeOperation("data-ro", HostVolMountReadOnly) || a.AllowHostVolumeOperation("logs", HostVolMountReadOnly) {
		t.Error("host volume checks wrong")
	}
}

func TestGlob(t *testing.T) {
	for _, tc := range []struct {
		p, n string
		want bool
	}{
		{"*", "", true}, {"a*", "abc", true}, {"*c", "abc", true}, {"a*c", "abc", true},
		{"a*c", "ab", false}, {"a*b*c", "axbyc", true}, {"a*b*c", "axc", false}, {"abc", "abc", true}, {"ab", "abc", false},
	} {
		if got := Glob(tc.p, tc.n); got != tc.want {
			t.Errorf("Glob(%q, %q) = %v", tc.p, tc.n, got)
		}
	}
}
