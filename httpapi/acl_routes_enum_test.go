package httpapi

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// registeredRoutes reads the package's registration code (every
// X.HandleFunc(pattern, ...) and X.Handle(pattern, ...) outside tests) and
// returns the patterns it registers. A pattern it cannot work out (neither
// a string literal nor loopVar+literal over a literal list of strings) is
// an error naming its place, so that no route escapes the ACL table test.
func registeredRoutes(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	seen := map[string]bool{}
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		loops := map[*ast.Object][]string{}
		ast.Inspect(f, func(n ast.Node) bool {
			if rs, ok := n.(*ast.RangeStmt); ok {
				if id, ok := rs.Value.(*ast.Ident); ok && id.Obj != nil {
					if vals, ok := stringList(rs.X); ok {
						loops[id.Obj] = vals
					}
				}
			}
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok || (sel.Sel.Name != "HandleFunc" && sel.Sel.Name != "Handle") || len(call.Args) != 2 {
				return true
			}
			pats, err := patternsOf(call.Args[0], loops)
			if err != nil {
				t.Errorf("%s: %v", fset.Position(call.Pos()), err)
				return true
			}
			for _, p := range pats {
				seen[p] = true
			}
			return true
		})
	}
	out := make([]string, 0, len(seen))
	for p := range seen {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

func stringList(e ast.Expr) ([]string, bool) {
	cl, ok := e.(*ast.CompositeLit)
	if !ok {
		return nil, false
	}
	var out []string
	for _, el := range cl.Elts {
		lit, ok := el.(*ast.BasicLit)
		if !ok || lit.Kind != token.STRING {
			return nil, false
		}
		s, _ := strconv.Unquote(lit.Value)
		out = append(out, s)
	}
	return out, true
}

func patternsOf(e ast.Expr, loops map[*ast.Object][]string) ([]string, error) {
	switch v := e.(type) {
	case *ast.BasicLit:
		if v.Kind == token.STRING {
			s, _ := strconv.Unquote(v.Value)
			return []string{s}, nil
		}
	case *ast.Ident:
		if vals, ok := loops[v.Obj]; ok && v.Obj != nil {
			return vals, nil
		}
	case *ast.BinaryExpr:
		if v.Op == token.ADD {
			l, err := patternsOf(v.X, loops)
			if err != nil {
				return nil, err
			}
			r, err := patternsOf(v.Y, loops)
			if err != nil {
				return nil, err
			}
			var out []string
			for _, a := range l {
				for _, b := range r {
					out = append(out, a+b)
				}
			}
			return out, nil
		}
	}
	return nil, fmt.Errorf("route pattern %T cannot be read from the source: register it with a string literal", e)
}
