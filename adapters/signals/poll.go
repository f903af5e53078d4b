package signals

import (
	"bytes"
	"context"
	"io"
	"os"
	"os/exec"
	"time"

	"go.uber.org/zap"
)

// Poll adds a source that reads signal name every interval (the first time at
// once) with read, and pushes what ParseNumber makes of it. A failed read or a
// value that is not a number is logged and skipped: the last good value stays
// until it is stale.
func (h *Hub) Poll(name string, every time.Duration, read func(ctx context.Context) ([]byte, error)) {
	h.AddSource(func(ctx context.Context) {
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			b, err := read(ctx)
			if ctx.Err() != nil {
				return
			}
			if err == nil {
				var v float64
				if v, err = ParseNumber(b); err == nil {
					err = h.Push(name, v)
				}
			}
			if err != nil {
				h.log.Warn("signal value dropped", zap.String("signal", name), zap.Error(err))
			}
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	})
}

// ReadFile returns a reader of a file signal: the file's first MaxBody+1 bytes.
func ReadFile(path string) func(context.Context) ([]byte, error) {
	return func(context.Context) ([]byte, error) {
		f, err := os.Open(path)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		return io.ReadAll(io.LimitReader(f, MaxBody+1))
	}
}

// RunCommand returns a reader of a command signal: the command (argv, no shell)
// is run with a deadline of timeout and its standard output (at most MaxBody+1
// bytes kept) is the value; a failed command is an error.
func RunCommand(argv []string, timeout time.Duration) func(context.Context) ([]byte, error) {
	return func(ctx context.Context) ([]byte, error) {
		ctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
		var out limited
		cmd.Stdout = &out
		cmd.WaitDelay = time.Second
		if err := cmd.Run(); err != nil {
			return nil, err
		}
		return out.Bytes(), nil
	}
}

// limited keeps the first MaxBody+1 bytes written to it.
type limited struct{ bytes.Buffer }

func (l *limited) Write(p []byte) (int, error) {
	if room := MaxBody + 1 - l.Len(); room > 0 {
		l.Buffer.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}
