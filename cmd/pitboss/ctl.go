package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/pitbossdev/pitboss/adapters/natsbus"
	"github.com/pitbossdev/pitboss/api"
	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/runtime/supervisor"
	"github.com/pitbossdev/pitboss/runtime/wire"
)

func init() {
	register(command{name: "ctl", summary: "list, control and audit a fleet (pitboss supervise) over NATS", run: runCtl})
}

const ctlUsage = `[--fleet NAME | --creds FILE [--nats URL]] [--tls-ca F --tls-cert F --tls-key F] [--json] COMMAND [flags] [AGENT | --all]

Commands:
  list                          every agent of every supervisor: state, wallet, markets,
                                positions, PnL, last heartbeat (--wait D: how long to
                                gather the supervisors' answers, default 500ms)
  status AGENT                  one agent, as 'pitboss status' prints it: markets with
                                spread and mid, orders with distance from mid and age,
                                inventory, PnL, guards near their limits (without
                                AGENT: the same as list)
  tail                          the audit trail: --agent ID, --kind order,fill,...,
                                --since 10m or --seq N, --follow
  pause | resume                stop / resume opening positions
  cancel-all | flatten          cancel every open order / and close positions (--market ID)
  kill | resume-after-kill      the kill switch, and re-arming it
  stop | start | restart        the agent's process (through its supervisor)
  agents apply FILE…            publish agent files (or a fleet file's agents) to the
                                fleet: supervisors claim and run them (max_agents,
                                labels and placement decide where)
  agents list | delete ID       the published definitions; delete stops a claimed one

Control commands take one AGENT or --all, and --reason TEXT. Kill, pause and stop
are also recorded as the fleet's desired state: they survive restarts and reach
agents that are away. The connection comes from --creds (a pitboss endpoint file or
a NATS .creds file with --nats), else PITBOSS_NATS_FILE / PITBOSS_NATS_URL, else the
endpoint file a running 'pitboss supervise' wrote for --fleet (the only one, if
there is one).`

