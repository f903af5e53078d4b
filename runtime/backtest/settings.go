package backtest

import (
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/policies"
	"github.com/pitbossdev/pitboss/runtime/report"
)

// settings are the run's inputs besides the strategy's parameters that change
// its result (report.Run.Settings): the fee override, the Brier horizon and the
// guards as the agent file resolves them (defaults filled in), by their
// agent-file names.
func settings(cfg *Config) []report.Param {
	fee := "each market's own"
	if cfg.FeeBps != nil {
		fee = strconv.FormatUint(uint64(*cfg.FeeBps), 10) + " bps"
	}
	h := cfg.Report.BrierHorizon
	if h <= 0 {
		h = report.DefaultBrierHorizon
	}
	out := []report.Param{{Name: "taker fee", Value: fee}, {Name: "brier horizon", Value: h.String()}}
	return append(out, guardSettings(cfg.Spec.Guards.Resolved())...)
}

// guardSettings lists c's fields as "guards.<yaml name>" = value; custom guards
// as guards.custom.<name> = their condition.
func guardSettings(c policies.Config) []report.Param {
	var out []report.Param
	v, t := reflect.ValueOf(c), reflect.TypeOf(c)
	for i := 0; i < t.NumField(); i++ {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("yaml"), ",")
		if name == "" || name == "-" {
			continue
		}
		f := v.Field(i)
		var s string
		switch x := f.Interface().(type) {
		case market.Micros:
			s = x.String()
		case int:
			s = strconv.Itoa(x)
		case bool:
			s = strconv.FormatBool(x)
		case time.Duration:
			s = x.String()
		case []policies.CustomGuard:
			for _, g := range x {
				out = append(out, report.Param{Name: "guards.custom." + g.Name, Value: g.DenyIf})
			}
			continue
		default:
			continue
		}
		out = append(out, report.Param{Name: "guards." + name, Value: s})
	}
	return out
}
