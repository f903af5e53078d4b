package agent

// RepeatedPasses returns how many passes a repeated (repeat.go), for tests.
func RepeatedPasses(a *Agent) uint64 { return a.repeated }
