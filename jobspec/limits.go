package jobspec

// Bounds on the shape of a job file, checked before any recursive parser
// (hashicorp/hcl/v2's, encoding/json's, protojson's) sees the input: a
// parser that recurses once per level dies of a stack overflow, which Go
// cannot recover from, on input nested a few hundred thousand deep. A real
// job file nests about ten levels and writes a handful of operators in an
// expression.
const (
	// MaxNestingDepth is the deepest nesting of blocks, objects, lists,
	// parentheses and templates accepted (HCL and JSON alike).
	MaxNestingDepth = 64
	// MaxExprOperators is the most operators (unary, binary, conditional)
	// one HCL expression may hold: each is a level of recursion when the
	// expression is parsed and evaluated.
	MaxExprOperators = 256
	// MaxHCLBytes bounds an HCL file: hcl's lexer and parser allocate
	// several hundred bytes per byte of input, so a 4 MiB request body of
	// HCL would cost gigabytes. Real job files are a few kilobytes.
	MaxHCLBytes = 512 << 10
	// maxDiagnostics bounds the problems one parse error lists.
	maxDiagnostics = 20
)

// Limits are the bounds a server puts on a job beyond Validate's rules;
// an operator can set them in the agent's configuration. The zero value
// of a field means its default.
type Limits struct {
	// JobMaxCount bounds the allocations a job asks for: the sum of its
	// groups' counts (Nomad's job_max_count, 50,000 by default).
	JobMaxCount int
	// MaxNameLength bounds job IDs and names, group, task, volume and
	// device names (128 characters by default).
	MaxNameLength int
	// MaxMetaKeyLength and MaxMetaValueLength bound the keys and values of
	// meta and env maps (128 and 64 KiB by default).
	MaxMetaKeyLength   int
	MaxMetaValueLength int
	// MaxMetaEntries bounds the entries of one meta or env map (1,024).
	MaxMetaEntries int
}

// Default limits.
const (
	DefaultJobMaxCount        = 50000
	DefaultMaxNameLength      = 128
	DefaultMaxMetaKeyLength   = 128
	DefaultMaxMetaValueLength = 64 << 10
	DefaultMaxMetaEntries     = 1024
)

// WithDefaults returns l with every unset field at its default.
func (l Limits) WithDefaults() Limits {
	set := func(v *int, def int) {
		if *v <= 0 {
			*v = def
		}
	}
	set(&l.JobMaxCount, DefaultJobMaxCount)
	set(&l.MaxNameLength, DefaultMaxNameLength)
	set(&l.MaxMetaKeyLength, DefaultMaxMetaKeyLength)
	set(&l.MaxMetaValueLength, DefaultMaxMetaValueLength)
	set(&l.MaxMetaEntries, DefaultMaxMetaEntries)
	return l
}
