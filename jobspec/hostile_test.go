package jobspec

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// groupFile wraps a group body in a job file.
func groupFile(group string) string {
	return "job \"x\" {\n  group \"g\" {\n" + group + "\n  }\n}\n"
}

// TestParseRefusesCrushingShapes: input nested or chained far past any
// real job file is refused with a positioned error that names the limit;
// each of these overflowed hcl's parser stack (a fatal error, not a
// panic) before the check.
func TestParseRefusesCrushingShapes(t *testing.T) {
	const n = 60000 // every file stays under MaxHCLBytes
	cases := map[string]string{
		"lists":          groupFile("count = " + strings.Repeat("[", n) + strings.Repeat("]", n)),
		"parentheses":    groupFile("count = " + strings.Repeat("(", n) + "1" + strings.Repeat(")", n)),
		"objects":        groupFile("meta = " + strings.Repeat("{a = ", n) + "1" + strings.Repeat("}", n)),
		"blocks":         groupFile("task \"t\" {\nconfig {\n" + strings.Repeat("a {\n", n) + strings.Repeat("}\n", n) + "}\n}"),
		"templates":      groupFile("meta { a = " + strings.Repeat(`"${`, n) + "1" + strings.Repeat(`}"`, n) + " }"),
		"if directives":  groupFile(`meta { a = "` + strings.Repeat("%{if true}", n/3) + strings.Repeat("%{endif}", n/3) + `" }`),
		"for directives": groupFile(`meta { a = "` + strings.Repeat("%{for x in [1]}", n/3) + strings.Repeat("%{endfor}", n/3) + `" }`),
		"binary chain":   groupFile("count = 1" + strings.Repeat("+1", 2*n)),
		"unary chain":    groupFile("count = " + strings.Repeat("-", 4*n) + "1"),
		"index chain":    groupFile("count = b" + strings.Repeat("[c]", n)),
		"attr chain":     groupFile("count = b" + strings.Repeat(".c", 2*n)),
		"conditionals":   groupFile("count = " + strings.Repeat("true ? 1 : ", n/10) + "1"),
		"wrapped chain":  groupFile("count = (1\n" + strings.Repeat("+1\n", n) + ")"),
	}
	for name, src := range cases {
		t.Run(name, func(t *testing.T) {
			require.Less(t, len(src), MaxHCLBytes)
			_, err := Parse("deep.hcl", []byte(src))
			require.ErrorIs(t, err, ErrParse)
			require.Contains(t, err.Error(), "job file too complex")
			require.Contains(t, err.Error(), "deep.hcl:")
		})
	}
}

// TestParseBoundsWhatAFileCosts: a file over MaxHCLBytes is refused
// before hcl's lexer runs, and a file with a flood of errors gets a
// message of bounded size.
func TestParseBoundsWhatAFileCosts(t *testing.T) {
	_, err := Parse("big.hcl", []byte(strings.Repeat("#", MaxHCLBytes+1)))
	require.ErrorContains(t, err, "job file too large")
	flood := "job \"x\" {\n" + strings.Repeat("a = 1\n", 80000) + "}\n"
	_, err = Parse("flood.hcl", []byte(flood))
	require.ErrorContains(t, err, "Attribute redefined")
	require.ErrorContains(t, err, "more errors")
	require.Less(t, len(err.Error()), 8192)
}

// TestParseKeepsOrdinaryShapes: the limits leave room for what jobs write.
func TestParseKeepsOrdinaryShapes(t *testing.T) {
	src := groupFile(`count = (1 + 2) * 3 - -1
    task "t" {
      driver = "exec"
      config {
        command = "/bin/sh"
        args    = ["-c", "echo ${NOMAD_ALLOC_ID}", true ? "a" : "b"]
        mount = { a = { b = { c = { d = [[1, [2, [3]]]] } } } }
      }
    }`)
	job, err := Parse("ok.hcl", []byte(src))
	require.NoError(t, err)
	require.EqualValues(t, 10, job.TaskGroups[0].Count)
}

