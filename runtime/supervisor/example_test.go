package supervisor_test

import (
	"fmt"

	"github.com/pitbossdev/pitboss/runtime/supervisor"
)

// A fleet file: two agents from one agent file (each with its own id, wallet and
// state), restarted always, with a memory limit for one of them.
func ExampleOptions_Parse() {
	src := `name: demo
heartbeat: 500ms
restart: {policy: always}
agents:
  - file: quoter.yaml
    id: quoter-a
    wallet: keyring:quoter-a
  - file: quoter.yaml
    id: quoter-b
    wallet: keyring:quoter-b
    limits: {memory: 256MiB}
`
	f, err := supervisor.Options{Getenv: func(string) string { return "" }}.Parse("/fleets/demo.yaml", []byte(src))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(f.Name, f.Heartbeat, f.HTTPAddr, f.NATS.StoreDir)
	for _, a := range f.Agents {
		r := f.Restart.Merge(a.Restart)
		var l supervisor.Limits
		if a.Limits != nil {
			l = f.Limits.Merge(*a.Limits)
		}
		fmt.Println(a.ID, a.File, a.Wallet, r.Policy, r.Backoff, l.Memory)
	}
	// Output:
	// demo 500ms 127.0.0.1:8740 /fleets/.state/pitboss/fleet/demo/nats
	// quoter-a /fleets/quoter.yaml keyring:quoter-a always 1s 0
	// quoter-b /fleets/quoter.yaml keyring:quoter-b always 1s 268435456
}
