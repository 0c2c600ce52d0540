package template

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// memSource is a Source over a map, counting reads.
type memSource struct {
	vars  map[string]*Var // "ns/path"
	reads int
}

func (m *memSource) Get(_ context.Context, ns, path string) (*Var, error) {
	m.reads++
	return m.vars[ns+"/"+path], nil
}

func (m *memSource) List(_ context.Context, ns, prefix string) ([]*Var, error) {
	var out []*Var
	for _, k := range []string{"default/nomad/jobs/web", "default/nomad/jobs/web/db", "other/nomad/jobs/web"} {
		if v, ok := m.vars[k]; ok && strings.HasPrefix(k, ns+"/"+prefix) {
			out = append(out, v)
		}
	}
	return out, nil
}

func source() *memSource {
	return &memSource{vars: map[string]*Var{
		"default/nomad/jobs/web":    {Namespace: "default", Path: "nomad/jobs/web", Items: map[string]string{"user": "ada", "pass": "s3cret"}, ModifyIndex: 7},
		"default/nomad/jobs/web/db": {Namespace: "default", Path: "nomad/jobs/web/db", Items: map[string]string{"url": "pg://x"}},
		"other/nomad/jobs/web":      {Namespace: "other", Path: "nomad/jobs/web", Items: map[string]string{"user": "bob"}},
	}}
}

func render(t *testing.T, text string, mod ...func(*Spec)) (string, error) {
	t.Helper()
	s := Spec{Text: text, Namespace: "default", Env: map[string]string{"NOMAD_ALLOC_ID": "a1"}, Source: source()}
	for _, m := range mod {
		m(&s)
	}
	out, err := Render(context.Background(), s)
	return string(out), err
}

// TestRenderNomadJobTemplates: the template forms of Nomad's docs render
// as Nomad renders them.
func TestRenderNomadJobTemplates(t *testing.T) {
	cases := []struct{ text, want string }{
		{`{{ with nomadVar "nomad/jobs/web" }}user={{ .user }} pass={{ .pass.Value }}{{ end }}`, "user=ada pass=s3cret"},
		{`{{ range $k, $v := nomadVar "nomad/jobs/web" }}{{ $k }}={{ $v }};{{ end }}`, "pass=s3cret;user=ada;"},
		{`{{ with nomadVar "nomad/jobs/web" }}{{ .Keys }} {{ .Values }}{{ end }}`, "[pass user] [s3cret ada]"},
		{`{{ with nomadVar "nomad/jobs/web" }}{{ (index . "user").Metadata.ModifyIndex }}{{ end }}`, "7"},
		{`{{ with nomadVar "nomad/jobs/web@other" }}{{ .user }}{{ end }}`, "bob"},
		{`{{ range nomadVarList "nomad/jobs/web" }}{{ .Path }} {{ end }}`, "nomad/jobs/web nomad/jobs/web/db "},
		{`{{ nomadVarExists "nomad/jobs/web" }} {{ nomadVarExists "nope" }}`, "true false"},
		{`{{ env "NOMAD_ALLOC_ID" }}|{{ env "UNSET" }}`, "a1|"},
		{`{{ "a,b" | split "," | join "-" | toUpper }} {{ "x" | base64Encode }} {{ parseInt " 42" }}`, "A-B eA== 42"},
	}
	for _, c := range cases {
		out, err := render(t, c.text)
		require.NoError(t, err, c.text)
		require.Equal(t, c.want, out, c.text)
	}
}

// TestRenderMissingVariable: a variable that nomadVar reads and that does
// not exist fails the render, naming it, so the first render waits.
func TestRenderMissingVariable(t *testing.T) {
	_, err := render(t, `{{ with nomadVar "nomad/jobs/nope" }}{{ .x }}{{ end }}{{ with nomadVar "nomad/jobs/web" }}{{ .user }}{{ end }}`)
	require.ErrorIs(t, err, ErrMissingVar)
	require.ErrorContains(t, err, "nomad/jobs/nope")
}

// TestRenderOptions: delimiters, missing keys, errors and the output limit.
func TestRenderOptions(t *testing.T) {
	out, err := render(t, `[[ env "NOMAD_ALLOC_ID" ]] {{ x }}`, func(s *Spec) { s.Left, s.Right = "[[", "]]" })
	require.NoError(t, err)
	require.Equal(t, "a1 {{ x }}", out)

	_, err = render(t, `{{ with nomadVar "nomad/jobs/web" }}{{ .nokey }}{{ end }}`, func(s *Spec) { s.ErrMissingKey = true })
	require.ErrorContains(t, err, "nokey")
	out, err = render(t, `{{ with nomadVar "nomad/jobs/web" }}{{ .nokey }}{{ end }}`)
	require.NoError(t, err)
	require.Equal(t, "<no value>", out, "a missing item prints as text/template (and consul-template) print it")

	_, err = render(t, `{{ nosuchfunc }}`)
	require.ErrorContains(t, err, "nosuchfunc")
	_, err = render(t, `{{ with nomadVar "x" }}`)
	require.ErrorContains(t, err, "parse")
	_, err = render(t, `{{ range $i := split "," (printf "%01000d" 0 | replaceAll "0" "0,") }}{{ printf "%09999d" 0 }}{{ end }}`)
	require.ErrorIs(t, err, ErrTooLarge)
	_, err = render(t, `{{ nomadVar "nomad/jobs/web" }}`, func(s *Spec) { s.Source = nil })
	require.ErrorContains(t, err, "reads no variables")
}

// TestParseEnv: env templates' KEY=VALUE lines.
func TestParseEnv(t *testing.T) {
	env, err := ParseEnv([]byte("# c\nA=1\nexport B = two words \nC=\"x\\ny\"\nD='$raw'\n\nE=\n"))
	require.NoError(t, err)
	require.Equal(t, map[string]string{"A": "1", "B": "two words", "C": "x\ny", "D": "$raw", "E": ""}, env)
	for _, bad := range []string{"novalue", "1A=x", "A-B=x", "=x"} {
		_, err := ParseEnv([]byte(bad))
		require.Error(t, err, bad)
	}
}