func TestCheckJSON(t *testing.T) {
	cases := []struct{ name, src, says string }{
		{"deep arrays", `{"Job":` + strings.Repeat("[", 100000) + strings.Repeat("]", 100000) + `}`, "nested deeper than 64"},
		{"deep objects", strings.Repeat(`{"a":`, 65) + "1" + strings.Repeat("}", 65), "nested deeper than 64"},
		{"duplicate key", `{"ID":"a","ID":"b"}`, `key "ID" appears twice`},
		{"duplicate nested key", `{"Job":{"TaskGroups":[{"Name":"a","Count":1,"Name":"b"}]}}`, `key "Name" appears twice`},
		{"duplicate escaped key", `{"ID":"a","\u0049D":"b"}`, `key "ID" appears twice`},
		{"invalid utf-8", "{\"ID\":\"a\xffb\"}", "not valid UTF-8"},
		{"lone high surrogate", `{"ID":"a\ud800b"}`, "half a surrogate pair"},
		{"lone low surrogate", `{"ID":"a\udc00b"}`, "half a surrogate pair"},
		{"low surrogate after an escaped backslash", `{"ID":"\\ud800\udc00"}`, "half a surrogate pair"},
		{"keys that differ in case", `{"Job":{"ID":"a","id":"b"}}`, `key "id" appears twice`},
		{"nested keys that differ in case", `{"Job":{"TaskGroups":[{"Name":"a","name":"b"}]}}`, `key "name" appears twice`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := CheckJSON([]byte(c.src))
			require.ErrorIs(t, err, ErrParse)
			require.Contains(t, err.Error(), c.says)
			require.Contains(t, err.Error(), "line 1, column")
			_, err = ParseJSON([]byte(c.src))
			require.ErrorContains(t, err, c.says)
		})
	}
	for _, ok := range []string{
		`{"a":{"a":1},"b":[{"a":1},{"a":2}],"c":"\\ud800 is text","d":"\ud83d\ude00"}`,
		`{"":1,"x":{"":2}}`, `[]`, `"\""`, strings.Repeat("[", 64) + strings.Repeat("]", 64),
		`{"Job":{"Meta":{"rack":"a","Rack":"b"},"TaskGroups":[{"Tasks":[{"Env":{"PATH":"a","path":"b"},"Config":{"args":[{"X":1,"x":2}],"o":{"A":1,"a":2}}}]}]}}`,
		`{"a":"\ud83d\ude00\u00e9\\u0041"}`,
	} {
		require.NoError(t, CheckJSON([]byte(ok)), ok)
	}
}

