package jobspec

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/stretchr/testify/require"
	"github.com/troupe-dev/troupe/messages"
	"google.golang.org/protobuf/proto"
)

func TestParseCSIPluginBlock(t *testing.T) {
	cases := []struct {
		name string
		body string
		want *messages.CSIPluginConfig
	}{
		{"every field", `csi_plugin {
  id                     = "hostpath"
  type                   = "monolith"
  mount_dir              = "/plugin"
  stage_publish_base_dir = "/local/stage"
  health_timeout         = "1m"
}`, &messages.CSIPluginConfig{ID: "hostpath", Type: "monolith", MountDir: "/plugin",
			StagePublishBaseDir: "/local/stage", HealthTimeout: ns(time.Minute)}},
		{"controller", "csi_plugin {\n id = \"ebs\"\n type = \"controller\"\n}",
			&messages.CSIPluginConfig{ID: "ebs", Type: "controller"}},
		{"node", "csi_plugin {\n id = \"ebs\"\n type = \"node\"\n}",
			&messages.CSIPluginConfig{ID: "ebs", Type: "node"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			job := parseHCL(t, hclJob("", "", tc.body))
			requireProto(t, tc.want, job.TaskGroups[0].Tasks[0].CSIPluginConfig)
		})
	}
	t.Run("absent", func(t *testing.T) {
		job := parseHCL(t, hclJob("", "", ""))
		require.Nil(t, job.TaskGroups[0].Tasks[0].CSIPluginConfig)
	})
}

func TestCanonicalizeCSIPluginDefaults(t *testing.T) {
	cases := []struct {
		name string
		body string
		want *messages.CSIPluginConfig
	}{
		{"defaults", "csi_plugin {\n id = \"p\"\n type = \"node\"\n}",
			&messages.CSIPluginConfig{ID: "p", Type: "node", MountDir: "/csi",
				StagePublishBaseDir: "/local/csi", HealthTimeout: ns(30 * time.Second)}},
		{"explicit kept", "csi_plugin {\n id = \"p\"\n type = \"node\"\n mount_dir = \"/sock\"\n stage_publish_base_dir = \"/stage\"\n health_timeout = \"5s\"\n}",
			&messages.CSIPluginConfig{ID: "p", Type: "node", MountDir: "/sock",
				StagePublishBaseDir: "/stage", HealthTimeout: ns(5 * time.Second)}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			job := canonicalJob(t, "", "", tc.body)
			requireProto(t, tc.want, job.TaskGroups[0].Tasks[0].CSIPluginConfig)
			again := proto.Clone(job).(*messages.Job)
			Canonicalize(again)
			requireProto(t, job, again)
			require.NoError(t, Validate(job))
		})
	}
}

