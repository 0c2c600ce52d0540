package ui

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"strings"
)

// built is what the handler serves besides the plain assets, made once:
// the bundled script, index.html loading it, and the version naming both
// (a hash of every embedded file).
var built = build(assets)

type builtUI struct {
	version string
	bundle  []byte
	index   []byte
	err     error // index.html or the bundle could not be made
}

func build(fsys fs.FS) builtUI {
	h := sha256.New()
	err := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := fs.ReadFile(fsys, p)
		fmt.Fprintf(h, "%s\x00%d\x00", p, len(data))
		h.Write(data)
		return err
	})
	if err != nil {
		return builtUI{err: fmt.Errorf("ui: reading the assets: %w", err)}
	}
	b := builtUI{version: hex.EncodeToString(h.Sum(nil))[:16]}
	if b.bundle, err = bundle(fsys, "assets/app.js"); err != nil {
		return builtUI{err: err}
	}
	raw, err := fs.ReadFile(fsys, "index.html")
	if err != nil {
		return builtUI{err: fmt.Errorf("ui: index.html: %w", err)}
	}
	b.index, b.err = bundledIndex(string(raw), b.version)
	return b
}

// bundledIndex is index.html loading the bundle instead of the modules,
// and the style sheet from the version's path.
func bundledIndex(index, version string) ([]byte, error) {
	const script = `<script type="module" src="/ui/assets/app.js"></script>`
	const style = `href="/ui/assets/style.css"`
	if !strings.Contains(index, script) || !strings.Contains(index, style) {
		return nil, fmt.Errorf("ui: index.html does not load %s and %s", script, style)
	}
	var out []string
	for _, line := range strings.Split(index, "\n") {
		if strings.Contains(line, `rel="modulepreload"`) || strings.Contains(line, "<!-- modules -->") {
			continue
		}
		line = strings.Replace(line, script, `<script type="module" src="/ui/v/`+version+`/bundle.js"></script>`, 1)
		line = strings.Replace(line, style, `href="/ui/v/`+version+`/assets/style.css"`, 1)
		out = append(out, line)
	}
	return []byte(strings.Join(out, "\n")), nil
}