// TestParseJSONHostile: each finding of the hostile-input review is a
// clear error, never a panic.
func TestParseJSONHostile(t *testing.T) {
	task := `{"Name":"t","Driver":"exec","Config":{"command":"/bin/true"},"Resources":{"CPU":100,"MemoryMB":32}}`
	group := `{"Name":"g","Count":1,"Tasks":[` + task + `]}`
	job := func(extra, groups string) string {
		return `{"Job":{"ID":"j"` + extra + `,"TaskGroups":[` + groups + `]}}`
	}
	withTask := func(field string) string {
		return job("", strings.Replace(group, `"Name":"t"`, `"Name":"t",`+field, 1))
	}
	withGroup := func(field string) string {
		return job("", strings.Replace(group, `"Name":"g"`, `"Name":"g",`+field, 1))
	}
	cases := []struct{ name, src, says string }{
		{"null group", job("", "null"), "group[0] is missing"},
		{"null task", job("", `{"Name":"g","Count":1,"Tasks":[null]}`), "task[0] is missing"},
		{"huge count", job("", strings.Replace(group, `"Count":1`, `"Count":1000000000`, 1)), "job_max_count limit of 50000"},
		{"counts add up", job("", strings.Replace(group, `"Count":1`, `"Count":30000`, 1)+","+strings.NewReplacer(`"Count":1`, `"Count":30000`, `"Name":"g"`, `"Name":"h"`).Replace(group)), "add up to 60000"},
		{"escaping task", withTaskName(group, job, "../../../../tmp/x-escaped-task"), "must not contain / or \\"},
		{"dot-dot task", withTaskName(group, job, ".."), `must not be ".."`},
		{"dot task", withTaskName(group, job, "."), `must not be "."`},
		{"slash group", job("", strings.Replace(group, `"Name":"g"`, `"Name":"a/b"`, 1)), "must not contain / or \\"},
		{"nul task", withTaskName(group, job, `a\u0000b`), "NUL"},
		{"newline task", withTaskName(group, job, `a\nb`), "control characters"},
		{"long task", withTaskName(group, job, strings.Repeat("x", 1<<20)), "at most 128 characters"},
		{"newline id", `{"Job":{"ID":"a\nb","TaskGroups":[` + group + `]}}`, "id must not contain control characters"},
		{"tab id", `{"Job":{"ID":"a\tb","TaskGroups":[` + group + `]}}`, "id must not contain control characters"},
		{"long id", `{"Job":{"ID":"` + strings.Repeat("x", 1<<20) + `","TaskGroups":[` + group + `]}}`, "id must be at most 128"},
		{"long name", job(`,"Name":"`+strings.Repeat("n", 129)+`"`, group), "name must be at most 128"},
		{"empty type", job(`,"Type":""`, group), "job type must not be empty"},
		{"empty name", job(`,"Name":""`, group), "job name must not be empty"},
		{"negative cores", job("", strings.Replace(group, `"MemoryMB":32`, `"MemoryMB":32,"Cores":-1`, 1)), "Resources.Cores -1 is out of range"},
		{"negative disk", withGroup(`"EphemeralDisk":{"SizeMB":-5}`), "EphemeralDisk.SizeMB -5"},
		{"negative shutdown delay", withTask(`"ShutdownDelay":-1`), "ShutdownDelay -1"},
		{"negative update", withGroup(`"Update":{"MinHealthyTime":-1}`), "Update.MinHealthyTime -1"},
		{"negative max_parallel", job(`,"Update":{"MaxParallel":-2}`, group), "Update.MaxParallel -2"},
		{"affinity weight", job(`,"Affinities":[{"LTarget":"a","RTarget":"b","Weight":500}]`, group), "Affinities[0].Weight 500 is out of range"},
		{"spread percent", withGroup(`"Spreads":[{"Attribute":"a","SpreadTarget":[{"Value":"x","Percent":150}]}]`), "SpreadTarget[0].Percent 150"},
		{"env key with =", withTask(`"Env":{"A=B":"c"}`), "key must not contain ="},
		{"meta value nul", job(`,"Meta":{"a":"b\u0000"}`, group), "value must not contain a NUL"},
		{"long meta key", job(`,"Meta":{"`+strings.Repeat("k", 200)+`":"v"}`, group), "key must be at most 128"},
		{"volume name", withGroup(`"Volumes":{"..":{"Type":"host","Source":"s"}}`), `name must not be ".."`},
		{"port label", withGroup(`"Networks":[{"DynamicPorts":[{"Label":"a=b"}]}]`), "label must not contain ="},
		{"unknown kill signal", withTask(`"KillSignal":"SIGFOO"`), `kill_signal "SIGFOO" is not a signal`},
		{"negative mbits", withGroup(`"Networks":[{"MBits":-1}]`), "mbits must not be negative"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			j, err := ParseJSON([]byte(c.src))
			if err == nil {
				Canonicalize(j)
				err = Validate(j)
			}
			require.Error(t, err)
			require.Contains(t, err.Error(), c.says)
			require.Less(t, len(err.Error()), 4096, "the message repeats the input")
		})
	}
	j, err := ParseJSON([]byte(job(`,"Update":{"MaxParallel":1,"Stagger":30000000000},"Affinities":[{"LTarget":"${meta.rack}","RTarget":"r1","Weight":-50}]`, group)))
	require.NoError(t, err, "Nomad's defaults pass")
	Canonicalize(j)
	require.NoError(t, Validate(j))
}

func withTaskName(group string, job func(string, string) string, name string) string {
	return job("", strings.Replace(group, `"Name":"t"`, `"Name":"`+name+`"`, 1))
}

// TestValidateLimitsApplied: a server's own limits replace the defaults.
func TestValidateLimitsApplied(t *testing.T) {
	j := validJob(t)
	j.TaskGroups[0].Volumes, j.TaskGroups[0].Tasks[0].VolumeMounts = nil, nil
	j.TaskGroups[0].Count = 11
	require.NoError(t, Validate(j))
	err := ValidateLimits(j, Limits{JobMaxCount: 10})
	require.ErrorContains(t, err, "count 11 is over the job_max_count limit of 10")
	j.TaskGroups[0].Count = 1
	j.TaskGroups[0].Tasks[0].Name = strings.Repeat("t", 20)
	require.ErrorContains(t, ValidateLimits(j, Limits{MaxNameLength: 16}), "at most 16 characters")
}

func TestParseHCLEmptyTypeOrName(t *testing.T) {
	_, err := Parse("e.hcl", []byte("job \"x\" {\n  type = \"\"\n  group \"g\" {}\n}\n"))
	require.ErrorContains(t, err, "job type must not be empty")
	_, err = Parse("e.hcl", []byte("job \"x\" {\n  name = \"\"\n  group \"g\" {}\n}\n"))
	require.ErrorContains(t, err, "job name must not be empty")
}
