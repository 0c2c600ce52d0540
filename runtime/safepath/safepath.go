package safepath

import (
	"fmt"
	"path/filepath"
	"strings"
)

// MaxName is the longest name CheckName accepts, in bytes: Linux's NAME_MAX.
const MaxName = 255

// quoteMax is how much of a refused name an error message quotes.
const quoteMax = 64

// CheckName returns nil when name can be used as one path element: not
// empty, not "." or "..", without '/' or NUL, and at most MaxName bytes
// (which the kernel would refuse anyway). Otherwise the error
// wraps ErrUnsafeName and names the kind ("task", "allocation ID") and the
// name (its start, for a long one).
func CheckName(kind, name string) error {
	if why := unsafeReason(name); why != "" {
		return fmt.Errorf("%w: %s %s: %s", ErrUnsafeName, kind, Quote(name), why)
	}
	return nil
}

func unsafeReason(name string) string {
	switch {
	case name == "":
		return "empty"
	case name == "." || name == "..":
		return "not a plain name"
	case len(name) > MaxName:
		return fmt.Sprintf("%d bytes long, at most %d", len(name), MaxName)
	case strings.ContainsRune(name, filepath.Separator):
		return "contains a path separator"
	case strings.ContainsRune(name, 0):
		return "contains a NUL byte"
	}
	return ""
}

// Quote quotes name for a message, cut to its first bytes when long.
func Quote(name string) string {
	if len(name) <= quoteMax {
		return fmt.Sprintf("%q", name)
	}
	return fmt.Sprintf("%q... (%d bytes)", name[:quoteMax], len(name))
}

// Join joins names, each checked by CheckName, under base, and makes sure
// the result lies beneath base.
func Join(base string, names ...string) (string, error) {
	for _, n := range names {
		if err := CheckName("path element", n); err != nil {
			return "", err
		}
	}
	p := filepath.Join(append([]string{base}, names...)...)
	if _, err := Rel(base, p); err != nil {
		return "", err
	}
	return p, nil
}

// Rel returns path relative to base ("." for base itself); the error wraps
// ErrOutside when path does not lie beneath base.
func Rel(base, path string) (string, error) {
	rel, err := filepath.Rel(base, path)
	if err != nil || !filepath.IsLocal(rel) {
		return "", fmt.Errorf("%w: %s is not beneath %s", ErrOutside, Quote(path), base)
	}
	return rel, nil
}

// Within reports whether path lies beneath base (or is base).
func Within(base, path string) bool {
	_, err := Rel(base, path)
	return err == nil
}
