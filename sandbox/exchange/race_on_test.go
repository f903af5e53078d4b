//go:build race

package exchange

// raceEnabled scales the heavier tests down under the race detector, which slows
// this package's code about tenfold.
const raceEnabled = true
