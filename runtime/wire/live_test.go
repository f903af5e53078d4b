package wire_test

import (
	"bytes"
	"strings"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/pitbossdev/pitboss/runtime/wire"
)

// TestLiveViewSaysLIVEOnEveryLine: the text view of a live remote run (its logger
// carries mode=LIVE) puts LIVE after the time of every line; JSON keeps the field.
func TestLiveViewSaysLIVEOnEveryLine(t *testing.T) {
	tests := []struct {
		format wire.LogFormat
		want   []string
	}{
		{wire.LogText, []string{"00:00:01.000 LIVE order   place      m/bid BUY 10 @0.45\n", "LIVE status  running  equity 1000"}},
		{wire.LogJSON, []string{`"mode":"LIVE"`}},
	}
	for _, tc := range tests {
		t.Run(string(tc.format), func(t *testing.T) {
			var buf bytes.Buffer
			log, err := wire.NewLogger(&buf, tc.format, zapcore.InfoLevel, true)
			if err != nil {
				t.Fatal(err)
			}
			log = log.With(zap.String("mode", wire.LiveMode))
			log.Info("order", zap.Int64("t", 1000), zap.String("op", "place"), zap.String("key", "m/bid"),
				zap.String("side", "BUY"), zap.String("size", "10"), zap.String("price", "0.45"))
			log.Info("status", zap.Int64("t", 2000), zap.String("state", "running"), zap.String("equity", "1000"))
			out := buf.String()
			for _, w := range tc.want {
				if !strings.Contains(out, w) {
					t.Errorf("output lacks %q:\n%s", w, out)
				}
			}
			if tc.format == wire.LogText && strings.Contains(out, "mode=") {
				t.Errorf("the mode is repeated as a field:\n%s", out)
			}
		})
	}
}
