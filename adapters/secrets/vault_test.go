package secrets

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
)

// testVaultContract checks the behaviour every Vault promises. newVault returns a
// fresh, empty vault and a function that dumps everything the backend holds at rest
// (file bytes, keyring values) so the test can check what is and is not in clear.
func testVaultContract(t *testing.T, newVault func(t *testing.T) Vault) {
	ctx := context.Background()
	addr := testAddr(t)
	t.Run("get of a missing item is ErrNotFound", func(t *testing.T) {
		v := newVault(t)
		if _, err := v.Get(ctx, "wallet/none"); !errors.Is(err, ErrNotFound) {
			t.Fatalf("err %v", err)
		}
		if err := v.Delete(ctx, "wallet/none"); !errors.Is(err, ErrNotFound) {
			t.Fatalf("delete: %v", err)
		}
		if l, err := v.List(ctx, ""); err != nil || len(l) != 0 {
			t.Fatalf("list %v %v", l, err)
		}
	})
	t.Run("put get list delete", func(t *testing.T) {
		v := newVault(t)
		e := Entry{Name: WalletItem("main"), Address: addr}
		if err := v.Put(ctx, e, SecretString(testKeyHex)); err != nil {
			t.Fatal(err)
		}
		c := Entry{Name: CredentialItem("clob", addr), Address: addr, APIKey: "key-1"}
		if err := v.Put(ctx, c, SecretString("creds")); err != nil {
			t.Fatal(err)
		}
		got, err := v.Get(ctx, e.Name)
		if err != nil || string(got.Reveal()) != testKeyHex {
			t.Fatalf("get: %v", err)
		}
		got.Destroy()
		if l, err := v.List(ctx, "wallet/"); err != nil || len(l) != 1 || l[0] != e {
			t.Fatalf("list wallets %+v %v", l, err)
		}
		if l, err := v.List(ctx, ""); err != nil || len(l) != 2 || l[0] != c || l[1] != e {
			t.Fatalf("list all %+v %v", l, err)
		}
		if err := v.Delete(ctx, e.Name); err != nil {
			t.Fatal(err)
		}
		if _, err := v.Get(ctx, e.Name); !errors.Is(err, ErrNotFound) {
			t.Fatalf("after delete: %v", err)
		}
		if l, _ := v.List(ctx, ""); len(l) != 1 {
			t.Fatalf("list after delete %+v", l)
		}
	})
	t.Run("put replaces, add refuses", func(t *testing.T) {
		v := newVault(t)
		e := Entry{Name: WalletItem("w"), Address: addr}
		if err := v.Add(ctx, e, SecretString("one")); err != nil {
			t.Fatal(err)
		}
		if err := v.Add(ctx, e, SecretString("two")); !errors.Is(err, ErrExists) {
			t.Fatalf("second add: %v", err)
		}
		if s, _ := v.Get(ctx, e.Name); string(s.Reveal()) != "one" {
			t.Fatal("add overwrote")
		}
		if err := v.Put(ctx, e, SecretString("three")); err != nil {
			t.Fatal(err)
		}
		if s, _ := v.Get(ctx, e.Name); string(s.Reveal()) != "three" {
			t.Fatal("put did not replace")
		}
		if l, _ := v.List(ctx, ""); len(l) != 1 {
			t.Fatalf("duplicate entries %+v", l)
		}
	})
	t.Run("bad names are refused", func(t *testing.T) {
		v := newVault(t)
		for _, n := range []string{"", "x", "wallet/", "wallet/a/b", "api/clob/0xABC", "api/clob/" + addr.String() + "/x", ".index", "api//" + addr.String()} {
			if err := v.Put(ctx, Entry{Name: n}, SecretString("v")); !errors.Is(err, ErrBadName) {
				t.Fatalf("put %q: %v", n, err)
			}
			if _, err := v.Get(ctx, n); !errors.Is(err, ErrBadName) {
				t.Fatalf("get %q: %v", n, err)
			}
		}
	})
	t.Run("concurrent writers lose nothing", func(t *testing.T) {
		v := newVault(t)
		var wg sync.WaitGroup
		for i := range 6 {
			wg.Go(func() {
				if err := v.Put(ctx, Entry{Name: WalletItem(fmt.Sprintf("w%d", i))}, SecretString("v")); err != nil {
					t.Error(err)
				}
			})
		}
		wg.Wait()
		if l, err := v.List(ctx, ""); err != nil || len(l) != 6 {
			t.Fatalf("%d entries, %v", len(l), err)
		}
	})
}
