package wire

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// LogFormat is how the agent's trail is written.
type LogFormat string

// Log formats.
const (
	// LogText is the live view for a terminal: one compact line per decision,
	// order, fill and status, with event time.
	LogText LogFormat = "text"
	// LogJSON is zap's structured JSON, one object per line.
	LogJSON LogFormat = "json"
)

// NewLogger returns the agent's logger writing to w in format at level. With
// eventTime the wall-clock timestamp is left out (lines carry event time "t" only),
// so that a deterministic run writes identical lines every time. The logger is safe
// for concurrent use.
func NewLogger(w io.Writer, format LogFormat, level zapcore.Level, eventTime bool) (*zap.Logger, error) {
	ws := zapcore.AddSync(w)
	switch format {
	case LogJSON:
		ec := zap.NewProductionEncoderConfig()
		ec.TimeKey = "ts"
		ec.EncodeTime = zapcore.RFC3339NanoTimeEncoder
		if eventTime {
			ec.TimeKey = ""
		}
		ec.CallerKey, ec.StacktraceKey = "", ""
		return zap.New(zapcore.NewCore(zapcore.NewJSONEncoder(ec), ws, level)), nil
	case LogText, "":
		return zap.New(&liveCore{LevelEnabler: level, w: ws, mu: new(sync.Mutex), wall: !eventTime}), nil
	}
	return nil, fmt.Errorf("wire: log format %q: use text or json", format)
}

// liveCore renders the agent's messages as a compact live view. Known messages
// (order, fill, deny, status, ...) get a fixed layout; anything else is the message
// and its fields as key=value.
type liveCore struct {
	zapcore.LevelEnabler
	w      zapcore.WriteSyncer
	mu     *sync.Mutex
	fields []zapcore.Field
	wall   bool
}

func (c *liveCore) With(fs []zapcore.Field) zapcore.Core {
	n := *c
	n.fields = append(append([]zapcore.Field(nil), c.fields...), fs...)
	return &n
}

func (c *liveCore) Check(e zapcore.Entry, ce *zapcore.CheckedEntry) *zapcore.CheckedEntry {
	if c.Enabled(e.Level) {
		return ce.AddCore(e, c)
	}
	return ce
}

func (c *liveCore) Sync() error { return c.w.Sync() }

func (c *liveCore) Write(e zapcore.Entry, fs []zapcore.Field) error {
	enc := zapcore.NewMapObjectEncoder()
	for _, f := range c.fields {
		f.AddTo(enc)
	}
	for _, f := range fs {
		f.AddTo(enc)
	}
	line := render(e, enc.Fields, c.wall)
	c.mu.Lock()
	defer c.mu.Unlock()
	_, err := io.WriteString(c.w, line)
	return err
}

// render lays out one line.
func render(e zapcore.Entry, f map[string]any, wall bool) string {
	var b strings.Builder
	if t, ok := f["t"].(int64); ok && t > 0 {
		b.WriteString(time.UnixMilli(t).UTC().Format("15:04:05.000"))
		delete(f, "t")
	} else if wall {
		b.WriteString(e.Time.UTC().Format("15:04:05.000"))
	} else {
		b.WriteString("            ")
	}
	b.WriteByte(' ')
	if m, ok := f["mode"].(string); ok && m != "" { // LIVE on a live remote run: every line says so
		b.WriteString(m)
		b.WriteByte(' ')
		delete(f, "mode")
	}
	tag := e.Message
	switch {
	case e.Level >= zapcore.WarnLevel:
		tag = strings.ToUpper(e.Level.String())
	case len(tag) > 7:
		tag = "-"
	}
	fmt.Fprintf(&b, "%-7s ", tag)
	take := func(k string) string {
		v, ok := f[k]
		if !ok {
			return ""
		}
		delete(f, k)
		return fmt.Sprint(v)
	}
	switch e.Message {
	case "order":
		op, key := take("op"), take("key")
		fmt.Fprintf(&b, "%-10s %s", op, key)
		if side := take("side"); side != "" {
			b.WriteString(" " + side)
		}
		if o := take("outcome"); o != "" {
			b.WriteString(" " + o)
		}
		if size := take("size"); size != "" {
			b.WriteString(" " + size)
		}
		if px := take("price"); px != "" {
			b.WriteString(" @" + px)
		}
		if ty := take("type"); ty != "" && ty != "GTC" {
			b.WriteString(" " + ty)
		}
		if was := take("was"); was != "" {
			b.WriteString(" (was @" + was + ")")
		}
	case "fill":
		fmt.Fprintf(&b, "%s %s %s %s @%s fee %s (%s) → position %s, realized %s", take("key"), take("side"), take("outcome"),
			take("size"), take("price"), take("fee"), strings.ToLower(take("role")), take("position"), take("realized"))
	case "deny":
		fmt.Fprintf(&b, "%s %s %s", take("key"), take("intent"), take("side"))
		if o := take("outcome"); o != "" {
			b.WriteString(" " + o)
		}
		fmt.Fprintf(&b, " %s @%s by %s: %s", take("size"), take("price"), take("guard"), take("reason"))
	case "status", "final":
		fmt.Fprintf(&b, "%-8s equity %s  pnl %s (realized %s, unrealized %s, fees %s)  balance %s", take("state"), take("equity"),
			signed(take("pnl")), take("realized"), take("unrealized"), take("fees"), take("balance"))
		if ps, _ := f["positions"].([]any); len(ps) > 0 {
			b.WriteString("  [")
			for i, p := range ps {
				if i > 0 {
					b.WriteString(", ")
				}
				m, _ := p.(map[string]any)
				fmt.Fprintf(&b, "%v %v %v @%v", m["market"], m["outcome"], m["size"], m["avg_price"])
			}
			b.WriteString("]")
		}
		delete(f, "positions")
		fmt.Fprintf(&b, "  open %s  orders %s  fills %s", take("open_orders"), take("orders"), take("fills"))
		if d := take("denials"); d != "" && d != "0" {
			b.WriteString("  denials " + d)
		}
	default:
		if e.Message != tag {
			b.WriteString(e.Message)
		}
	}
	keys := make([]string, 0, len(f))
	for k := range f {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(&b, " %s=%v", k, f[k])
	}
	b.WriteByte('\n')
	return b.String()
}

func signed(s string) string {
	if s != "" && s[0] != '-' && s != "0" {
		return "+" + s
	}
	return s
}
