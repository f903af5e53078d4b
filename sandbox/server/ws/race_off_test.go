//go:build !race

package ws_test

const raceEnabled = false
