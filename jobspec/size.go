package jobspec

import (
	"fmt"
	"math"
	"math/big"
	"regexp"
	"strings"
)

// sizeUnits are the byte-size suffixes Nomad accepts (go-humanize's
// ParseBytes): SI units are powers of 1000, IEC units (KiB...) powers of
// 1024; case does not matter and the trailing B is optional.
var sizeUnits = map[string]int64{
	"": 1, "b": 1,
	"k": 1e3, "kb": 1e3, "ki": 1 << 10, "kib": 1 << 10,
	"m": 1e6, "mb": 1e6, "mi": 1 << 20, "mib": 1 << 20,
	"g": 1e9, "gb": 1e9, "gi": 1 << 30, "gib": 1 << 30,
	"t": 1e12, "tb": 1e12, "ti": 1 << 40, "tib": 1 << 40,
	"p": 1e15, "pb": 1e15, "pi": 1 << 50, "pib": 1 << 50,
	"e": 1e18, "eb": 1e18, "ei": 1 << 60, "eib": 1 << 60,
}

var sizePattern = regexp.MustCompile(`^([0-9]+(?:\.[0-9]*)?|\.[0-9]+)\s*([A-Za-z]*)$`)

// ParseSize reads a byte size such as "10GiB", "1.5 TB", "200G" or "512"
// (bytes), as Nomad's volume specifications write capacity_min and
// capacity_max. Fractions of a byte are dropped.
func ParseSize(s string) (int64, error) {
	m := sizePattern.FindStringSubmatch(strings.TrimSpace(s))
	if m == nil {
		return 0, fmt.Errorf("%q is not a size; use a number with an optional unit, like \"10GiB\" or \"500MB\"", s)
	}
	unit, ok := sizeUnits[strings.ToLower(m[2])]
	if !ok {
		return 0, fmt.Errorf("%q has an unknown unit %q; use B, KB, MB, GB, TB, PB, EB or KiB, MiB, GiB, TiB, PiB, EiB", s, m[2])
	}
	n, _, err := big.ParseFloat(m[1], 10, 256, big.ToZero)
	if err != nil {
		return 0, fmt.Errorf("%q is not a size: %v", s, err)
	}
	n.Mul(n, new(big.Float).SetInt64(unit))
	if n.Cmp(new(big.Float).SetInt64(math.MaxInt64)) > 0 {
		return 0, fmt.Errorf("%q is too large", s)
	}
	bytes, _ := n.Int64()
	return bytes, nil
}
