package ui

import (
	"bufio"
	"bytes"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"strings"
)

// A page loads its script as one file: bundle joins the embedded ES
// modules, once when the agent starts, so that a browser fetches one
// script instead of sixteen modules (over HTTP/1.1 it fetches at most six
// at a time from a host, and each costs a request on a busy machine).
// There is no build step: the modules stay as they are, and are served
// as they are under /ui/assets/ too.
//
// Each module becomes a function scope that returns its exports, placed
// after the modules it imports (depth first, in import order: the order
// in which the browser would run them), and its imports read those
// scopes. It knows the forms the modules use, one to a line:
//
//	import { a, b as c } from './x.js';
//	import * as m from './x.js';
//	export function|async function|class|const f ...
//
// Any other import or export is an error (TestBundleBuilds), as is an
// import cycle.

var (
	importNamed = regexp.MustCompile(`^import\s*\{([^}]*)\}\s*from\s*'([^']+)';?\s*$`)
	importAll   = regexp.MustCompile(`^import\s+\*\s+as\s+(\w+)\s+from\s+'([^']+)';?\s*$`)
	exportDecl  = regexp.MustCompile(`^export\s+((?:async\s+)?function\*?|class|const)\s+(\w+)`)
	importAs    = regexp.MustCompile(`^(\w+)(?:\s+as\s+(\w+))?$`)
)

type bundler struct {
	fsys  fs.FS
	order []string          // modules, dependencies first
	vars  map[string]string // module -> the variable holding its exports
	state map[string]int    // 1: being visited, 2: done
	out   bytes.Buffer
}

// bundle returns the script that runs entry (a module path in fsys) and
// every module it imports.
func bundle(fsys fs.FS, entry string) ([]byte, error) {
	b := &bundler{fsys: fsys, vars: map[string]string{}, state: map[string]int{}}
	b.out.WriteString("// troupe's web UI: its ES modules joined into one (ui/bundle.go).\n")
	if err := b.visit(entry); err != nil {
		return nil, err
	}
	return b.out.Bytes(), nil
}

func (b *bundler) visit(mod string) error {
	switch b.state[mod] {
	case 1:
		return fmt.Errorf("ui: bundle: import cycle through %s", mod)
	case 2:
		return nil
	}
	b.state[mod] = 1
	src, err := fs.ReadFile(b.fsys, mod)
	if err != nil {
		return fmt.Errorf("ui: bundle: %w", err)
	}
	var body strings.Builder
	var exports []string
	sc := bufio.NewScanner(bytes.NewReader(src))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		out, name, err := b.line(mod, line)
		if err != nil {
			return fmt.Errorf("ui: bundle: %s:%d: %w", mod, n, err)
		}
		if name != "" {
			exports = append(exports, name)
		}
		body.WriteString(out)
		body.WriteByte('\n')
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("ui: bundle: %s: %w", mod, err)
	}
	v := fmt.Sprintf("__m%d", len(b.order))
	b.vars[mod], b.state[mod] = v, 2
	b.order = append(b.order, mod)
	fmt.Fprintf(&b.out, "// %s\nconst %s = (() => {\n%sreturn { %s };\n})();\n", mod, v, body.String(), strings.Join(exports, ", "))
	return nil
}

// line rewrites one line of mod: an import reads the imported module's
// scope (bundled first), an export is a plain declaration whose name is
// returned.
func (b *bundler) line(mod, line string) (string, string, error) {
	if m := exportDecl.FindStringSubmatch(line); m != nil {
		return strings.TrimPrefix(line, "export "), m[2], nil
	}
	if m := importAll.FindStringSubmatch(line); m != nil {
		v, err := b.dep(mod, m[2])
		return fmt.Sprintf("const %s = %s;", m[1], v), "", err
	}
	if m := importNamed.FindStringSubmatch(line); m != nil {
		v, err := b.dep(mod, m[2])
		if err != nil {
			return "", "", err
		}
		var names []string
		for _, spec := range strings.Split(m[1], ",") {
			spec = strings.TrimSpace(spec)
			if spec == "" {
				continue
			}
			p := importAs.FindStringSubmatch(spec)
			if p == nil {
				return "", "", fmt.Errorf("cannot bundle import name %q", spec)
			}
			if p[2] != "" {
				spec = p[1] + ": " + p[2]
			}
			names = append(names, spec)
		}
		return fmt.Sprintf("const { %s } = %s;", strings.Join(names, ", "), v), "", nil
	}
	if t := strings.TrimSpace(line); strings.HasPrefix(t, "import ") || strings.HasPrefix(t, "import{") ||
		strings.HasPrefix(t, "export ") || strings.HasPrefix(t, "export{") || strings.Contains(line, "import(") {
		return "", "", fmt.Errorf("cannot bundle %q", t)
	}
	return line, "", nil
}

// dep bundles the module spec names (relative to mod) and returns the
// variable holding its exports.
func (b *bundler) dep(mod, spec string) (string, error) {
	if !strings.HasPrefix(spec, "./") && !strings.HasPrefix(spec, "../") {
		return "", fmt.Errorf("cannot bundle a non-relative import %q", spec)
	}
	dep := path.Join(path.Dir(mod), spec)
	if err := b.visit(dep); err != nil {
		return "", err
	}
	return b.vars[dep], nil
}
