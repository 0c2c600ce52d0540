package jobspec

import (
	"path/filepath"
	"strconv"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"

	"github.com/troupe-dev/troupe/messages"
	"github.com/troupe-dev/troupe/runtime/driver"
	rtemplate "github.com/troupe-dev/troupe/runtime/template"
)

// Nomad's template defaults (api.Template.Canonicalize).
const (
	defaultTemplateSplay = 5_000_000_000 // 5s
	defaultTemplatePerms = "0644"
	// defaultChangeScriptTimeout is Nomad's change_script timeout.
	defaultChangeScriptTimeout = 5_000_000_000 // 5s
)

// MaxTemplates bounds a task's template blocks, and MaxTemplateSize the
// text of one (its data).
const (
	MaxTemplates    = 64
	MaxTemplateSize = 1 << 20
)

var (
	templateAttrs = []attrSpec{
		{name: "source", field: "SourcePath"}, {name: "destination", field: "DestPath"},
		{name: "data", field: "EmbeddedTmpl"}, {name: "change_mode", field: "ChangeMode"},
		{name: "change_signal", field: "ChangeSignal"}, {name: "splay", field: "Splay", dur: true},
		{name: "perms", field: "Perms"}, {name: "left_delimiter", field: "LeftDelim"},
		{name: "right_delimiter", field: "RightDelim"}, {name: "env", field: "Envvars"},
		{name: "error_on_missing_key", field: "ErrMissingKey"}, {name: "once", field: "Once"},
	}
	changeScriptAttrs = []attrSpec{
		{name: "command", field: "Command"}, {name: "args", field: "Args"},
		{name: "timeout", field: "Timeout", dur: true}, {name: "fail_on_error", field: "FailOnError"},
	}
	// uid and gid are decoded by hand: they are optional numbers.
	templateSchema = func() *hcl.BodySchema {
		s := schemaOf(templateAttrs, blockSpec{name: "change_script"})
		s.Attributes = append(s.Attributes, hcl.AttributeSchema{Name: "uid"}, hcl.AttributeSchema{Name: "gid"})
		return s
	}()
)

func (d *hclDecoder) templates(blocks hcl.Blocks) []*messages.TaskTemplate {
	var out []*messages.TaskTemplate
	for _, b := range blocks {
		tt := &messages.TaskTemplate{}
		c := d.content(b.Body, templateSchema)
		d.decodeAttrs(c.Attributes, templateAttrs, tt)
		tt.Uid = d.optInt32(c.Attributes["uid"])
		tt.Gid = d.optInt32(c.Attributes["gid"])
		if cb := d.single(c, "change_script"); cb != nil {
			tt.ChangeScript = &messages.ChangeScript{}
			d.decodeAttrs(d.content(cb.Body, schemaOf(changeScriptAttrs)).Attributes, changeScriptAttrs, tt.ChangeScript)
		}
		out = append(out, tt)
	}
	return out
}

func (d *hclDecoder) optInt32(a *hcl.Attribute) *int32 {
	if a == nil {
		return nil
	}
	var n int64
	if !d.convert(a, cty.Number, &n) {
		return nil
	}
	v := int32(n)
	return &v
}

// canonTemplates fills Nomad's template defaults.
func canonTemplates(ts []*messages.TaskTemplate) {
	for _, tt := range ts {
		setDefault(&tt.ChangeMode, "restart")
		setDefault(&tt.Perms, defaultTemplatePerms)
		setDefault(&tt.LeftDelim, "{{")
		setDefault(&tt.RightDelim, "}}")
		if tt.Splay == 0 {
			tt.Splay = defaultTemplateSplay
		}
		tt.ChangeSignal = strings.ToUpper(tt.ChangeSignal)
		if cs := tt.ChangeScript; cs != nil && cs.Timeout == 0 {
			cs.Timeout = defaultChangeScriptTimeout
		}
	}
}

// validateTemplates checks a task's templates as Nomad does, and that each
// parses (with the functions runtime/template gives) and stays inside the
// task's directory.
func validateTemplates(c checker, ts []*messages.TaskTemplate) {
	if len(ts) > MaxTemplates {
		c.addf("at most %d templates, got %d", MaxTemplates, len(ts))
		return
	}
	dests := map[string]bool{}
	for i, tt := range ts {
		tc := c.at("template[%d]", i)
		switch {
		case tt.SourcePath == "" && tt.EmbeddedTmpl == "":
			tc.addf("must specify a source path or have an embedded template")
		case tt.SourcePath != "" && tt.EmbeddedTmpl != "":
			tc.addf("source and data are exclusive: set one")
		}
		if len(tt.EmbeddedTmpl) > MaxTemplateSize {
			tc.addf("data is %d bytes, at most %d", len(tt.EmbeddedTmpl), MaxTemplateSize)
		}
		if tt.DestPath == "" {
			tc.addf("must specify a destination for the template")
		} else if escapes(tt.DestPath) {
			tc.addf("destination %s escapes the task directory", shown(tt.DestPath))
		} else if dests[filepath.Join("/task", tt.DestPath)] {
			tc.addf("destination %s is used by another template", shown(tt.DestPath))
		}
		dests[filepath.Join("/task", tt.DestPath)] = true
		if tt.SourcePath != "" && escapes(tt.SourcePath) {
			tc.addf("source %s escapes the task directory", shown(tt.SourcePath))
		}
		switch tt.ChangeMode {
		case "restart", "noop", "":
		case "signal":
			if tt.ChangeSignal == "" {
				tc.addf("must specify a change_signal with change_mode signal")
			} else if _, err := driver.ParseSignal(tt.ChangeSignal); err != nil {
				tc.addf("change_signal %s is not a signal", shown(tt.ChangeSignal))
			}
		case "script":
			switch cs := tt.ChangeScript; {
			case cs == nil:
				tc.addf("must specify change script configuration value when setting change_mode to script")
			case cs.Command == "":
				tc.addf("must specify script path value when change_mode is script")
			case cs.Timeout < 0:
				tc.addf("change_script timeout must not be negative")
			}
		default:
			tc.addf("change_mode %s must be one of restart, signal, noop, script", shown(tt.ChangeMode))
		}
		if tt.Splay < 0 {
			tc.addf("splay must not be negative")
		}
		if p, err := strconv.ParseUint(tt.Perms, 8, 32); tt.Perms != "" && (err != nil || p > 0o7777) {
			tc.addf("perms %s must be an octal file mode such as \"0644\"", shown(tt.Perms))
		}
		if tt.EmbeddedTmpl != "" {
			if err := parseTemplate(tt); err != nil {
				tc.addf("data does not parse: %v", err)
			}
		}
	}
}

// escapes reports whether a path, taken relative to the task directory
// as Nomad takes it (an absolute one too), leaves it or names it.
func escapes(p string) bool {
	j := filepath.Join("/task", p)
	return !strings.HasPrefix(j, "/task/")
}

func parseTemplate(tt *messages.TaskTemplate) error {
	return rtemplate.Parse(tt.EmbeddedTmpl, tt.LeftDelim, tt.RightDelim)
}