func runCtl(ctx context.Context, args []string, io stdio) error {
	fs := newFlagSet("ctl", ctlUsage, io)
	fleet := fs.String("fleet", "", "the fleet's name (finds the endpoint file of its supervisor)")
	natsURL := fs.String("nats", "", "NATS URL (with --creds, or an unauthenticated server)")
	creds := fs.String("creds", "", "credentials: a pitboss endpoint file or a NATS .creds file (0600)")
	tlsCA := fs.String("tls-ca", "", "TLS: PEM file of the CAs to trust (default: the endpoint file's)")
	tlsCert := fs.String("tls-cert", "", "mutual TLS: PEM file of the client certificate (with --tls-key)")
	tlsKey := fs.String("tls-key", "", "mutual TLS: PEM file of its private key (0600)")
	asJSON := fs.Bool("json", false, "print JSON")
	timeout := fs.Duration("timeout", 10*time.Second, "give up after this long")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		return usagef("name a command (list, tail, pause, resume, cancel-all, flatten, kill, resume-after-kill, stop, start, restart)")
	}
	cmd, rest := fs.Arg(0), fs.Args()[1:]
	sub := newFlagSet("ctl "+cmd, ctlUsage, io)
	jsonToo := sub.Bool("json", false, "print JSON")
	var (
		all    = sub.Bool("all", false, "every agent of the fleet")
		reason = sub.String("reason", "", "why (recorded in the audit trail)")
		mkt    = sub.String("market", "", "cancel-all, flatten: only this market (condition id)")
		wait   = sub.Duration("wait", 500*time.Millisecond, "list: how long to gather the supervisors' answers")
		agent  = sub.String("agent", "", "tail: one agent")
		kinds  = sub.String("kind", "", "tail: kinds, comma-separated (intent, decision, order, fill, control, lifecycle)")
		since  = sub.Duration("since", 0, "tail: records of the last D")
		seq    = sub.Uint64("seq", 0, "tail: from this stream sequence")
		follow = sub.Bool("follow", false, "tail: keep printing new records until Ctrl-C")
	)
	// Flags may follow the agent (`ctl kill mm-1 --reason drill`).
	var pos []string
	for {
		if err := parseFlags(sub, rest); err != nil {
			return err
		}
		if sub.NArg() == 0 {
			break
		}
		pos, rest = append(pos, sub.Arg(0)), sub.Args()[1:]
	}
	*asJSON = *asJSON || *jsonToo

	op := supervisor.Op(strings.ReplaceAll(cmd, "-", "_"))
	switch cmd {
	case "list", "ls", "status", "tail", "agents":
	default:
		if !slices.Contains(supervisor.Ops, op) {
			return usagef("unknown command %q", cmd)
		}
	}

	var target market.AgentID
	switch {
	case cmd == "status" && len(pos) == 1:
		id, err := market.ParseAgentID(pos[0])
		if err != nil {
			return usagef("%v", err)
		}
		target = id
	case cmd == "agents":
	case cmd == "list" || cmd == "ls" || cmd == "status" || cmd == "tail":
		if len(pos) > 0 {
			return usagef("%s takes no arguments", cmd)
		}
	default:
		switch {
		case *all && len(pos) == 0:
		case !*all && len(pos) == 1:
			id, err := market.ParseAgentID(pos[0])
			if err != nil {
				return usagef("%v", err)
			}
			target = id
		default:
			return usagef("%s needs one AGENT or --all", cmd)
		}
		if *mkt != "" && op != "cancel_all" && op != "flatten" {
			return usagef("--market is for cancel-all and flatten")
		}
	}

	ep, err := ctlEndpoint(io, *fleet, *natsURL, *creds)
	if err != nil {
		return err
	}
	if *tlsCA != "" {
		ep.TLSCA = *tlsCA
	}
	if *tlsCert != "" || *tlsKey != "" {
		ep.TLSCert, ep.TLSKey = *tlsCert, *tlsKey
	}
	if err := ep.Validate(); err != nil {
		return usagef("%v", err)
	}
	if !*follow {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, *timeout)
		defer cancel()
	}
	user := io.getenv("USER")
	host, _ := os.Hostname()
	c, err := supervisor.Dial(ctx, ep, nil, "ctl "+user+"@"+host)
	if err != nil {
		return err
	}
	defer c.Close()

	switch cmd {
	case "agents":
		return ctlAgents(ctx, io, c, pos, *asJSON)
	case "list", "ls", "status":
		fl, err := c.List(ctx, *wait)
		if err != nil {
			return err
		}
		if target != "" {
			return printAgentStatus(io, fl, target, *asJSON)
		}
		if *asJSON {
			return printJSON(io.stdout, fl)
		}
		printList(io.stdout, fl)
		return nil
	case "tail":
		f := natsbus.AuditFilter{Agent: market.AgentID(*agent), StartSeq: *seq, Follow: *follow}
		if *agent != "" && !market.ValidAgentID(*agent) {
			return usagef("--agent: %v", market.ErrBadAgentID)
		}
		if *since > 0 {
			f.Since = time.Now().Add(-*since)
		}
		for _, k := range strings.Split(*kinds, ",") {
			if k = strings.TrimSpace(k); k == "" {
				continue
			}
			if !natsbus.AuditKind(k).Valid() {
				return usagef("--kind: %q is not intent, decision, order, fill, control or lifecycle", k)
			}
			f.Kinds = append(f.Kinds, natsbus.AuditKind(k))
		}
		enc := json.NewEncoder(io.stdout)
		err := c.Tail(ctx, f, func(e natsbus.AuditEntry) error {
			if *asJSON {
				return enc.Encode(e)
			}
			_, err := fmt.Fprintln(io.stdout, auditLine(e))
			return err
		})
		if errors.Is(err, context.Canceled) {
			return nil
		}
		return err
	}

	res, cerr := c.Control(ctx, op, target, *reason, market.ConditionID(*mkt))
	if *asJSON {
		out := struct {
			supervisor.ControlResult
			Error string `json:"error,omitempty"`
		}{ControlResult: res}
		if cerr != nil {
			out.Error = cerr.Error()
		}
		if err := printJSON(io.stdout, out); err != nil {
			return err
		}
		if cerr != nil || failed(res) {
			return &exitError{code: 1}
		}
		return nil
	}
	for _, r := range res.Replies {
		if r.OK {
			fmt.Fprintf(io.stdout, "%s: ok (%s)\n", r.Agent, r.State)
		} else {
			fmt.Fprintf(io.stdout, "%s: %s\n", r.Agent, ctlSpelling(r.Agent, r.Code, r.Error))
		}
	}
	if len(res.Missing) > 0 {
		ids := make([]string, len(res.Missing))
		for i, id := range res.Missing {
			ids[i] = string(id)
		}
		fmt.Fprintf(io.stdout, "no answer from: %s (the desired state reaches them when they are back)\n", strings.Join(ids, ", "))
	}
	if op == supervisor.OpStart && cerr == nil {
		fmt.Fprintln(io.stdout, "desired state: running (the supervisor starts it)")
	}
	if cerr != nil {
		var me *natsbus.MissingRepliesError
		if errors.As(cerr, &me) {
			return &exitError{code: 1}
		}
		if len(res.Replies) == 1 && !res.Replies[0].OK {
			return &exitError{code: 1} // printed above
		}
		return errors.New(ctlSpelling(target, "", cerr.Error()))
	}
	if failed(res) {
		return &exitError{code: 1}
	}
	return nil
}

