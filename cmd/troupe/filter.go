package main

// filterFlag is the -filter flag of a list command (what: "jobs"): a
// go-bexpr expression the API checks against each item, in Nomad's field
// names; an expression that does not parse is the API's 400.
func filterFlag(m *meta, what string) *string {
	return m.fs.String("filter", "", "list only the "+what+` the expression matches, in Nomad's field names (Status == "running")`)
}
