package main

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
	"time"
)

// shortIDLen is how much of an ID tables show.
const shortIDLen = 8

// kv is one "Key = Value" line.
type kv struct{ key, value string }

// writeKV writes aligned "Key = Value" lines, as Nomad does.
func writeKV(w io.Writer, pairs []kv) {
	tw := tabwriter.NewWriter(w, 0, 0, 1, ' ', 0)
	for _, p := range pairs {
		fmt.Fprintf(tw, "%s\t= %s\n", p.key, p.value)
	}
	_ = tw.Flush()
}

// writeTable writes an aligned table: the header, then rows, columns
// separated by at least two spaces.
func writeTable(w io.Writer, header []string, rows [][]string) {
	writeIndentedTable(w, "", header, rows)
}

// writeIndentedTable is writeTable with every line prefixed by indent.
func writeIndentedTable(w io.Writer, indent string, header []string, rows [][]string) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, row := range append([][]string{header}, rows...) {
		fmt.Fprintf(tw, "%s%s\n", indent, strings.Join(row, "\t"))
	}
	_ = tw.Flush()
}

// shortID is the first 8 characters of an ID.
func shortID(id string) string {
	if len(id) > shortIDLen {
		return id[:shortIDLen]
	}
	return id
}

// idOrShort is the full ID when verbose, else the short one.
func idOrShort(id string, verbose bool) string {
	if verbose {
		return id
	}
	return shortID(id)
}

// formatTime is unix nanos as RFC 3339 in UTC; "<none>" for 0.
func formatTime(nanos int64) string {
	if nanos == 0 {
		return "<none>"
	}
	return time.Unix(0, nanos).UTC().Format(time.RFC3339)
}

// timeAgo is unix nanos relative to now: "12s ago", "3m4s ago", "2h5m ago",
// "3d4h ago".
func timeAgo(nanos int64) string {
	if nanos == 0 {
		return "<none>"
	}
	d := nowFunc().Sub(time.Unix(0, nanos)).Round(time.Second)
	if d < 0 {
		return "in " + prettyDuration(-d)
	}
	return prettyDuration(d) + " ago"
}

// prettyDuration keeps the two largest units of d.
func prettyDuration(d time.Duration) string {
	days := d / (24 * time.Hour)
	hours := (d % (24 * time.Hour)) / time.Hour
	mins := (d % time.Hour) / time.Minute
	secs := (d % time.Minute) / time.Second
	switch {
	case days > 0:
		return fmt.Sprintf("%dd%dh", days, hours)
	case hours > 0:
		return fmt.Sprintf("%dh%dm", hours, mins)
	case mins > 0:
		return fmt.Sprintf("%dm%ds", mins, secs)
	default:
		return fmt.Sprintf("%ds", secs)
	}
}

// orNone is s, or "<none>" when empty.
func orNone(s string) string {
	if s == "" {
		return "<none>"
	}
	return s
}

// sortedKeys returns a map's keys in order.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// plural is "allocation" or "allocations".
func plural(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}
