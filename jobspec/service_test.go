package jobspec

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/messages"
)

const serviceHCL = `
job "web" {
  group "g" {
    network {
      port "http" {}
    }
    service {
      name        = "web"
      port        = "http"
      tags        = ["a", "b"]
      canary_tags = ["c"]
      meta { k = "v" }
      check_restart {
        limit = 3
      }
      check {
        type     = "http"
        path     = "/health"
        interval = "5s"
        timeout  = "2s"
        header { X-Probe = ["1", "2"] }
        check_restart { grace = "10s" }
      }
      check {
        name     = "tcp"
        type     = "tcp"
        interval = "3s"
        timeout  = "1s"
      }
    }
    task "t" {
      driver = "raw_exec"
      config { command = "/bin/true" }
      service {
        port         = "http"
        provider     = "nomad"
        address_mode = "host"
        check {
          type     = "script"
          command  = "/bin/true"
          args     = ["-x"]
          interval = "10s"
          timeout  = "3s"
        }
      }
    }
  }
}
`

func TestServiceHCL(t *testing.T) {
	job, err := Parse("web.hcl", []byte(serviceHCL))
	require.NoError(t, err)
	Canonicalize(job)
	require.NoError(t, Validate(job))
	g := job.TaskGroups[0]
	require.Len(t, g.Services, 1)
	s := g.Services[0]
	require.Equal(t, "web", s.Name)
	require.Equal(t, "http", s.PortLabel)
	require.Equal(t, []string{"a", "b"}, s.Tags)
	require.Equal(t, []string{"c"}, s.CanaryTags)
	require.Equal(t, map[string]string{"k": "v"}, s.Meta)
	require.Equal(t, ServiceProviderNomad, s.Provider)
	require.Equal(t, AddressModeAuto, s.AddressMode)
	require.Len(t, s.Checks, 2)
	hc := s.Checks[0]
	require.Equal(t, `service: "web" check`, hc.Name)
	require.Equal(t, int64(5*time.Second), hc.Interval)
	require.Equal(t, int64(2*time.Second), hc.Timeout)
	require.Equal(t, "GET", hc.Method)
	require.Equal(t, "http", hc.Protocol)
	require.Equal(t, []string{"1", "2"}, hc.Header["X-Probe"].Values)
	require.Equal(t, int32(3), hc.CheckRestart.Limit, "the service's check_restart is merged in")
	require.Equal(t, int64(10*time.Second), hc.CheckRestart.Grace)
	require.Equal(t, int64(time.Second), s.Checks[1].CheckRestart.Grace, "Nomad's default grace")
	ts := g.Tasks[0].Services[0]
	require.Equal(t, "web-g-t", ts.Name, "a task service is named job-group-task")
	require.Equal(t, AddressModeHost, ts.AddressMode)
	require.Equal(t, []string{"-x"}, ts.Checks[0].Args)

	// JSON round trip: the encoder writes Nomad's shape and ParseJSON reads it.
	b, err := EncodeJSON(job)
	require.NoError(t, err)
	require.Contains(t, string(b), `"Header":{"X-Probe":["1","2"]}`)
	back, err := ParseJSON(b)
	require.NoError(t, err)
	Canonicalize(back)
	require.NoError(t, Validate(back))
	require.Equal(t, []string{"1", "2"}, back.TaskGroups[0].Services[0].Checks[0].Header["X-Probe"].Values)
	require.Equal(t, "web-g-t", back.TaskGroups[0].Tasks[0].Services[0].Name)
}

