package tape

import (
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"reflect"
	"sync"
	"testing"

	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/sandbox/journal"
)

// randomBody returns bytes that exercise the varint paths: short and long
// varints, continuation bytes at the very end, ten-byte overflows.
func randomBody(r *rand.Rand) []byte {
	b := make([]byte, r.IntN(12))
	for i := range b {
		switch r.IntN(4) {
		case 0:
			b[i] = byte(r.IntN(0x80)) // a last byte
		case 1:
			b[i] = 0x80 | byte(r.IntN(0x80)) // a continuation
		case 2:
			b[i] = 0xff
		default:
			b[i] = byte(r.Uint32())
		}
	}
	if r.IntN(3) == 0 { // a well-formed amount, often a short one
		v := market.Micros(r.Int64N(1 << uint(r.IntN(63))))
		if r.IntN(2) == 0 {
			v = -v
		}
		if r.IntN(2) == 0 {
			v *= market.Micros(pow10[r.IntN(len(pow10))])
		}
		b = append(appendAmount(nil, v), b...)
	}
	return b
}

// TestFastDecodersMatchTheSlowPath: uvarint and amount take inlined short paths;
// over random bytes they must read the same value, consume the same bytes and
// fail the same way as the general decoders (uvarintSlow, amountSlow) they skip.
func TestFastDecodersMatchTheSlowPath(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 5))
	for n := range 50_000 {
		b := randomBody(r)
		for start := 0; start <= len(b); start++ {
			fast, slow := dec{b: b, i: start}, dec{b: b, i: start}
			if got, want := fast.uvarint(), slow.uvarintSlow(); got != want || fast.i != slow.i || (fast.err == nil) != (slow.err == nil) {
				t.Fatalf("case %d uvarint of % x at %d: fast %d (i %d, err %v), slow %d (i %d, err %v)",
					n, b, start, got, fast.i, fast.err, want, slow.i, slow.err)
			}
			fast, slow = dec{b: b, i: start}, dec{b: b, i: start}
			if got, want := fast.amount(), slow.amountSlow(); got != want || fast.i != slow.i || (fast.err == nil) != (slow.err == nil) {
				t.Fatalf("case %d amount of % x at %d: fast %d (i %d, err %v), slow %d (i %d, err %v)",
					n, b, start, got, fast.i, fast.err, want, slow.i, slow.err)
			}
		}
	}
}

// nonZero sets v (settable) to a non-zero value of its type.
func nonZero(t *testing.T, v reflect.Value) {
	t.Helper()
	switch v.Kind() {
	case reflect.String:
		v.SetString("stale")
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(-3)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(3)
	case reflect.Float32, reflect.Float64:
		v.SetFloat(0.5)
	case reflect.Array:
		nonZero(t, v.Index(v.Len()-1))
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 1, 1))
		nonZero(t, v.Index(0))
	default:
		t.Fatalf("no non-zero value for kind %s", v.Kind())
	}
}

// leaves calls fn with the path and value of every non-struct field of v,
// recursively (arrays and slices are leaves).
func leaves(v reflect.Value, path string, fn func(path string, f reflect.Value)) {
	if v.Kind() != reflect.Struct {
		fn(path, v)
		return
	}
	for i := range v.NumField() {
		leaves(v.Field(i), path+"."+v.Type().Field(i).Name, fn)
	}
}

