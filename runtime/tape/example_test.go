package tape_test

import (
	"errors"
	"fmt"
	"io"
	"log"
	"os"
	"path/filepath"

	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/runtime/tape"
)

// Record two events of one market, then read them back.
func Example() {
	dir, err := os.MkdirTemp("", "tape-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "rain.tape")

	w, _, err := tape.Append(path, tape.Session{Source: "example"}, tape.WriterOptions{})
	if err != nil {
		log.Fatal(err)
	}
	info := market.Info{Condition: "0xc0", Tokens: [2]market.TokenID{"1", "2"}, TickSize: 10_000, MinSize: market.One,
		Active: true, AcceptingOrders: true}
	if err := w.Market(&info); err != nil {
		log.Fatal(err)
	}
	book := market.Event{Kind: market.EventBook, Time: 1_700_000_000_000, Market: "0xc0", Token: "1",
		Bids: []market.Level{{Price: 480_000, Size: 100 * market.One}},
		Asks: []market.Level{{Price: 520_000, Size: 80 * market.One}}}
	trade := market.Event{Kind: market.EventLastTrade, Time: 1_700_000_000_250, Market: "0xc0", Token: "1",
		Price: 520_000, Size: 10 * market.One, Side: market.Buy}
	for _, ev := range []*market.Event{&book, &trade} {
		if err := w.Write(ev, ev.Time+30); err != nil { // received 30 ms after the venue's time
			log.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		log.Fatal(err)
	}

	r, err := tape.Open(path, tape.ReaderOptions{})
	if err != nil {
		log.Fatal(err)
	}
	defer r.Close()
	sum := r.Summary()
	fmt.Printf("%d records, %d market, torn tail: %v\n", sum.Records, len(sum.Markets), sum.Torn != nil)
	var rec tape.Record
	for {
		err := r.Next(&rec)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			log.Fatal(err)
		}
		switch rec.Type {
		case tape.RecordEvent:
			fmt.Printf("%s at %d (received %d)\n", rec.Event.Kind, rec.Event.Time, rec.Recv)
		default:
			fmt.Println(rec.Type)
		}
	}
	// Output:
	// 2 records, 1 market, torn tail: false
	// session
	// market
	// book at 1700000000000 (received 1700000000030)
	// last_trade_price at 1700000000250 (received 1700000000280)
}
