package jobspec

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"
	"github.com/stretchr/testify/require"
)

// TestParseRefusesNomadBlocksByName puts every block and argument that
// hclRefused lists, in both forms, into an otherwise valid job file and
// expects an error naming it at its line.
func TestParseRefusesNomadBlocksByName(t *testing.T) {
	const tmpl = "job \"x\" {\n%s  group \"g\" {\n%s    network {\n%s    }\n" +
		"    task \"t\" {\n      driver = \"exec\"\n%s      resources {\n%s      }\n    }\n  }\n}\n"
	order := []*hcl.BodySchema{jobSchema, groupSchema, networkSchema, taskSchema, resourcesSchema}
	for i, schema := range order {
		for _, name := range hclRefused[schema] {
			for _, form := range []string{name + " {\n}", name + " = 1"} {
				t.Run(fmt.Sprintf("%d/%s", i, form), func(t *testing.T) {
					slots := make([]any, len(order))
					for j := range slots {
						slots[j] = ""
					}
					slots[i] = strings.ReplaceAll(form, "\n", " ") + "\n"
					src := fmt.Sprintf(tmpl, slots...)
					job, err := Parse("j.hcl", []byte(src))
					require.Nil(t, job)
					require.True(t, errors.Is(err, ErrParse), "%v", err)
					var pe *ParseError
					require.ErrorAs(t, err, &pe)
					line := 1 + strings.Count(src[:strings.Index(src, slots[i].(string))], "\n")
					require.Equal(t, line, pe.Line, "%v\n%s", err, src)
					require.Contains(t, err.Error(), fmt.Sprintf("%q", name))
					require.Contains(t, err.Error(), "not supported yet")
					require.NotContains(t, err.Error(), "Unsupported", "one error per item, not hcl's too")
				})
			}
		}
	}
}

func TestParseWithoutRefusedBlocksStillParses(t *testing.T) {
	src := "job \"x\" {\n  group \"g\" {\n    network {\n    }\n    task \"t\" {\n      driver = \"exec\"\n" +
		"      resources {\n      }\n    }\n  }\n}\n"
	_, err := Parse("j.hcl", []byte(src))
	require.NoError(t, err)
}
