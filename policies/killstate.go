package policies

import (
	"encoding/json"
	"fmt"

	"github.com/pitbossdev/pitboss/market"
)

type killJSON struct {
	Tripped   bool   `json:"tripped"`
	Reason    string `json:"reason,omitempty"`
	TrippedAt int64  `json:"tripped_at_ms,omitempty"`
	Baseline  bool   `json:"baseline"`
	Day       int64  `json:"day"`
	DayStart  string `json:"day_start_equity"`
	HighWater string `json:"high_water_equity"`
}

// MarshalJSON writes the state with amounts as exact decimal strings.
func (k KillState) MarshalJSON() ([]byte, error) {
	return json.Marshal(killJSON{Tripped: k.Tripped, Reason: k.Reason, TrippedAt: k.TrippedAt,
		Baseline: k.Baseline, Day: k.Day, DayStart: k.DayStart.String(), HighWater: k.HighWater.String()})
}

// UnmarshalJSON reads what MarshalJSON writes. Amounts must be exact decimals
// (a leading '-' is allowed: equity can be negative in principle).
func (k *KillState) UnmarshalJSON(b []byte) error {
	var w killJSON
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	ds, err := parseSigned(w.DayStart)
	if err != nil {
		return fmt.Errorf("kill state: day_start_equity: %w", err)
	}
	hw, err := parseSigned(w.HighWater)
	if err != nil {
		return fmt.Errorf("kill state: high_water_equity: %w", err)
	}
	*k = KillState{Tripped: w.Tripped, Reason: w.Reason, TrippedAt: w.TrippedAt, Baseline: w.Baseline,
		Day: w.Day, DayStart: ds, HighWater: hw}
	return nil
}

func parseSigned(s string) (market.Micros, error) {
	if s == "" {
		return 0, nil
	}
	return market.ParseSignedMicros(s)
}