// ctlSpelling writes the fleet's op names in a message as the commands that send
// them (resume_after_kill → resume-after-kill, cancel_all → cancel-all), and tells
// how to re-arm an agent whose kill switch refused a command.
func ctlSpelling(agent market.AgentID, code market.Code, msg string) string {
	msg = strings.NewReplacer("resume_after_kill", "resume-after-kill", "cancel_all", "cancel-all").Replace(msg)
	if code == market.CodeKillSwitchTripped && agent != "" {
		msg += " (pitboss ctl resume-after-kill " + string(agent) + ")"
	}
	return msg
}

func failed(res supervisor.ControlResult) bool {
	for _, r := range res.Replies {
		if !r.OK {
			return true
		}
	}
	return len(res.Missing) > 0
}

// ctlEndpoint finds how to reach the fleet (see ctlUsage).
func ctlEndpoint(io stdio, fleet, url, creds string) (natsbus.Endpoint, error) {
	switch {
	case creds != "":
		return fleetEndpoint(url, creds)
	case url != "":
		return natsbus.Endpoint{URL: url}, nil
	case io.getenv(natsbus.EnvFile) != "" || io.getenv(natsbus.EnvURL) != "":
		return natsbus.EndpointFromEnv(io.getenv)
	}
	dir, err := wire.FleetRuntimeDir(io.getenv)
	if err != nil {
		return natsbus.Endpoint{}, err
	}
	if fleet != "" {
		if !market.ValidAgentID(fleet) {
			return natsbus.Endpoint{}, usagef("--fleet: invalid fleet name %q", fleet)
		}
		p := filepath.Join(dir, "fleet-"+fleet+".json")
		ep, err := natsbus.ReadEndpointFile(p)
		if err != nil {
			return natsbus.Endpoint{}, fmt.Errorf("fleet %s: no running supervisor found here (%v); give --creds or --nats", fleet, err)
		}
		return ep, nil
	}
	files, _ := filepath.Glob(filepath.Join(dir, "fleet-*.json"))
	switch len(files) {
	case 0:
		return natsbus.Endpoint{}, errors.New("no running fleet found (start pitboss supervise, or give --fleet, --creds or --nats)")
	case 1:
		return natsbus.ReadEndpointFile(files[0])
	}
	var names []string
	for _, f := range files {
		names = append(names, strings.TrimSuffix(strings.TrimPrefix(filepath.Base(f), "fleet-"), ".json"))
	}
	return natsbus.Endpoint{}, usagef("several fleets run here (%s): choose one with --fleet", strings.Join(names, ", "))
}