func TestValidateCSIPlugin(t *testing.T) {
	cases := []struct {
		name   string
		mutate func(*messages.CSIPluginConfig)
		want   string // empty: valid
	}{
		{"monolith", func(p *messages.CSIPluginConfig) { p.Type = "monolith" }, ""},
		{"controller", func(p *messages.CSIPluginConfig) { p.Type = "controller" }, ""},
		{"node", func(p *messages.CSIPluginConfig) { p.Type = "node" }, ""},
		{"no id", func(p *messages.CSIPluginConfig) { p.ID = "" }, `group "g": task "t": csi_plugin: id must not be empty`},
		{"slash in id", func(p *messages.CSIPluginConfig) { p.ID = "a/b" }, `group "g": task "t": csi_plugin: id "a/b" must not contain spaces or slashes`},
		{"no type", func(p *messages.CSIPluginConfig) { p.Type = "" }, `group "g": task "t": csi_plugin: type "" must be one of monolith, controller, node`},
		{"bad type", func(p *messages.CSIPluginConfig) { p.Type = "both" }, `group "g": task "t": csi_plugin: type "both" must be one of monolith, controller, node`},
		{"relative mount_dir", func(p *messages.CSIPluginConfig) { p.MountDir = "csi" }, `group "g": task "t": csi_plugin: mount_dir "csi" must be an absolute path`},
		{"empty mount_dir", func(p *messages.CSIPluginConfig) { p.MountDir = "" }, `group "g": task "t": csi_plugin: mount_dir "" must be an absolute path`},
		{"relative stage dir", func(p *messages.CSIPluginConfig) { p.StagePublishBaseDir = "local/csi" }, `group "g": task "t": csi_plugin: stage_publish_base_dir "local/csi" must be an absolute path`},
		{"stage dir in mount_dir", func(p *messages.CSIPluginConfig) { p.StagePublishBaseDir = "/csi/stage" }, `group "g": task "t": csi_plugin: stage_publish_base_dir "/csi/stage" must not be inside mount_dir "/csi"`},
		{"stage dir is mount_dir", func(p *messages.CSIPluginConfig) { p.StagePublishBaseDir = "/csi/" }, `group "g": task "t": csi_plugin: stage_publish_base_dir "/csi/" must not be inside mount_dir "/csi"`},
		{"sibling prefix is fine", func(p *messages.CSIPluginConfig) { p.StagePublishBaseDir = "/csi-stage" }, ""},
		{"negative health_timeout", func(p *messages.CSIPluginConfig) { p.HealthTimeout = -1 }, `group "g": task "t": csi_plugin: health_timeout must not be negative`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			job := canonicalJob(t, "", "", "csi_plugin {\n id = \"hostpath\"\n type = \"monolith\"\n}")
			tc.mutate(job.TaskGroups[0].Tasks[0].CSIPluginConfig)
			err := Validate(job)
			if tc.want == "" {
				require.NoError(t, err)
				return
			}
			var ve *ValidationError
			require.ErrorAs(t, err, &ve)
			require.Contains(t, ve.Problems, tc.want)
		})
	}
}

func TestParseCSIPluginErrorsCarryPosition(t *testing.T) {
	cases := []struct {
		name      string
		body      string
		line, col int
		contains  string
	}{
		{"unknown attribute", "csi_plugin {\n  id = \"p\"\n  socket = \"x\"\n}", 12, 3, `Unsupported argument; An argument named "socket"`},
		{"bad duration", "csi_plugin {\n  health_timeout = \"soon\"\n}", 11, 20, "Invalid duration"},
		{"wrong type", "csi_plugin {\n  id = [\"a\"]\n}", 11, 8, `Inappropriate value for attribute "id"`},
		{"duplicate", "csi_plugin {\n}\ncsi_plugin {\n}", 12, 1, "Duplicate csi_plugin block"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("plugin.hcl", []byte(hclJob("", "", tc.body)))
			var pe *ParseError
			require.ErrorAs(t, err, &pe)
			require.True(t, errors.Is(err, ErrParse))
			require.Equal(t, [2]int{tc.line, tc.col}, [2]int{pe.Line, pe.Column}, err.Error())
			require.Contains(t, err.Error(), "plugin.hcl:")
			require.Contains(t, err.Error(), tc.contains)
		})
	}
}

func TestParseJSONCSIPluginFromNomadClient(t *testing.T) {
	task := api.NewTask("plugin", "exec").SetConfig("command", "/bin/plugin")
	task.CSIPluginConfig = &api.TaskCSIPluginConfig{ID: "hostpath", Type: api.CSIPluginTypeNode,
		MountDir: "/csi", StagePublishBaseDir: "/local/stage", HealthTimeout: 45 * time.Second}
	job := api.NewSystemJob("plugin", "plugin", "global", 50).AddTaskGroup(api.NewTaskGroup("g", 1).AddTask(task))
	body, err := json.Marshal(api.JobRegisterRequest{Job: job})
	require.NoError(t, err)

	got, err := ParseJSON(body)
	require.NoError(t, err)
	want := &messages.CSIPluginConfig{ID: "hostpath", Type: "node", MountDir: "/csi",
		StagePublishBaseDir: "/local/stage", HealthTimeout: ns(45 * time.Second)}
	requireProto(t, want, got.TaskGroups[0].Tasks[0].CSIPluginConfig)

	// And back: EncodeJSON output decodes into Nomad's types.
	out, err := EncodeJSON(got)
	require.NoError(t, err)
	var back api.JobRegisterRequest
	require.NoError(t, json.Unmarshal(out, &back))
	require.Equal(t, task.CSIPluginConfig, back.Job.TaskGroups[0].Tasks[0].CSIPluginConfig)
}
