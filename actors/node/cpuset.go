package node

// allCores is cores 0 to n-1.
func allCores(n int) []uint32 {
	out := make([]uint32, max(n, 0))
	for i := range out {
		out[i] = uint32(i)
	}
	return out
}
