package strategy_test

import (
	"testing"

	"github.com/pitbossdev/pitboss/strategy/strategytest"
)

// TestGolden runs testdata/golden/*.txt: a strategy file and an event stream, then the
// intents expected after each event (format: package strategytest).
func TestGolden(t *testing.T) {
	strategytest.CheckDir(t, "testdata/golden/*.txt", nil)
}
