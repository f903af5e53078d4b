package sim

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pitbossdev/pitboss/market"
)

func TestDefaultParamsAreValid(t *testing.T) {
	var c Config
	if err := c.Validate(); err != nil {
		t.Fatalf("zero Config: %v", err)
	}
	c.Defaults = DefaultParams()
	if err := c.Validate(); err != nil {
		t.Fatalf("DefaultParams: %v", err)
	}
}

func TestMergeKeepsZeroFieldsOfTheOverride(t *testing.T) {
	base := DefaultParams()
	got := base.Merge(Params{NoiseEvery: 5 * time.Second, Vol: -1, MakerSize: 7 * market.One, ResolveAtEnd: true})
	want := base
	want.NoiseEvery, want.Vol, want.MakerSize, want.ResolveAtEnd = 5*time.Second, -1, 7*market.One, true
	if got != want {
		t.Fatalf("Merge = %+v\nwant    %+v", got, want)
	}
	if base.Merge(Params{}) != base {
		t.Fatal("merging a zero Params changed something")
	}
}

func TestValidateReportsEveryProblem(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
		want []string
	}{
		{"fair not a probability", Config{Defaults: Params{Fair: market.One}}, []string{"fair 1 is not a probability"}},
		{"size not on a lot", Config{Defaults: Params{MakerSize: 1}}, []string{"maker_size 0.000001 is not a multiple"}},
		{"vol not finite", Config{Markets: []MarketConfig{{Market: "m", Params: Params{Vol: 11}}}}, []string{"markets[0]: vol 11 out of range"}},
		{"too many levels and accounts", Config{Defaults: Params{MakerLevels: MaxLevels + 1, NoiseAccounts: MaxAccounts + 1}},
			[]string{"maker_levels 21 out of range", "noise_accounts 65 out of range"}},
		{"duplicate and empty markets", Config{Markets: []MarketConfig{{Market: "a"}, {Market: "a"}, {}}},
			[]string{"market a is listed twice", "markets[2]: market is empty"}},
		{"negative path", Config{PathEvery: -1, PathMax: -1}, []string{"path_every: negative", "path_max: negative"}},
		{"lifetime below a second", Config{Defaults: Params{NoiseLifetime: time.Millisecond}}, []string{"noise_lifetime 1ms is shorter than 1s"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.cfg.Validate()
			if !errors.Is(err, ErrConfig) {
				t.Fatalf("Validate = %v, want ErrConfig", err)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
		})
	}
}

func TestNewPanicsOnAnInvalidConfig(t *testing.T) {
	defer func() {
		if r := recover(); r == nil {
			t.Fatal("New accepted an invalid configuration")
		}
	}()
	New(Config{Defaults: Params{Fair: -1}}, 1)
}

func TestParseConfigReadsTheExample(t *testing.T) {
	c, err := LoadConfig(filepath.Join("testdata", "sim.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if c.Start != time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).UnixMilli() || c.PathEvery != 30*time.Second || c.Rescan != 2*time.Minute {
		t.Errorf("start %d path_every %s rescan %s", c.Start, c.PathEvery, c.Rescan)
	}
	d := c.Defaults
	if d.Vol != 0.2 || d.NewsEvery != 45*time.Minute || d.NewsJump != 0.3 || d.NoiseEvery != 4*time.Second ||
		d.MakerSize != 150*market.One || d.MakerSizeStep != 75_500_000 || d.Makers != 2 {
		t.Errorf("defaults %+v", d)
	}
	if len(c.Markets) != 2 {
		t.Fatalf("markets %d", len(c.Markets))
	}
	m0, m1 := c.Markets[0], c.Markets[1]
	if m0.Market != "synthetic-market-1" || m0.Fair != 620_000 || m0.MakerSpread != 1 || !m0.ResolveAtEnd {
		t.Errorf("markets[0] %+v", m0)
	}
	if m1.InformedEvery != -time.Second || m1.NoiseTake != 0.5 {
		t.Errorf("markets[1] %+v", m1)
	}
}

func TestParseConfigReportsPositions(t *testing.T) {
	tests := []struct {
		name, in string
		want     []string
	}{
		{"unknown keys", "start: 0\nspeed: 2\ndefaults:\n  volume: 1\n", []string{"2:1: unknown key \"speed\"", "4:3: unknown parameter \"volume\""}},
		{"bad values", "defaults:\n  vol: high\n  maker_size: 0.0000001\n  noise_every: soon\n  maker_levels: 2.5\n  resolve_at_end: maybe\n",
			[]string{"2:8: vol", "3:15: maker_size", "4:16: \"soon\" is not a duration", "5:17: \"2.5\" is not an integer", "6:19: resolve_at_end"}},
		{"market without id", "markets:\n  - fair: 0.5\n", []string{"2:5: market is missing"}},
		{"duplicate key", "defaults:\n  vol: 1\n  vol: 2\n", []string{"3:3: duplicate key \"vol\""}},
		{"not a list", "markets: {a: 1}\n", []string{"markets must be a list"}},
		{"bad time", "start: yesterday\n", []string{"1:8: \"yesterday\" is neither"}},
		{"validation after parsing", "defaults:\n  fair: 1.5\n", []string{"defaults: fair 1.5 is not a probability"}},
		{"not yaml", "defaults: [\n", []string{"sim: invalid configuration"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseConfig([]byte(tt.in))
			if !errors.Is(err, ErrConfig) {
				t.Fatalf("ParseConfig = %v, want ErrConfig", err)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
		})
	}
}

func TestLoadConfigNamesTheFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bad.yaml")
	if err := os.WriteFile(path, []byte("defaults: {vol: x}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadConfig(path); err == nil || !strings.HasPrefix(err.Error(), path+": ") {
		t.Fatalf("LoadConfig = %v", err)
	}
}

// FuzzParseConfig: any input either fails with ErrConfig or yields a configuration
// that New accepts.
func FuzzParseConfig(f *testing.F) {
	if b, err := os.ReadFile(filepath.Join("testdata", "sim.yaml")); err == nil {
		f.Add(b)
	}
	f.Add([]byte(""))
	f.Add([]byte("defaults: {vol: -1, news_every: -1s, maker_refresh: 1ms}\n"))
	f.Add([]byte("markets:\n  - market: x\n    fair: 0.000001\n    resolve_at: 1700000000000\n"))
	f.Add([]byte("start: 1\npath_max: 2\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := ParseConfig(data)
		if err != nil {
			if !errors.Is(err, ErrConfig) {
				t.Fatalf("error without ErrConfig: %v", err)
			}
			return
		}
		New(c, 1)
	})
}
