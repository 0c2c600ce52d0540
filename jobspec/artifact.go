package jobspec

import (
	"encoding/hex"
	"net/url"
	"path"
	"strings"

	"github.com/hashicorp/hcl/v2"

	"github.com/troupe-dev/troupe/messages"
	"github.com/troupe-dev/troupe/runtime/safepath"
)

// A task's artifact blocks: source, destination, mode, insecure, and the
// options and headers blocks (string maps). chown is refused.
var (
	artifactAttrs = []attrSpec{
		{name: "source", field: "GetterSource"}, {name: "destination", field: "RelativeDest"},
		{name: "mode", field: "GetterMode"}, {name: "insecure", field: "GetterInsecure"},
	}
	artifactSchema = schemaOf(artifactAttrs, blockSpec{name: "options"}, blockSpec{name: "headers"})
)

// artifactModes are go-getter's client modes.
var artifactModes = map[string]bool{"any": true, "file": true, "dir": true}

// checksumBytes is the digest length of each checksum type an artifact's
// checksum option may name.
var checksumBytes = map[string]int{"md5": 16, "sha1": 20, "sha256": 32, "sha512": 64}

func (d *hclDecoder) artifact(b *hcl.Block) *messages.TaskArtifact {
	a := &messages.TaskArtifact{}
	c := d.content(b.Body, artifactSchema)
	d.decodeAttrs(c.Attributes, artifactAttrs, a)
	if ob := d.single(c, "options"); ob != nil {
		a.GetterOptions = d.stringMap(ob)
	}
	if hb := d.single(c, "headers"); hb != nil {
		a.GetterHeaders = d.stringMap(hb)
	}
	return a
}

// canonArtifact fills Nomad's defaults: mode any, destination local/ (in
// mode file, local/<the source's base name>).
func canonArtifact(a *messages.TaskArtifact) {
	setDefault(&a.GetterMode, "any")
	if a.RelativeDest != "" {
		return
	}
	if a.GetterMode != "file" {
		a.RelativeDest = "local/"
		return
	}
	src := a.GetterSource
	if u, err := url.Parse(src); err == nil && u.Path != "" {
		src = u.Path
	}
	a.RelativeDest = path.Join("local", path.Base(src))
}

func validateArtifact(c checker, a *messages.TaskArtifact) {
	if strings.TrimSpace(a.GetterSource) == "" {
		c.addf("source must be set")
	} else if p := textProblem(a.GetterSource, 4096); p != "" {
		c.addf("source %s", p)
	}
	if a.GetterMode != "" && !artifactModes[a.GetterMode] {
		c.addf("mode %s must be any, file or dir", shown(a.GetterMode))
	}
	if _, err := safepath.CleanRel(a.RelativeDest); err != nil {
		c.addf("destination %s escapes the task directory", shown(a.RelativeDest))
	} else if a.GetterMode == "file" && strings.Trim(a.RelativeDest, "/.") == "" {
		c.addf("destination must name a file in mode file")
	}
	checkStringMap(c, "options", a.GetterOptions, c.lim(), false)
	checkStringMap(c, "headers", a.GetterHeaders, c.lim(), false)
	if sum, ok := a.GetterOptions["checksum"]; ok {
		validateChecksum(c.at("options"), sum)
	}
}

// validateChecksum checks a checksum option: "type:hex" with a known type
// and a digest of its length. One with an interpolation is left to the
// client, where it is resolved.
func validateChecksum(c checker, sum string) {
	sum = strings.TrimSpace(sum)
	if strings.Contains(sum, "${") {
		return
	}
	typ, digest, ok := strings.Cut(sum, ":")
	n, known := checksumBytes[typ]
	switch {
	case !ok || typ == "" || digest == "":
		c.addf("checksum %s must be given as \"type:value\"", shown(sum))
	case !known:
		c.addf("checksum type %s is not supported (md5, sha1, sha256 or sha512)", shown(typ))
	default:
		b, err := hex.DecodeString(digest)
		if err != nil || len(b) != n {
			c.addf("checksum %s is not a %s digest (%d hex digits)", shown(digest), typ, 2*n)
		}
	}
}
