package connlimit

// Fit returns n: Windows has no per-process descriptor limit that
// connections would meet first.
func Fit(n, reserve, floor int) int { return n }