// TestNextSetsEveryField: Next writes a market-data event field by field and
// clears the wallet's parts (Order, Fill) only when they are not zero. Whatever
// single field of the caller's Event is stale, Next must give exactly the event a
// fresh Record gets: this fails when market.Event, Order or Fill gain a field that
// record or walletZero do not handle.
func TestNextSetsEveryField(t *testing.T) {
	items := genItems(3, 400)
	data := encodeTape(t, items, WriterOptions{BlockBytes: 2048})
	// want: every record read into a fresh Record.
	var want []Record
	r, err := NewReader(bytes.NewReader(data), ReaderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := ReadAll(r, func(rec *Record) error {
		c := *rec
		c.Event = cloneEvent(rec.Event)
		want = append(want, c)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	var paths []string
	leaves(reflect.ValueOf(market.Event{}), "Event", func(p string, _ reflect.Value) { paths = append(paths, p) })
	for fi, path := range paths {
		t.Run(path, func(t *testing.T) {
			r, err := NewReader(bytes.NewReader(data), ReaderOptions{})
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			var rec Record
			for i := 0; ; i++ {
				// Make the one field stale before every read.
				k := 0
				leaves(reflect.ValueOf(&rec.Event).Elem(), "Event", func(_ string, f reflect.Value) {
					if k == fi && f.Kind() != reflect.Slice { // slices are the Reader's to reuse
						nonZero(t, f)
					}
					k++
				})
				err := r.Next(&rec)
				if errors.Is(err, io.EOF) {
					if i != len(want) {
						t.Fatalf("read %d records, want %d", i, len(want))
					}
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				if rec.Type != RecordEvent {
					continue
				}
				got := normalize([]item{{ev: rec.Event}})[0].ev
				exp := normalize([]item{{ev: want[i].Event}})[0].ev
				if !reflect.DeepEqual(got, exp) {
					t.Fatalf("record %d with a stale %s:\n got %+v\nwant %+v", i, path, got, exp)
				}
			}
		})
	}
}

// TestWalletZeroSeesEveryField: walletZero is false whenever any single field of
// Order, OrderUpdate or Fill is not zero.
func TestWalletZeroSeesEveryField(t *testing.T) {
	var ev market.Event
	if !walletZero(&ev) {
		t.Fatal("the zero event is not wallet-zero")
	}
	for _, part := range []string{"Order", "OrderUpdate", "Fill"} {
		n := 0
		leaves(reflect.ValueOf(ev).FieldByName(part), part, func(string, reflect.Value) { n++ })
		for fi := range n {
			var ev market.Event
			k := 0
			var path string
			leaves(reflect.ValueOf(&ev).Elem().FieldByName(part), part, func(p string, f reflect.Value) {
				if k == fi {
					nonZero(t, f)
					path = p
				}
				k++
			})
			if walletZero(&ev) {
				t.Errorf("walletZero misses %s", path)
			}
		}
	}
}

// TestPooledReadersDoNotShare: Readers borrow decoders and block buffers from
// package pools; readers running at once, and readers opened after one failed on
// a damaged block, must each read their own tape exactly.
func TestPooledReadersDoNotShare(t *testing.T) {
	tapes := make([][]byte, 4)
	items := make([][]item, 4)
	for i := range tapes {
		items[i] = genItems(uint64(10+i), 1500)
		tapes[i] = encodeTape(t, items[i], WriterOptions{BlockBytes: 1024 << i})
	}
	// A tape whose first zstd block body is damaged but whose frames are intact:
	// re-frame it with a flipped byte inside the compressed body.
	bad := damagedBlock(t, items[0])
	for round := range 3 {
		r, err := NewReader(bytes.NewReader(bad), ReaderOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := readAll(t, r); !errors.Is(err, ErrFormat) {
			t.Fatalf("round %d: damaged block read with %v, want ErrFormat", round, err)
		} else if round == 0 {
			t.Logf("damaged block: %v", err)
		}
		r.Close()
		var wg sync.WaitGroup
		errs := make([]error, len(tapes))
		for i := range tapes {
			wg.Go(func() {
				r, err := NewReader(bytes.NewReader(tapes[i]), ReaderOptions{})
				if err != nil {
					errs[i] = err
					return
				}
				defer r.Close()
				got, _, err := readAll(t, r)
				if err != nil {
					errs[i] = err
					return
				}
				if !reflect.DeepEqual(normalize(got), normalize(items[i])) {
					errs[i] = errors.New("records differ")
				}
			})
		}
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Fatalf("round %d tape %d: %v", round, i, err)
			}
		}
	}
}

// damagedBlock encodes items in zstd blocks and flips a byte in the middle of the
// first block's compressed body, re-framing the tape so that the frames'
// checksums and sequence stay valid: only the zstd decoder can see the damage.
func damagedBlock(t *testing.T, items []item) []byte {
	t.Helper()
	good := encodeTape(t, items, WriterOptions{BlockBytes: 4096})
	jr, err := journal.NewReader(bytes.NewReader(good), Kind, MaxFrameBytes)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	w := journal.NewWriter(&out, journal.FileHeader{Kind: Kind, Base: 1})
	done := false
	for {
		fr, err := jr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		p := fr.Payload
		if !done && len(p) > 0 && p[0] == frameBlock {
			h, at, err := parseBlockHeader(p[1:])
			if err != nil || h.codec != wireZstd {
				t.Fatalf("first block: codec %d, %v", h.codec, err)
			}
			p = append([]byte(nil), p...)
			p[1+at+(len(p)-1-at)/2] ^= 0x5a
			done = true
		}
		if _, err := w.Append(p); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if !done {
		t.Fatal("no block to damage")
	}
	return out.Bytes()
}

// TestHeaderFastPathMatchesTheGeneralOne: whenever headerFast takes a record
// header, the general decoding of the same bytes gives the same kind, symbols,
// times, sequence and position, without an error. Random headers are biased to
// the short forms (and to their edges: two-byte deltas, references just past the
// block's symbols, new symbols).
func TestHeaderFastPathMatchesTheGeneralOne(t *testing.T) {
	r := rand.New(rand.NewPCG(6, 6))
	syms := []string{"0xmarket", "yes", "no"}
	short := func() byte {
		switch r.IntN(10) {
		case 0:
			return 0x80 | byte(r.IntN(0x80))
		case 1, 2, 3, 4:
			return byte(r.IntN(6)) // 0, 1 and the references near the end
		default:
			return byte(r.IntN(0x80))
		}
	}
	taken := 0
	for n := range 600_000 {
		b := make([]byte, 6+r.IntN(8))
		for i := range b {
			b[i] = short()
		}
		start := r.IntN(3)
		b = append(make([]byte, start), b...)
		base := Reader{d: dec{b: b, i: start}, syms: syms[:r.IntN(len(syms)+1)],
			time: r.Int64N(1 << 40), recv: r.Int64N(1 << 40), seq: r.Uint64N(1 << 30)}
		fast, slow := base, base
		kind, mkt, tok, ok := fast.headerFast()
		if !ok {
			if fast.d.i != start || fast.time != base.time || fast.recv != base.recv || fast.seq != base.seq {
				t.Fatalf("case %d % x: declined but moved the reader", n, b)
			}
			continue
		}
		taken++
		d := &slow.d
		wkind := d.byte1()
		slow.time += d.varint()
		slow.recv += d.varint()
		slow.seq += uint64(d.varint())
		wmkt, wtok := slow.symSlow(), slow.symSlow()
		if d.err != nil || kind != wkind || mkt != wmkt || tok != wtok || fast.d.i != d.i ||
			fast.time != slow.time || fast.recv != slow.recv || fast.seq != slow.seq {
			t.Fatalf("case %d % x at %d: fast (%d %q %q i=%d t=%d r=%d s=%d), general (%d %q %q i=%d t=%d r=%d s=%d, err %v)",
				n, b, start, kind, mkt, tok, fast.d.i, fast.time, fast.recv, fast.seq,
				wkind, wmkt, wtok, d.i, slow.time, slow.recv, slow.seq, d.err)
		}
	}
	t.Logf("fast path took %d headers", taken)
	if taken < 10_000 {
		t.Fatalf("the fast path took only %d headers", taken)
	}
}

// TestChangeFastPathMatchesTheGeneralOne: whenever changeFast takes a price
// change, the general decoding of the same bytes (a symbol, a side, four amounts)
// gives the same change and position, without an error.
func TestChangeFastPathMatchesTheGeneralOne(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 7))
	syms := []string{"0xmarket", "yes", "no"}
	taken := 0
	for n := range 300_000 {
		var b []byte
		b = append(b, byte(2+r.IntN(3)), byte(1+r.IntN(2))) // a reference near the end, a side
		if r.IntN(4) == 0 {
			b[r.IntN(2)] = byte(r.IntN(256)) // anything
		}
		for range 4 {
			switch r.IntN(12) {
			case 0:
				b = append(b, randomBody(r)...) // anything
			default: // an amount in short form, often at the edges of the fast path
				v := market.Micros(r.Int64N(1 << (1 + r.IntN(18))))
				if r.IntN(2) == 0 {
					v = -v
				}
				b = appendAmount(b, v*market.Micros(pow10[r.IntN(len(pow10))]))
			}
		}
		if r.IntN(8) > 0 { // the next record (the fast path needs a 14-byte window)
			b = append(b, randomBody(r)...)
			b = append(b, make([]byte, r.IntN(12))...)
		} else {
			b = b[:len(b)-r.IntN(min(len(b), 3))]
		}
		base := Reader{d: dec{b: b}, syms: syms[:1+r.IntN(len(syms))]}
		fast, slow := base, base
		var got market.LevelChange
		if !fast.changeFast(&got) {
			if fast.d.i != 0 || got != (market.LevelChange{}) {
				t.Fatalf("case %d % x: declined but moved the reader or set the change", n, b)
			}
			continue
		}
		taken++
		d := &slow.d
		want := market.LevelChange{Token: market.TokenID(slow.symSlow()), Side: d.sideSlow()}
		want.Price, want.Size, want.BestBid, want.BestAsk = d.amountSlow(), d.amountSlow(), d.amountSlow(), d.amountSlow()
		if d.err != nil || got != want || fast.d.i != d.i {
			t.Fatalf("case %d % x: fast %+v (i=%d), general %+v (i=%d, err %v)", n, b, got, fast.d.i, want, d.i, d.err)
		}
	}
	t.Logf("fast path took %d changes", taken)
	if taken < 10_000 {
		t.Fatalf("the fast path took only %d changes", taken)
	}
}
