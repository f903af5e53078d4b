package supervisor

import (
	"bytes"
	"context"
	"io"
	"strconv"
	"sync"
	"sync/atomic"
)

// Bounds of the children's output capture.
const (
	// maxLine is the longest line kept; the rest of a longer line is dropped (and
	// the line marked with " …").
	maxLine = 8 << 10
	// outputQueue bounds the lines waiting for the writer. Overflow policy: a line
	// that finds the queue full is dropped and counted (a "lines dropped" note is
	// written once the queue has room again); a child never waits for the
	// supervisor's output.
	outputQueue = 4096
	// tailLines is how many of an agent's last lines per stream are kept for crash
	// reports.
	tailLines = 20
)

type outLine struct {
	agent  string
	stream string
	text   string
}

// output writes the children's lines, prefixed "<agent> | ", to one writer from
// one goroutine. Lines are queued without blocking the readers.
type output struct {
	w        io.Writer
	ch       chan outLine
	dropped  atomic.Uint64
	reported uint64 // dropped lines already reported (owned by run)
}

func newOutput(w io.Writer) *output {
	return &output{w: w, ch: make(chan outLine, outputQueue)}
}

// run writes queued lines until ctx ends and then what is still queued.
func (o *output) run(ctx context.Context) {
	write := func(l outLine) {
		if d := o.dropped.Load(); d > o.reported {
			_, _ = io.WriteString(o.w, "supervisor | "+strconv.FormatUint(d-o.reported, 10)+" lines of agent output dropped (output too slow)\n")
			o.reported = d
		}
		prefix := l.agent
		if l.stream == "stderr" {
			prefix += " !"
		}
		_, _ = io.WriteString(o.w, prefix+" | "+l.text+"\n")
	}
	for {
		select {
		case l := <-o.ch:
			write(l)
		case <-ctx.Done():
			for {
				select {
				case l := <-o.ch:
					write(l)
				default:
					return
				}
			}
		}
	}
}

func (o *output) put(l outLine) {
	select {
	case o.ch <- l:
	default:
		o.dropped.Add(1)
	}
}

// tail keeps the last lines of one agent.
type tail struct {
	mu    sync.Mutex
	lines [tailLines]string
	n     int
}

func (t *tail) add(s string) {
	t.mu.Lock()
	t.lines[t.n%tailLines] = s
	t.n++
	t.mu.Unlock()
}

// last returns the most recent line, or "".
func (t *tail) last() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.n == 0 {
		return ""
	}
	return t.lines[(t.n-1)%tailLines]
}

// lineWriter splits what a child writes into lines for the output and a tail. It
// is an io.Writer for exec.Cmd.Stdout/Stderr: os/exec calls it from one copying
// goroutine per stream, which exec.Cmd.Wait waits for.
type lineWriter struct {
	out    *output
	agent  string
	stream string
	tail   *tail
	buf    []byte
	long   bool // the current line overflowed maxLine: drop until its end
}

func (w *lineWriter) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		chunk := p
		if i >= 0 {
			chunk = p[:i]
		}
		if !w.long {
			room := maxLine - len(w.buf)
			if len(chunk) > room {
				w.buf = append(w.buf, chunk[:room]...)
				w.long = true
			} else {
				w.buf = append(w.buf, chunk...)
			}
		}
		if i < 0 {
			break
		}
		w.emit()
		p = p[i+1:]
	}
	return n, nil
}

func (w *lineWriter) emit() {
	s := string(bytes.TrimRight(w.buf, "\r"))
	if w.long {
		s += " …"
	}
	w.buf, w.long = w.buf[:0], false
	w.tail.add(s)
	w.out.put(outLine{agent: w.agent, stream: w.stream, text: s})
}

// flush emits a last line without a newline.
func (w *lineWriter) flush() {
	if len(w.buf) > 0 || w.long {
		w.emit()
	}
}
