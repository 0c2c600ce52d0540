package jobspec

import (
	"testing"

	"github.com/stretchr/testify/require"
)

const varsJob = `variable "image" {
  description = "what to run"
}

variable "count" {
  type    = number
  default = 1
}

variable "dcs" {
  type    = list(string)
  default = ["dc1"]
}

job "web" {
  datacenters = var.dcs
  meta {
    image = "img:${var.image}"
  }
  group "g" {
    count = var.count
    task "t" {
      driver = "exec"
      config {
        command = var.image
      }
    }
  }
}
`

func TestParseWithVariables(t *testing.T) {
	tests := []struct {
		name  string
		vars  Variables
		count int32
		dcs   []string
		image string
	}{
		{"flags", Variables{Flags: map[string]string{"image": "/bin/true", "count": "3"}}, 3, []string{"dc1"}, "/bin/true"},
		{"var-file", Variables{File: "image = \"/bin/sh\"\ndcs = [\"a\", \"b\"]\n"}, 1, []string{"a", "b"}, "/bin/sh"},
		{"a flag wins over the var-file", Variables{File: "image = \"f\"\ncount = 2\n", Flags: map[string]string{"image": "x"}}, 2, []string{"dc1"}, "x"},
		{"a string flag is taken literally", Variables{Flags: map[string]string{"image": "[1, 2]"}}, 1, []string{"dc1"}, "[1, 2]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			job, err := ParseWithVariables("job.hcl", []byte(varsJob), tt.vars)
			require.NoError(t, err)
			require.Equal(t, tt.count, job.TaskGroups[0].Count)
			require.Equal(t, tt.dcs, job.Datacenters)
			require.Equal(t, "img:"+tt.image, job.Meta["image"])
			require.Equal(t, tt.image, job.TaskGroups[0].Tasks[0].Config.AsMap()["command"])
		})
	}
}

func TestParseWithVariablesRefuses(t *testing.T) {
	tests := []struct {
		name string
		src  string
		vars Variables
		want string
	}{
		{"unset", varsJob, Variables{}, `Unset variable; Variable "image" has no default`},
		{"undeclared flag", varsJob, Variables{Flags: map[string]string{"image": "a", "nope": "1"}}, `declares no variable "nope"`},
		{"undeclared in var-file", varsJob, Variables{Flags: map[string]string{"image": "a"}, File: "nope = 1\n"}, `Undeclared variable`},
		{"flag of the wrong type", varsJob, Variables{Flags: map[string]string{"image": "a", "count": "many"}}, `-var count="many" is not a valid number`},
		{"var-file of the wrong type", varsJob, Variables{Flags: map[string]string{"image": "a"}, File: "count = [1]\n"}, `Invalid value for variable`},
		{"reference to an undeclared variable", "job \"a\" {\n  region = var.nope\n}\n", Variables{}, `var.nope is not declared`},
		{"duplicate", "variable \"a\" {}\nvariable \"a\" {}\njob \"a\" {}\n", Variables{}, `Duplicate variable block`},
		{"bad type", "variable \"a\" {\n  type = strung\n}\njob \"a\" {}\n", Variables{}, `strung`},
		{"a variable's unknown argument", "variable \"a\" {\n  default = 1\n  sensitive = true\n}\njob \"a\" {}\n", Variables{}, `sensitive`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseWithVariables("job.hcl", []byte(tt.src), tt.vars)
			require.ErrorContains(t, err, tt.want)
		})
	}
}
