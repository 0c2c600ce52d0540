package jobspec

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/messages"
)

func TestParseNodePool(t *testing.T) {
	tests := []struct {
		name    string
		src     string
		want    *messages.NodePool
		errText string
	}{
		{name: "Nomad's example", src: `node_pool "dev" {
  description = "Nodes for the development environment."
  meta {
    environment = "dev"
    owner       = "sre"
  }
}`, want: &messages.NodePool{Name: "dev", Description: "Nodes for the development environment.",
			Meta: map[string]string{"environment": "dev", "owner": "sre"}}},
		{name: "name only", src: `node_pool "x" {}`, want: &messages.NodePool{Name: "x"}},
		{name: "no block", src: `# nothing`, errText: "Missing node_pool block"},
		{name: "two blocks", src: "node_pool \"a\" {}\nnode_pool \"b\" {}", errText: "Duplicate node_pool block"},
		{name: "no label", src: `node_pool {}`, errText: "name"},
		{name: "scheduler_config", src: "node_pool \"x\" {\n scheduler_config {\n  scheduler_algorithm = \"spread\"\n }\n}",
			errText: "scheduler_config is not supported"},
		{name: "node_identity_ttl", src: "node_pool \"x\" {\n node_identity_ttl = \"1h\"\n}", errText: "node_identity_ttl is not supported"},
		{name: "unknown attribute", src: "node_pool \"x\" {\n colour = \"red\"\n}", errText: `"colour"`},
		{name: "bad description", src: "node_pool \"x\" {\n description = [1]\n}", errText: "x.hcl:2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseNodePool("x.hcl", []byte(tt.src))
			if tt.errText != "" {
				var pe *ParseError
				require.ErrorAs(t, err, &pe)
				require.ErrorContains(t, err, tt.errText)
				return
			}
			require.NoError(t, err)
			requireProto(t, tt.want, got)
		})
	}
}

func TestParseNodePoolJSON(t *testing.T) {
	tests := []struct {
		name    string
		src     string
		want    *messages.NodePool
		errText string
	}{
		{name: "as Nomad's client sends it", src: `{"NodeIdentityTTL":"","Name":"dev","Description":"d","Meta":{"k":"v"},` +
			`"SchedulerConfiguration":null,"CreateIndex":7,"ModifyIndex":9}`,
			want: &messages.NodePool{Name: "dev", Description: "d", Meta: map[string]string{"k": "v"}}},
		{name: "zero TTL", src: `{"Name":"dev","NodeIdentityTTL":0}`, want: &messages.NodePool{Name: "dev"}},
		{name: "scheduler configuration", src: `{"Name":"dev","SchedulerConfiguration":{"SchedulerAlgorithm":"spread"}}`,
			errText: "NodePool.SchedulerConfiguration is not supported"},
		{name: "identity TTL", src: `{"Name":"dev","NodeIdentityTTL":"1h"}`, errText: "NodePool.NodeIdentityTTL is not supported"},
		{name: "duplicate key", src: `{"Name":"a","Name":"b"}`, errText: "Name"},
		{name: "wrong type", src: `{"Name":3}`, errText: "field Name"},
		{name: "not an object", src: `[]`, errText: "cannot"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseNodePoolJSON([]byte(tt.src))
			if tt.errText != "" {
				require.ErrorContains(t, err, tt.errText)
				return
			}
			require.NoError(t, err)
			requireProto(t, tt.want, got)
		})
	}
}

func TestJobNodePool(t *testing.T) {
	job, err := Parse("j.hcl", []byte("job \"web\" {\n node_pool = \"gpu\"\n group \"g\" {\n  task \"t\" {\n   driver = \"exec\"\n  }\n }\n}"))
	require.NoError(t, err)
	require.Equal(t, "gpu", job.NodePool)
	fromJSON, err := ParseJSON([]byte(`{"Job":{"ID":"web","NodePool":"gpu"}}`))
	require.NoError(t, err)
	require.Equal(t, "gpu", fromJSON.NodePool)
	none := &messages.Job{ID: "web"}
	Canonicalize(none)
	require.Equal(t, "default", none.NodePool)
}
