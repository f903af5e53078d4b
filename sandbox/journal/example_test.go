package journal_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"

	"github.com/pitbossdev/pitboss/sandbox/journal"
)

// A server's life cycle: recover, append and acknowledge after durability, snapshot,
// restart.
func Example() {
	dir, err := os.MkdirTemp("", "journal-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	ctx := context.Background()

	j, err := journal.Open(dir)
	if err != nil {
		log.Fatal(err)
	}
	for _, cmd := range []string{"deposit alice 100", "place alice buy 10@0.42", "cancel alice 1"} {
		lsn, err := j.Append([]byte(cmd)) // the engine goroutine, after applying cmd
		if err != nil {
			log.Fatal(err)
		}
		if err := j.WaitDurable(ctx, lsn); err != nil { // the request goroutine, before answering
			log.Fatal(err)
		}
	}
	if err := j.WriteSnapshot(ctx, 2, []byte("balances after 2 commands")); err != nil {
		log.Fatal(err)
	}
	if err := j.Close(ctx); err != nil {
		log.Fatal(err)
	}

	// Restart: load the snapshot, replay what follows it.
	j, err = journal.Open(dir)
	if err != nil {
		log.Fatal(err)
	}
	defer j.Close(ctx)
	after := uint64(0)
	snap, err := j.LatestSnapshot()
	switch {
	case err == nil:
		fmt.Printf("snapshot at %d: %s\n", snap.LSN, snap.Data)
		after = snap.LSN
	case !errors.Is(err, journal.ErrNoSnapshot):
		log.Fatal(err)
	}
	err = j.Replay(after, func(lsn uint64, rec []byte) error {
		fmt.Printf("replay %d: %s\n", lsn, rec)
		return nil
	})
	if err != nil {
		log.Fatal(err)
	}
	lsn, _ := j.Append([]byte("deposit bob 5"))
	fmt.Println("next lsn:", lsn)
	// Output:
	// snapshot at 2: balances after 2 commands
	// replay 3: cancel alice 1
	// next lsn: 4
}
