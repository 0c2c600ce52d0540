package jobspec

import (
	"fmt"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
)

// exprFrame is one open bracket of checkHCLShape's walk: the operators
// seen in the expression that is being written inside it.
type exprFrame struct {
	open hclsyntax.TokenType
	ops  int
}

// checkHCLShape bounds the nesting and the operator chains of an HCL file
// from its tokens (hcl's lexer is a state machine, not a recursive
// parser), so that a file crafted to nest 100,000 deep or to chain a
// million operators is refused with a positioned error instead of
// overflowing the parser's stack.
func checkHCLShape(filename string, src []byte) *ParseError {
	if len(src) > MaxHCLBytes {
		return &ParseError{Filename: filename, Detail: fmt.Sprintf("job file too large: %d bytes, over troupe's limit of %d for HCL (hcl's parser needs hundreds of times the file's size in memory)", len(src), MaxHCLBytes)}
	}
	tokens, _ := hclsyntax.LexConfig(src, filename, hcl.Pos{Line: 1, Column: 1})
	stack := []exprFrame{{open: hclsyntax.TokenNil}}
	// directives counts the open %{if} and %{for} of templates: each nests
	// the rest of its template one level deeper until %{endif}/%{endfor}.
	directives := 0
	for i, tok := range tokens {
		top := &stack[len(stack)-1]
		if tok.Type == hclsyntax.TokenIdent && i > 0 && tokens[i-1].Type == hclsyntax.TokenTemplateControl {
			switch string(tok.Bytes) {
			case "if", "for":
				if directives++; len(stack)+directives > MaxNestingDepth {
					return shapeError(filename, tok, fmt.Sprintf("nested deeper than %d levels (template directives)", MaxNestingDepth))
				}
			case "endif", "endfor":
				directives = max(directives-1, 0)
			}
			continue
		}
		switch tok.Type {
		case hclsyntax.TokenOBrack, hclsyntax.TokenDot:
			// An index or attribute access of a value nests the expression
			// one level (a[x][y]... is parsed and evaluated recursively).
			if i > 0 && endsValue(tokens[i-1].Type) {
				if top.ops++; top.ops > MaxExprOperators {
					return shapeError(filename, tok, fmt.Sprintf("an expression with more than %d operators, indexes and attribute accesses", MaxExprOperators))
				}
			}
			if tok.Type == hclsyntax.TokenDot {
				continue
			}
			if len(stack)+directives > MaxNestingDepth {
				return shapeError(filename, tok, fmt.Sprintf("nested deeper than %d levels (blocks, objects, lists, parentheses and templates)", MaxNestingDepth))
			}
			stack = append(stack, exprFrame{open: tok.Type})
		case hclsyntax.TokenOBrace, hclsyntax.TokenOParen,
			hclsyntax.TokenTemplateInterp, hclsyntax.TokenTemplateControl,
			hclsyntax.TokenOQuote, hclsyntax.TokenOHeredoc:
			if len(stack)+directives > MaxNestingDepth {
				return shapeError(filename, tok, fmt.Sprintf("nested deeper than %d levels (blocks, objects, lists, parentheses and templates)", MaxNestingDepth))
			}
			stack = append(stack, exprFrame{open: tok.Type})
		case hclsyntax.TokenCBrace, hclsyntax.TokenCBrack, hclsyntax.TokenCParen,
			hclsyntax.TokenTemplateSeqEnd, hclsyntax.TokenCQuote, hclsyntax.TokenCHeredoc:
			if len(stack) > 1 {
				stack = stack[:len(stack)-1]
			}
		case hclsyntax.TokenNewline:
			// Newlines end an expression in a body or an object, not inside
			// parentheses or brackets, where hcl ignores them.
			if top.open == hclsyntax.TokenNil || top.open == hclsyntax.TokenOBrace {
				top.ops = 0
			}
		case hclsyntax.TokenComma, hclsyntax.TokenEqual:
			top.ops = 0
		default:
			if !isOperator(tok.Type) {
				continue
			}
			if top.ops++; top.ops > MaxExprOperators {
				return shapeError(filename, tok, fmt.Sprintf("an expression with more than %d operators", MaxExprOperators))
			}
		}
	}
	return nil
}

// endsValue reports whether a token of type t can end a value, so that a
// "[" or "." after it indexes or reads an attribute of that value.
func endsValue(t hclsyntax.TokenType) bool {
	switch t {
	case hclsyntax.TokenIdent, hclsyntax.TokenNumberLit, hclsyntax.TokenCBrack,
		hclsyntax.TokenCParen, hclsyntax.TokenCBrace, hclsyntax.TokenCQuote, hclsyntax.TokenStar:
		return true
	}
	return false
}

func isOperator(t hclsyntax.TokenType) bool {
	switch t {
	case hclsyntax.TokenPlus, hclsyntax.TokenMinus, hclsyntax.TokenStar, hclsyntax.TokenSlash,
		hclsyntax.TokenPercent, hclsyntax.TokenAnd, hclsyntax.TokenOr, hclsyntax.TokenBang,
		hclsyntax.TokenEqualOp, hclsyntax.TokenNotEqual, hclsyntax.TokenLessThan,
		hclsyntax.TokenLessThanEq, hclsyntax.TokenGreaterThan, hclsyntax.TokenGreaterThanEq,
		hclsyntax.TokenQuestion, hclsyntax.TokenEllipsis:
		return true
	}
	return false
}

func shapeError(filename string, tok hclsyntax.Token, what string) *ParseError {
	return &ParseError{Filename: filename, Line: tok.Range.Start.Line, Column: tok.Range.Start.Column,
		Detail: "job file too complex: " + what + " is over troupe's limit"}
}