func TestServiceValidation(t *testing.T) {
	base := func(svc string) string {
		return `job "j" {
  group "g" {
    network {
      port "http" {}
    }
    task "t" {
      driver = "raw_exec"
      config { command = "/bin/true" }
    }
    ` + svc + `
  }
}`
	}
	for _, tc := range []struct{ name, svc, want string }{
		{"no interval", `service {
  port = "http"
  check {
    type    = "http"
    path    = "/"
    timeout = "1s"
  }
}`, "missing required value interval"},
		{"no timeout", `service {
  port = "http"
  check {
    type     = "tcp"
    interval = "1s"
  }
}`, "missing required value timeout"},
		{"unknown port", `service { port = "nope" }`, `port label "nope" does not exist in the group's network`},
		{"consul", `service {
  port     = "http"
  provider = "consul"
}`, `provider "consul" is not supported`},
		{"bad type", `service {
  port = "http"
  check {
    type     = "grpc"
    interval = "1s"
    timeout  = "1s"
  }
}`, `type "grpc" must be http, tcp or script`},
		{"http without path", `service {
  port = "http"
  check {
    type     = "http"
    interval = "1s"
    timeout  = "1s"
  }
}`, "http type must have http path"},
		{"group script without task", `service {
  port = "http"
  check {
    type     = "script"
    command  = "/bin/true"
    interval = "1s"
    timeout  = "1s"
  }
}`, "script checks in group services must set a task"},
		{"bad name", `service {
  name = "no_underscores"
  port = "http"
}`, "RFC 1123"},
		{"bad address mode", `service {
  port         = "http"
  address_mode = "driver"
}`, `address_mode "driver" must be auto, host or alloc`},
		{"short interval", `service {
  port = "http"
  check {
    type     = "tcp"
    interval = "100ms"
    timeout  = "1s"
  }
}`, "interval cannot be less than 1s"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			job, err := Parse("j.hcl", []byte(base(tc.svc)))
			require.NoError(t, err)
			Canonicalize(job)
			err = Validate(job)
			var ve *ValidationError
			require.True(t, errors.As(err, &ve), "want a validation error, got %v", err)
			require.Contains(t, err.Error(), tc.want)
			require.Contains(t, err.Error(), `group "g": service`)
		})
	}
}

func TestServiceJSONRefusesConsulAndUnsupported(t *testing.T) {
	for _, tc := range []struct{ name, svc, want string }{
		{"consul", `{"Name": "web", "Provider": "consul"}`, `service provider "consul" is not supported`},
		{"connect", `{"Name": "web", "Connect": {"Native": true}}`, "Connect"},
		{"grpc", `{"Name": "web", "Checks": [{"Type": "grpc", "GRPCService": "x"}]}`, "GRPCService"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := `{"Job": {"ID": "j", "TaskGroups": [{"Name": "g", "Services": [` + tc.svc +
				`], "Tasks": [{"Name": "t", "Driver": "raw_exec", "Config": {"command": "/bin/true"}}]}]}}`
			_, err := ParseJSON([]byte(src))
			require.Error(t, err)
			require.True(t, strings.Contains(err.Error(), tc.want), err.Error())
		})
	}
	job, err := ParseJSON([]byte(`{"Job": {"ID": "j", "TaskGroups": [{"Name": "g",
  "Networks": [{"DynamicPorts": [{"Label": "http"}]}],
  "Services": [{"Name": "web", "PortLabel": "http", "Provider": "nomad", "Cluster": "default",
    "Checks": [{"Type": "tcp", "Interval": 1000000000, "Timeout": 1000000000, "CheckRestart": {"Limit": 2}}]}],
  "Tasks": [{"Name": "t", "Driver": "raw_exec", "Config": {"command": "/bin/true"}}]}]}}`))
	require.NoError(t, err)
	Canonicalize(job)
	require.NoError(t, Validate(job))
	require.Equal(t, int32(2), job.TaskGroups[0].Services[0].Checks[0].CheckRestart.Limit)
	_ = messages.Service{}
}

func TestServiceHCLRefusesConsulOnlyBlocks(t *testing.T) {
	_, err := Parse("j.hcl", []byte(`job "j" {
  group "g" {
    service {
      name = "web"
      connect {
        native = true
      }
      check {
        type         = "grpc"
        grpc_service = "x"
      }
    }
    task "t" {
      driver = "raw_exec"
      config { command = "/bin/true" }
    }
  }
}`))
	require.Error(t, err)
	require.Contains(t, err.Error(), `"connect" block is not supported yet`)
	require.Contains(t, err.Error(), `"grpc_service" argument is not supported yet`)
}
