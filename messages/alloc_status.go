package messages

// ClientTerminal reports whether an allocation's client status is final
// (complete, failed or lost): its tasks will not run again.
func ClientTerminal(status string) bool {
	return status == "complete" || status == "failed" || status == "lost"
}