func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// printList prints one line per agent.
func printList(w io.Writer, fl supervisor.Fleet) {
	tw := newTable(w)
	fmt.Fprintln(tw, "AGENT\tSTATE\tPROCESS\tSUPERVISOR\tWALLET\tMODE\tMARKETS\tPOSITIONS\tPNL\tHEARTBEAT\tRESTARTS\tNOTE")
	for _, a := range fl.Agents() {
		mode, markets, pos, note := "dry-run", "", "", a.Message
		if a.Live {
			mode = "LIVE"
		}
		if st := a.Status; st != nil {
			markets = fmt.Sprint(len(st.Markets))
			if len(st.MarketLabels) > 0 {
				markets = strings.Join(st.MarketLabels, ",")
			}
			var ps []string
			for _, p := range st.Positions {
				if p.Size != 0 {
					ps = append(ps, strings.TrimSpace(p.Label+" "+p.Outcome)+" "+p.Size.String()+" @"+p.AvgPrice.String())
				}
			}
			pos = strings.Join(ps, ", ")
			if note == "" {
				note = st.Error
			}
		}
		hb := "never"
		if a.HeartbeatAgeMS >= 0 {
			hb = (time.Duration(a.HeartbeatAgeMS) * time.Millisecond).Round(100*time.Millisecond).String() + " ago"
		}
		if len(note) > 80 {
			note = note[:77] + "..."
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%d\t%s\n", a.ID, a.State(), a.Process, a.Supervisor,
			shortHex(a.Wallet.String()), mode, markets, pos, a.PnL(), hb, a.Restarts, note)
	}
	// Agents nobody that answered runs: on a missing supervisor, or not placed.
	for _, a := range fl.Absent() {
		sup := ""
		if a.Supervisor != "" {
			sup = a.Supervisor + " (missing)"
		}
		fmt.Fprintf(tw, "%s\t%s\t-\t%s\t\t\t\t\t\t\t\t%s\n", a.ID, a.State, sup, a.Message)
	}
	tw.Flush()
	for _, m := range fl.Missing {
		seen := "never"
		if m.Seen > 0 {
			seen = time.Since(time.UnixMilli(m.Seen)).Round(time.Second).String() + " ago"
		}
		fmt.Fprintf(w, "supervisor %s@%s is missing: did not answer; its entry was written %s (agents: %s)\n", m.Name, m.Host, seen,
			strings.Join(agentIDs(m.Agents), ", "))
	}
	var sups []string
	for _, s := range fl.Supervisors {
		sups = append(sups, s.Supervisor+"@"+s.Host)
	}
	sort.Strings(sups)
	desired := ""
	for _, s := range fl.Supervisors {
		if s.FleetDesired != "" && s.FleetDesired != natsbus.DesiredRunning {
			desired = "; fleet desired state: " + string(s.FleetDesired)
		}
	}
	fmt.Fprintf(w, "%d agent(s), %d supervisor(s): %s%s\n", len(fl.Agents()), len(fl.Supervisors), strings.Join(sups, ", "), desired)
}

func agentIDs(ids []market.AgentID) []string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = string(id)
	}
	return out
}

func shortHex(s string) string {
	if len(s) <= 12 {
		return s
	}
	return s[:6] + "…" + s[len(s)-4:]
}

// auditLine renders one audit record for people.
func auditLine(e natsbus.AuditEntry) string {
	r := e.Record
	t := api.ISOMillis(r.Time)
	head := fmt.Sprintf("%6d %s %-12s %-9s ", e.Seq, t, r.Agent, r.Kind)
	switch {
	case r.Decision != nil:
		d := r.Decision
		verdict := "allow"
		if !d.Allow {
			verdict = "DENY by " + d.Guard + ": " + d.Reason
		}
		return head + intentText(d.Intent) + " → " + verdict
	case r.Intent != nil:
		return head + intentText(r.Intent)
	case r.Order != nil:
		o := r.Order
		s := o.Action
		if o.Side != "" && o.Size != 0 {
			s += " " + o.Side + " " + o.Outcome + " " + o.Size.String() + " @" + o.Price.String()
		}
		if o.ID != "" {
			s += " " + shortHex(string(o.ID))
		}
		if o.IntentKey != "" {
			s += " (" + o.IntentKey + ")"
		}
		if o.Error != "" {
			s += ": " + o.Error
		}
		return head + s
	case r.Fill != nil:
		f := r.Fill
		return head + fmt.Sprintf("%s %s %s @%s fee %s (%s) order %s", f.Side, f.Outcome, f.Size, f.Price, f.Fee, f.Role, shortHex(string(f.Order)))
	case r.Control != nil:
		c := r.Control
		s := string(c.Request.Op)
		if c.Request.Reason != "" {
			s += ": " + c.Request.Reason
		}
		if c.Request.From != "" {
			s += " (from " + c.Request.From + ")"
		}
		if !c.OK {
			s += " FAILED " + c.Error
		}
		return head + s
	case r.Lifecycle != nil:
		l := r.Lifecycle
		s := l.Event
		if l.PID != 0 {
			s += fmt.Sprintf(" pid %d", l.PID)
		}
		if l.ExitCode != 0 {
			s += fmt.Sprintf(" exit %d", l.ExitCode)
		}
		if l.Detail != "" {
			s += ": " + l.Detail
		}
		return head + s
	}
	return head
}

func intentText(in *natsbus.IntentRecord) string {
	if in == nil {
		return ""
	}
	s := in.Kind
	if in.Side != "" {
		s += " " + in.Side + " " + in.Outcome + " " + in.Size.String() + " @" + in.Price.String()
	}
	if in.Key != "" {
		s += " (" + in.Key + ")"
	}
	return s
}
