package connlimit

// fit is Fit for a descriptor limit of cur: n, lowered so that n plus
// reserve stay within cur, but never below floor. A limit too large to
// matter (RLIM_INFINITY among them) leaves n as it is.
func fit(n, reserve, floor int, cur uint64) int {
	if cur > 1<<30 {
		return n
	}
	return max(floor, min(n, int(cur)-reserve))
}
