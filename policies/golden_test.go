package policies_test

import (
	"fmt"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/policies"
	"github.com/pitbossdev/pitboss/strategy/strategytest"
)

// TestGoldenGuards is the policies' golden walker: the strategy golden format
// (package strategytest: a strategy file and an event stream, then the intents
// expected after each event), extended with guard directives in the input and, under
// every intent, the chain's decision:
//
//	guards max_position=20 price_band=0.05     settings, by their agent-file names
//	guard custom NAME EXPRESSION…              a deny_if guard (reason: its name)
//	guard geoblock allowed|close-only|blocked|unknown [COUNTRY]   (default allowed)
//	guard mode normal|close-only|banned        the account mode
//	----
//	@1000 book main YES bids 0.45x100 asks 0.48x100
//	  quote main/bid YES BUY 0.44 x10 GTC post_only
//	    guard: allow
//	    guard: deny max_position: position in … above max_position 20
//	    guard: trip: daily loss … (cancel_all halt)
//
// PITBOSS_UPDATE_GOLDEN=1 rewrites the expected sections.
func TestGoldenGuards(t *testing.T) {
	strategytest.CheckDirWith(t, "testdata/golden/*.txt", chainFor)
}

// chainFor builds the case's chain from its guard directives and returns the
// annotate hook that evaluates each intent.
func chainFor(c *strategytest.Case) (strategytest.Annotate, error) {
	var cfg policies.Config
	geo := policies.Geoblock{Status: policies.GeoAllowed}
	mode := market.ModeNormal
	for _, line := range c.Extra {
		f := strings.Fields(line)
		switch {
		case f[0] == "guards":
			for _, kv := range f[1:] {
				k, v, ok := strings.Cut(kv, "=")
				if !ok {
					return nil, fmt.Errorf("guards wants NAME=VALUE, not %q", kv)
				}
				if err := setField(&cfg, k, v); err != nil {
					return nil, err
				}
			}
		case f[0] == "guard" && len(f) >= 4 && f[1] == "custom":
			cfg.Custom = append(cfg.Custom, policies.CustomGuard{Name: f[2], DenyIf: strings.Join(f[3:], " "), Reason: f[2]})
		case f[0] == "guard" && len(f) >= 3 && f[1] == "geoblock":
			country := ""
			if len(f) > 3 {
				country = f[3]
			}
			status := map[string]policies.GeoStatus{"allowed": policies.GeoAllowed, "close-only": policies.GeoCloseOnly,
				"blocked": policies.GeoBlocked, "unknown": policies.GeoUnknown}
			st, ok := status[f[2]]
			if !ok {
				return nil, fmt.Errorf("unknown geoblock status %q", f[2])
			}
			geo = policies.Geoblock{Status: st, Country: country}
		case f[0] == "guard" && len(f) == 3 && f[1] == "mode":
			modes := map[string]market.AccountMode{"normal": market.ModeNormal, "close-only": market.ModeCloseOnly, "banned": market.ModeBanned}
			m, ok := modes[f[2]]
			if !ok {
				return nil, fmt.Errorf("unknown account mode %q", f[2])
			}
			mode = m
		default:
			return nil, fmt.Errorf("unknown guard directive %q", line)
		}
	}
	var lines []string
	sink := policies.SinkFunc(func(r policies.Record) {
		switch {
		case r.Kind == policies.RecordTrip:
			lines = append(lines, "    guard: trip: "+r.Reason)
		case r.Allowed:
			lines = append(lines, "    guard: allow")
		default:
			lines = append(lines, "    guard: deny "+r.Guard+": "+r.Reason)
		}
	})
	chain, err := policies.New(cfg, policies.WithSink(sink), policies.WithGeoblock(geo), policies.WithAgent(filepath.Base(c.File)))
	if err != nil {
		return nil, err
	}
	var (
		batch  *policies.Batch
		lastEv *market.Event
	)
	return func(ev *market.Event, st *market.State, it *market.Intent) []string {
		st.Mode = mode
		lines = lines[:0]
		if ev != lastEv { // the intents of one event are one batch
			batch, lastEv = chain.Batch(st), ev
		}
		d := batch.Evaluate(it)
		if d.Action.Any() {
			lines = append(lines, fmt.Sprintf("    guard: action cancel_all=%v flatten=%v halt=%v", d.Action.CancelAll, d.Action.Flatten, d.Action.Halt))
		}
		return append([]string(nil), lines...)
	}, nil
}

// setField sets the Config field whose yaml name is name.
func setField(cfg *policies.Config, name, value string) error {
	v := reflect.ValueOf(cfg).Elem()
	for i := 0; i < v.NumField(); i++ {
		if strings.Split(v.Type().Field(i).Tag.Get("yaml"), ",")[0] != name {
			continue
		}
		f := v.Field(i)
		switch {
		case f.Type() == reflect.TypeOf(market.Micros(0)):
			m, err := market.ParseMicros(value)
			if err != nil {
				return fmt.Errorf("%s: %v", name, err)
			}
			f.SetInt(int64(m))
		case f.Kind() == reflect.Int:
			n, err := strconv.Atoi(value)
			if err != nil {
				return fmt.Errorf("%s: %v", name, err)
			}
			f.SetInt(int64(n))
		case f.Kind() == reflect.Bool:
			b, err := strconv.ParseBool(value)
			if err != nil {
				return fmt.Errorf("%s: %v", name, err)
			}
			f.SetBool(b)
		default:
			return fmt.Errorf("%s cannot be set on a guards line", name)
		}
		return nil
	}
	return fmt.Errorf("unknown guard setting %q", name)
}
