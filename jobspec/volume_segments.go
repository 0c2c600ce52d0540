package jobspec

import (
	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
)

// segmentsAsAttributes lets a volume specification write a topology's
// segments as Nomad's documentation does, which is HCL 1:
//
//	topology { segments { rack = "R1", zone = "us-east-1a" } }
//	topology { segments { "topology.ebs.csi.aws.com/zone" = "us-east-1a" } }
//
// HCL 2 reads neither (a one-line block holds at most one attribute, and
// a block's attribute names must be identifiers), so every `segments {`
// that begins a body item becomes `segments = {`: an object, which takes
// commas and quoted keys, on one line or several. Lines keep their
// numbers; columns after the insertion on its line move by two. Source
// that does not lex is returned as it is, for the parser to report.
func segmentsAsAttributes(src []byte, filename string) []byte {
	toks, diags := hclsyntax.LexConfig(src, filename, hcl.Pos{Line: 1, Column: 1, Byte: 0})
	if diags.HasErrors() {
		return src
	}
	var out []byte
	last := 0
	for i, tok := range toks {
		if tok.Type != hclsyntax.TokenIdent || string(tok.Bytes) != "segments" || i+1 >= len(toks) ||
			toks[i+1].Type != hclsyntax.TokenOBrace {
			continue
		}
		if i > 0 && toks[i-1].Type != hclsyntax.TokenNewline && toks[i-1].Type != hclsyntax.TokenOBrace {
			continue
		}
		end := tok.Range.End.Byte
		out = append(append(out, src[last:end]...), " ="...)
		last = end
	}
	if out == nil {
		return src
	}
	return append(out, src[last:]...)
}
